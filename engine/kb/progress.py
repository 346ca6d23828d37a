"""The KB jobs' progress display on stderr (``--progress``, on by default on a terminal).

On a terminal: one line redrawn in place a few times a second, the phase, what the phase
counts so far (lines read, statements, rejected lines) and the Spark tasks done, erased when
the job ends. Elsewhere (``--progress`` into a file or a pipe): one line per phase. Spark's
own stage bars are off (session.py)."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from typing import IO

#: What a phase has counted so far ("120,000 lines, 3 rejected"), polled while it runs.
Detail = Callable[[], str]


class Progress:
    """What a job reports: the phase it is in. This base class shows nothing."""

    def phase(self, text: str, detail: Detail | None = None) -> None:
        """A new phase begins; ``detail`` is polled for the live display while it runs."""

    def close(self) -> None:
        """The job ended (done or failed): leave the terminal as it was."""


class Display(Progress):
    """Progress on ``stream``, prefixed ``spaseq kb load:``; live (redrawn) or one line per phase."""

    def __init__(self, stream: IO[str], prefix: str, live: bool, tasks: Detail | None = None,
                 interval_s: float = 0.25) -> None:
        self.stream = stream
        self.prefix = prefix
        self.live = live
        self.tasks = tasks
        self.interval_s = interval_s
        self._text = ""
        self._drawn = ""
        self._detail: Detail | None = None
        self._since = time.monotonic()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None
        if live:
            self._ticker = threading.Thread(target=self._tick, name="spaseq-kb-progress", daemon=True)
            self._ticker.start()

    def phase(self, text: str, detail: Detail | None = None) -> None:
        if self.live and self._text:
            self._draw()  # the phase ending shows its final counts, however fast it was
        with self._lock:
            self._text, self._detail, self._since = text, detail, time.monotonic()
            if not self.live:
                self.stream.write(f"{self.prefix}: {text}\n")
                self.stream.flush()
        if self.live:
            self._draw()

    def close(self) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()
        if self.live:
            with self._lock:
                self.stream.write("\r\x1b[K")
                self.stream.flush()

    def line(self) -> str:
        """The live line: prefix, phase, its counts so far, Spark's tasks, seconds in the phase."""
        parts = [f"{self.prefix}: {self._text}"]
        for source in (self._detail, self.tasks):
            if source is not None:
                try:
                    text = source()
                except Exception:  # noqa: BLE001 - a display never fails the job it shows
                    text = ""
                if text:
                    parts.append(text)
        parts.append(f"{time.monotonic() - self._since:.0f} s")
        return " · ".join(parts)

    def _draw(self) -> None:
        if self._stop.is_set():
            return
        text = self.line()[:self._width() - 1]
        with self._lock:
            if text != self._drawn:
                self.stream.write("\r" + text + "\x1b[K")
                self.stream.flush()
                self._drawn = text

    def _width(self) -> int:
        try:
            columns = os.get_terminal_size(self.stream.fileno()).columns
        except (AttributeError, OSError, ValueError):
            columns = 0
        return columns or 100  # a new pseudo-terminal has no size yet

    def _tick(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._draw()


def spark_tasks(spark) -> Detail:
    """The tasks done and to do in the Spark stages running now (``tasks 3/8``)."""
    tracker = spark.sparkContext.statusTracker()

    def tasks() -> str:
        done = total = 0
        for stage in tracker.getActiveStageIds():
            info = tracker.getStageInfo(stage)
            if info is not None:
                done, total = done + info.numCompletedTasks, total + info.numTasks
        return f"tasks {done}/{total}" if total else ""

    return tasks
