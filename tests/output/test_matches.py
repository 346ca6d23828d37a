"""Match.deferred (what the engine emits) behaves as a Match built eagerly."""

from __future__ import annotations

import pickle

from pyoxigraph import Literal, NamedNode

from spaseq.engine.matches import Match, Taken, project
from tests.util import ev


def test_deferred_match_equals_the_eager_one() -> None:
    e = ev("u1", 1, ":a :p 1 .")
    taken = (Taken("A", e, (("x", Literal("1")),)),)
    mu = {"y": NamedNode("http://ex.org/b"), "x": Literal("1")}
    calls = []

    def chain():
        calls.append(1)
        return taken

    deferred = Match.deferred(mu, chain, 1.0, 2.0)
    eager = Match(tuple(sorted(mu.items())), taken, 1.0, 2.0)
    assert deferred.start == 1.0 and deferred.time == 2.0 and not calls  # nothing built yet
    assert deferred == eager and hash(deferred) == hash(eager)
    assert deferred.taken is taken and deferred.taken is taken and calls == [1]  # built once
    assert deferred.mapping == mu
    assert repr(deferred) == repr(eager)
    assert [r.bindings for r in project([deferred], ["x"])] == [{"x": Literal("1")}]


def test_deferred_match_unknown_attribute_and_pickle() -> None:
    m = Match.deferred({"x": Literal("1")}, tuple, 0.0, 0.0)
    try:
        m.nope  # noqa: B018
    except AttributeError:
        pass
    else:
        raise AssertionError("an unknown attribute must raise AttributeError")
    assert m.taken == ()
    assert pickle.loads(pickle.dumps(m)) == m
