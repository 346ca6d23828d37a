"""Generated inputs that test what the engine promises about its input (issue 24): a
heartbeat or a flush followed by earlier events (late: refused or dropped, and the matches
are the reference's over the events accepted), and a KB version switched in the middle of
a conjunction's instant (lazy conjunction finds the eager engine's matches, decision 25,
each event joined with the version it arrived under, decision 22)."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from tempfile import TemporaryDirectory

import pyoxigraph
from hypothesis import given, settings
from hypothesis import strategies as st

from spaseq.engine import reference
from spaseq.engine.api import Engine, LateEventError
from spaseq.engine.compile.plan import EngineOptions
from spaseq.engine.events import Event
from spaseq.engine.kb.layout import StoreLayout
from spaseq.engine.kb.reader import KbStore
from spaseq.engine.language.query import parse_query
from tests.properties.test_differential import EXAMPLES, events, kb, queries
from tests.util import EX, QUERY_PREFIXES
from tests.util import match_bag as bag

#: an input step: push an event, or a heartbeat at a time, or a flush
Step = tuple[str, object]


@st.composite
def with_heartbeats(draw) -> list[Step]:
    """Events in time order with heartbeats and flushes between them, and after some of
    them an event earlier than the heartbeat or at the flushed time (a late one)."""
    evs: list[Event] = draw(events())
    steps: list[Step] = []
    seq = len(evs)
    for i, e in enumerate(evs):
        steps.append(("push", e))
        following = evs[i + 1].time if i + 1 < len(evs) else None  # promises the input keeps
        kind = draw(st.sampled_from(["", "", "heartbeat", "flush"]))
        if kind == "flush" and following == e.time:
            kind = "heartbeat"
        if kind == "heartbeat":
            at = e.time + draw(st.sampled_from([Decimal(0), Decimal("0.5"), Decimal(2)]))
            at = at if following is None else min(at, following)
            steps.append(("heartbeat", at))
        elif kind == "flush":
            at = e.time
            steps.append(("flush", None))
        else:
            continue
        if draw(st.booleans()):  # a late event: before the heartbeat, or at the flushed time
            late_at = at - draw(st.sampled_from([Decimal("0.1"), Decimal(1)])) if kind == "heartbeat" else at
            late = Event(draw(st.sampled_from([EX + "u1", EX + "u2"])), late_at, e.triples, seq)
            seq += 1
            steps.append(("late", late))
    return steps


def run_steps(engine: Engine, steps: list[Step]) -> tuple[list[Event], int]:
    """Apply ``steps``; the events accepted and how many late ones were refused."""
    accepted, refused = [], 0
    for kind, x in steps:
        if kind == "heartbeat":
            engine.advance_to(x)
        elif kind == "flush":
            engine.flush()
        else:
            assert isinstance(x, Event)
            try:
                engine.push_event(x)
            except LateEventError:
                assert kind == "late", x  # only the events after a promise are late
                refused += 1
                continue
            accepted.append(x)
    return accepted, refused


@settings(max_examples=EXAMPLES, deadline=None)
@given(queries(), with_heartbeats(), st.booleans(), st.booleans())
def test_late_events_after_heartbeats_and_flushes_are_refused(text, steps, lazy, query_clocks) -> None:
    q = parse_query(text)
    store = kb()
    engine = Engine(store, EngineOptions(lazy_conjunction=lazy), drop_unread=True, query_clocks=query_clocks,
                    late="error")
    handle = engine.register(q)
    accepted, refused = run_steps(engine, steps)
    engine.close()
    assert refused == sum(kind == "late" for kind, _ in steps) - sum(
        x in accepted for kind, x in steps if kind == "late")
    for kind, x in steps:  # a late event is accepted only when it breaks no promise made before it
        if kind == "late" and x in accepted:
            raise AssertionError(f"late event accepted: {x}")
    assert bag(handle.matches()) == bag(reference.evaluate(q, accepted, store))


CONJUNCTIONS = [
    "SEQ(G0 ; (G1 & G2))", "SEQ((G1 & G2) , G0)", "SEQ(G0 : (G1 & G2 & G0x))", "SEQ((G1 & G2))",
]
GRAPH_BODY = "{ ?s1 :key ?k GRAPH :kb { ?k :owner ?o } }"


@st.composite
def kb_conjunctions(draw) -> str:
    seq = draw(st.sampled_from(CONJUNCTIONS))
    window = draw(st.sampled_from(["", "WITHIN 3 SECONDS", "WITHIN 4 EVENTS"]))
    defines = (f"DEFINE GPM G0 ON U1 {{ ?s0 :val ?v0 }} DEFINE GPM G1 ON {draw(st.sampled_from(['U1', 'U2']))} "
               f"{GRAPH_BODY} DEFINE GPM G2 ON U2 {{ ?s2 :val ?v2 }} DEFINE GPM G0x ON U1 {{ ?s3 :tag ?t }}")
    return (f"{QUERY_PREFIXES}SELECT * {window}\nFROM STREAM U1 <{EX}u1>\nFROM STREAM U2 <{EX}u2>\n"
            f"WHERE {{ {seq} {defines} }}")


OWNERS = [[("K0", "alice"), ("K1", "bob"), ("K1", "carol")], [("K0", "dave"), ("K1", "bob")], []]


def new_version(root: Path, owners: list[tuple[str, str]]) -> None:
    """A version of the store at ``root`` whose graph :kb holds ``owners``."""
    layout = StoreLayout.at(root)
    layout.initialise()
    with layout.new_version("load") as pending:
        store = pyoxigraph.Store(str(layout.oxigraph_dir(pending.number)))
        g, owner = pyoxigraph.NamedNode(EX + "kb"), pyoxigraph.NamedNode(EX + "owner")
        store.extend(pyoxigraph.Quad(pyoxigraph.NamedNode(EX + k), owner, pyoxigraph.Literal(o), g)
                     for k, o in owners)
        store.flush()
        del store
        pending.meta = {"quads": len(owners)}


@settings(max_examples=max(EXAMPLES // 3, 20), deadline=None)
@given(kb_conjunctions(), events(), st.integers(0, 14), st.sampled_from(OWNERS[1:]), st.booleans())
def test_a_kb_refresh_inside_an_instant_joins_as_the_eager_engine(text, evs, at, owners, heartbeat) -> None:
    """Both engines read one versioned store; a new version lands after event ``at`` (with a
    heartbeat at that event's time, or not): the lazy engine joins each event with the
    version it arrived under, as the eager one does."""
    q = parse_query(text)
    with TemporaryDirectory() as tmp:
        root = Path(tmp) / "kb"
        new_version(root, OWNERS[0])
        engines = [Engine(KbStore(root, check_interval_s=0), EngineOptions(lazy_conjunction=lazy),
                          drop_unread=True) for lazy in (False, True)]
        handles = [e.register(q) for e in engines]
        for i, e in enumerate(evs):
            if i == at:
                new_version(root, owners)
                if heartbeat:
                    for engine in engines:
                        engine.advance_to(e.time)
            for engine in engines:
                engine.push_event(e)
        for engine in engines:
            engine.close()
            engine.graphs.kb.close()  # type: ignore[union-attr]
        eager, lazy = (bag(h.matches()) for h in handles)
    assert lazy == eager, text
