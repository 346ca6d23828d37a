"""Running the application: uvicorn on the configured address, the address printed once the
server listens (and the engine service has started), a clean stop on SIGINT/SIGTERM."""

from __future__ import annotations

import contextlib
import logging
import signal
import socket
import sys
from collections.abc import Iterator

import uvicorn

from spaseq.engine.errors import UsageError

from .app import create_app
from .config import ServerConfig


class _Server(uvicorn.Server):
    """uvicorn's server, saying where it listens once it does."""

    def __init__(self, config: uvicorn.Config, address: str) -> None:
        super().__init__(config)
        self.address = address

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        """SIGINT and SIGTERM stop the server gracefully (the engine checkpointed) and the
        command then exits with status 0, instead of uvicorn raising the signal again."""
        original = {sig: signal.signal(sig, self.handle_exit) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            yield
        finally:
            for sig, handler in original.items():
                signal.signal(sig, handler)

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started:
            print(f"spaseq serve: listening on {self.address}", flush=True)


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port`` (port 0: a free one); UsageError if it cannot be had."""
    try:
        family, kind, proto, _, addr = socket.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM)[0]
        sock = socket.socket(family, kind, proto)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(addr)
    except OSError as exc:
        raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.set_inheritable(True)
    return sock


def serve(config: ServerConfig) -> int:
    """Serve until SIGINT/SIGTERM; 0 after a clean stop."""
    config.check()
    sock = bind(config.host, config.port)
    host, port = sock.getsockname()[:2]
    scheme = "https" if config.certfile else "http"
    address = f"{scheme}://[{host}]:{port}" if ":" in host else f"{scheme}://{host}:{port}"
    app = create_app(config)
    # a startup refused for a user mistake was said in one line: not again with a traceback
    logging.getLogger("uvicorn.error").addFilter(lambda record: not app.state.user_error)
    server = _Server(uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=3,
                                    lifespan="on", access_log=False, ssl_certfile=config.certfile,
                                    ssl_keyfile=config.keyfile), address)
    try:
        server.run(sockets=[sock])
    except SystemExit:  # uvicorn's exit when the lifespan failed: our status is 2
        pass
    if not server.started:  # the lifespan failed (its error was reported)
        if not app.state.user_error:
            print("spaseq serve: could not start", file=sys.stderr)
        return 2
    return 0
