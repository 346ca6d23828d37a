"""A real MQTT broker for the tests of this folder: Debian's mosquitto (``make broker``
installs it), started on 127.0.0.1 on a free port with a generated configuration; real
paho-mqtt clients to publish events and to receive what spaseq publishes; ``spaseq run`` and
``spaseq serve`` started as processes of their own."""

from __future__ import annotations

import os
import queue
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest

ROOT = Path(__file__).resolve().parents[2]
RISING = ROOT / "fixtures" / "mqtt" / "rising.rq"
MOSQUITTO = shutil.which("mosquitto") or next(
    (p for p in ("/usr/sbin/mosquitto", "/usr/local/sbin/mosquitto") if os.access(p, os.X_OK)), None)
PROV = "http://www.w3.org/ns/prov#generatedAtTime"
XSD = "http://www.w3.org/2001/XMLSchema#"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Broker:
    """mosquitto on 127.0.0.1:``port`` (no persistence: a restart forgets every session)."""

    def __init__(self, folder: Path) -> None:
        self.port = free_port()
        self.config = folder / "mosquitto.conf"
        self.config.write_text(f"listener {self.port} 127.0.0.1\nallow_anonymous true\npersistence false\n"
                               "log_dest none\n", encoding="utf-8")
        self.process: subprocess.Popen | None = None
        self.start()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> None:
        assert MOSQUITTO is not None
        self.process = subprocess.Popen([MOSQUITTO, "-c", str(self.config)], stdout=subprocess.DEVNULL,
                                        stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"mosquitto did not start: {self.process.stderr.read()}")  # type: ignore[union-attr]
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        raise AssertionError("mosquitto did not listen within 10 s")

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)


@pytest.fixture(scope="session")
def broker_factory(tmp_path_factory) -> Iterator[list[Broker]]:
    """Brokers started by the tests, killed at the end (skipped without mosquitto)."""
    if MOSQUITTO is None:
        pytest.skip("mosquitto is not installed: make broker (apt-get install -y mosquitto)")
    started: list[Broker] = []
    yield started
    for b in started:
        b.kill()


@pytest.fixture(scope="session")
def broker(broker_factory, tmp_path_factory) -> Broker:
    """The broker every test of the folder shares (each uses topics of its own)."""
    b = Broker(tmp_path_factory.mktemp("broker"))
    broker_factory.append(b)
    return b


class Client:
    """A paho-mqtt client connected to a broker: ``publish`` waits for the broker's
    acknowledgement (QoS 1), ``subscribe`` for the subscription's; received messages wait in
    ``received``."""

    def __init__(self, port: int) -> None:
        self.received: queue.Queue[tuple[str, bytes]] = queue.Queue()
        self._subscribed = threading.Event()
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2)
        self.client.on_message = lambda c, u, m: self.received.put((m.topic, m.payload))
        self.client.on_subscribe = lambda *args: self._subscribed.set()
        self.client.connect("127.0.0.1", port)
        self.client.loop_start()

    def subscribe(self, topic: str) -> None:
        self._subscribed.clear()
        self.client.subscribe(topic, qos=1)
        assert self._subscribed.wait(10), "no SUBACK"

    def publish(self, topic: str, payload: str | bytes) -> None:
        self.client.publish(topic, payload, qos=1).wait_for_publish(10)

    def messages(self, n: int, timeout: float = 20) -> list[tuple[str, str]]:
        """The next ``n`` messages received (AssertionError if they do not come in time)."""
        out = []
        deadline = time.monotonic() + timeout
        while len(out) < n:
            try:
                topic, payload = self.received.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"{len(out)} message(s) of {n} came: {out}") from None
            out.append((topic, payload.decode()))
        return out

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


@pytest.fixture
def client(broker) -> Iterator[Client]:
    c = Client(broker.port)
    yield c
    c.close()


def reading(t: int, value: int, fmt: str = "nquads", house: str = "h1") -> str:
    """One event of ``fixtures/mqtt/rising.rq``'s stream: a reading at ``t`` seconds."""
    g, s = f"<http://ex.org/e{t}>", f"<http://ex.org/{house}>"
    stamp = f'"{t}"^^<{XSD}integer>'
    if fmt == "trig":
        return f"{g} {{ {s} <http://ex.org/value> {value} }}\n{g} <{PROV}> {stamp} .\n"
    return f'{s} <http://ex.org/value> "{value}"^^<{XSD}integer> {g} .\n{g} <{PROV}> {stamp} .\n'


class Spaseq:
    """``spaseq ARGS`` running: stderr read on a thread, line by line (``wait_for``)."""

    def __init__(self, *args: str, cwd: Path = ROOT) -> None:
        self.process = subprocess.Popen([sys.executable, "-m", "spaseq.engine.cli", *args], cwd=cwd,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.stderr: list[str] = []
        self.stdout: list[str] = []
        self._lines: queue.Queue[str] = queue.Queue()
        self._readers = [threading.Thread(target=self._read, daemon=True),
                         threading.Thread(target=self._read_stdout, daemon=True)]
        for reader in self._readers:
            reader.start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.stderr.append(line)
            self._lines.put(line)

    def _read_stdout(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.stdout.append(line)

    def wait_for(self, text: str, timeout: float = 30) -> str:
        """The next stderr line holding ``text``."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                self.process.kill()
                raise AssertionError(f"no {text!r} on stderr: {''.join(self.stderr)}") from None
            if text in line:
                return line

    def stop(self, sig: int | None = signal.SIGINT) -> tuple[int, str]:
        """Send ``sig`` (None: none, wait for the end); the exit status and stdout."""
        if sig is not None and self.process.poll() is None:
            self.process.send_signal(sig)
        try:
            status = self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            raise
        for reader in self._readers:
            reader.join(10)
        return status, "".join(self.stdout)
