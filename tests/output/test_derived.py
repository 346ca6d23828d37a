"""A result's graph as its output stream's event (``output.derived.result_graph``, made by
the core's ``derive.rs``) against the Python oracle (``tests/output/derive_oracle.py``): the
CONSTRUCT template instantiated, and the match described in the vocabulary under every time
format, equal up to the names of blank nodes (fresh in each)."""

from __future__ import annotations

from decimal import Decimal

import pytest
from pyoxigraph import BlankNode, Literal, NamedNode, Triple

from spaseq.engine.events import Event
from spaseq.engine.language.query import parse_query
from spaseq.engine.matches import Match, Row, Taken
from spaseq.engine.output.derived import match_name, result_graph
from tests.output.derive_oracle import describe, instantiate

EX = "http://ex.org/"
OUT = EX + "q"


def canonical(triples) -> tuple[list, list]:
    """The triples without blank nodes, and each blank node's outgoing (predicate, object)
    pairs with the predicates that lead to it: a graph up to the names of its blank nodes."""
    plain = sorted(str(t) for t in triples
                   if not isinstance(t.subject, BlankNode) and not isinstance(t.object, BlankNode))
    nodes = {n for t in triples for n in (t.subject, t.object) if isinstance(n, BlankNode)}

    def name(term: object) -> str:
        return "_:" if isinstance(term, BlankNode) else str(term)

    shapes = sorted(
        (sorted(str(t.predicate) + " " + name(t.object) for t in triples if t.subject == n),
         sorted(name(t.subject) + " " + str(t.predicate) for t in triples if t.object == n))
        for n in nodes)
    return plain, shapes


def test_a_template_is_instantiated_as_the_oracle_does_with_fresh_blank_nodes() -> None:
    q = parse_query("PREFIX : <http://ex.org/>\nCONSTRUCT { ?s :p [ :q ?o ] . ?s :r ?missing . "
                    "\"lit\" :p ?s . ?s :p [ :q ?o ] }\nFROM STREAM S <http://ex.org/s>\n"
                    "WHERE { SEQ(A) DEFINE GPM A ON S { ?s :p ?o } }")
    said = Triple(NamedNode(EX + "a"), NamedNode(EX + "b"), Literal("01"))
    mu = {"s": NamedNode(EX + "x"), "o": said}
    event = Event(EX + "s", Decimal(5), (), 0, None)
    row = Row(mu, Match(tuple(mu.items()), (Taken("A", event),), Decimal(5), Decimal(5)))
    first, second = (result_graph(OUT, k, row, q.match.template) for k in (1, 2))
    assert canonical(first) == canonical(instantiate(q.match.template, mu))
    assert len(first) == 4  # the ?missing triple and the literal-subject triple are skipped
    nodes = {t.object for t in first if t.predicate.value == EX + "p"}
    assert len(nodes) == 2 and not nodes & {t.object for t in second}  # fresh per result


@pytest.mark.parametrize("time_format", ["input", "dateTime", "epoch"])
@pytest.mark.parametrize("dated", [False, True])
def test_a_match_is_described_as_the_oracle_describes_it(time_format: str, dated: bool) -> None:
    t0 = Decimal("1704103200.5") if dated else Decimal("3.25")
    events = [Event(EX + "s1", t0, (), 0, NamedNode(EX + "g1"), dated=dated),
              Event(EX + "s2", t0 + 2, (), 1, None, dated=dated),
              Event(EX + "s2", t0 + 3, (), 2, BlankNode("b7"), dated=dated)]
    taken = (Taken("A", events[0]), Taken("B", events[1]), Taken("B", events[2]))
    bindings = {"x": Literal("7", datatype=NamedNode("http://www.w3.org/2001/XMLSchema#integer")),
                "y": NamedNode(EX + "y"), "z": Literal("é", language="fr")}
    match = Match(tuple(bindings.items()), taken, t0, t0 + 3)
    got = result_graph(OUT, 3, Row(bindings, match), None, time_format)
    expected = describe(match, bindings, match_name(OUT, 3), NamedNode(OUT), time_format)
    assert canonical(got) == canonical(expected)
    assert match_name(OUT, 3) == NamedNode(OUT + "#match-3")
    assert match_name(EX, 3) == NamedNode(EX + "match-3")
