"""``sparql_prefixes`` reads a SPARQL prologue as rdflib's SPARQL parser does."""

from __future__ import annotations

import pytest

from spaseq.engine.language.prologue import sparql_prefixes

rdflib_sparql = pytest.importorskip("rdflib.plugins.sparql")

#: prologues, and the prefix names they declare
PROLOGUES = [
    ("SELECT * WHERE { ?s ?p ?o }", set()),
    ("PREFIX ex: <http://ex.org/> SELECT * WHERE { ?s ?p ?o }", {"ex"}),
    ("# a comment\nprefix : <http://a.org/#>\n  PREFIX ex:<http://ex.org/>\nBASE <http://b.org/>\n"
     "PrEfIx x-y.z: <urn:x> # why not\nSELECT * WHERE { ?s ?p ?o }", {"", "ex", "x-y.z"}),
    ("PREFIX ex: <http://one.org/> PREFIX ex: <http://two.org/> ASK { ?s ?p ?o }", {"ex"}),
]


@pytest.mark.parametrize(("text", "names"), PROLOGUES)
def test_the_prefixes_rdflib_reads(text: str, names: set[str]) -> None:
    query = rdflib_sparql.prepareQuery(text)
    theirs = {p: str(ns) for p, ns in query.prologue.namespace_manager.namespaces()}
    ours = sparql_prefixes(text)
    assert set(ours) == names
    assert all(theirs.get(p) == ns for p, ns in ours.items()), (ours, theirs)


def test_a_prologue_it_cannot_read_gives_what_came_before() -> None:
    assert sparql_prefixes("PREFIX a: <http://a.org/> PREFIX b <oops> SELECT") == {"a": "http://a.org/"}
