"""RSEP-QL's selection and consumption policies (docs/decisions.md 65, semantics section 16):
the results the seed paper states for its Fig. 1 stream, at each evaluation time, from the
engine and the reference evaluator; consumption across snapshot cuts; what MATCHED does to
skip-till-any's output; the policies through the Python API, the rdflib processor, composed
queries and the CLI."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from spaseq.engine import api, reference
from spaseq.engine.api import Engine
from spaseq.engine.events import Event
from spaseq.engine.io.native_events import read_replay_files
from spaseq.engine.language.query import parse_query
from tests.util import EX, QUERY_PREFIXES, ev

ROOT = Path(__file__).resolve().parents[2]
FIG1 = ROOT / "fixtures" / "rsep_ql" / "fig1.trig"
S = "http://example.org/S"

#: Example 4's event pattern E1 SEQ E2 (E1 = ?x :p ?y, E2 = ?y :q ?z) under a policy; the
#: landmark window of E1 and the sliding one of E2 both hold every event of the example
FIG1_QUERY = """PREFIX : <http://example.org/>
SELECT ?x ?y ?z WITHIN 10 SECONDS {policy}
FROM STREAM S <http://example.org/S>
WHERE {{ SEQ(E1 : E2)
  DEFINE GPM E1 ON S {{ ?x :p ?y }}
  DEFINE GPM E2 ON S {{ ?y :q ?z }} }}"""

#: The matches the paper's text names (Section 2, Examples 8 and 10): (start, end, ?x ?y ?z).
E1 = (4, 8, "a2 b2 c2")   # G2's a2 :p b2 with G4's b2 :q c2
E2 = (2, 6, "a1 b1 c1")   # G1 with G3's b1 :q c1
E3 = (6, 8, "a2 b2 c2")   # G3's a2 :p b2 with G4
E4 = (2, 10, "a1 b1 c1")  # G1 with G5's b1 :q c1

#: Section 2 [R3.1], [R3.2]: what each setting returns by the evaluations at 8 and at 10.
STATED = {
    "": ({E1, E2, E3}, {E4}),                                           # unrestricted
    "SELECTION CHRONOLOGICAL CONSUMPTION MATCHED": ({E1, E2}, set()),   # EP-SPARQL chronological
    "SELECTION RECENT CONSUMPTION MATCHED": ({E2, E3}, set()),          # EP-SPARQL recent
    "SELECTION LATEST": ({E3}, set()),                                  # C-SPARQL's naive SEQ
}


def _fig1() -> list[Event]:
    events, error = read_replay_files([(S, str(FIG1))])
    assert error is None and [e.time for e in events] == [2, 4, 6, 8, 10]
    return events


def _named(matches) -> set[tuple]:
    """Matches as (start, end, "x y z") with the local names of the bindings."""
    out = set()
    for m in matches:
        b = dict(m.bindings)
        names = " ".join(b[v].value.rsplit("/", 1)[1] for v in ("x", "y", "z"))
        out.add((int(m.start), int(m.time), names))
    return out


@pytest.mark.parametrize("policy", STATED)
def test_the_seed_papers_stated_results_hold_at_each_evaluation(policy: str) -> None:
    """RSEP-QL Section 2: by the evaluation at 8, and between it and the one at 10, each
    setting returns what the paper says (Fig. 1's stream rebuilt in fixtures/rsep_ql)."""
    q = parse_query(FIG1_QUERY.format(policy=policy))
    events = _fig1()
    by8, by10 = STATED[policy]
    engine = Engine()
    handle = engine.register(q)
    for e in events[:4]:
        engine.push_event(e)
    assert _named(handle.matches()) == by8
    assert _named(reference.evaluate(q, events[:4], end_of_input=False)) == by8
    engine.push_event(events[4])
    engine.close()
    assert _named(handle.matches()) == by10
    assert _named(reference.evaluate(q, events)) == by8 | by10


def test_without_consumption_the_selections_pair_again_at_10() -> None:
    """Consumption, not selection, is why chronological and recent return nothing at 10:
    without it G5's b1 :q c1 finds G1 again (the paper, Example 11)."""
    events = _fig1()
    for policy in ("SELECTION CHRONOLOGICAL", "SELECTION RECENT"):
        q = parse_query(FIG1_QUERY.format(policy=policy))
        assert E4 in _named(api.evaluate(q, events)) == _named(reference.evaluate(q, events))


def test_consumption_is_per_triple_so_g3_stays_available_to_e1() -> None:
    """G3 gives E2 its b1 :q c1 at 6; its other triple, a2 :p b2, is still E1's at 8, which is
    the only way recent can return e3 (decision 65: what a match uses up is its triples)."""
    q = parse_query(FIG1_QUERY.format(policy="SELECTION RECENT CONSUMPTION MATCHED"))
    got = api.evaluate(q, _fig1())
    assert [(int(m.start), int(m.time)) for m in got] == [(2, 6), (6, 8)]
    assert [t.event.time for t in got[1].taken] == [6, 8]


VSHAPE = f"""{QUERY_PREFIXES}SELECT ?p1 ?p2 ?p3 WITHIN 10 SECONDS {{policy}}
FROM STREAM S <{EX}s>
WHERE {{{{ SEQ(A : B : C)
  DEFINE GPM A ON S {{{{ ?a :price ?p1 }}}}
  DEFINE GPM B ON S {{{{ ?b :price ?p2 FILTER(?p2 < ?p1) }}}}
  DEFINE GPM C ON S {{{{ ?c :price ?p3 FILTER(?p3 > ?p2) }}}} }}}}"""


def _prices(prices: list[int]) -> list[Event]:
    return [ev("s", i, f":t{i} :price {p} .", seq=i) for i, p in enumerate(prices)]


def test_matched_consumption_tames_skip_till_any() -> None:
    """Under CONSUMPTION MATCHED each trade takes part in one V-shape at most (every GPM reads
    its one triple), where skip-till-any alone gives every combination."""
    evs = _prices([5, 3, 4, 2, 6, 1, 7, 5, 8])
    every = api.evaluate(parse_query(VSHAPE.format(policy="")), evs)
    once = api.evaluate(parse_query(VSHAPE.format(policy="CONSUMPTION MATCHED")), evs)
    assert len(every) > 3 * len(once) > 0
    taken = [t.event.seq for m in once for t in m.taken]
    assert len(taken) == len(set(taken))
    for policy in ("CONSUMPTION MATCHED", "SELECTION RECENT CONSUMPTION MATCHED",
                   "SELECTION CHRONOLOGICAL"):
        q = parse_query(VSHAPE.format(policy=policy))
        assert [m.taken for m in api.evaluate(q, evs)] == [m.taken for m in reference.evaluate(q, evs)]


def test_a_cut_between_any_two_events_keeps_what_was_used_up() -> None:
    """A snapshot taken after any event carries the used-up triples (native format 9): the
    restored engine releases exactly the matches of an uninterrupted run."""
    evs = _prices([5, 3, 4, 2, 6, 1, 7, 5, 8, 2, 9])
    text = VSHAPE.format(policy="SELECTION RECENT CONSUMPTION MATCHED")
    expected = [m.taken for m in api.evaluate(parse_query(text), evs)]
    for cut in range(len(evs) + 1):
        engine = Engine()
        engine.register(text)
        for e in evs[:cut]:
            engine.push_event(e)
        got = [m.taken for m in engine.handles[0].matches()]
        engine = Engine.restore(engine.snapshot())
        for e in evs[cut:]:
            engine.push_event(e)
        engine.close()
        got += [m.taken for m in engine.handles[0].matches()]
        assert [[(t.atom, t.event.seq) for t in m] for m in got] == \
            [[(t.atom, t.event.seq) for t in m] for m in expected], cut


#: The early cut's shapes (docs/decisions.md 65): the V-shape, a middle atom that may take no
#: event (runs at the last step with event lists of two lengths), and C joined to A on ?a
CUT_SHAPES = {
    "vshape": VSHAPE,
    "optional": VSHAPE.replace("SEQ(A : B : C)", "SEQ(A : B? : C)").replace("?p3 > ?p2", "?p3 > ?p1"),
    "joined": VSHAPE.replace("?c :price ?p3", "?a :price ?p3"),
}


def _trades(seed: int, n: int) -> list[Event]:
    """n trades a second apart of three companies, some events with two trades (the last
    GPM then has two context-free solutions using different triples: no cut) or a company
    with two prices (runs whose event lists tie, told apart by their bindings)."""
    rnd = random.Random(seed)
    out = []
    for i in range(n):
        a, p = rnd.choice("xyz"), rnd.randint(1, 9)
        turtle = f":{a} :price {p} ."
        roll = rnd.random()
        if roll < 0.15:
            turtle += f" :{rnd.choice('xyz')}{i} :price {rnd.randint(1, 9)} ."
        elif roll < 0.3:
            turtle = f":{a} :price {p}, {rnd.randint(1, 9)} ."
        out.append(ev("s", i, turtle, seq=i))
    return out


def _took(taken) -> list[tuple]:
    """A match's events as (atom, arrival, bindings): a restored engine's events are new
    objects (events compare by identity)."""
    return [(t.atom, t.event.seq, t.bindings) for t in taken]


@pytest.mark.parametrize("shape", CUT_SHAPES)
@pytest.mark.parametrize("policy", ["CONSUMPTION MATCHED", "SELECTION RECENT CONSUMPTION MATCHED"])
def test_the_consumption_cut_releases_what_completing_every_match_would(shape: str, policy: str) -> None:
    """Under CONSUMPTION MATCHED an event whose every solution of the last GPM uses one same
    triple releases at most one match, the first in the match order: the engine offers it
    to the last step's runs in that order and stops after the first that completes (and
    those tied with it). The released matches are the reference evaluator's, and the cut
    happened (under a selection it must not: the extensions wait for every run to be offered
    the event, and the selection, not the match order, chooses among them)."""
    text = CUT_SHAPES[shape].format(policy=policy)
    cut = 0
    for seed in range(6):
        evs = _trades(seed, 40)
        engine = Engine()
        handle = engine.register(text)
        for e in evs:
            engine.push_event(e)
        engine.close()
        got = [(_took(m.taken), m.bindings) for m in handle.matches()]
        expected = [(_took(m.taken), m.bindings) for m in reference.evaluate(parse_query(text), evs)]
        assert got == expected, seed
        cut += handle.runtime.work()["runs_cut"]
    assert (cut > 20) if "SELECTION" not in policy else (cut == 0), cut


def test_the_consumption_cut_leaves_a_moment_of_long_matches_to_the_batch() -> None:
    """Runs whose matches would take more events than a packed key holds are not keyed one
    by one (their lists' total length, where the batch ranks them in a trie): an A, six B's
    and a C complete matches of 3 to 8 events at C, released as the batch releases them."""
    text = f"""{QUERY_PREFIXES}SELECT * WITHIN 1 HOURS CONSUMPTION MATCHED
FROM STREAM S <{EX}s>
WHERE {{ SEQ(A ; B+ : C)
  DEFINE GPM A ON S {{ ?a :kind :a }} DEFINE GPM B ON S {{ ?b :kind :b }}
  DEFINE GPM C ON S {{ ?c :kind :c }} }}"""
    evs = [ev("s", 0, ":a0 :kind :a .", seq=0)]
    evs += [ev("s", i, f":b{i} :kind :b .", seq=i) for i in range(1, 7)]
    evs.append(ev("s", 7, ":c7 :kind :c .", seq=7))
    engine = Engine()
    handle = engine.register(text)
    for e in evs:
        engine.push_event(e)
    engine.close()
    got = [_took(m.taken) for m in handle.matches()]
    assert got == [_took(m.taken) for m in reference.evaluate(parse_query(text), evs)]
    assert len(got) == 1 and handle.runtime.work()["runs_cut"] == 0


def test_the_consumption_cut_survives_a_snapshot_between_any_two_events() -> None:
    """The runs the cut did not offer an event are live runs like any other: a snapshot
    after any event restores an engine that releases the uninterrupted run's matches."""
    evs = _trades(7, 30)
    text = VSHAPE.format(policy="CONSUMPTION MATCHED")
    expected = [_took(m.taken) for m in reference.evaluate(parse_query(text), evs)]
    for at in range(len(evs) + 1):
        engine = Engine()
        engine.register(text)
        for e in evs[:at]:
            engine.push_event(e)
        got = [_took(m.taken) for m in engine.handles[0].matches()]
        engine = Engine.restore(engine.snapshot())
        for e in evs[at:]:
            engine.push_event(e)
        engine.close()
        got += [_took(m.taken) for m in engine.handles[0].matches()]
        assert got == expected, at


def test_a_composed_query_reads_a_policy_querys_output() -> None:
    """A query with a policy is a producer like any other: its released matches (after
    selection and consumption) are what a query reading its output stream sees."""
    engine = Engine()
    producer = engine.register(VSHAPE.format(policy="CONSUMPTION MATCHED"), output=EX + "vs")
    reader = engine.register(f"""{QUERY_PREFIXES}PREFIX spaseq: <https://w3id.org/spaseq#>
SELECT ?m WITHIN 100 SECONDS FROM STREAM V <{EX}vs>
WHERE {{ SEQ(M) DEFINE GPM M ON V {{ ?m a spaseq:Match }} }}""")
    for e in _prices([5, 3, 4, 2, 6, 1, 7, 5, 8]):
        engine.push_event(e)
    engine.close()
    made = list(producer.matches())
    assert len(made) == len(list(reader.matches())) == 3


def test_the_rdflib_processor_runs_a_policy_query() -> None:
    """The rdflib processor hands the query text to the engine: the policy applies, in both
    of its engines."""
    rdflib = pytest.importorskip("rdflib")
    from spaseq.plugin.dataset_streams import load_streams

    ds = load_streams(rdflib.Dataset(), {S: FIG1})
    text = FIG1_QUERY.format(policy="SELECTION LATEST")
    for engine in ("nfa", "reference"):
        rows = list(ds.query(text, processor="spaseq", engine=engine))
        assert [tuple(str(r[v]).rsplit("/", 1)[1] for v in ("x", "y", "z")) for r in rows] == [("a2", "b2", "c2")]


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "spaseq.engine.cli", *args], capture_output=True,
                          text=True, cwd=ROOT)


def test_the_cli_runs_a_policy_and_refuses_one_that_means_nothing(tmp_path: Path) -> None:
    good = tmp_path / "recent.rq"
    good.write_text(FIG1_QUERY.format(policy="SELECTION RECENT CONSUMPTION MATCHED"))
    out = _cli("run", str(good), "--stream", f"S={FIG1}", "--format", "jsonl")
    assert out.returncode == 0, out.stderr
    assert [(json.loads(line)["start"], json.loads(line)["time"]) for line in out.stdout.splitlines()] == \
        [(2, 6), (6, 8)]
    bad = tmp_path / "one.rq"
    bad.write_text(FIG1_QUERY.format(policy="SELECTION CHRONOLOGICAL").replace("SEQ(E1 : E2)", "SEQ(E1)"))
    out = _cli("run", str(bad), "--stream", f"S={FIG1}")
    assert out.returncode == 2
    assert out.stderr.startswith(f"{bad}:2:35: SELECTION CHRONOLOGICAL chooses"), out.stderr
    assert "Traceback" not in out.stderr


def _names(matches) -> list[list[str]]:
    return [[t.event.name.value.removeprefix(EX) for t in m.taken] for m in matches]


def _both(text: str, evs) -> list[list[str]]:
    q = parse_query(text)
    got = _names(api.evaluate(q, evs))
    assert got == _names(reference.evaluate(q, evs))
    return got


def test_recent_prefers_the_partial_match_that_started_later_when_the_times_agree() -> None:
    """([a1, a2]) and ([a2]) both end at 5; the shorter started later (decision 65)."""
    text = f"""{QUERY_PREFIXES}SELECT * WITHIN 10 SECONDS SELECTION {{}} FROM STREAM S <{EX}s>
WHERE {{{{ SEQ(A+ : C) DEFINE GPM A ON S {{{{ ?a :kind :a }}}} DEFINE GPM C ON S {{{{ ?c :kind :c }}}} }}}}"""
    evs = [ev("s", 1, ":a1 :kind :a .", 0, "a1"), ev("s", 5, ":a2 :kind :a .", 1, "a2"),
           ev("s", 6, ":c1 :kind :c .", 2, "c1")]
    assert _both(text.format("RECENT"), evs) == [["a2", "c1"]]
    assert _both(text.format("CHRONOLOGICAL"), evs) == [["a1", "c1"]]  # a1 alone ended first


def test_skip_till_next_looks_past_a_used_up_result() -> None:
    """Under MATCHED a used-up triple is no longer input: `;` takes the next B & C, not the
    one whose B was used (c1's run would otherwise commit to time 2 and find nothing)."""
    text = f"""{QUERY_PREFIXES}SELECT * WITHIN 10 SECONDS CONSUMPTION MATCHED FROM STREAM S <{EX}s>
WHERE {{ SEQ(A ; (B & C)) DEFINE GPM A ON S {{ ?a :kind :a ; :g ?g }} DEFINE GPM B ON S {{ ?b :kind :b }}
  DEFINE GPM C ON S {{ ?c :kind :c ; :g ?g }} }}"""
    evs = [ev("s", *spec) for spec in [
        (1, ":a1 :kind :a ; :g :g1 .", 0, "a1"), (1.5, ":a2 :kind :a ; :g :g2 .", 1, "a2"),
        (2, ":c0 :kind :c ; :g :g1 .", 2, "c0"), (2, ":b1 :kind :b .", 3, "b1"),
        (2, ":c1 :kind :c ; :g :g2 .", 4, "c1"), (3, ":b2 :kind :b .", 5, "b2"),
        (3, ":c2 :kind :c ; :g :g2 .", 6, "c2")]]
    assert _both(text, evs) == [["a1", "b1", "c0"], ["a2", "b2", "c2"]]


def test_kleene_aggregates_count_the_iterations_of_a_conjunction() -> None:
    """`(B & C){2}` takes four events in two iterations: spaseq:count is 2, spaseq:sum adds one
    value per iteration (decision 66)."""
    q = parse_query(f"""{QUERY_PREFIXES}PREFIX spaseq: <https://w3id.org/spaseq#>
SELECT ?n ?s ?f WITHIN 10 SECONDS FROM STREAM S <{EX}s>
WHERE {{ SEQ(A ; (B & C){{2}} ; E) DEFINE GPM A ON S {{ ?a :kind :a }} DEFINE GPM B ON S {{ ?b :val ?v }}
  DEFINE GPM C ON S {{ ?c :alt ?v }}
  DEFINE GPM E ON S {{ ?e :kind :e BIND(spaseq:count("v") AS ?n) BIND(spaseq:sum("v") AS ?s)
                       BIND(spaseq:first("v") AS ?f) }} }}""")
    evs = [ev("s", *spec) for spec in [
        (1, ":a1 :kind :a .", 0, "a1"), (2, ":b1 :val 2 .", 1, "b1"), (2, ":c1 :alt 2 .", 2, "c1"),
        (3, ":b2 :val 3 .", 3, "b2"), (3, ":c2 :alt 3 .", 4, "c2"), (4, ":e1 :kind :e .", 5, "e1")]]
    for evaluate in (api.evaluate, reference.evaluate):
        (m,) = evaluate(q, evs)
        b = dict(m.bindings)
        assert (b["n"].value, b["s"].value, b["f"].value) == ("2", "5", "2")
