"""The paper's worked examples and each operator on small hand-checked streams, evaluated
by the reference evaluator; expected rows are written out by hand from SEMANTICS.md."""

from __future__ import annotations

import pyoxigraph
import pytest

from spaseq.engine.language.query import parse_query
from spaseq.engine.matches import project
from spaseq.engine.reference.evaluator import evaluate
from tests.util import EX, events, query_text


def short(term) -> str:
    value = term.value
    return value[len(EX):] if value.startswith(EX) else value


def rows(seq: str, defines: str, evs, select: str = "*", within: str = "", kb=None,
         end_of_input: bool = True, streams=("u1", "u2")):
    """(time, {var: short value}, [(atom, time)]) per match, in completion order."""
    q = parse_query(query_text(seq, defines, select, within, streams))
    out = []
    for r in project(evaluate(q, evs, kb, end_of_input), q.match.variables, q.match.distinct):
        out.append((r.time, {v: short(t) for v, t in r.bindings.items()},
                    [(t.atom, t.event.time) for t in r.taken]))
    return out


def taken(result) -> list[list[tuple[str, float]]]:
    return sorted(r[2] for r in result)


# ---------------------------------------------------------------- Examples 6-8 (Defs 10-12)

EX6 = events(
    ("u1", 10, ":H1 :pow :Pw1 ; :loc :L1 ."),
    ("u1", 15, ":H2 :pow :Pw2 ; :loc :L1 ."),
    ("u2", 15, ":W1 :value :Vl1 ; :loc :L2 ."),
    ("u2", 20, ":W1 :value :Vl1 ; :loc :L1 ."),
    ("u2", 25, ":W2 :value :Vl2 ; :loc :L1 ."),
)
P1P2 = "DEFINE GPM A ON U1 { ?h :pow ?p ; :loc ?l } DEFINE GPM B ON U2 { ?w :value ?v ; :loc ?l }"


def test_example6_skip_till_any() -> None:
    got = rows("A : B", P1P2, EX6, "?h ?w ?v")
    assert sorted((t, b["h"], b["w"], b["v"]) for t, b, _ in got) == [
        (20, "H1", "W1", "Vl1"), (20, "H2", "W1", "Vl1"),
        (25, "H1", "W2", "Vl2"), (25, "H2", "W2", "Vl2"),
    ]


def test_example7_skip_till_next() -> None:
    got = rows("A ; B", P1P2, EX6, "?h ?w")
    assert sorted((t, b["h"], b["w"]) for t, b, _ in got) == [(20, "H1", "W1"), (20, "H2", "W1")]


def test_example8_strict_contiguity() -> None:
    # H1 at 10: the next timestamp is 15, where W1 is at :L2 -> no match.
    got = rows("A , B", P1P2, EX6, "?h ?w")
    assert [(t, b["h"], b["w"]) for t, b, _ in got] == [(20, "H2", "W1")]


# ---------------------------------------------------------------- Figure 1

FIG1 = events(
    ("u1", 1, ":a1 :type :A ."), ("u1", 2, ":b1 :type :B ."), ("u1", 3, ":c1 :type :C ."),
    ("u1", 4, ":a2 :type :A ."), ("u1", 5, ":a3 :type :A ."), ("u1", 6, ":b2 :type :B ."),
    ("u1", 7, ":c2 :type :C ."),
)
ABC = ("DEFINE GPM A ON U1 { ?a :type :A } DEFINE GPM B ON U1 { ?b :type :B } "
       "DEFINE GPM C ON U1 { ?c :type :C }")


def fig1(op: str) -> list[tuple[str, str, str]]:
    got = rows(f"A {op} B {op} C", ABC, FIG1, "?a ?b ?c", streams=("u1",))
    return sorted((b["a"], b["b"], b["c"]) for _, b, _ in got)


def test_figure1_strict_contiguity() -> None:
    # The figure lists only {a1,b1,c1}; by Def 12 a3, b2, c2 (times 5, 6, 7) are contiguous too.
    assert fig1(",") == [("a1", "b1", "c1"), ("a3", "b2", "c2")]


def test_figure1_skip_till_next() -> None:
    assert fig1(";") == [("a1", "b1", "c1"), ("a2", "b2", "c2"), ("a3", "b2", "c2")]


def test_figure1_skip_till_any() -> None:
    # The figure omits {a1,b1,c2}, which Def 10 allows (c2 is later than b1).
    assert fig1(":") == [
        ("a1", "b1", "c1"), ("a1", "b1", "c2"), ("a1", "b2", "c2"),
        ("a2", "b2", "c2"), ("a3", "b2", "c2"),
    ]


# ---------------------------------------------------------------- Example 4: conjunction

def test_example4_conjunction() -> None:
    evs = events(
        ("u1", 10, ":H1 :pow :Pw1 ; :loc :L1 ."),
        ("u2", 10, ":W1 :value :Vl1 ; :loc :L1 ."),
        ("u1", 15, ":H2 :pow :Pw2 ; :loc :L2 ."),
        ("u1", 25, ":H3 :pow :Pw3 ; :loc :L3 ."),
        ("u2", 20, ":W2 :value :Vl2 ; :loc :L1 ."),
    )
    got = rows("(A & B)", P1P2, evs, "?h ?p ?l ?w ?v")
    assert [(t, b) for t, b, _ in got] == [
        (10, {"h": "H1", "p": "Pw1", "l": "L1", "w": "W1", "v": "Vl1"})
    ]
    assert got[0][2] == [("A", 10), ("B", 10)]


def test_conjunction_same_event_and_context() -> None:
    # One event may satisfy both operands; operands see the prefix's context only.
    evs = events(("u1", 1, ":s :x 5 ."), ("u1", 2, ":t :y 7 ; :z 9 ."))
    defs = ("DEFINE GPM A ON U1 { ?s :x ?x } DEFINE GPM B ON U1 { ?t :y ?y FILTER(?y > ?x) } "
            "DEFINE GPM C ON U1 { ?t :z ?z FILTER(?z > ?x) }")
    got = rows("A ; (B & C)", defs, evs, "?x ?y ?z", streams=("u1",))
    assert [(t, b) for t, b, _ in got] == [(2, {"x": "5", "y": "7", "z": "9"})]


def test_disjunction_each_operand_its_own_result() -> None:
    evs = events(("u1", 1, ":s :x 5 ."), ("u1", 2, ":t :y 7 ; :z 9 ."))
    defs = ("DEFINE GPM A ON U1 { ?s :x ?x } DEFINE GPM B ON U1 { ?t :y ?y } "
            "DEFINE GPM C ON U1 { ?t :z ?z }")
    got = rows("A ; (B | C)", defs, evs, "?y ?z", streams=("u1",))
    assert sorted(r[2][-1][0] for r in got) == ["B", "C"]
    assert sorted(tuple(sorted(b.items())) for _, b, _ in got) == [(("y", "7"),), (("z", "9"),)]


# ---------------------------------------------------------------- Example 9: Kleene+

def test_example9_kleene_plus() -> None:
    evs = events(
        ("u1", 10, ":H1 :pow :Pw1 ; :loc :L1 ."),
        ("u1", 25, ":H2 :pow :Pw2 ; :loc :L2 ."),
        ("u2", 15, ":W1 :value :Vl1 ; :loc :L1 ."),
        ("u2", 20, ":W2 :value :Vl2 ; :loc :L1 ."),
    )
    got = rows("A ; B+", P1P2, evs, "?h ?p ?l ?w ?v", within="10 SECONDS")
    assert [(t, b) for t, b, _ in got] == [
        (15, {"h": "H1", "p": "Pw1", "l": "L1", "w": "W1", "v": "Vl1"}),
        (20, {"h": "H1", "p": "Pw1", "l": "L1", "w": "W2", "v": "Vl2"}),
    ]
    assert got[1][2] == [("A", 10), ("B", 15), ("B", 20)]


def test_kleene_iterations_strictly_contiguous() -> None:
    # B at 2 and 4 with an unrelated event at 3: the second iteration is not contiguous.
    evs = events(("u1", 1, ":a :k 1 ."), ("u1", 2, ":b :k 2 ."), ("u1", 3, ":x :other 0 ."),
                 ("u1", 4, ":b2 :k 2 ."), ("u1", 5, ":c :k 3 ."))
    defs = ("DEFINE GPM A ON U1 { ?a :k 1 } DEFINE GPM B ON U1 { ?b :k 2 } "
            "DEFINE GPM C ON U1 { ?c :k 3 }")
    assert taken(rows("A ; B+ ; C", defs, evs, streams=("u1",))) == [
        [("A", 1), ("B", 2), ("C", 5)]
    ]
    assert taken(rows("A ; B+", defs, evs, streams=("u1",))) == [[("A", 1), ("B", 2)]]


def test_kleene_first_atom_iterates_skip_till_next() -> None:
    evs = events(("u1", 1, ":b :k 2 ."), ("u1", 2, ":x :other 0 ."), ("u1", 3, ":b2 :k 2 ."))
    got = rows("B+", "DEFINE GPM B ON U1 { ?b :k 2 }", evs, streams=("u1",))
    assert taken(got) == [[("B", 1)], [("B", 1), ("B", 3)], [("B", 3)]]


def test_kleene_iteration_local_variables() -> None:
    # ?v is local to each iteration: it may differ, and the last one shows.
    evs = events(("u1", 1, ":a :start 0 ."), ("u1", 2, ":r :v 3 ."), ("u1", 3, ":r :v 4 ."),
                 ("u1", 4, ":c :end 5 ."))
    defs = ("DEFINE GPM A ON U1 { ?a :start ?s } DEFINE GPM B ON U1 { ?r :v ?v FILTER(?v > ?s) } "
            "DEFINE GPM C ON U1 { ?c :end ?e FILTER(?e > ?v) }")
    got = rows("A ; B+ , C", defs, evs, "?v ?e", streams=("u1",))
    assert [(t, b) for t, b, _ in got] == [(4, {"v": "4", "e": "5"})]
    assert got[0][2] == [("A", 1), ("B", 2), ("B", 3), ("C", 4)]


# ---------------------------------------------------------------- Example 10: the KB

def test_example10_graph_clause() -> None:
    kb = pyoxigraph.Store()
    g = pyoxigraph.NamedNode(EX + "db")
    for h, owner, addr in (("H1", "john", "paris"), ("H2", "smith", "lyon")):
        kb.add(pyoxigraph.Quad(pyoxigraph.NamedNode(EX + h), pyoxigraph.NamedNode(EX + "owner"),
                               pyoxigraph.NamedNode(EX + owner), g))
        kb.add(pyoxigraph.Quad(pyoxigraph.NamedNode(EX + h), pyoxigraph.NamedNode(EX + "address"),
                               pyoxigraph.NamedNode(EX + addr), g))
    evs = events(("u1", 10, ":H1 :pow :Pw1 ; :loc :L1 ."), ("u1", 25, ":H3 :pow :Pw3 ; :loc :L3 ."))
    defs = "DEFINE GPM A ON U1 { ?h :pow ?p ; :loc ?l GRAPH :db { ?h :owner ?n ; :address ?a } }"
    got = rows("A", defs, evs, "?h ?p ?l ?n ?a", kb=kb, streams=("u1",))
    assert [(t, b) for t, b, _ in got] == [
        (10, {"h": "H1", "p": "Pw1", "l": "L1", "n": "john", "a": "paris"})
    ]


# ---------------------------------------------------------------- optional and negation

ONE_STREAM = ("DEFINE GPM A ON U1 { ?a :k 1 } DEFINE GPM B ON U1 { ?b :k 2 } "
              "DEFINE GPM C ON U1 { ?c :k 3 }")


def test_negation_in_the_middle() -> None:
    evs = events(("u1", 1, ":a :k 1 ."), ("u1", 2, ":b :k 2 ."), ("u1", 3, ":c :k 3 ."),
                 ("u1", 4, ":a2 :k 1 ."), ("u1", 5, ":c2 :k 3 ."))
    got = rows("A ; B! ; C", ONE_STREAM, evs, streams=("u1",))
    assert taken(got) == [[("A", 4), ("C", 5)]]


def test_negation_with_strict_contiguity_is_vacuous() -> None:
    # With ',' nothing lies strictly between A and C (the original's negation scenario).
    evs = events(("u1", 1, ":a :k 1 ."), ("u1", 2, ":c :k 3 ."))
    assert taken(rows("A , B! , C", ONE_STREAM, evs, streams=("u1",))) == [[("A", 1), ("C", 2)]]


def test_optional_taken_and_untaken() -> None:
    evs = events(("u1", 1, ":a :k 1 ."), ("u1", 2, ":b :k 2 ."), ("u1", 3, ":c :k 3 ."),
                 ("u1", 10, ":a2 :k 1 ."), ("u1", 11, ":c2 :k 3 ."))
    got = rows("A ; B? ; C", ONE_STREAM, evs, streams=("u1",))
    # A@1: B@2 taken -> C@3. The bare A@1;C@3 is excluded (a B lies between).
    assert taken(got) == [[("A", 1), ("B", 2), ("C", 3)], [("A", 10), ("C", 11)]]


def test_trailing_negation_waits_for_window_close() -> None:
    evs = events(("u1", 1, ":a :k 1 ."), ("u1", 3, ":b :k 2 ."), ("u1", 10, ":a2 :k 1 ."),
                 ("u1", 20, ":b2 :k 2 ."), ("u1", 30, ":x :k 9 ."))
    got = rows("A ; B!", ONE_STREAM, evs, within="5 SECONDS", streams=("u1",))
    # A@1 has a B at 3 inside (1, 6]; A@10 has none in (10, 15] (B@20 is outside).
    assert taken(got) == [[("A", 10)]]
    # Without end of input, the last window (A@10 closes when the clock passes 15) still
    # closed by the event at 20; but a match whose window is open at the cut is held back.
    evs2 = events(("u1", 1, ":a :k 1 ."), ("u1", 2, ":x :k 9 ."))
    assert rows("A ; B!", ONE_STREAM, evs2, within="5 SECONDS", streams=("u1",),
                end_of_input=False) == []
    assert len(rows("A ; B!", ONE_STREAM, evs2, within="5 SECONDS", streams=("u1",))) == 1


# ---------------------------------------------------------------- windows and DISTINCT

def test_time_window_is_inclusive() -> None:
    evs = events(("u1", 0, ":a :k 1 ."), ("u1", 10, ":b :k 2 ."), ("u1", 21, ":b2 :k 2 ."))
    got = rows("A : B", ONE_STREAM, evs, within="10 SECONDS", streams=("u1",))
    assert taken(got) == [[("A", 0), ("B", 10)]]
    got = rows("A : B", ONE_STREAM, evs, within="1 MINUTE", streams=("u1",))
    assert len(got) == 2


def test_count_window() -> None:
    evs = events(("u1", 0, ":a :k 1 ."), ("u1", 1, ":x :k 9 ."), ("u1", 2, ":b :k 2 ."),
                 ("u1", 3, ":x :k 9 ."), ("u1", 4, ":b2 :k 2 ."))
    got = rows("A : B", ONE_STREAM, evs, within="3 EVENTS", streams=("u1",))
    assert taken(got) == [[("A", 0), ("B", 2)]]


def test_tumbling_window() -> None:
    evs = events(("u1", 0, ":a :k 1 ."), ("u1", 8, ":b :k 2 ."), ("u1", 9, ":a2 :k 1 ."),
                 ("u1", 11, ":b2 :k 2 ."))
    got = rows("A : B", ONE_STREAM, evs, within="10 SECONDS TUMBLING", streams=("u1",))
    # Windows [0,10) and [10,20): A@9 and B@11 are 2 s apart but in different windows.
    assert taken(got) == [[("A", 0), ("B", 8)]]
    got = rows("A : B", ONE_STREAM, evs, within="10 SECONDS", streams=("u1",))
    # Sliding: A@9 -> B@11 now counts; A@0 -> B@11 spans 11 s and does not.
    assert taken(got) == [[("A", 0), ("B", 8)], [("A", 9), ("B", 11)]]


def test_same_timestamp_is_not_a_sequence() -> None:
    evs = events(("u1", 1, ":a :k 1 ."), ("u2", 1, ":b :k 2 ."))
    defs = "DEFINE GPM A ON U1 { ?a :k 1 } DEFINE GPM B ON U2 { ?b :k 2 }"
    assert rows("A : B", defs, evs) == []
    assert len(rows("(A & B)", defs, evs)) == 1


def test_strict_contiguity_ignores_ties_on_other_streams() -> None:
    # An event on u2 at the same time as A does not break A , B.
    evs = events(("u1", 1, ":a :k 1 ."), ("u2", 1, ":x :k 9 ."), ("u1", 2, ":b :k 2 ."))
    defs = "DEFINE GPM A ON U1 { ?a :k 1 } DEFINE GPM B ON U1 { ?b :k 2 }"
    assert taken(rows("A , B", defs, evs)) == [[("A", 1), ("B", 2)]]


@pytest.mark.parametrize("distinct,expected", [(False, 2), (True, 1)])
def test_distinct(distinct: bool, expected: int) -> None:
    evs = events(("u1", 1, ":a :k 1 ."), ("u1", 2, ":b :k 2 ."), ("u1", 3, ":b2 :k 2 ."))
    select = "DISTINCT ?a" if distinct else "?a"
    assert len(rows("A : B", ONE_STREAM, evs, select, streams=("u1",))) == expected
