"""Rows written by the native core (issue 12): which outputs the native writers cover and
the writer for them.

``_native.NativeWriter`` takes a query's released matches straight from the native runtime
and writes them as the Python writers of ``writers.py`` do, byte for byte (they are its
oracle: ``tests/output/test_native_writers.py``), with no Python object per match. It covers
the result formats (jsonl, json, csv, tsv and the table for people) of a SELECT query
(projection and DISTINCT done natively) and of a CONSTRUCT query written as solutions of its
template's variables, and TriG (``trig.TrigWriter``: each result a named graph, the
CONSTRUCT template instantiated or the SELECT match described). Everything else (a DISTINCT
CONSTRUCT query, materialisation, composed queries) goes through the Python writers.

The server's match log and the rdflib plugin's jsonl spell one row at a time natively
(``jsonl_line``, ``json_time``: a row given as values, terms in N-Triples and times in
nanoseconds, ``row_values``)."""

from __future__ import annotations

import codecs
import json
import os
from collections.abc import Sequence
from decimal import Decimal
from typing import IO

from spaseq.engine import _native
from spaseq.engine._native import NativeWriter
from spaseq.engine.algebra import operators as A
from spaseq.engine.matches import Row
from spaseq.engine.output.times import DEFAULT_TIME_FORMAT
from spaseq.engine.values.timestamps import exact_seconds, to_nanoseconds
from spaseq.engine.vocab import PROV_NS, SPASEQ_NS, XSD_NS

NATIVE_FORMATS = ("jsonl", "json", "csv", "tsv", "table", "trig")

#: a taken event as ``NativeWriter.write_row`` takes it: (atom, stream IRI, time in ns,
#: stamped with an xsd:dateTime, graph name in N-Triples or None)
TakenValues = tuple[str, str, int, bool, str | None]
#: a row as ``NativeWriter.write_row`` takes it: time and start in ns, bindings (variable,
#: N-Triples), the events taken
RowValues = tuple[int, int, list[tuple[str, str]], list[TakenValues]]


def why_not_native(fmt: str, query: A.Query, columns: Sequence[str], with_time: bool) -> str | None:
    """Why the rows of ``query`` in ``fmt`` cannot be written natively (None: they can)."""
    if fmt not in NATIVE_FORMATS:
        return f"the {fmt} format is written in Python"
    if query.match.is_construct and query.match.distinct:
        return "a DISTINCT CONSTRUCT query is written in Python"
    if with_time and fmt not in ("table", "trig") and {"_time", "_start"} & {*columns, *(query.match.variables or ())}:
        return "a variable named _time or _start with --with-time is written in Python"
    return None


def native_writer(fmt: str, query: A.Query, columns: Sequence[str], with_time: bool,
                  out: IO[str], time_format: str = DEFAULT_TIME_FORMAT,
                  thread: bool = False, output: str | None = None) -> NativeWriter:
    """The native writer of ``query``'s rows in ``fmt`` to ``out`` (a text file), with
    ``columns`` the header's variables and times as ``time_format`` says (as
    ``writers.make_writer`` takes them). Only for what ``why_not_native`` accepts. With
    ``thread``, the rows are written on a thread of their own when ``out`` is a file with a
    descriptor taking UTF-8 (``out`` is then left alone until ``finish`` or ``close``).
    TriG needs ``output``, the query's output stream IRI (its results' graph names)."""
    if query.match.is_construct:  # solutions of the template's variables (the columns)
        select: list[str] | None = list(columns)
    elif query.match.variables is None:  # SELECT *: every bound variable, by name
        select = None
    else:
        select = list(dict.fromkeys(query.match.variables))
    prefixes = dict(query.prefixes)
    template = None
    if fmt == "trig":  # TrigWriter's declarations, and the template
        prefixes = {"prov": PROV_NS, "xsd": XSD_NS, "spaseq": SPASEQ_NS, **prefixes}
        if query.match.is_construct:
            template = [tuple(_template_term(t) for t in (tp.subject, tp.predicate, tp.object))
                        for tp in query.match.template]
    binary = _binary(out)
    return NativeWriter(fmt, out if binary is None else binary, select, query.match.distinct,
                        list(columns), with_time, binary is not None, time_format, thread,
                        list(prefixes.items()), output, template)


def _template_term(term: object) -> tuple[str, str]:
    """A CONSTRUCT template's term as ``NativeWriter`` takes it."""
    if isinstance(term, A.Var):
        return ("fresh" if term.is_blank else "var", term.name)
    return ("term", str(term))


def _binary(out: IO[str]) -> IO[bytes] | None:
    """The binary file under ``out`` when writing UTF-8 bytes there gives the same bytes as
    writing text to ``out`` (a UTF-8 text file on a system whose newline is LF), flushed so
    that nothing written earlier as text comes after; otherwise None. It saves decoding the
    rows into a Python string and encoding them back."""
    buffer = getattr(out, "buffer", None)
    encoding = getattr(out, "encoding", None)
    if buffer is None or encoding is None or os.linesep != "\n":
        return None
    try:
        if codecs.lookup(encoding).name != "utf-8":
            return None
    except LookupError:
        return None
    out.flush()
    return buffer


def nanoseconds(seconds: Decimal | float | int) -> int:
    """A time in seconds (a Decimal, as the engine's are; a number given to the Python API
    read as ``exact_seconds`` reads it) as the native writers take it."""
    return to_nanoseconds(seconds if type(seconds) is Decimal else exact_seconds(seconds))


def row_values(row: Row) -> RowValues:
    """``row`` as ``NativeWriter.write_row`` and ``jsonl_line`` take it: its match's time and
    start, its bindings in its order and the events its match took."""
    taken = [(t.atom, e.stream, nanoseconds(e.time), e.dated, None if e.name is None else str(e.name))
             for t in row.taken for e in (t.event,)]
    return (nanoseconds(row.time), nanoseconds(row.start),
            [(v, str(term)) for v, term in row.bindings.items()], taken)


def jsonl_line(row: Row, time_format: str = DEFAULT_TIME_FORMAT) -> str:
    """``row`` in the jsonl contract (README), one line without its end, times as
    ``time_format`` says: ``time``, ``start``, ``time_iso`` and ``start_iso`` when they are
    written as xsd:dateTime, the bindings in the row's order, the events taken."""
    return _native.jsonl_line(*row_values(row), time_format)


def json_time(seconds: Decimal | float | int, dated: bool) -> dict[str, str]:
    """A time as the SPARQL 1.1 JSON results term ``_time`` and ``_start`` are written as: an
    xsd:dateTime literal when ``dated``, else xsd:decimal seconds."""
    return json.loads(_native.json_time(nanoseconds(seconds), dated))
