"""Issue 24's shapes whose cost grew with the square of one instant or of the open runs: each
finds the reference evaluator's matches in its order, and the work it counts
(``QueryRuntime.work``) grows with n, not n² (no timing: a regression fails the count)."""

from __future__ import annotations

import pytest

from spaseq.engine.api import Engine
from spaseq.engine.cli.main import main
from spaseq.engine.compile.plan import EngineOptions
from tests.output import writers_oracle
from tests.util import checked_run, events, query_text


def run(text: str, evs: list, options: EngineOptions | None = None) -> tuple[list, dict[str, int]]:
    """The engine's matches of ``text`` over ``evs`` checked against the reference evaluator's
    (content and order), and the work it counted."""
    got, handle = checked_run(Engine(options=options), text, evs)
    return got, handle.runtime.work()


CONJ = "DEFINE GPM A ON U1 { ?a :ka ?k } DEFINE GPM B ON U1 { ?b :kb ?k }"


def one_instant(n: int) -> list:
    """n A's then n B's at one timestamp, joined 1:1 on ?k (two B's for key 0, none for the
    last A), and a later pair."""
    specs = [("u1", 5, f":a{i} :ka :k{i} .") for i in range(n)]
    specs += [("u1", 5, f":b{i} :kb :k{i} .") for i in range(n - 1)] + [("u1", 5, ":bx :kb :k0 .")]
    specs += [("u1", 6, ":b9 :kb :k9 ; :ka :k9 .")]
    return events(*specs)


@pytest.mark.parametrize("lazy", [False, True])
def test_a_conjunction_of_one_instant_pairs_by_its_join_key(lazy: bool) -> None:
    n = 120
    text = query_text("(A & B)", CONJ, streams=("u1",))
    got, work = run(text, one_instant(n), EngineOptions(lazy_conjunction=lazy))
    assert len(got) == n + 1  # n - 1 pairs, key 0's second B, the later event with itself
    # each result meets the buffered ones of its key, not every one (n²/... before)
    assert work["conjunction_pairs"] <= 4 * n, work


def test_three_operands_sharing_some_variables() -> None:
    defines = ("DEFINE GPM A ON U1 { ?a :ka ?k } DEFINE GPM B ON U1 { ?b :kb ?k ; :j ?j } "
               "DEFINE GPM C ON U1 { ?c :kc ?j }")
    specs = [("u1", 1, f":a{i} :ka :k{i % 3} .") for i in range(6)]
    specs += [("u1", 1, f":b{i} :kb :k{i % 3} ; :j :j{i % 2} .") for i in range(6)]
    specs += [("u1", 1, f":c{i} :kc :j{i % 2} .") for i in range(4)]
    got, _ = run(query_text("(A & B & C)", defines, streams=("u1",)), events(*specs))
    assert len(got) == 6 * 2 * 2  # per B: the 2 A's of its key and the 2 C's of its ?j


KLEENE = ("DEFINE GPM A ON U1 { ?a :start ?x } DEFINE GPM B ON U1 { ?b :step ?y } "
          "DEFINE GPM C ON U1 { ?c :stop ?z }")


def test_kleene_matches_of_one_moment_are_ordered_without_listing_their_events() -> None:
    n = 150
    specs = [("u1", 0, ":a :start 0 .")] + [("u1", i, f":b{i} :step {i} .") for i in range(1, n + 1)]
    specs.append(("u1", n + 1, ":c :stop 0 ."))
    text = query_text("A ; B+ : C", KLEENE, within="1000000 DAYS", streams=("u1",))
    got, work = run(text, events(*specs))
    assert len(got) == n and sum(len(m.taken) for m in got) == n * (n + 1) // 2 + 2 * n
    # the moment's n matches take n(n+1)/2 + 2n events; ordering them holds about 2n keys
    assert work["order_keys"] <= 3 * n, work
    # and no B event visits the n runs waiting for C (a B has no solution of C)
    assert work["run_offers"] <= 4 * n, work


def test_kleene_rows_of_one_moment_are_written_in_cut_batches(tmp_path) -> None:
    """The native jsonl writer cuts a moment's batch of long matches (20,300 events taken
    here, past the 16,384 of a batch) and writes the oracle's bytes (tests/output/writers_oracle.py)."""
    n = 200
    number = '"{}"^^<http://www.w3.org/2001/XMLSchema#integer>'.format
    pred = ["start"] + ["step"] * n + ["stop"]
    data = "".join(f"<http://ex.org/g{i}> <http://www.w3.org/ns/prov#generatedAtTime> {number(i)} .\n"
                   f"<http://ex.org/e{i}> <http://ex.org/{p}> {number(i)} <http://ex.org/g{i}> .\n"
                   for i, p in enumerate(pred))
    (tmp_path / "s.nq").write_text(data, encoding="utf-8")
    (tmp_path / "q.rq").write_text(query_text("A ; B+ : C", KLEENE, within="1000000 DAYS", streams=("u1",)),
                                   encoding="utf-8")
    outputs = {}
    for writer in ("native", "oracle"):
        out = tmp_path / f"{writer}.jsonl"
        with pytest.MonkeyPatch.context() as patch:
            if writer == "oracle":
                patch.setattr("spaseq.engine.cli.run._sink", writers_oracle.run_sink)
            assert main(["run", str(tmp_path / "q.rq"), "--stream", f"U1={tmp_path / 's.nq'}",
                         "--format", "jsonl", "--output", str(out)]) == 0
        outputs[writer] = out.read_bytes()
    assert outputs["native"] == outputs["oracle"]
    assert outputs["native"].count(b"\n") == n


CHAIN = "DEFINE GPM A ON U1 { ?a :pa ?x } DEFINE GPM B ON U1 { ?b :pb ?y }"


@pytest.mark.parametrize("lazy", [False, True])
def test_open_runs_are_visited_only_by_events_that_can_extend_them(lazy: bool) -> None:
    n = 300
    specs = [("u1", i, f":a{i} :pa {i} .") for i in range(n)] + [("u1", n, ":b :pb 1 .")]
    text = query_text("A : B", CHAIN, within="1000000 DAYS", streams=("u1",))
    got, work = run(text, events(*specs), EngineOptions(lazy_chain=lazy))
    assert len(got) == n
    # the A's wait for a B; no A visits them (n²/2 offers before), the B visits each once
    assert work["run_offers"] <= 2 * n, work
