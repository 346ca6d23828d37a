"""Relative timers and SELECT expressions in the language (docs/decisions.md 71): what they
parse to, and the located errors for a timer that cannot be evaluated."""

from __future__ import annotations

from decimal import Decimal

import pytest

from spaseq.engine.algebra import operators as A
from spaseq.engine.errors import QueryError
from spaseq.engine.language.query import parse_query

HEAD = "PREFIX : <http://ex.org/>\nSELECT {select}\nFROM STREAM S <http://ex.org/s>\nWHERE {{ SEQ({seq}) {defines} }}"
A_ = "DEFINE GPM A ON S { ?a :kind :a ; :key ?k } "


def q(seq: str, timer: str, select: str = "*") -> A.Query:
    return parse_query(HEAD.format(select=select, seq=seq, defines=A_ + f"DEFINE GPM T ON S {timer} {{ ?t :key ?k ; :v ?v }}"))


def test_timers_parse_to_their_interval_rule() -> None:
    after = q("A ; T", "AFTER A FOR 12 SECONDS NOT").events["T"].timer
    assert after == A.Timer(A.AFTER, "A", Decimal(12), A.ABSENT)
    assert after.interval(Decimal(70), Decimal(80)) == (Decimal(80), Decimal(92))
    before = q("A , T", "before A for 1 minute collect", "?k (AVG(?v) AS ?avg)")
    assert before.events["T"].timer == A.Timer(A.BEFORE, "A", Decimal(60), A.COLLECT)
    assert before.events["T"].timer.interval(Decimal(70), Decimal(80)) == (Decimal(10), Decimal(70))
    assert before.match.variables == ("k", "avg") and before.match.expressions == (("avg", "AVG(?v)"),)
    assert before.warnings == ()  # ?avg is bound by its expression


@pytest.mark.parametrize(("seq", "timer", "select", "message", "column"), [
    ("T ; A", "AFTER A FOR 1 SECOND NOT", "*", "anchored on A, which does not precede it", 99),
    ("A ; T", "AFTER B FOR 1 SECOND NOT", "*", "anchored on B, which is not defined", 99),
    ("A ; T+", "AFTER A FOR 1 SECOND NOT", "*", "SEQ uses it as an atom of its own", 99),
    ("A ; T", "AFTER A FOR 0 SECONDS NOT", "*", "a timer lasts more than 0 seconds", 0),
    ("A ; T", "AFTER A FOR 1 SECOND NOT", "?k (COUNT(?v) AS ?n)", "reads the results a COLLECT timer gathers", 0),
])
def test_timers_that_cannot_be_evaluated_are_located_errors(seq, timer, select, message, column) -> None:
    with pytest.raises(QueryError, match=message) as err:
        q(seq, timer, select)
    if column:
        assert err.value.location is not None and err.value.location.line == 4
