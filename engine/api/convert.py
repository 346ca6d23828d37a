"""What ``Engine.push`` accepts, made what the engine keeps: an event's graph (pyoxigraph
triples or quads, an rdflib graph or triples, or TriG/N-Quads/Turtle/N-Triples text) as
pyoxigraph triples, and a time (seconds, an aware ``datetime``, a pyoxigraph or rdflib
timestamp literal) as exact seconds."""

from __future__ import annotations

import sys
from datetime import datetime
from decimal import Decimal

import pyoxigraph
from pyoxigraph import NamedNode, Quad, Triple

from spaseq.engine.api.errors import EventSyntaxError
from spaseq.engine.errors import Location, SpaseqError, UsageError
from spaseq.engine.io.parsing import syntax_error_location
from spaseq.engine.values.timestamps import datetime_to_seconds, exact_seconds, is_datetime, to_seconds


def event_triples(graph: object, format: str) -> tuple[Triple, ...]:
    """Normalise the accepted event payloads to pyoxigraph triples."""
    if isinstance(graph, str | bytes):
        fmt = {"trig": pyoxigraph.RdfFormat.TRIG, "nquads": pyoxigraph.RdfFormat.N_QUADS,
               "turtle": pyoxigraph.RdfFormat.TURTLE, "ntriples": pyoxigraph.RdfFormat.N_TRIPLES}
        if format not in fmt:
            raise UsageError(f"unknown event format {format!r}; use {', '.join(fmt)}")
        try:
            return tuple(q.triple for q in pyoxigraph.parse(graph, format=fmt[format]))
        except SyntaxError as err:
            location, message = syntax_error_location(err, "<event>")
            raise EventSyntaxError(f"{format} syntax error: {message}", location) from None
        except UnicodeDecodeError as err:
            raise EventSyntaxError(f"the event is not UTF-8: {err}", Location("<event>")) from None
    out = []
    for item in graph:  # type: ignore[attr-defined]
        if isinstance(item, Triple):
            out.append(item)
        elif isinstance(item, Quad):
            out.append(item.triple)
        else:  # an rdflib triple (s, p, o)
            out.append(_from_rdflib(item))
    return tuple(out)


def _from_rdflib(triple: tuple) -> Triple:
    """An rdflib triple (s, p, o) as a pyoxigraph one (rdflib is in use when one is given)."""
    from spaseq.engine.io.rdflib_terms import to_oxigraph

    s, p, o = (to_oxigraph(t) for t in triple)
    if isinstance(s, pyoxigraph.Literal) or not isinstance(p, NamedNode):
        raise SpaseqError(f"{triple!r} is not an RDF triple (a literal subject or a predicate that is not an IRI)")
    return Triple(s, p, o)


def event_time(value: object) -> tuple[Decimal, bool]:
    """A caller's time as the engine keeps it and whether it was an xsd:dateTime: a number of
    seconds (``values.timestamps.exact_seconds``), an aware ``datetime``, or a timestamp
    literal (pyoxigraph, or rdflib: read as its lexical form and datatype); UsageError else."""
    if isinstance(value, datetime) and value.tzinfo is None:
        raise UsageError(f"bad time: {value!r} has no time zone (give an aware datetime)")
    try:
        if isinstance(value, datetime):
            return datetime_to_seconds(value.isoformat()), True
        literal = value if isinstance(value, pyoxigraph.Literal) else _rdflib_literal(value)
        if literal is None:
            return exact_seconds(value), False  # type: ignore[arg-type]
        return to_seconds(literal), is_datetime(literal)
    except ValueError as err:
        raise UsageError(f"bad time: {err}") from None


def _rdflib_literal(value: object) -> pyoxigraph.Literal | None:
    """An rdflib Literal as a pyoxigraph one; None for anything else (rdflib is not imported
    for this: a caller holding an rdflib Literal has imported it)."""
    rdflib = sys.modules.get("rdflib")
    if rdflib is None or not isinstance(value, rdflib.Literal):
        return None
    datatype = value.datatype
    return pyoxigraph.Literal(str(value), datatype=NamedNode(str(datatype)) if datatype else None)
