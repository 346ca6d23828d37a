"""The Spark driver JVM's stdout and stderr, read from a pipe: the start-up lines Spark and the
JVM print whatever the log configuration says are dropped, anything else (Spark's errors, a
Python worker's traceback) is passed on to our stderr, so a job is quiet unless something is
wrong."""

from __future__ import annotations

import os
import re
import threading
from typing import IO

#: Lines printed by the JVM or by Spark before its logging is configured (or straight to
#: System.err), which a log4j2 configuration cannot silence.
NOISE = re.compile(
    r"^(WARNING: Using incubator modules: "  # Spark 4 adds --add-modules=jdk.incubator.vector
    r"|Using Spark's default log4j profile: "
    r"|Setting default log level to "
    r"|To adjust logging level use sc\.setLogLevel"
    r"|Setting Spark log level to )"
)


class JvmOutput:
    """A pipe for the JVM's stdout and stderr and the thread relaying it to ``sink``."""

    def __init__(self, sink: IO[str]) -> None:
        self.sink = sink
        read_fd, self.write_fd = os.pipe()
        self._thread = threading.Thread(target=self._relay, args=(read_fd,), name="spark-jvm-output",
                                        daemon=True)
        self._thread.start()

    def started(self) -> None:
        """The JVM holds its copy of the pipe: close ours, so the relay ends when the JVM does."""
        os.close(self.write_fd)

    def wait(self, timeout_s: float) -> None:
        """Wait for the JVM's output to end (after it exited) so that nothing is lost."""
        self._thread.join(timeout_s)

    def _relay(self, read_fd: int) -> None:
        with open(read_fd, encoding="utf-8", errors="replace") as pipe:
            for line in pipe:
                if not NOISE.match(line):
                    self.sink.write(line)
                    self.sink.flush()
