"""The engine's released matches (``runtime.native._Released``): read from the native match
only when a field is touched, each field once, and equal, hashed and pickled as the eager
``Match`` with the same fields."""

from __future__ import annotations

import pickle

from spaseq.engine.api import Engine
from spaseq.engine.matches import Match
from tests.util import EX, query_text


def _matches() -> list[Match]:
    engine = Engine()
    handle = engine.register(query_text("A : B", "DEFINE GPM A ON U1 { ?s :a ?x } "
                                        "DEFINE GPM B ON U1 { ?s :b ?y }"))
    for t, p in ((1, "a"), (2, "b"), (3, "b")):
        engine.push(EX + "u1", t, f"<{EX}s> <{EX}{p}> {t} .", format="turtle")
    engine.close()
    return list(handle.matches())


def test_fields_are_read_when_touched() -> None:
    (m, _) = _matches()
    assert set(m.__dict__) == {"_native", "_session"}  # nothing converted yet
    assert m.time == 2 and set(m.__dict__) == {"_native", "_session", "start", "time"}
    assert [v for v, _ in m.bindings] == ["s", "x", "y"]
    taken = m.taken
    assert m.taken is taken and [t.atom for t in taken] == ["A", "B"]


def test_released_match_is_the_eager_match() -> None:
    for m in _matches():
        eager = Match(m.bindings, m.taken, m.start, m.time)
        assert m == eager and eager == m and hash(m) == hash(eager)
        assert repr(m) == repr(eager)
        back = pickle.loads(pickle.dumps(m))
        assert type(back) is Match  # events pickle as copies (equal by identity): fields compared
        assert (back.bindings, back.start, back.time) == (eager.bindings, eager.start, eager.time)
        assert [(t.atom, t.event.seq) for t in back.taken] == [(t.atom, t.event.seq) for t in m.taken]
    first, second = _matches()
    assert first != second
