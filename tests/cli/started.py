"""What the command-line tests share: invocations started together in subprocesses when a
module's first test asks for one (each test then waits only for its own), and the two
outcomes they assert (success; a clean user error)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path


def spaseq_command(args: tuple[str, ...]) -> list[str]:
    """``spaseq ARGS`` as this interpreter runs it."""
    return [sys.executable, "-m", "spaseq.engine.cli", *args]


def run_spaseq(cwd: Path, args: tuple[str, ...], stdin: str | None = None) -> subprocess.CompletedProcess:
    """``spaseq ARGS`` in ``cwd``, stdin from the file ``stdin`` there (or nothing)."""
    with open(cwd / stdin, "rb") if stdin else open(os.devnull, "rb") as source:
        return subprocess.run(spaseq_command(args), cwd=cwd, stdin=source, capture_output=True,
                              text=True, timeout=120)


class Started:
    """The started invocations: ``runs(key)`` waits for one and returns its CompletedProcess."""

    def __init__(self, work: Path, futures: dict[str, Future]) -> None:
        self.work = work
        self._futures = futures

    def __call__(self, key: str) -> subprocess.CompletedProcess:
        return self._futures[key].result()


@contextmanager
def started(work: Path, files: Mapping[str, str],
            runs: Mapping[str, tuple[tuple[str, ...], str | None]]) -> Iterator[Started]:
    """Write ``files`` into ``work`` and start every run ``key: (args, stdin file)`` there."""
    for name, text in files.items():
        (work / name).write_text(text, encoding="utf-8")
    pool = ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2))
    try:
        yield Started(work, {k: pool.submit(run_spaseq, work, a, i) for k, (a, i) in runs.items()})
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def ok(proc: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    """Assert success; return the process."""
    assert proc.returncode == 0, (proc.returncode, proc.stderr)
    return proc


def user_error(proc: subprocess.CompletedProcess) -> str:
    """Assert a clean user error (status 2, no traceback); return stderr."""
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    return proc.stderr
