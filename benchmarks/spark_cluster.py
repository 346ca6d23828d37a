"""A Spark standalone cluster on this machine, started from PySpark's own launcher
(``pyspark/bin/spark-class``): a master and N workers on 127.0.0.1, each worker with its own
cores (``--cores``) and, when asked, pinned to CPUs of its own (``taskset``), so that a job on
it runs in separate executor JVMs and Python workers as on a real cluster. Used by the
benchmark ``benchmarks.spark_batch`` and by the suite's cluster test (``tests/spark/cluster.py``).

Every process is started in a session of its own and with a parent-death signal, and
``stop`` (or leaving the ``with`` block) ends each one's whole process group (the worker, its
executors and their Python workers), so no JVM outlives the cluster's owner."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

#: The master's log lines that give its URL and its web UI's port (which serves ``/json/``).
MASTER_URL = re.compile(r"Starting Spark master at (spark://\S+)")
UI_PORT = re.compile(r"Successfully started service 'MasterUI' on port (\d+)")
#: JVM options of the daemons: they do little, so a quick start matters more than peak speed.
DAEMON_JAVA_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
PR_SET_PDEATHSIG = 1


def spark_home() -> Path:
    """The folder of the installed PySpark, which holds Spark's jars and ``bin/spark-class``."""
    import pyspark

    return Path(pyspark.__file__).resolve().parent


def cluster_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of the daemons and of a driver using the cluster: Spark on loopback, the
    Python workers running this interpreter (which imports spaseq), no REST submission server
    (it would take a fixed port)."""
    return {**os.environ, "SPARK_HOME": str(spark_home()), "SPARK_LOCAL_IP": "127.0.0.1",
            "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable,
            "SPARK_MASTER_OPTS": "-Dspark.master.rest.enabled=false",
            "SPARK_DAEMON_JAVA_OPTS": DAEMON_JAVA_OPTIONS, **(extra or {})}


def _die_with_parent() -> None:
    """In the child before exec: SIGTERM when the process that started it dies (Linux), so a
    killed test or benchmark leaves no daemon behind (the worker then stops its executors)."""
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


@dataclass
class Cluster:
    """A running standalone cluster: its master URL (for ``--spark``), the master's JSON status
    URL, its folder (logs, workers' folders) and its processes."""

    master_url: str
    status_url: str
    folder: Path
    processes: list[subprocess.Popen] = field(default_factory=list)
    logs: list[IO[bytes]] = field(default_factory=list)

    def status(self) -> dict[str, Any]:
        """The master's state (``/json/``): workers, cores, running and completed applications."""
        with urllib.request.urlopen(self.status_url, timeout=5) as response:
            return json.loads(response.read())

    def worker_folders(self) -> list[Path]:
        """Each worker's work folder (an application's executors write theirs inside)."""
        return sorted(self.folder.glob("worker-*"))

    def stop(self) -> None:
        """End every process group, workers first (each stops its executors), then the master:
        SIGTERM, then SIGKILL for any still running after 10 s."""
        for process in reversed(self.processes):
            _signal_group(process, signal.SIGTERM)
        deadline = time.monotonic() + 10
        for process in reversed(self.processes):
            try:
                process.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
            _signal_group(process, signal.SIGKILL)  # the group's other processes too
            process.wait()
        self.processes.clear()
        for log in self.logs:
            log.close()
        self.logs.clear()

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _signal_group(process: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(process.pid, sig)
    except ProcessLookupError:
        pass


def start_cluster(workers: int, folder: str | os.PathLike[str], *, cores: int = 1, memory: str = "2g",
                  pin: bool = False, timeout_s: float = 90.0) -> Cluster:
    """Start a master and ``workers`` workers (``cores`` and ``memory`` each; ``pin``: worker
    i runs on CPUs [i*cores, (i+1)*cores) modulo the machine's, with ``taskset``) and return
    once every worker has registered with the master. RuntimeError, with the logs' tail and
    nothing left running, when that does not happen within ``timeout_s``."""
    home = spark_home()
    folder = Path(folder)
    (folder / "logs").mkdir(parents=True, exist_ok=True)
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        raise RuntimeError("a Spark cluster needs Java 17 or later")
    if pin and shutil.which("taskset") is None:
        raise RuntimeError("pinning workers to CPUs needs taskset (util-linux)")
    env = cluster_env()
    cluster = Cluster("", "", folder)
    deadline = time.monotonic() + timeout_s
    try:
        master_log = folder / "logs" / "master.log"
        _launch(cluster, [str(home / "bin" / "spark-class"), "org.apache.spark.deploy.master.Master",
                          "--host", "127.0.0.1", "--port", "0", "--webui-port", "0"], master_log, env)
        url, ui_port = _wait_for_master(cluster, master_log, deadline)
        cluster.master_url, cluster.status_url = url, f"http://127.0.0.1:{ui_port}/json/"
        cpus = os.cpu_count() or 1
        for i in range(workers):
            pinning = []
            if pin:
                chosen = ",".join(str((i * cores + k) % cpus) for k in range(cores))
                pinning = ["taskset", "-c", chosen]
            _launch(cluster, [*pinning, str(home / "bin" / "spark-class"), "org.apache.spark.deploy.worker.Worker",
                              url, "--host", "127.0.0.1", "--cores", str(cores), "--memory", memory,
                              "--webui-port", "0", "--work-dir", str(folder / f"worker-{i}")],
                    folder / "logs" / f"worker-{i}.log", env)
        _wait_for_workers(cluster, workers, deadline)
    except BaseException:
        cluster.stop()
        raise
    return cluster


def _launch(cluster: Cluster, command: list[str], log_path: Path, env: dict[str, str]) -> None:
    log = open(log_path, "wb")
    cluster.logs.append(log)
    cluster.processes.append(subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                              env=env, cwd=cluster.folder, start_new_session=True,
                                              preexec_fn=_die_with_parent))


def _wait_for_master(cluster: Cluster, log: Path, deadline: float) -> tuple[str, str]:
    """The master's URL and web UI port, read from its log once it has started."""
    while time.monotonic() < deadline:
        _check_running(cluster)
        text = log.read_text(errors="replace")
        url, ui = MASTER_URL.search(text), UI_PORT.search(text)
        if url and ui:
            return url[1], ui[1]
        time.sleep(0.1)
    raise RuntimeError(f"the Spark master did not start in time:\n{_tails(cluster)}")


def _wait_for_workers(cluster: Cluster, workers: int, deadline: float) -> None:
    """Poll the master's status until ``workers`` workers are alive."""
    alive = 0
    while time.monotonic() < deadline:
        _check_running(cluster)
        try:
            alive = cluster.status().get("aliveworkers", 0)
        except OSError:
            alive = 0
        if alive >= workers:
            return
        time.sleep(0.2)
    raise RuntimeError(f"{alive} of {workers} Spark workers registered in time:\n{_tails(cluster)}")


def _check_running(cluster: Cluster) -> None:
    for process in cluster.processes:
        if process.poll() is not None:
            raise RuntimeError(f"a Spark daemon exited ({process.returncode}): {' '.join(map(str, process.args))}\n"
                               f"{_tails(cluster)}")


def _tails(cluster: Cluster, lines: int = 15) -> str:
    """The last lines of every daemon's log, for an error message."""
    out = []
    for path in sorted((cluster.folder / "logs").glob("*.log")):
        tail = path.read_text(errors="replace").splitlines()[-lines:]
        out.append(f"--- {path.name}\n" + "\n".join(tail))
    return "\n".join(out)
