"""The spaseq functions in rdflib: registered once per process with
``rdflib.plugins.sparql.operators.register_custom_function`` (raw, to see the dataset the
query runs on), calling the same implementations as pyoxigraph (``registry``) on converted
terms. Errors reach rdflib only as ``SPARQLError``. What ``register_rdflib`` and
``unregister_rdflib`` (the package's public names) run, imported by them on first use.
"""

from __future__ import annotations

import hashlib
import warnings
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from pyoxigraph import BlankNode, Literal, NamedNode
from rdflib import BNode as RdfBNode
from rdflib import Literal as RdfLiteral
from rdflib import URIRef
from rdflib.graph import Dataset
from rdflib.plugins.sparql.operators import register_custom_function, unregister_custom_function
from rdflib.plugins.sparql.sparql import SPARQLError

from spaseq.engine.functions import stream_functions as S
from spaseq.engine.functions.arguments import FunctionError, Term
from spaseq.engine.functions.registry import FUNCTION_IRIS, Environment, call
from spaseq.engine.vocab import XSD_STRING
from spaseq.extension_functions.runs import ACTIVE_RUN

# ---------------------------------------------------------------- terms


def from_rdflib(node: object) -> Term:
    """An rdflib term as a pyoxigraph term; FunctionError for anything else (e.g. None)."""
    try:
        if isinstance(node, URIRef):
            return NamedNode(str(node))
        if isinstance(node, RdfBNode):
            label = str(node)
            return BlankNode(label if label.isalnum() else "b" + hashlib.sha1(label.encode()).hexdigest())
        if isinstance(node, RdfLiteral):
            if node.language:
                return Literal(str(node), language=node.language)
            if node.datatype is not None:
                return Literal(str(node), datatype=NamedNode(str(node.datatype)))
            return Literal(str(node))
    except ValueError as err:
        raise FunctionError(str(err)) from None
    raise FunctionError(f"{node!r} is not an RDF term")


def to_rdflib(term: Term) -> URIRef | RdfBNode | RdfLiteral:
    """A pyoxigraph term as an rdflib term, keeping its lexical form."""
    if isinstance(term, NamedNode):
        return URIRef(term.value)
    if isinstance(term, BlankNode):
        return RdfBNode(term.value)
    if term.language:
        return RdfLiteral(term.value, lang=term.language)
    if term.datatype == XSD_STRING:
        return RdfLiteral(term.value)
    return RdfLiteral(term.value, datatype=URIRef(term.datatype.value), normalize=False)


# ---------------------------------------------------------------- registration

def _rdflib_lookup(ctx: object, predicate: NamedNode) -> S.TimeLookup:
    """Timestamps from the default graph of the dataset an rdflib query runs on."""
    qctx = getattr(ctx, "ctx", None)
    dataset = getattr(qctx, "_dataset", None)
    if isinstance(dataset, Dataset):
        graph = dataset.default_graph
    elif dataset is not None:
        graph = dataset.default_context
    else:
        graph = getattr(qctx, "graph", None)
    pred = URIRef(predicate.value)

    def lookup(term: Term) -> Decimal | None:
        if graph is None:
            return None
        return S.one_time([from_rdflib(o) for o in graph.objects(to_rdflib(term), pred)], term)

    return lookup


def _rdflib_function(iri: str, time_predicate: NamedNode) -> Callable:
    def function(expr: Any, ctx: object) -> object:  # expr: rdflib's CompValue of the call
        try:
            raw = expr.expr or ()  # evaluated arguments (rdflib resolves them on access)
            if any(isinstance(a, SPARQLError) for a in raw):
                raise FunctionError("an argument is an error")
            args = tuple(from_rdflib(a) for a in raw)
            env = Environment(_rdflib_lookup(ctx, time_predicate), ACTIVE_RUN.get())
            return to_rdflib(call(iri, args, env))
        except SPARQLError:
            raise
        except Exception as err:  # noqa: BLE001 - only SPARQL errors may reach rdflib
            raise SPARQLError(str(err)) from None

    return function


def register(time_predicate: NamedNode) -> None:
    """Register every spaseq function with rdflib (``register_rdflib``)."""
    for iri in FUNCTION_IRIS:
        register_custom_function(URIRef(iri), _rdflib_function(iri, time_predicate), override=True, raw=True)


def unregister() -> None:
    """Remove the spaseq functions from rdflib (``unregister_rdflib``)."""
    with warnings.catch_warnings():  # rdflib warns about a function that is not registered
        warnings.simplefilter("ignore")
        for iri in FUNCTION_IRIS:
            unregister_custom_function(URIRef(iri))
