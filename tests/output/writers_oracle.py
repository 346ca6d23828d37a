"""The Python writers: the test oracle of the native writers (engine/native/output,
``_native.NativeWriter``), which write every result in production. Until the native writers
took every output, these wrote what they did not take; they were moved here, beside the
tests, and are kept as they were, byte for byte, so that the native writers can be checked
against an independent implementation of every format (``test_native_writers.py``,
``test_writers.py``).

Result writers: jsonl (spaseq's streaming contract), SPARQL 1.1 JSON/CSV/TSV results, a table
for people, and TriG (``TrigWriter``: each result a named graph event, its timestamp as
``<graph> prov:generatedAtTime τ`` in the default graph). Every writer is incremental: a row
is written (and flushed) as soon as its match completes, except the table, which needs every
row to size its columns. Times are written in the input's form unless ``time_format`` says
otherwise (``times``). ``sink`` gives the writer ``spaseq run`` used for a run's rows, and
``run_sink`` makes ``spaseq run`` use it."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from decimal import Decimal
from typing import IO

from pyoxigraph import BlankNode, DefaultGraph, Literal, NamedNode, Quad, RdfFormat, serialize

from spaseq.engine.algebra import operators as A
from spaseq.engine.matches import Row, Term
from spaseq.engine.output.construct import template_variables
from spaseq.engine.output.derived import Derived
from spaseq.engine.output.match_rdf import stamp_literal
from spaseq.engine.output.times import DEFAULT_TIME_FORMAT, dated, time_literal
from spaseq.engine.values.lexical import canonical_decimal
from spaseq.engine.values.timestamps import datetime_literal, datetime_text, exact_seconds, seconds_literal
from spaseq.engine.vocab import GENERATED_AT_TIME, PROV_NS, RDF_LANGSTRING, SPASEQ_NS, XSD_NS, XSD_STRING
from tests.output.derive_oracle import graph_of

_PLAIN_TYPES = (XSD_STRING.value, RDF_LANGSTRING.value)
FORMATS = ("table", "jsonl", "json", "csv", "tsv")


def json_term(term: Term) -> dict[str, str]:
    """A term in the SPARQL 1.1 Query Results JSON format."""
    if isinstance(term, NamedNode):
        return {"type": "uri", "value": term.value}
    if isinstance(term, BlankNode):
        return {"type": "bnode", "value": term.value}
    out = {"type": "literal", "value": term.value}
    if term.language:
        out["xml:lang"] = term.language
    elif term.datatype.value not in _PLAIN_TYPES:
        out["datatype"] = term.datatype.value
    return out


class JsonSeconds(float):
    """A time for ``json.dumps``: a float whose JSON text is the exact decimal (the encoder
    writes floats with ``float.__repr__``, so the text is put back by ``dumps_exact``)."""

    __slots__ = ("text",)
    text: str


def seconds(value: Decimal | float | int) -> int | float:
    """A timestamp for JSON: integral seconds as integers, others as numbers written exactly
    (``dumps_exact``); a reader that parses JSON numbers as floats gets the nearest double."""
    if not isinstance(value, Decimal):
        value = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
    if value == value.to_integral_value():
        return int(value)
    number = float(value)
    if Decimal(repr(number)) == value:
        return number
    out = JsonSeconds(number)
    out.text = canonical_decimal(value)
    return out


def dumps_exact(obj: object) -> str:
    """``json.dumps`` with every ``JsonSeconds`` written as its exact decimal text."""
    exact: dict[str, str] = {}
    nested = (dict, list, tuple, JsonSeconds)  # what mark() looks into or replaces

    def mark(value: object) -> object:
        # leaves (strings, ints, plain floats: almost every node) are kept without a call
        if type(value) is JsonSeconds:
            key = f"\u0000{len(exact)}\u0000"
            exact[key] = value.text
            return key
        if type(value) is dict:
            return {k: mark(v) if type(v) in nested else v for k, v in value.items()}
        if type(value) in (list, tuple):
            return [mark(v) if type(v) in nested else v for v in value]  # type: ignore[attr-defined]
        return value

    text = json.dumps(mark(obj), ensure_ascii=False)
    for key, number in exact.items():
        text = text.replace(json.dumps(key), number)
    return text


def jsonl_record(row: Row, time_format: str = DEFAULT_TIME_FORMAT) -> dict:
    """The jsonl contract: time, start (numbers), ``time_iso`` and ``start_iso`` when the
    match's times are written as xsd:dateTime (``times.dated``), projected bindings and the
    events taken."""
    record: dict = {"time": seconds(row.time), "start": seconds(row.start)}
    if dated(row.match, time_format):
        record["time_iso"] = datetime_text(row.time)
        record["start_iso"] = datetime_text(row.start)
    return record | {
        "bindings": {v: json_term(t) for v, t in row.bindings.items()},
        "events": [
            {
                "atom": t.atom,
                "stream": t.event.stream,
                "time": seconds(t.event.time),
                "graph": None if t.event.name is None else _graph_name(t.event.name),
            }
            for t in row.taken
        ],
    }


def _graph_name(name: NamedNode | BlankNode) -> str:
    return name.value if isinstance(name, NamedNode) else f"_:{name.value}"


class Writer:
    """Base writer: ``start`` once, ``row`` per match, ``finish`` once."""

    def __init__(self, out: IO[str], variables: Sequence[str], with_time: bool = False,
                 prefixes: dict[str, str] | None = None, time_format: str = DEFAULT_TIME_FORMAT) -> None:
        self.out = out
        self.variables = list(variables)
        self.with_time = with_time
        self.prefixes = prefixes or {}
        self.time_format = time_format

    def start(self) -> None:
        """Write whatever precedes the rows."""

    def row(self, row: Row) -> None:
        raise NotImplementedError

    def finish(self, stopped: bool = False) -> None:
        self.out.flush()

    def close(self) -> None:
        """Nothing to wait for (``spaseq run`` closes its writer after an error)."""

    def _columns(self) -> list[str]:
        return (["_time", "_start"] if self.with_time else []) + self.variables

    def _terms(self, row: Row) -> dict[str, Term]:
        terms = dict(row.bindings)
        if self.with_time:
            as_datetime = dated(row.match, self.time_format)
            terms["_time"] = time_literal(row.time, as_datetime)
            terms["_start"] = time_literal(row.start, as_datetime)
        return terms


class JsonlWriter(Writer):
    def row(self, row: Row) -> None:
        self.out.write(dumps_exact(jsonl_record(row, self.time_format)) + "\n")
        self.out.flush()


class JsonWriter(Writer):
    """SPARQL 1.1 Query Results JSON, written incrementally."""

    def start(self) -> None:
        head = json.dumps({"vars": self._columns()})
        self.out.write(f'{{"head": {head}, "results": {{"bindings": [\n')
        self._first = True

    def row(self, row: Row) -> None:
        binding = {v: json_term(t) for v, t in self._terms(row).items()}
        self.out.write(("" if self._first else ",\n") + json.dumps(binding, ensure_ascii=False))
        self._first = False
        self.out.flush()

    def finish(self, stopped: bool = False) -> None:
        self.out.write("\n]}}\n")
        super().finish()


class CsvWriter(Writer):
    """SPARQL 1.1 Query Results CSV: plain values, CRLF line ends."""

    def start(self) -> None:
        self._csv = csv.writer(self.out, lineterminator="\r\n")
        self._csv.writerow(self._columns())

    def row(self, row: Row) -> None:
        terms = self._terms(row)
        self._csv.writerow([_csv_value(terms.get(v)) for v in self._columns()])
        self.out.flush()


def _csv_value(term: Term | None) -> str:
    if term is None:
        return ""
    if isinstance(term, BlankNode):
        return f"_:{term.value}"
    return term.value


class TsvWriter(Writer):
    """SPARQL 1.1 Query Results TSV: terms in N-Triples syntax."""

    def start(self) -> None:
        self.out.write("\t".join(f"?{v}" for v in self._columns()) + "\n")

    def row(self, row: Row) -> None:
        self.terms(self._terms(row))

    def terms(self, terms: Mapping[str, Term]) -> None:
        """One result line from its terms by variable (also for rows that are not a match's:
        the rdflib ``tsv`` serializer)."""
        cells = [_tsv_value(terms.get(v)) for v in self._columns()]
        self.out.write("\t".join(cells) + "\n")
        self.out.flush()


def _tsv_value(term: Term | None) -> str:
    if term is None:
        return ""
    return str(term).replace("\t", "\\t").replace("\n", "\\n")


class TableWriter(Writer):
    """Aligned columns for people, with prefixed names where the query declared them."""

    def start(self) -> None:
        self._rows: list[list[str]] = []

    def row(self, row: Row) -> None:
        cells = [_fmt_time(row.time), _fmt_time(row.start)]
        cells += [self._short(row.bindings.get(v)) for v in self.variables]
        self._rows.append(cells)

    def finish(self, stopped: bool = False) -> None:
        """The table; after an error (``stopped``), only with rows, counted as found before it."""
        if stopped and not self._rows:
            super().finish()
            return
        header = ["time", "start"] + [f"?{v}" for v in self.variables]
        widths = [max([len(h)] + [len(r[i]) for r in self._rows]) for i, h in enumerate(header)]
        line = "  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)).rstrip()
        self.out.write(line + "\n" + "  ".join("-" * w for w in widths) + "\n")
        for r in self._rows:
            self.out.write("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() + "\n")
        count = len(self._rows)
        self.out.write(f"({count} match{'es' if count != 1 else ''}{' before the error' if stopped else ''})\n")
        super().finish()

    def _short(self, term: Term | None) -> str:
        if term is None:
            return ""
        if isinstance(term, NamedNode):
            for prefix, ns in sorted(self.prefixes.items(), key=lambda kv: -len(kv[1])):
                if term.value.startswith(ns) and len(term.value) > len(ns):
                    return f"{prefix}:{term.value[len(ns):]}"
            return f"<{term.value}>"
        if isinstance(term, Literal) and not term.language and term.datatype != XSD_STRING:
            if term.datatype.value.startswith(XSD_NS):
                return term.value
        return str(term)


EPOCH_LIKE = 1e8  # timestamps this large are wall-clock times: show them as ISO 8601


def _fmt_time(value: Decimal) -> str:
    """Seconds for small (relative) times, ISO 8601 UTC for wall-clock ones."""
    if abs(value) >= EPOCH_LIKE:
        stamp = datetime.fromtimestamp(float(value), tz=timezone.utc)
        text = stamp.isoformat(timespec="milliseconds" if value % 1 else "seconds")
        return text.replace("+00:00", "Z")
    return f"{value:.3f}".rstrip("0").rstrip(".")


_WRITERS = {"jsonl": JsonlWriter, "json": JsonWriter, "csv": CsvWriter, "tsv": TsvWriter,
            "table": TableWriter}


def make_writer(fmt: str, out: IO[str], variables: Sequence[str], with_time: bool = False,
                prefixes: dict[str, str] | None = None, time_format: str = DEFAULT_TIME_FORMAT) -> Writer:
    """The writer for one of FORMATS."""
    return _WRITERS[fmt](out, variables, with_time, prefixes, time_format)


def render(fmt: str, rows: Sequence[Row], variables: Sequence[str], with_time: bool = False,
           time_format: str = DEFAULT_TIME_FORMAT) -> str:
    """All rows in one format, as a string (for tests and the Python API)."""
    buf = io.StringIO()
    w = make_writer(fmt, buf, variables, with_time, time_format=time_format)
    w.start()
    for r in rows:
        w.row(r)
    w.finish()
    return buf.getvalue()


class TrigWriter:
    """``start`` once (prefix declarations), ``event`` per result, ``finish`` once: each
    result of a query as a named graph event (``derived``), so that the output is itself a
    spaseq replay file. Blank nodes are made afresh by both this writer and the native one."""

    def __init__(self, out: IO[str], prefixes: dict[str, str] | None = None) -> None:
        self.out = out
        self.prefixes = {"prov": PROV_NS, "xsd": XSD_NS, "spaseq": SPASEQ_NS, **(prefixes or {})}

    def start(self) -> None:
        for prefix, ns in self.prefixes.items():
            self.out.write(f"@prefix {prefix}: <{ns}> .\n")

    def event(self, derived: Derived) -> None:
        quads = [Quad(derived.name, GENERATED_AT_TIME, stamp_literal(derived.time), DefaultGraph())]
        if derived.start != derived.time:  # an event that lasts: its interval, in the time's form
            wall = abs(derived.time) >= 10 ** 8  # a dateTime, as the time's stamp is
            for predicate, t in (("startedAtTime", derived.start), ("endedAtTime", derived.time)):
                value = datetime_literal(exact_seconds(t)) if wall else seconds_literal(t)
                quads.append(Quad(derived.name, NamedNode(PROV_NS + predicate), value, DefaultGraph()))
        quads += [Quad(t.subject, t.predicate, t.object, derived.name) for t in graph_of(derived)]
        text = serialize(quads, format=RdfFormat.TRIG, prefixes=self.prefixes).decode("utf-8")  # type: ignore[union-attr]  # pyoxigraph's stubs: bytes, not None, without an output
        lines = text.splitlines(keepends=True)
        while lines and lines[0].startswith("@prefix "):  # declared once, in start()
            lines.pop(0)
        self.out.write("".join(lines))
        self.out.flush()

    def finish(self, stopped: bool = False) -> None:
        self.out.flush()

    def close(self) -> None:
        """Nothing to wait for (``spaseq run`` closes its writer after an error)."""


def sink(fmt: str, query: A.Query, out: IO[str], with_time: bool = False,
         time_format: str = DEFAULT_TIME_FORMAT):
    """The writer of ``query``'s results in ``fmt`` to ``out`` and the function writing one
    result (a ``Derived``), as ``spaseq run`` wrote them in Python (a CONSTRUCT query's rows
    as solutions of its template's variables)."""
    if fmt == "trig":
        trig = TrigWriter(out, query.prefixes)
        return trig, trig.event
    if query.match.is_construct:
        variables = template_variables(query.match.template)
    elif query.match.variables is not None:
        variables = list(query.match.variables)
    else:
        variables = sorted({v for ev in query.events.values() for v in ev.variables})
    writer = make_writer(fmt, out, variables, with_time, query.prefixes, time_format)

    def write(derived: Derived) -> None:
        row = derived.row
        if query.match.is_construct:
            row = Row({v: row.bindings[v] for v in variables if v in row.bindings}, row.match)
        writer.row(row)

    return writer, write


def run_sink(args, query: A.Query, out: IO[str], python_rows: bool = False, thread: bool = False):
    """``spaseq run``'s ``_sink`` with these writers, every result through Python (what
    ``--writer python`` did): a test patches ``spaseq.engine.cli.run._sink`` with it."""
    fmt = args.format or ("trig" if query.match.is_construct else "table")
    return sink(fmt, query, out, args.with_time, args.time_format)
