"""RDF terms between rdflib and pyoxigraph, preserving IRIs, blank-node labels, datatypes and
language tags (the lexical form is kept as written, so ``"14.0"^^xsd:double`` stays ``"14.0"``):
the one conversion, for the rdflib plugin and for rdflib triples pushed to ``Engine.push``.
Imports rdflib (the ``rdflib`` extra): import this module only where rdflib is in use."""

from __future__ import annotations

import hashlib

import pyoxigraph as ox
from rdflib import BNode, Literal, URIRef
from rdflib.term import Identifier

from spaseq.engine.errors import SpaseqError
from spaseq.engine.vocab import RDF_LANGSTRING, XSD_STRING

OxTerm = ox.NamedNode | ox.BlankNode | ox.Literal


def to_oxigraph(term: Identifier) -> OxTerm:
    """An rdflib URIRef/BNode/Literal as the pyoxigraph term with the same meaning."""
    if isinstance(term, URIRef):
        try:
            return ox.NamedNode(str(term))
        except ValueError as err:
            raise SpaseqError(f"<{term}> is not a valid IRI ({err})") from None
    if isinstance(term, BNode):
        return _blank(str(term))
    if isinstance(term, Literal):
        if term.language:
            return ox.Literal(str(term), language=term.language)
        if term.datatype is not None:
            return ox.Literal(str(term), datatype=ox.NamedNode(str(term.datatype)))
        return ox.Literal(str(term))
    raise SpaseqError(f"{term!r} is not an RDF term spaseq can read (an IRI, blank node or literal)")


def _blank(label: str) -> ox.BlankNode:
    """The blank node with rdflib's label, or a stable stand-in when the label is not a valid
    N-Triples blank node label (rdflib accepts any string)."""
    try:
        return ox.BlankNode(label)
    except ValueError:
        return ox.BlankNode("b" + hashlib.sha1(label.encode("utf-8")).hexdigest())


def to_rdflib(term: OxTerm) -> URIRef | BNode | Literal:
    """A pyoxigraph term as the rdflib term with the same meaning (plain strings untyped; the
    lexical form is not normalised)."""
    if isinstance(term, ox.NamedNode):
        return URIRef(term.value)
    if isinstance(term, ox.BlankNode):
        return BNode(term.value)
    if term.language:
        return Literal(term.value, lang=term.language)
    datatype = term.datatype
    if datatype == XSD_STRING or datatype == RDF_LANGSTRING:
        return Literal(term.value)
    return Literal(term.value, datatype=URIRef(datatype.value), normalize=False)


class TermCache(dict):
    """``cache[term]`` is ``to_oxigraph(term)``, converted once per distinct term: events of one
    stream repeat their predicates, subjects and many values."""

    def __missing__(self, term: Identifier) -> OxTerm:
        value = self[term] = to_oxigraph(term)
        return value
