"""Algebraic laws SEMANTICS.md implies, checked with hypothesis on random streams:
strategy inclusion, disjunction as union, window monotonicity, Kleene+, its bounded forms
(docs/decisions.md 61) and optional as their definitions say. Matches are compared as bags
of (events per atom, mapping)."""

from __future__ import annotations

from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from spaseq.engine import api
from spaseq.engine.algebra.operators import iteration_text
from spaseq.engine.language.query import parse_query
from spaseq.engine.reference.evaluator import evaluate
from tests.util import ev, query_text

DEFS = (
    "DEFINE GPM A ON U1 { ?x :val ?a } "
    "DEFINE GPM B ON U2 { ?y :val ?b FILTER(?b >= ?a) } "
    "DEFINE GPM C ON U1 { ?z :val ?c FILTER(?c != ?a) } "
    "DEFINE GPM D ON U2 { ?w :tag ?t }"
)


@st.composite
def streams(draw, dense: bool = False):
    """Up to 12 events at times 0..10; ``dense``: one per second, so that Kleene iterations,
    strictly contiguous, often run long."""
    n = draw(st.integers(min_value=1, max_value=12))
    out = []
    for i in range(n):
        stream = draw(st.sampled_from(["u1", "u2"]))
        time = i if dense else draw(st.integers(min_value=0, max_value=10))
        val = draw(st.integers(min_value=0, max_value=4))
        triples = f":e{i} :val {val} ."
        if draw(st.booleans()):
            triples += f" :e{i} :tag :T{draw(st.integers(0, 1))} ."
        out.append(ev(stream, time, triples, seq=i))
    return out


def bag(seq: str, evs, within: str = "", evaluator=evaluate) -> Counter:
    q = parse_query(query_text(seq, DEFS, "*", within))
    return Counter(
        (tuple((t.atom, t.event.seq) for t in m.taken), m.bindings) for m in evaluator(q, evs)
    )


def included(small: Counter, big: Counter) -> bool:
    return all(big[k] >= n for k, n in small.items())


ops = st.sampled_from([",", ";", ":"])


@given(streams(), ops)
def test_strategy_inclusion(evs, other) -> None:
    strict, nxt, anyy = (bag(f"A {o} B {other} C", evs) for o in (",", ";", ":"))
    assert included(strict, nxt) and included(nxt, anyy)
    uniform = [bag(f"A {o} B {o} C", evs) for o in (",", ";", ":")]
    assert included(uniform[0], uniform[1]) and included(uniform[1], uniform[2])


@given(streams(), st.sampled_from([",", ":"]))
def test_disjunction_is_union(evs, op) -> None:
    assert bag(f"A {op} (B | D)", evs) == bag(f"A {op} B", evs) + bag(f"A {op} D", evs)


@given(streams(), ops, ops, st.integers(0, 4), st.integers(0, 4))
def test_wider_window_never_loses(evs, op1, op2, w1, extra) -> None:
    narrow = bag(f"A {op1} B+ {op2} C", evs, f"{w1} SECONDS" if w1 else "")
    wide = bag(f"A {op1} B+ {op2} C", evs, f"{w1 + extra + 1} SECONDS" if w1 else "")
    assert included(narrow, wide) if w1 else narrow == wide


@given(streams(), ops)
def test_kleene_one_iteration_is_the_plain_sequence(evs, op) -> None:
    plus = bag(f"A {op} B+", evs)
    single = Counter({k: n for k, n in plus.items() if len(k[0]) == 2})
    # One-iteration matches carry the iteration's bindings exactly as the plain atom does.
    assert single == bag(f"A {op} B", evs)


@given(streams(), ops, ops)
def test_optional_is_taken_plus_negated(evs, op1, op2) -> None:
    assert bag(f"A {op1} B? {op2} C", evs) == (
        bag(f"A {op1} B {op2} C", evs) + bag(f"A {op1} B! {op2} C", evs)
    )


@given(streams())
def test_conjunction_commutes(evs) -> None:
    def norm(b: Counter) -> Counter:
        return Counter({(tuple(sorted(k[0])), k[1]): n for k, n in b.items()})

    assert norm(bag("A ; (B & D)", evs)) == norm(bag("A ; (D & B)", evs))


def _iterations(key: tuple) -> int:
    return sum(1 for atom, _ in key[0] if atom == "B")


@given(streams(dense=True), ops, ops, st.booleans(), st.integers(1, 2), st.one_of(st.none(), st.integers(0, 1)))
def test_bounded_iterations_are_the_kleene_plus_matches_of_those_counts(evs, op1, op2, first, low, extra) -> None:
    """``B{m,n}`` (m >= 1) keeps exactly the matches of ``B+`` with m to n iterations, in the
    middle of a sequence and opening it."""
    high = None if extra is None else low + extra
    seq = "B{q} {op2} C" if first else "A {op1} B{q} {op2} C"
    plus = bag(seq.format(q="+", op1=op1, op2=op2), evs)
    expected = Counter({k: n for k, n in plus.items()
                        if low <= _iterations(k) and (high is None or _iterations(k) <= high)})
    assert bag(seq.format(q=iteration_text(low, high), op1=op1, op2=op2), evs) == expected


@given(streams(dense=True), ops, ops, st.one_of(st.none(), st.integers(1, 2)))
def test_zero_iterations_are_the_negated_atom(evs, op1, op2, high) -> None:
    """``B{0,n}`` is ``B{1,n}`` plus the matches without B where no B lies between (``B!``)."""
    assert bag(f"A {op1} B{iteration_text(0, high)} {op2} C", evs) == (
        bag(f"A {op1} B{iteration_text(1, high)} {op2} C", evs) + bag(f"A {op1} B! {op2} C", evs)
    )


@given(streams(), ops, ops)
def test_zero_or_one_iteration_is_the_optional_atom(evs, op1, op2) -> None:
    """``B{0,1}`` means exactly ``B?`` (decision 61), in the reference and in the engine."""
    for evaluator in (evaluate, api.evaluate):
        assert bag(f"A {op1} B{{0,1}} {op2} C", evs, evaluator=evaluator) == (
            bag(f"A {op1} B? {op2} C", evs, evaluator=evaluator)
        )
