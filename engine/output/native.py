"""Results written by the native core (issue 12): the one implementation of every output
format (engine/native/output, ``_native.NativeWriter``).

``spaseq run`` writes every result through a ``NativeWriter``, in every format (``FORMATS``:
jsonl, SPARQL 1.1 JSON, CSV and TSV results, the table for people, and TriG, each result a
named graph: the CONSTRUCT template instantiated or the SELECT match described), with the
query's projection (DISTINCT is the core's: it numbers a query's results once) and
``--with-time``'s ``_time`` and ``_start`` (which, when a variable has one of those names,
hold the times in its place). The rows come two ways:

- a query run alone by the native runtime: its released matches go straight from the
  runtime to the writer (``write_matches``), with no Python object per match;
- results found in Python (composed queries, ``--materialize``, ``--engine reference``),
  given as values, one row at a time (``row_writer``, ``write_row``): terms as N-Triples,
  times in nanoseconds.

The server's match log and the rdflib plugin spell their rows through it too
(``jsonl_line``, ``json_time``; the plugin's TSV through a ``NativeWriter``), and ``spaseq
run``'s summary its times (``_native.table_time``, ``_native.json_seconds``). The Python
writers these replaced are the native writers' test oracle, beside the tests
(``tests/output/writers_oracle.py``, ``tests/output/test_native_writers.py``)."""

from __future__ import annotations

import codecs
import json
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from decimal import Decimal
from typing import IO, TYPE_CHECKING

from pyoxigraph import Triple

from spaseq.engine import _native
from spaseq.engine._native import NativeWriter
from spaseq.engine.output.arrow import ARROW_FORMATS
from spaseq.engine.output.times import DEFAULT_TIME_FORMAT
from spaseq.engine.values.timestamps import exact_seconds, to_nanoseconds
from spaseq.engine.vocab import PROV_NS, SPASEQ_NS, XSD_NS

if TYPE_CHECKING:  # the query's front end is imported when a run starts (cli/run.py)
    from spaseq.engine.algebra import operators as A
    from spaseq.engine.events import Event
    from spaseq.engine.matches import Row

#: the text formats results are written in, spelled natively
TEXT_FORMATS = ("table", "jsonl", "json", "csv", "tsv", "trig")
#: the formats results are written in (``spaseq run --format``): the text formats, then the
#: Arrow ones (``output.arrow``: built natively, written by pyarrow)
FORMATS = (*TEXT_FORMATS, *ARROW_FORMATS)

#: a taken event as ``NativeWriter.write_row`` takes it: (atom, stream IRI, time in ns,
#: stamped with an xsd:dateTime, graph name in N-Triples or None)
TakenValues = tuple[str, str, int, bool, str | None]
#: a row as ``NativeWriter.write_row`` takes it: time and start in ns, bindings (variable,
#: N-Triples), the events taken
RowValues = tuple[int, int, list[tuple[str, str]], list[TakenValues]]


def native_writer(fmt: str, query: A.Query, columns: Sequence[str], with_time: bool,
                  out: IO[str], time_format: str = DEFAULT_TIME_FORMAT,
                  thread: bool = False, output: str | None = None, events: str = "full") -> NativeWriter:
    """The writer of ``query``'s rows in ``fmt`` (one of ``FORMATS``) to ``out`` (a text
    file), with ``columns`` the header's variables (a CONSTRUCT query's: its template's) and
    times as ``time_format`` says. With ``thread``, the rows are written on a thread of their
    own when ``out`` is a file with a descriptor taking UTF-8 (``out`` is then left alone
    until ``finish`` or ``close``). TriG needs ``output``, the query's output stream IRI (its
    results' graph names). ``events`` (jsonl, Arrow): ``full``, each taken event as the
    contract says; ``ids``, its graph name only; ``none``, no ``events`` member. The Arrow
    formats write to ``out``'s binary file (``output.arrow``: ``close`` finishes it too)."""
    if query.match.is_construct:  # solutions of the template's variables (the columns)
        select: list[str] | None = list(columns)
    elif query.match.variables is None:  # SELECT *: every bound variable, by name
        select = None
    else:
        select = list(dict.fromkeys(query.match.variables))
    prefixes = dict(query.prefixes)
    template = None
    if fmt == "trig":  # the output's declarations, and the template
        prefixes = {"prov": PROV_NS, "xsd": XSD_NS, "spaseq": SPASEQ_NS, **prefixes}
        if query.match.is_construct:
            template = template_terms(query.match.template)
    if fmt in ARROW_FORMATS:  # record batches handed to pyarrow, written to the binary file
        from spaseq.engine.output.arrow import ArrowSink

        under = _bytes_under(out)
        if under is None:
            raise ValueError("the Arrow formats write bytes: the output has no binary file under it")
        sink = ArrowSink(fmt, under, columns, events)
        return NativeWriter("arrow", sink, select, list(columns), with_time, True, time_format,
                            events=events)
    binary = _binary(out)
    return NativeWriter(fmt, out if binary is None else binary, select, list(columns), with_time,
                        binary is not None, time_format, thread, list(prefixes.items()), output,
                        template, events)


def solutions_table(variables: Sequence[str], solutions: Iterable[Sequence[object | None]],
                    prefixes: Mapping[str, str], out: IO[str]) -> None:
    """SPARQL ``solutions`` (terms or None, in ``variables``' order) written to ``out`` as the
    table ``spaseq run`` writes matches in (``spaseq kb query``): IRIs under ``prefixes`` as
    prefixed names, literals as values, the count at the end; no time or start columns."""
    names = list(variables)
    writer = NativeWriter("table", out, names, names, False, prefixes=list(prefixes.items()),
                          solutions=True)
    writer.start()
    for values in solutions:
        bindings = [(v, ntriples(t)) for v, t in zip(names, values, strict=True) if t is not None]
        writer.write_row(0, 0, bindings, [])
    writer.finish()


def ntriples(term: object) -> str:
    """A term in N-Triples, as the native side reads it (an RDF 1.2 triple term, which an
    event's object may be, as ``<<( s p o )>>``: pyoxigraph's ``str`` leaves the brackets out)."""
    return f"<<( {term} )>>" if isinstance(term, Triple) else str(term)


def template_terms(template: Sequence[A.TriplePattern]) -> list[tuple[tuple[str, str], ...]]:
    """A CONSTRUCT template as ``NativeWriter`` and ``derived_graph`` take it."""
    return [tuple(_template_term(t) for t in (tp.subject, tp.predicate, tp.object)) for tp in template]


def _template_term(term: object) -> tuple[str, str]:
    """A CONSTRUCT template's term as ``NativeWriter`` takes it."""
    from spaseq.engine.algebra import operators as A

    if isinstance(term, A.Var):
        return ("fresh" if term.is_blank else "var", term.name)
    return ("term", str(term))


def _binary(out: IO[str]) -> IO[bytes] | None:
    """The binary file under ``out`` when writing UTF-8 bytes there gives the same bytes as
    writing text to ``out`` (a UTF-8 text file on a system whose newline is LF), flushed so
    that nothing written earlier as text comes after; otherwise None. It saves decoding the
    rows into a Python string and encoding them back."""
    encoding = getattr(out, "encoding", None)
    if encoding is None or os.linesep != "\n":
        return None
    try:
        if codecs.lookup(encoding).name != "utf-8":
            return None
    except LookupError:
        return None
    return _bytes_under(out)


def _bytes_under(out: IO[str]) -> IO[bytes] | None:
    """The binary file under the text file ``out`` (None if it has none), flushed so that
    nothing written earlier as text comes after."""
    buffer = getattr(out, "buffer", None)
    if buffer is not None:
        out.flush()
    return buffer


def nanoseconds(seconds: Decimal | float | int) -> int:
    """A time in seconds (a Decimal, as the engine's are; a number given to the Python API
    read as ``exact_seconds`` reads it) as the native writers take it."""
    return to_nanoseconds(seconds if type(seconds) is Decimal else exact_seconds(seconds))


#: events a row writer keeps spelled (a match's events recur in the matches after it)
EVENTS_KEPT = 4096


def row_values(row: Row, events: dict[Event, tuple[str, int, bool, str | None]] | None = None) -> RowValues:
    """``row`` as ``NativeWriter.write_row`` and ``jsonl_line`` take it: its match's time and
    start, its bindings in its order and the events its match took (each spelled once while
    ``events`` keeps it)."""
    taken = []
    for t in row.taken:
        e = t.event
        spelled = None if events is None else events.get(e)
        if spelled is None:
            spelled = (e.stream, nanoseconds(e.time), e.dated, None if e.name is None else str(e.name))
            if events is not None:
                if len(events) >= EVENTS_KEPT:
                    events.clear()
                events[e] = spelled
        taken.append((t.atom, *spelled))
    return (nanoseconds(row.time), nanoseconds(row.start),
            [(v, ntriples(term)) for v, term in row.bindings.items()], taken)


def row_writer(writer: NativeWriter) -> Callable[[Row], None]:
    """A function writing each row it is given through ``writer`` (rows found in Python)."""
    events: dict[Event, tuple[str, int, bool, str | None]] = {}

    def write(row: Row) -> None:
        writer.write_row(*row_values(row, events))

    return write


def jsonl_line(row: Row, time_format: str = DEFAULT_TIME_FORMAT) -> str:
    """``row`` in the jsonl contract (README), one line without its end, times as
    ``time_format`` says: ``time``, ``start``, ``time_iso`` and ``start_iso`` when they are
    written as xsd:dateTime, the bindings in the row's order, the events taken."""
    return _native.jsonl_line(*row_values(row), time_format)


def json_time(seconds: Decimal | float | int, dated: bool) -> dict[str, str]:
    """A time as the SPARQL 1.1 JSON results term ``_time`` and ``_start`` are written as: an
    xsd:dateTime literal when ``dated``, else xsd:decimal seconds."""
    return json.loads(_native.json_time(nanoseconds(seconds), dated))
