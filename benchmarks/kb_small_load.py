"""Wall and CPU time of ``spaseq kb load --json`` of a tiny dump, the whole process tree counted
(the driver JVM and Spark's Python workers outlive the ``spaseq`` process that started them, so
``/usr/bin/time`` misses them): this process becomes a child subreaper, so every orphaned
descendant is reparented to it and its CPU time lands in ``RUSAGE_CHILDREN`` once reaped.
Variants run interleaved, one run of each per round, so a noisy machine hits them alike.

    python -m benchmarks.kb_small_load --runs 5 \\
        --variant 'before:PYTHONPATH=/tmp/old-tree' --variant 'after'

A variant is ``LABEL[:ENV=VALUE,...][:EXTRA ARGS]``: environment variables for the run and
arguments appended to the ``spaseq kb load`` command line.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

PR_SET_CHILD_SUBREAPER = 36


@dataclass
class Variant:
    """One way of running the load: a label, extra environment variables, extra arguments."""

    label: str
    env: dict[str, str] = field(default_factory=dict)
    args: list[str] = field(default_factory=list)

    @classmethod
    def parse(cls, text: str) -> Variant:
        """``LABEL[:ENV=VALUE,...][:EXTRA ARGS]``."""
        label, _, rest = text.partition(":")
        env_text, _, args_text = rest.partition(":")
        env = dict(pair.split("=", 1) for pair in env_text.split(",") if pair)
        return cls(label, env, shlex.split(args_text))


@dataclass
class Run:
    """One measured run: wall until ``spaseq`` exited and until its last descendant did, CPU of
    the whole tree, the 1-minute load average before it."""

    wall_s: float
    tree_wall_s: float
    cpu_s: float
    load: float


def tiny_dump(path: Path, quads: int = 15) -> Path:
    """An N-Quads file of ``quads`` distinct quads in one named graph."""
    path.write_text("".join(f'<http://ex.org/s{n}> <http://ex.org/p> "{n}" <http://ex.org/g> .\n'
                            for n in range(quads)), encoding="utf-8")
    return path


def become_subreaper() -> None:
    """Orphaned descendants are reparented to this process (Linux), so their CPU is counted."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")


def reap_all() -> None:
    """Wait for every child, including orphans reparented here."""
    while True:
        try:
            os.wait()
        except ChildProcessError:
            return


def children_cpu_s() -> float:
    """User plus system CPU seconds of every reaped descendant so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure(spaseq: str, dump: Path, variant: Variant, work: Path) -> Run:
    """One ``spaseq kb load --store NEW dump --json`` run, checked for 15 quads and an empty stderr."""
    store = Path(tempfile.mkdtemp(dir=work))
    cmd = [spaseq, "kb", "load", "--store", str(store), str(dump), "--json", *variant.args]
    load = os.getloadavg()[0]
    cpu0 = children_cpu_s()
    start = time.monotonic()
    proc = subprocess.run(cmd, env={**os.environ, **variant.env}, capture_output=True, text=True, check=False)
    wall = time.monotonic() - start
    reap_all()
    tree_wall = time.monotonic() - start
    cpu = children_cpu_s() - cpu0
    if proc.returncode != 0 or proc.stderr:
        raise SystemExit(f"{variant.label}: exit {proc.returncode}, stderr:\n{proc.stderr}")
    if json.loads(proc.stdout)["loaded"] != dump.read_text().count("\n"):
        raise SystemExit(f"{variant.label}: unexpected summary {proc.stdout}")
    return Run(wall, tree_wall, cpu, load)


def span(values: list[float]) -> str:
    """``min-max (median)`` with one decimal."""
    return f"{min(values):.1f}-{max(values):.1f} (median {statistics.median(values):.1f})"


def main(argv: list[str] | None = None) -> int:
    """Run the variants interleaved and print each one's ranges."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--variant", action="append", type=Variant.parse, default=[])
    parser.add_argument("--spaseq", default=str(Path(sys.executable).with_name("spaseq")))
    args = parser.parse_args(argv)
    variants = args.variant or [Variant("current")]
    become_subreaper()
    results: dict[str, list[Run]] = {v.label: [] for v in variants}
    with tempfile.TemporaryDirectory(prefix="kb-small-load-") as tmp:
        work = Path(tmp)
        dump = tiny_dump(work / "d.nq")
        for round_ in range(args.runs):
            for v in variants if round_ % 2 == 0 else reversed(variants):
                run = measure(args.spaseq, dump, v, work)
                results[v.label].append(run)
                print(f"{v.label:>12}: wall {run.wall_s:5.1f} s, tree {run.tree_wall_s:5.1f} s, "
                      f"CPU {run.cpu_s:5.1f} s, load {run.load:.1f}", flush=True)
    for label, runs in results.items():
        print(f"{label}: wall {span([r.wall_s for r in runs])} s, CPU {span([r.cpu_s for r in runs])} s, "
              f"load average {span([r.load for r in runs])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
