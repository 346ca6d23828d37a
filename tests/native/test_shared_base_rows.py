"""Events offered to many runs (skip-till-any) are answered from their base rows, computed
once per event and merged into each run's bindings, instead of a join per run
(`Programs::shared_base_rows`, `Bgp::solve_from_base`): the same rows in the same order as
the join. Checked against the reference evaluator, jsonl byte for byte (the release order
included), on events with several solutions each, blank nodes and FILTERs over the run's
bindings, in the shapes where the merge could go wrong: a join variable bound by the run,
one left free, and a FILTER reading both."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from tests.cli.started import ok, run_spaseq

PREFIXES = "PREFIX ex: <http://ex/>\n"
QUERIES = {
    # B joins A on ?c; C does not (?d free) and compares with both
    "joined-then-free": """SELECT * WITHIN 20 SECONDS FROM STREAM S1 <http://ex/s> WHERE {
  SEQ (A: B: C)
  DEFINE GPM A ON S1 { ?c ex:p ?v1 . }
  DEFINE GPM B ON S1 { ?c ex:p ?v2 . ?c ex:q [] . FILTER (?v2 > ?v1) }
  DEFINE GPM C ON S1 { ?d ex:p ?v3 . FILTER (?v3 < ?v2 && ?d != ?c) }
}""",
    # every GPM joined on ?c, a blank node in the last, a FILTER on the event alone
    "joined": """SELECT ?c ?v1 ?v3 WITHIN 15 SECONDS FROM STREAM S1 <http://ex/s> WHERE {
  SEQ (A: B: C)
  DEFINE GPM A ON S1 { ?c ex:p ?v1 . FILTER (?v1 > 2) }
  DEFINE GPM B ON S1 { ?c ex:p ?v2 . FILTER (?v2 != ?v1) }
  DEFINE GPM C ON S1 { ?c ex:q [] ; ex:p ?v3 . FILTER (?v3 >= ?v1) }
}""",
}


def stream_text(events: int, seed: int) -> str:
    """Events with one to four (company, value) triples, half with a blank-node triple."""
    rng = random.Random(seed)
    lines = []
    for i in range(events):
        g = f"<http://ex/e{i}>"
        lines.append(f'{g} <http://www.w3.org/ns/prov#generatedAtTime> '
                     f'"{i}"^^<http://www.w3.org/2001/XMLSchema#integer> .')
        for k in range(rng.randint(1, 4)):
            c, v = rng.randint(0, 3), rng.randint(0, 9)
            lines.append(f'<http://ex/c{c}> <http://ex/p> '
                         f'"{v}"^^<http://www.w3.org/2001/XMLSchema#integer> {g} .')
            if rng.random() < 0.5:
                lines.append(f"<http://ex/c{c}> <http://ex/q> _:b{k} {g} .")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_shared_base_rows_give_the_reference_rows_in_its_order(tmp_path: Path, name: str) -> None:
    (tmp_path / "q.rq").write_text(PREFIXES + QUERIES[name], encoding="utf-8")
    (tmp_path / "s.nq").write_text(stream_text(150, seed=7), encoding="utf-8")
    outputs = {}
    for engine in ("nfa", "reference"):
        ok(run_spaseq(tmp_path, ("run", "q.rq", "--stream", "S1=s.nq", "--format", "jsonl",
                                 "--engine", engine, "--output", f"{engine}.jsonl")))
        outputs[engine] = (tmp_path / f"{engine}.jsonl").read_text(encoding="utf-8")
    # enough matches that most events are offered to several runs (the shared path)
    assert outputs["nfa"].count("\n") > 1000
    assert outputs["nfa"] == outputs["reference"]
