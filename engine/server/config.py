"""The settings of ``spaseq serve`` and the checks made before anything listens."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from decimal import Decimal

from pyoxigraph import NamedNode

from spaseq.engine.errors import UsageError
from spaseq.engine.io.mqtt import MqttSettings

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 7878
DEFAULT_MAX_BODY = 16 * 1024 * 1024


@dataclass(frozen=True)
class ServerConfig:
    """What the command line (or a test) asks of the server."""

    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    kb: tuple[str, ...] = ()             # [GRAPH=]FILE, loaded into memory
    kb_store: str | None = None          # a `spaseq kb load` store, read-only
    data: str | None = None              # durability directory (journal, snapshots, match logs)
    token: str | None = None             # Bearer token for writes
    token_reads: bool = False            # reads need the token too
    max_body: int = DEFAULT_MAX_BODY     # bytes; larger bodies get 413
    cors: tuple[str, ...] = ()           # allowed origins
    max_queries: int = 256               # registered queries; more get 429
    max_clients: int = 256               # open streaming (SSE/ndjson) responses; more get 503
    keep_matches: int | None = None      # results kept per query (None: all)
    follower_lag: int = 10_000           # results a follower may lag behind before it is cut off
    idempotency_keys: int = 100_000      # batch keys remembered (the newest)
    keepalive: float = 15.0              # seconds between SSE keep-alive comments
    snapshot_every: int = 1000           # journal records between two snapshots (with --data)
    time_format: str = "input"           # how results write times (output.times, decision 43)
    lateness: Decimal | None = None      # the LATENESS of queries without one (seconds)
    idle_timeout: Decimal | None = None  # a silent stream stops holding it back (default: it)
    late: str = "drop"                   # a late event: "drop" (answered) or "error" (409)
    intervals: bool = False              # queries planned for events that last (decision 71)
    certfile: str | None = None          # TLS: the certificate chain (PEM); with keyfile, https
    keyfile: str | None = None           # TLS: its private key (PEM)
    mqtt: MqttSettings | None = None     # a broker: events from topics, matches to topics (decision 74)

    def check(self) -> None:
        """Refuse settings that would expose the engine or cannot work (UsageError)."""
        if not is_loopback(self.host) and not self.token:
            raise UsageError(f"--host {self.host} is not a loopback address: refusing to listen "
                             "there without --token (or SPASEQ_TOKEN)")
        if self.token_reads and not self.token:
            raise UsageError("--token-reads needs a token (--token or SPASEQ_TOKEN)")
        if self.kb and self.kb_store:
            raise UsageError("give either --kb files or one --kb-store directory, not both")
        if not 0 <= self.port <= 65535:
            raise UsageError(f"--port {self.port}: not a port number")
        for name, value in (("--max-queries", self.max_queries), ("--max-clients", self.max_clients),
                            ("--keep-matches", self.keep_matches), ("--follower-lag", self.follower_lag),
                            ("--idempotency-keys", self.idempotency_keys)):
            if value is not None and value <= 0:
                raise UsageError(f"{name} {value}: must be a positive number")
        if self.late not in ("drop", "error"):
            raise UsageError(f"--late {self.late}: expected drop or error")
        if (self.certfile is None) != (self.keyfile is None):
            raise UsageError("TLS needs both --certfile and --keyfile")
        if self.certfile is not None and self.keyfile is not None:
            check_tls(self.certfile, self.keyfile)
        if self.max_body <= 0:
            raise UsageError(f"--max-body {self.max_body}: must be a positive number of bytes")
        for topic, stream in self.mqtt.subscribe if self.mqtt is not None else ():
            try:
                NamedNode(stream)
            except ValueError:
                raise UsageError(f"--subscribe {topic}={stream}: the stream is its IRI here (no query "
                                 "names it yet), written without <>") from None


def check_tls(certfile: str, keyfile: str) -> None:
    """UsageError unless ``certfile`` and ``keyfile`` load as a server's certificate and key
    (uvicorn loads them again: this is to say what is wrong before anything listens)."""
    import os
    import ssl

    for option, path in (("--certfile", certfile), ("--keyfile", keyfile)):
        if not os.path.isfile(path):
            raise UsageError(f"{option} {path}: no such file")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        context.load_cert_chain(certfile, keyfile)
    except (OSError, ssl.SSLError) as exc:
        raise UsageError(f"--certfile {certfile} --keyfile {keyfile}: not a certificate and its "
                         f"private key in PEM ({exc.strerror or exc})") from None


def is_loopback(host: str) -> bool:
    """Whether ``host`` only accepts connections from this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
