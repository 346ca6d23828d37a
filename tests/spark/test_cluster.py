"""``spaseq run --spark spark://...`` on a real multi-process cluster (``tests/spark/cluster.py``:
a standalone master and two one-core workers) writes exactly the bytes ``spaseq run`` writes,
for the smart-grid example with its KB file, split by key; and the README's streaming example
runs on it and writes the example's matches. Each run is a
subprocess (one Python process holds one SparkContext, and the suite's local one is running);
its executors are JVMs of the workers, whose Python workers run this interpreter
(``PYSPARK_PYTHON``, which imports spaseq) in the workers' own folders, so a relative ``--kb``
path must reach them made absolute."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.spark_cluster import Cluster, cluster_env
from spaseq.engine.cli.main import main
from spaseq.engine.compile.planner import plan_query
from spaseq.engine.language.query import parse_query
from tests.spark.cluster import WORKERS

ROOT = Path(__file__).resolve().parents[2]
SMARTGRID = "fixtures/smartgrid"
#: the example's query with B once (every GPM binds ?l and nothing looks at other locations: by
#: key); as written it splits by time, which the local tests cover byte for byte (a cluster run
#: costs the suite ~13 s)
QUERIES = {"key": "SEQ (A; B; C)"}
#: relative paths, as a user in the repository would write them (the runs' folder is ROOT)
INPUTS = ["--stream", f"S1={SMARTGRID}/power.trig", "--stream", f"S2={SMARTGRID}/weather.trig",
          "--stream", f"S3={SMARTGRID}/storage.trig", "--kb", f"{SMARTGRID}/kb.nt", "--format", "jsonl"]
#: the driver's and executors' JVMs compile with C1 only and collect serially: on a few events
#: that halves a run's time (~33 s to ~19 s on the busy 2-core machine); the results are alike
QUICK_JVMS = [option for role in ("driver", "executor")
              for option in ("--spark-conf", f"spark.{role}.extraJavaOptions=-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")]
#: the same for a session of the Python API (the driver's JVM is started by the session itself
#: with spaseq's quiet options), and a stateful stream's partitions, one per core (a cluster's
#: default of 200 runs 200 state-store tasks per micro-batch)
QUICK_CONF = {"spark.executor.extraJavaOptions": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
              "spark.sql.shuffle.partitions": str(WORKERS)}


@pytest.mark.parametrize("split", QUERIES)
def test_a_cluster_of_two_workers_writes_the_bytes_of_spaseq_run(cluster: Cluster, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch,
                                                                 split: str) -> None:
    text = (ROOT / SMARTGRID / "query.rq").read_text(encoding="utf-8").replace("SEQ (A; B+, C)", QUERIES[split])
    assert plan_query(parse_query(text)).split.kind == split
    query = tmp_path / "query.rq"
    query.write_text(text, encoding="utf-8")
    monkeypatch.chdir(ROOT)
    assert main(["run", str(query), *INPUTS, "--output", str(tmp_path / "plain.jsonl")]) == 0
    before = {app["id"] for app in cluster.status()["completedapps"]}
    run = subprocess.run([sys.executable, "-m", "spaseq.engine.cli", "run", str(query), *INPUTS,
                          "--output", str(tmp_path / "cluster.jsonl"), "--spark", cluster.master_url, *QUICK_JVMS],
                         cwd=ROOT, env=cluster_env(), capture_output=True, text=True, timeout=300, check=False)
    assert (run.returncode, run.stderr) == (0, "")
    plain = (tmp_path / "plain.jsonl").read_bytes()
    assert plain.count(b"\n") >= 6  # the example has matches of both locations
    assert (tmp_path / "cluster.jsonl").read_bytes() == plain
    # it ran on the cluster: the master lists the application, given both workers' cores, and
    # each worker ran one of its executors
    [app] = [a for a in cluster.status()["completedapps"] if a["id"] not in before]
    assert (app["name"], app["cores"]) == ("spaseq", WORKERS)
    assert all((folder / app["id"]).is_dir() for folder in cluster.worker_folders())


def test_the_readme_streaming_example_runs_on_the_cluster(cluster: Cluster, tmp_path: Path) -> None:
    """The README's Structured Streaming example with the cluster as its master (and absolute
    paths: the executors run in the workers' folders) writes the smart-grid matches."""
    from tests.spark.test_streaming import README_STREAMING, _bag, smartgrid_folders, smartgrid_matches

    smartgrid_folders(tmp_path, slices=2)
    code = README_STREAMING.replace('session("local[2]")', f"session({cluster.master_url!r}, {QUICK_CONF!r})")
    for name in ('"in/', '"out"', '"checkpoint"', '"kb.nt"', '"query.rq"'):
        code = code.replace(name, f'"{tmp_path}/{name[1:]}')
    run = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=cluster_env(), capture_output=True,
                         text=True, timeout=300, check=False)
    assert run.returncode == 0, run.stderr[-3000:]
    rows = [json.loads(line) for f in sorted((tmp_path / "out").glob("part-*.json")) for line in f.open()]
    assert _bag(_Row(r) for r in rows) == _bag(smartgrid_matches())


class _Row:
    """A JSON row of the file sink as ``_bag`` reads a match."""

    def __init__(self, row: dict) -> None:
        self.start, self.time, self.bindings = row["start"], row["time"], row["bindings"]
