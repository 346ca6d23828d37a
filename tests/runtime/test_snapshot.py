"""Engine.snapshot / Engine.restore: an engine restored from a snapshot taken between any two
events continues exactly (property test over the differential suite's random queries,
streams and option combinations), in this process and in a fresh one; composition's
buffers, output numbering and DISTINCT survive; bad bytes are refused with a clear error."""

from __future__ import annotations

import dataclasses
import gc
import os
import subprocess
import sys
import textwrap
import weakref

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyoxigraph import Literal, NamedNode, Triple

from spaseq.engine import api
from spaseq.engine.api import Engine, SnapshotError
from spaseq.engine.events import Event
from spaseq.engine.runtime.snapshot import MAGIC
from tests.properties.test_differential import EXAMPLES, events, kb, options, queries
from tests.properties.test_interval_differential import lasting_events, timer_queries
from tests.util import EX, QUERY_PREFIXES, ev, match_identity


def _push(engine: Engine, evs: list[Event]) -> None:
    for e in evs:
        engine.push_event(e)


def _end(engine: Engine, end_of_input: bool) -> None:
    if end_of_input:
        engine.close()
    else:
        engine.flush()


def _uninterrupted(text, evs, opts, end_of_input: bool) -> list[tuple]:
    """The matches of one engine over all of ``evs``."""
    engine = api.Engine(kb(), opts)
    engine.register(text)
    _push(engine, evs)
    _end(engine, end_of_input)
    return [match_identity(m) for m in engine.handles[0].matches()]


def _split_run(text, evs, opts, cuts: list[int], end_of_input: bool) -> list[tuple]:
    """The matches of a run snapshotted and restored (into a new engine) at each cut."""
    store = kb()
    engine = api.Engine(store, opts)
    engine.register(text)
    got = []
    at = 0
    for cut in cuts:
        _push(engine, evs[at:cut])
        at = cut
        got += [match_identity(m) for m in engine.handles[0].matches()]
        engine = Engine.restore(engine.snapshot(), kb=store)
    _push(engine, evs[at:])
    _end(engine, end_of_input)
    return got + [match_identity(m) for m in engine.handles[0].matches()]


@settings(max_examples=EXAMPLES)
@given(queries(), events(), options, st.booleans(), st.data())
def test_a_restored_engine_continues_exactly(text, evs, opts, end_of_input, data) -> None:
    expected = _uninterrupted(text, evs, opts, end_of_input)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(evs)), max_size=2), label="cuts"))
    assert _split_run(text, evs, opts, cuts, end_of_input) == expected, (text, cuts)


@settings(max_examples=max(EXAMPLES // 3, 20), deadline=None)
@given(st.one_of(queries(), timer_queries()), lasting_events(), options, st.booleans(), st.data())
def test_a_restored_engine_continues_exactly_over_events_that_last(text, evs, opts, end_of_input, data) -> None:
    """Planned for events that last, with relative timers too (docs/decisions.md 71): the gaps'
    recent events, the runs waiting for their timers and what COLLECT gathered survive."""
    opts = dataclasses.replace(opts, intervals=True)
    expected = _uninterrupted(text, evs, opts, end_of_input)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(evs)), max_size=2), label="cuts"))
    assert _split_run(text, evs, opts, cuts, end_of_input) == expected, (text, cuts)


@settings(max_examples=max(EXAMPLES // 3, 20))
@given(queries(lazy_prefix=True), events(), st.booleans(), st.data())
def test_a_restored_lazy_chain_continues_exactly(text, evs, end_of_input, data) -> None:
    opts = api.EngineOptions(lazy_chain=True)
    expected = _uninterrupted(text, evs, opts, end_of_input)
    cut = data.draw(st.integers(0, len(evs)), label="cut")
    assert _split_run(text, evs, opts, [cut], end_of_input) == expected, (text, cut)


BOUNDED = f"""{QUERY_PREFIXES}PREFIX spaseq: <https://w3id.org/spaseq#>
SELECT * WITHIN 12 SECONDS
FROM STREAM S <{EX}s>
WHERE {{ SEQ(A ; B{{2,3}} , C ; D{{0,2}} ; E)
  DEFINE GPM A ON S {{ ?a :kind :a ; :co ?c }}
  DEFINE GPM B ON S {{ ?b :kind :b ; :co ?c ; :v ?v FILTER(?v > COALESCE(spaseq:max("v"), -1)) }}
  DEFINE GPM C ON S {{ ?x :kind :c ; :co ?c }}
  DEFINE GPM D ON S {{ ?d :kind :d ; :co ?c }}
  DEFINE GPM E ON S {{ ?e :kind :e ; :co ?c FILTER(spaseq:count("v") >= 2) }} }}"""

#: loops of B of two, three, one and four iterations (rising ?v, one company at a time: the
#: iterations are strictly contiguous), D taken once, not at all, and once or twice
LOOPS = ("a0 b0 b0 c0 d0 e0  a1 b1 b1 b1 c1 e1  a0 b0 c0 e0  a1 b1 b1 b1 b1 c1 d1 d1 e1  "
         "a0 b0 b0 c0 d0 d0 e0")


def _loops() -> list[Event]:
    out = []
    for i, word in enumerate(LOOPS.split()):
        kind, co = word[0], word[1]
        out.append(ev("s", i, f":e{i} :kind :{kind} ; :co :C{co} ; :v {i} .", seq=i))
    return out


def test_a_cut_inside_a_bounded_loop_changes_no_match() -> None:
    """A snapshot taken between any two events, in the middle of B{2,3}'s iterations or
    D{0,2}'s, restores each run's count of iterations (native format 6): the restored
    engine finds exactly the uninterrupted matches."""
    evs = _loops()
    opts = api.EngineOptions()
    expected = _uninterrupted(BOUNDED, evs, opts, True)
    counts = {tuple(atom for atom, _, _ in taken).count("B") for taken, *_ in expected}
    assert counts == {2, 3}, expected  # the loops of one and four Bs give no match
    assert {tuple(atom for atom, _, _ in taken).count("D") for taken, *_ in expected} == {0, 1, 2}
    for cut in range(len(evs) + 1):
        assert _split_run(BOUNDED, evs, opts, [cut], True) == expected, cut


STOCK = f"""{QUERY_PREFIXES}SELECT ?c ?p1 ?p2 WITHIN 10 SECONDS
FROM STREAM S <{EX}s>
WHERE {{ SEQ(A ; B+)
  DEFINE GPM A ON S {{ ?e :co ?c ; :price ?p1 }}
  DEFINE GPM B ON S {{ ?f :co ?c ; :price ?p2 FILTER(?p2 > ?p1) }} }}"""


def _stock(n: int) -> list[Event]:
    return [ev("s", i, f":e{i} :co :C{i % 3} ; :price {(i * i) % 7} .", seq=i) for i in range(n)]


def test_the_restored_engine_has_the_same_queries_in_order() -> None:
    engine = Engine()
    first = engine.register(STOCK, output="urn:q:first")
    engine.register(STOCK.replace("SEQ(A ; B+)", "SEQ(A : B)"), output="urn:q:second", keep=False)
    _push(engine, _stock(20))
    restored = Engine.restore(engine.snapshot())
    assert [h.output.iri for h in restored.handles] == ["urn:q:first", "urn:q:second"]
    assert [h.keep for h in restored.handles] == [True, False]
    assert [h.query.source for h in restored.handles] == [h.query.source for h in engine.handles]
    assert restored.handles[0].stats["matches"] == first.stats["matches"] > 0
    assert restored.handles[0].runtime.footprint() == first.runtime.footprint()
    assert restored.handles[0].runtime.clock == first.runtime.clock


def test_restoring_in_a_fresh_process_gives_the_uninterrupted_rows(tmp_path) -> None:
    evs = _stock(40)
    whole = Engine()
    whole.register(STOCK)
    _push(whole, evs)
    whole.close()
    expected = [{v: str(t) for v, t in r.bindings.items()} for r in whole.handles[0].rows()]

    engine = Engine()
    engine.register(STOCK)
    _push(engine, evs[:23])
    before = [{v: str(t) for v, t in r.bindings.items()} for r in engine.handles[0].rows()]
    (tmp_path / "state.bin").write_bytes(engine.snapshot())
    script = textwrap.dedent("""
        import json, sys
        from spaseq.engine.api import Engine
        from tests.runtime.test_snapshot import _stock
        engine = Engine.restore(open(sys.argv[1], "rb").read())
        for e in _stock(40)[23:]:
            engine.push_event(e)
        engine.close()
        rows = [{v: str(t) for v, t in r.bindings.items()} for r in engine.handles[0].rows()]
        print(json.dumps(rows))
    """)
    out = subprocess.run([sys.executable, "-c", script, str(tmp_path / "state.bin")], check=True,
                         capture_output=True, text=True, cwd=str(__import__("pathlib").Path(__file__).parents[2]))
    import json
    after = json.loads(out.stdout)
    assert before and after
    assert before + after == expected


# upstream: DISTINCT rows (its output's seen set) and a trailing negation (deferred matches
# that hold the consumer's buffer back); its results last over their matches (decision 71),
# and a window short enough keeps two of one company apart for the consumer's ';'
COMPOSED_UP = f"""{QUERY_PREFIXES}SELECT DISTINCT ?c ?p2 WITHIN 5 SECONDS
FROM STREAM S <{EX}s>
WHERE {{ SEQ(A : B ; N!)
  DEFINE GPM A ON S {{ ?e :co ?c ; :price ?p1 }}
  DEFINE GPM B ON S {{ ?f :co ?c ; :price ?p2 FILTER(?p2 > ?p1) }}
  DEFINE GPM N ON S {{ ?g :co ?c ; :price ?p3 FILTER(?p3 < 2) }} }}"""

COMPOSED_DOWN = f"""PREFIX spaseq: <https://w3id.org/spaseq#>
{QUERY_PREFIXES}SELECT DISTINCT ?c WITHIN 20 SECONDS
FROM STREAM U <urn:up>
WHERE {{ SEQ(X ; Y)
  DEFINE GPM X ON U {{ ?m spaseq:binding [ spaseq:variable "c" ; spaseq:value ?c ] }}
  DEFINE GPM Y ON U {{ ?n spaseq:binding [ spaseq:variable "c" ; spaseq:value ?c ] }} }}"""


@pytest.mark.parametrize("cut", [0, 5, 12, 19, 30])
def test_composed_queries_continue_with_their_buffers_and_numbering(cut: int) -> None:
    evs = _stock(30)

    def run(cuts: list[int]) -> tuple[list, list]:
        engine = Engine()
        engine.register(COMPOSED_UP, output="urn:up")
        engine.register(COMPOSED_DOWN, output="urn:down")
        up, down = [], []
        at = 0
        for c in cuts:
            _push(engine, evs[at:c])
            at = c
            up += [match_identity(m) for m in engine.handles[0].matches()]
            down += [match_identity(m) for m in engine.query("urn:down").matches()]
            engine = Engine.restore(engine.snapshot())
        _push(engine, evs[at:])
        engine.close()
        up += [match_identity(m) for m in engine.handles[0].matches()]
        down += [match_identity(m) for m in engine.query("urn:down").matches()]
        return up, down

    whole = run([])
    assert whole[1], "the downstream query must match something for this test to mean anything"
    assert run([cut]) == whole


def test_a_snapshot_is_refused_when_it_is_not_one() -> None:
    with pytest.raises(SnapshotError, match="not a spaseq snapshot"):
        Engine.restore(b"hello")
    engine = Engine()
    engine.register(STOCK)
    _push(engine, _stock(5))
    data = engine.snapshot()
    assert data.startswith(MAGIC)
    with pytest.raises(SnapshotError, match="truncated|corrupt"):
        Engine.restore(data[:len(data) // 2])
    bumped = data[:len(MAGIC)] + (99).to_bytes(4, "little") + data[len(MAGIC) + 4:]
    with pytest.raises(SnapshotError, match="format 99"):
        Engine.restore(bumped)


def test_materialisation_continues_in_the_same_store() -> None:
    from pyoxigraph import NamedNode, Store

    from spaseq.engine.vocab import SPASEQ_NS as SPASEQ

    def names(store: Store) -> list[str]:
        match = NamedNode(SPASEQ + "Match")
        rdf_type = NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")
        return sorted(q.subject.value for q in store.quads_for_pattern(None, rdf_type, match))

    evs = _stock(30)
    whole = Store()
    engine = Engine(materialize=whole)
    engine.register(STOCK, output="urn:q")
    _push(engine, evs)
    engine.close()

    split = Store()
    engine = Engine(materialize=split)
    engine.register(STOCK, output="urn:q")
    _push(engine, evs[:14])
    engine.flush()
    engine = Engine.restore(engine.snapshot(), materialize=split)
    _push(engine, evs[14:])
    engine.close()
    assert names(whole) and names(split) == names(whole)
    assert len(split) == len(whole)


# ---------------------------------------------------------------- dictionary compaction


@settings(max_examples=max(EXAMPLES // 2, 20))
@given(queries(), events(), options, st.booleans(), st.data())
def test_compacting_the_dictionary_changes_no_match(text, evs, opts, end_of_input, data) -> None:
    """Engine._compact (a snapshot restored in place) at random events: the same matches,
    through the same handle."""
    expected = _uninterrupted(text, evs, opts, end_of_input)
    cuts = set(data.draw(st.lists(st.integers(0, len(evs)), max_size=3), label="cuts"))
    engine = api.Engine(kb(), opts)
    handle = engine.register(text)
    for i, e in enumerate(evs):
        if i in cuts:
            engine._compact()
        engine.push_event(e)
    _end(engine, end_of_input)
    assert [match_identity(m) for m in handle.matches()] == expected, (text, sorted(cuts))


def test_the_dictionary_follows_the_window_on_an_endless_stream(monkeypatch) -> None:
    """Every event brings fresh terms (its IRI, its price): without compaction the dictionary
    grows with the stream; with it, it stays within a bound set by what the window holds."""
    monkeypatch.setattr(Engine, "COMPACT_MIN_TERMS", 3000)
    engine = Engine()
    handle = engine.register(STOCK, keep=False)
    found = []
    handle.callback = lambda m: found.append(match_identity(m))
    sizes = []
    for i in range(20000):
        engine.push_event(ev("s", i, f":e{i} :co :C{i % 3} ; :price {i % 97 + i / 1000} .", seq=i))
        if i % 1000 == 999:
            sizes.append(engine._native.engine.terms())
    engine.close()
    assert engine.compactions >= 3
    assert max(sizes) < 9000, sizes  # 2 x what the 10-second window refers to, at most
    reference = Engine()
    reference.COMPACT_MIN_TERMS = 10**9  # never compacted
    ref = reference.register(STOCK, keep=False)
    expected = []
    ref.callback = lambda m: expected.append(match_identity(m))
    for i in range(20000):
        reference.push_event(ev("s", i, f":e{i} :co :C{i % 3} ; :price {i % 97 + i / 1000} .", seq=i))
    reference.close()
    assert reference._native.engine.terms() > 40000
    assert found == expected and found


def _rss_mb() -> float:
    """This process's resident set now, in MB (Linux: /proc/self/statm)."""
    with open("/proc/self/statm", encoding="ascii") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="reads Linux's /proc")
def test_a_compaction_frees_the_native_side_it_replaces(monkeypatch) -> None:
    """Ten compactions on an endless stream of fresh (and large) terms, the garbage collector
    off: each replaced NativeSession, NativeEngine and QueryRuntime is freed at once (the
    engine lets go of the callbacks that tied them in a cycle, and no released match holds
    the session), and the resident set stays near its level after the first compaction (ten
    kept dictionaries would add well over 40 MB)."""
    monkeypatch.setattr(Engine, "COMPACT_MIN_TERMS", 4000)
    compact = Engine._compact
    replaced: list[weakref.ref] = []

    def compacting(self: Engine) -> None:
        native = self._native
        replaced.extend(weakref.ref(o) for o in (native, native.engine, *(h.runtime for h in self.handles)))
        compact(self)

    monkeypatch.setattr(Engine, "_compact", compacting)
    engine = Engine()
    handle = engine.register(STOCK, keep=False)
    found = [0]  # counted, not kept: released matches keep their dictionary alive (decision 38)
    handle.callback = lambda m: found.__setitem__(0, found[0] + 1)
    co, price, note, pad = NamedNode(f"{EX}co"), NamedNode(f"{EX}price"), NamedNode(f"{EX}note"), "x" * 2000
    rss = {}
    i = 0
    gc.collect()
    gc.disable()
    try:
        while engine.compactions < 10:
            e = NamedNode(f"{EX}e{i}")
            engine.push_event(Event(f"{EX}s", i, (Triple(e, co, NamedNode(f"{EX}C{i % 3}")),
                                                   Triple(e, price, Literal(str(i % 97 + i / 1000))),
                                                   Triple(e, note, Literal(f"{pad}{i}"))), i))
            i += 1
            rss.setdefault(engine.compactions, _rss_mb())
        alive = [type(r()).__name__ for r in replaced if r() is not None]
    finally:
        gc.enable()
    assert len(replaced) == 30 and alive == []
    assert _rss_mb() - rss[1] < 20, rss
    engine.close()
    assert found[0] > 1000


def test_a_released_match_keeps_a_replaced_session_readable() -> None:
    """A match released before a compaction and read after it is read with the dictionary
    it was found with, which lives as long as the match does (decision 38), and goes with
    it."""
    evs = _stock(20)
    plain = Engine()
    plain.register(STOCK)
    _push(plain, evs)
    expected = [(m.bindings, m.start, m.time) for m in plain.handles[0].matches()]
    engine = Engine()
    engine.register(STOCK)
    _push(engine, evs)
    released = list(engine.handles[0].matches())  # not read yet
    old = weakref.ref(engine._native.engine)
    engine._compact()
    gc.collect()
    assert old() is not None  # the unread matches hold it
    assert [(m.bindings, m.start, m.time) for m in released] == expected and expected
    del released
    gc.collect()
    assert old() is None


def test_an_engine_let_go_of_is_collected() -> None:
    """Engine, session, runtime and native engine form a cycle through the callbacks the
    native engine holds: the garbage collector sees it (``NativeEngine.__traverse__``) and
    frees them once nothing else refers to the engine."""
    engine = Engine()
    engine.register(STOCK)
    _push(engine, _stock(20))
    refs = [weakref.ref(o) for o in (engine, engine._native, engine._native.engine, engine.handles[0].runtime)]
    del engine
    gc.collect()
    assert [type(r()).__name__ for r in refs if r() is not None] == []


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_spaseq_run_output_is_the_same_when_the_dictionary_is_compacted(tmp_path, monkeypatch, capsys, fmt) -> None:
    """The native writers' caches by term id are dropped at each compaction and DISTINCT
    remembers terms, not ids: the same bytes as an uncompacted run."""
    from spaseq.engine.cli.main import main

    lines = []
    for i in range(12000):  # 3 batches of Engine.run_replay: compactions between them
        lines.append(f"<{EX}e{i}> <{EX}co> <{EX}C{i % 5}> <{EX}g{i}> .")
        lines.append(f"<{EX}e{i}> <{EX}price> \"{i % 50}.{i}\"^^<http://www.w3.org/2001/XMLSchema#decimal> <{EX}g{i}> .")
        lines.append(f"<{EX}g{i}> <http://www.w3.org/ns/prov#generatedAtTime> \"{i}\"^^<http://www.w3.org/2001/XMLSchema#decimal> .")
    (tmp_path / "s.nq").write_text("\n".join(lines) + "\n")
    query = STOCK.replace("SELECT ?c ?p1 ?p2", "SELECT DISTINCT ?c ?p2")
    (tmp_path / "q.rq").write_text(query)
    args = ["run", str(tmp_path / "q.rq"), "--stream", f"S={tmp_path / 's.nq'}", "--format", fmt]

    assert main(args) == 0
    plain = capsys.readouterr().out
    calls = []
    compact = Engine._compact
    monkeypatch.setattr(Engine, "COMPACT_MIN_TERMS", 500)
    monkeypatch.setattr(Engine, "_compact", lambda self: (calls.append(1), compact(self)))
    assert main(args) == 0
    assert len(calls) >= 2
    assert capsys.readouterr().out == plain and plain.count("\n") > 10
    # into a file: spelled and written on a thread of its own, told of each compaction
    calls.clear()
    assert main([*args, "--output", str(tmp_path / "out")]) == 0
    assert len(calls) >= 2
    assert (tmp_path / "out").read_bytes().decode() == plain


def test_query_clocks_let_streams_be_pushed_independently() -> None:
    """Two queries on two streams, each stream pushed in its own time order but the second
    far ahead of the first: with ``query_clocks`` each query finds what it finds alone; with
    the shared clock the second stream's events close the first query's windows early."""
    q = {k: STOCK.replace(f"<{EX}s>", f"<{EX}s{k}>") for k in (0, 1)}
    evs = {k: [ev(f"s{k}", i, f":e{i} :co :C{i % 3} ; :price {(i * i) % 7} .", seq=i) for i in range(40)]
           for k in (0, 1)}

    def alone(k: int) -> list:
        engine = Engine()
        engine.register(q[k])
        _push(engine, evs[k])
        engine.close()
        return [match_identity(m) for m in engine.handles[0].matches()]

    def together(query_clocks: bool) -> list[list]:
        engine = Engine(query_clocks=query_clocks)
        for k in (0, 1):
            engine.register(q[k])
        for chunk in range(0, 40, 10):  # stream 1 runs a chunk ahead of stream 0
            _push(engine, evs[1][chunk:chunk + 10])
            _push(engine, evs[0][max(chunk - 10, 0):chunk])
        _push(engine, evs[0][30:])
        engine.close()
        return [[match_identity(m) for m in h.matches()] for h in engine.handles]

    expected = [alone(0), alone(1)]
    assert expected[0] and expected[1]
    assert together(True) == expected
    shared = together(False)
    assert shared[1] == expected[1] and len(shared[0]) < len(expected[0])  # why the option exists
    restored = Engine.restore(Engine(query_clocks=True).snapshot())
    assert restored.query_clocks


# ---------------------------------------------------------------- state-only snapshots


def _spelled(m) -> tuple:
    """A match's identity with its times as spelled (a restored event keeps "3.0")."""
    return (match_identity(m), str(m.start), str(m.time))


@settings(max_examples=max(EXAMPLES // 2, 20))
@given(queries(), events(), events(), options, st.booleans(), st.data())
def test_one_engine_switching_between_states_gives_each_input_its_own_matches(
        text, evs1, evs2, opts, end_of_input, data) -> None:
    """As the Spark streaming execution keeps one state per key: one engine restores key 1's
    state-only snapshot, takes a chunk of its events, snapshots, does the same for key 2, and
    so on; each key gets exactly the matches an engine of its own would give. Each key's
    input ends in a fresh engine with the same query."""
    def alone(evs: list[Event]) -> list[tuple]:
        engine = api.Engine(kb(), opts)
        engine.register(text)
        _push(engine, evs)
        _end(engine, end_of_input)
        return [_spelled(m) for m in engine.handles[0].matches()]

    store = kb()
    engine = api.Engine(store, opts)
    handle = engine.register(text)
    fresh = engine.snapshot(state_only=True)
    inputs = [evs1, evs2]
    states = [fresh, fresh]
    got: list[list[tuple]] = [[], []]
    at = [0, 0]
    for key, size in data.draw(st.lists(st.tuples(st.integers(0, 1), st.integers(0, 6)), max_size=8),
                               label="chunks"):
        engine.restore_state(states[key])
        _push(engine, inputs[key][at[key]:at[key] + size])
        at[key] += size
        states[key] = engine.snapshot(state_only=True)
        got[key] += [_spelled(m) for m in handle.matches()]
    for key in (0, 1):
        last = api.Engine(store, opts)
        last.register(text)
        last.restore_state(states[key])
        _push(last, inputs[key][at[key]:])
        _end(last, end_of_input)
        got[key] += [_spelled(m) for m in last.handles[0].matches()]
    assert got == [alone(evs1), alone(evs2)], text


def test_a_state_only_snapshot_holds_no_plan_and_restores_only_in_place() -> None:
    engine = Engine()
    engine.register(STOCK)
    _push(engine, _stock(12))
    state, whole = engine.snapshot(state_only=True), engine.snapshot()
    assert b"GroupPattern" in whole and b"GroupPattern" not in state
    with pytest.raises(SnapshotError, match="state-only .* restore_state"):
        Engine.restore(state)
    for data in (state, whole):  # a whole snapshot restores in place too
        other = Engine()
        other.register(STOCK)
        other.restore_state(data)
        assert other.handles[0].runtime.footprint() == engine.handles[0].runtime.footprint()


def test_restoring_a_state_keeps_handles_callbacks_and_released_matches() -> None:
    evs = _stock(30)
    whole = Engine()
    whole.register(STOCK)
    _push(whole, evs)
    expected = [_spelled(m) for m in whole.handles[0].matches()]

    source = Engine()
    source.register(STOCK)
    _push(source, evs[:17])
    before = [_spelled(m) for m in source.handles[0].matches()]
    state = source.snapshot(state_only=True)

    seen: list = []
    engine = Engine()
    handle = engine.register(STOCK, on_match=seen.append, keep=False)
    _push(engine, _stock(9))  # its own state, replaced below
    released = list(seen)
    assert released
    engine.restore_state(state)
    seen.clear()
    _push(engine, evs[17:])
    assert engine.handles == [handle]
    assert before + [_spelled(m) for m in seen] == expected
    own = Engine()
    own.register(STOCK)
    _push(own, _stock(9))
    # matches released before still read their terms (from the replaced dictionary)
    assert [_spelled(m) for m in released] == [_spelled(m) for m in own.handles[0].matches()]


def test_restoring_a_state_of_other_queries_or_settings_is_refused_and_changes_nothing() -> None:
    source = Engine()
    source.register(STOCK)
    _push(source, _stock(10))
    state = source.snapshot(state_only=True)

    other = Engine()
    other.register(STOCK.replace("SEQ(A ; B+)", "SEQ(A : B)"))
    _push(other, _stock(10))
    footprint = other.handles[0].runtime.footprint()
    with pytest.raises(SnapshotError, match="query 1 differs"):
        other.restore_state(state)
    assert other.handles[0].runtime.footprint() == footprint
    two = Engine()
    two.register(STOCK)
    two.register(STOCK, output="urn:q:again")
    with pytest.raises(SnapshotError, match="holds 1, this engine has 2"):
        two.restore_state(state)
    clocked = Engine(query_clocks=True)
    clocked.register(STOCK)
    with pytest.raises(SnapshotError, match="other settings"):
        clocked.restore_state(state)
    with pytest.raises(SnapshotError, match="not a spaseq snapshot"):
        clocked.restore_state(b"hello")
