"""The spaseq vocabulary's terms (docs/vocabulary.md), a registered query described, and an
event's timestamp literal. A match is described in it by the core (``derived.result_graph``:
what ``--materialize`` stores and what a SELECT query's output events hold, so that matches
can be queried with plain SPARQL and consumed by other queries):

    <m> a spaseq:Match ; spaseq:query <q> ;
        spaseq:time "τ"^^xsd:dateTime ; spaseq:start "τ0"^^xsd:dateTime ;
        spaseq:event [ spaseq:atom "A" ; spaseq:stream <s> ; spaseq:graph <g> ;
                       spaseq:eventTime "τ"^^xsd:dateTime ; spaseq:position 1 ; spaseq:iteration 1 ] ;
        spaseq:binding [ spaseq:variable "x" ; spaseq:value term ] .

Times are in the input's form (``times``, docs/decisions.md 43): ``xsd:dateTime`` in UTC for
events stamped with one, ``xsd:decimal`` seconds otherwise.
"""

from __future__ import annotations

from decimal import Decimal

from pyoxigraph import DefaultGraph, Literal, NamedNode, Quad, Triple

from spaseq.engine.values.timestamps import datetime_literal, exact_seconds, seconds_literal
from spaseq.engine.vocab import ENDED_AT_TIME, GENERATED_AT_TIME, RDF_TYPE, STARTED_AT_TIME, spaseq

MATCH = spaseq("Match")
QUERY_CLASS = spaseq("Query")
QUERY = spaseq("query")
TEXT = spaseq("text")
FORM = spaseq("form")
TIME = spaseq("time")
START = spaseq("start")
EVENT = spaseq("event")
ATOM = spaseq("atom")
STREAM = spaseq("stream")
GRAPH = spaseq("graph")
EVENT_TIME = spaseq("eventTime")
POSITION = spaseq("position")
ITERATION = spaseq("iteration")
BINDING = spaseq("binding")
VARIABLE = spaseq("variable")
VALUE = spaseq("value")

#: Times at least this large are wall-clock instants; smaller ones are relative seconds.
EPOCH_LIKE = 1e8


def stamp_literal(value: Decimal, like: Decimal | None = None) -> Literal:
    """An event timestamp for ``prov:generatedAtTime``: an xsd:dateTime (UTC, the exact
    fraction kept) for wall-clock times, xsd:decimal seconds for small relative times; both
    read back to the same number of seconds. ``like``: the time whose size picks the form
    (an interval's start is written as its end is)."""
    if abs(value if like is None else like) < EPOCH_LIKE:
        return seconds_literal(value)
    return datetime_literal(exact_seconds(value))


def stamp_quads(name: NamedNode, start: Decimal, time: Decimal) -> list[Quad]:
    """The default-graph stamp of a derived event named ``name`` (a CONSTRUCT graph, a
    materialised or logged result): ``prov:generatedAtTime`` its time and, when it lasts
    (``start`` before ``time``, decision 71), ``prov:startedAtTime`` and ``prov:endedAtTime``,
    both in the form its time takes, so that it reads back as the same interval."""
    quads = [Quad(name, GENERATED_AT_TIME, stamp_literal(time), DefaultGraph())]
    if start != time:
        quads += [Quad(name, STARTED_AT_TIME, stamp_literal(start, like=time), DefaultGraph()),
                  Quad(name, ENDED_AT_TIME, stamp_literal(time), DefaultGraph())]
    return quads


def describe_query(query_iri: NamedNode, text: str, form: str) -> list[Triple]:
    """A registered query: its output IRI typed spaseq:Query, its text and form."""
    return [
        Triple(query_iri, RDF_TYPE, QUERY_CLASS),
        Triple(query_iri, TEXT, Literal(text)),
        Triple(query_iri, FORM, Literal(form)),
    ]
