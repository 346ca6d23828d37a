"""SPAseq matches as an rdflib SELECT result.

The processor returns the mapping rdflib's ``SPARQLResult`` is built from, so the default
``ds.query(text, processor="spaseq")`` is an ordinary SELECT result: iteration gives
``ResultRow``, ``.vars``, ``.bindings``, ``len`` and ``serialize(format="json"|"csv"|"xml"|"txt")``
through rdflib's own serializers, and ``"tsv"`` through spaseq's TSV writer (rdflib has a
TSV parser only). Each binding is a ``MatchBindings`` (a dict) that also carries
the match's ``time``, ``start`` and ``events``; ``result="spaseq"`` gives a ``SpaseqResult``
with the same rows plus ``.matches``, and ``serialize(format="jsonl")`` writes spaseq's jsonl
contract (the CLI's ``--format jsonl``).
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import IO, Any

from rdflib import BNode, URIRef, Variable
from rdflib.plugins.sparql.processor import SPARQLResult
from rdflib.query import ResultException, ResultSerializer
from rdflib.term import Identifier

from spaseq.engine._native import NativeWriter
from spaseq.engine.io.rdflib_terms import to_oxigraph, to_rdflib
from spaseq.engine.matches import Match, MatchTimes, Row
from spaseq.engine.output.native import jsonl_line
from spaseq.engine.output.times import DEFAULT_TIME_FORMAT, dated, time_literal


@dataclass(frozen=True)
class TakenEvent:
    """One event a match took: the atom (GPM name), its stream, time (seconds) and graph name."""

    atom: str
    stream: URIRef
    time: Decimal
    graph: URIRef | BNode | None


class MatchBindings(MatchTimes, dict):
    """One result row's bindings (``Variable -> term``, like every rdflib binding), plus the
    match it came from: ``time`` (its end, seconds), ``start`` and the ``events`` it took;
    ``time_format`` says how serializing it writes times (``output.times``)."""

    def __init__(self, values: Mapping[Variable, Identifier], row: Row,
                 time_format: str = DEFAULT_TIME_FORMAT) -> None:
        super().__init__(values)
        self.row = row
        self.time_format = time_format

    @property
    def match(self) -> Match:
        """The match this row came from (``time`` and ``start`` are its)."""
        return self.row.match

    @property
    def events(self) -> tuple[TakenEvent, ...]:
        return tuple(
            TakenEvent(t.atom, URIRef(t.event.stream), t.event.time,
                       to_rdflib(t.event.name) if t.event.name is not None else None)  # type: ignore[arg-type]
            for t in self.row.taken
        )


def result_mapping(rows: Sequence[Row], variables: Sequence[str], with_time: bool,
                   time_format: str = DEFAULT_TIME_FORMAT) -> dict[str, Any]:
    """What ``Graph.query`` hands to the result plugin: type, vars and one MatchBindings per row
    (``with_time`` adds the variables ``_time`` and ``_start``, written as ``time_format``
    says: xsd:dateTime or xsd:decimal seconds)."""
    names = (["_time", "_start"] if with_time else []) + list(variables)
    bindings = []
    for row in rows:
        values = {Variable(v): to_rdflib(t) for v, t in row.bindings.items()}
        if with_time:
            as_datetime = dated(row.match, time_format)
            values[Variable("_time")] = to_rdflib(time_literal(row.time, as_datetime))
            values[Variable("_start")] = to_rdflib(time_literal(row.start, as_datetime))
        bindings.append(MatchBindings(values, row, time_format))
    return {"type_": "SELECT", "vars_": [Variable(v) for v in names], "bindings": bindings}


class SpaseqResult(SPARQLResult):
    """The ``result="spaseq"`` plugin: a SELECT result whose ``matches`` are the rows' bindings
    with their match's time, start and events, in completion order."""

    @property
    def matches(self) -> list[MatchBindings]:
        return [b for b in self.bindings if isinstance(b, MatchBindings)]


class JsonlResultSerializer(ResultSerializer):
    """``serialize(format="jsonl")``: one JSON object per match (time, start, bindings, events),
    exactly the CLI's ``--format jsonl``."""

    def serialize(self, stream: IO, encoding: str = "utf-8", **kwargs: Any) -> None:
        if self.result.type != "SELECT":
            raise ResultException("jsonl serializes the SELECT results of processor='spaseq' only")
        for binding in self.result.bindings:
            if not isinstance(binding, MatchBindings):
                raise ResultException(
                    "jsonl needs the time and events of each match: serialize a result of processor='spaseq'"
                )
            _write(stream, jsonl_line(binding.row, binding.time_format) + "\n", encoding)


class TsvResultSerializer(ResultSerializer):
    """``serialize(format="tsv")``: SPARQL 1.1 Query Results TSV (terms in N-Triples syntax),
    written by the CLI's ``--format tsv`` writer (a ``NativeWriter``, each row given as
    values: no time, no events); any rdflib SELECT result, not only spaseq's."""

    def serialize(self, stream: IO, encoding: str = "utf-8", **kwargs: Any) -> None:
        if self.result.type != "SELECT":
            raise ResultException(f"tsv serializes SELECT results, not {self.result.type}")
        text = io.StringIO()
        variables = [str(v) for v in self.result.vars or ()]
        writer = NativeWriter("tsv", text, variables, variables, False)
        writer.start()
        for binding in self.result.bindings:
            terms = [(str(v), str(to_oxigraph(t))) for v, t in binding.items() if t is not None]
            writer.write_row(0, 0, terms, [])
        writer.finish()
        _write(stream, text.getvalue(), encoding)


def _write(stream: IO, text: str, encoding: str | None) -> None:
    """As rdflib's own serializers write: bytes, or text to a text stream."""
    try:
        stream.write(text.encode(encoding or "utf-8"))
    except (TypeError, ValueError):
        stream.write(text)
