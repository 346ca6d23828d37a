"""``spaseq run``'s progress line and final summary (``--progress``, ``--stats``): counts
taken at batch granularity from the engine (``Engine.run_replay``'s callback, or every
event of the Python paths, which cost far more than a clock read), drawn at most
``INTERVAL`` apart on stderr, rewritten in place on a terminal.

What is counted: events pushed, the latest event time, the main query's matches (before
DISTINCT), and its open partial matches (runs waiting for an event: the native runtime's
``waiting_runs``), sampled no more often than it stays a small share of the run."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from decimal import Decimal
from time import monotonic
from typing import IO, TypeVar

#: Seconds between two drawings of the line on a terminal (at most 5 a second).
INTERVAL = 0.2
#: Seconds between two lines when the progress goes to a file or pipe (``--progress``):
#: it cannot be rewritten in place, so each drawing is a line of its own.
LOG_INTERVAL = 1.0
#: Open runs are counted (a pass over the runtime's indexes) at most this share of the time.
RUNS_SHARE = 0.02

T = TypeVar("T")
#: (matches, open runs or None) of the run's main query; open runs only when asked (True)
Probe = Callable[[bool], tuple[int, int | None]]


@dataclass
class Stats:
    """The summary ``--stats`` prints: what the run read and found, and how fast."""

    events: int = 0
    matches: int = 0
    seconds: float = 0.0
    events_per_second: float = 0.0
    event_time: Decimal | None = None    # the latest event time reached (seconds)
    open_runs_peak: int | None = None    # the most open partial matches seen (sampled)
    dropped_late: int = 0                # late events fed to no query (late for every reader)
    late: dict[str, int] = field(default_factory=dict)  # per query, the late events it dropped

    def text(self) -> str:
        """One line for people."""
        span = "" if self.event_time is None else f", event time reached {time_text(self.event_time)}"
        runs = "" if self.open_runs_peak is None else f", at most {self.open_runs_peak:,} open runs"
        late = ""
        if any(self.late.values()):
            late = ", late events dropped: " + ", ".join(f"{q} {n:,}" for q, n in self.late.items())
        return (f"{self.events:,} events in {self.seconds:.3f} s ({self.events_per_second:,.0f} "
                f"events/s){span}, {self.matches:,} matches{runs}{late}")

    def json(self) -> str:
        """One JSON object; event times as the jsonl output writes them (exact seconds)."""
        from spaseq.engine._native import json_seconds
        from spaseq.engine.values.timestamps import to_nanoseconds

        def spelled(name: str, value: object) -> str:
            if name == "event_time" and self.event_time is not None:
                return json_seconds(to_nanoseconds(self.event_time))
            return json.dumps(value)

        return "{" + ", ".join(f"{json.dumps(k)}: {spelled(k, v)}" for k, v in asdict(self).items()) + "}"


def time_text(seconds: Decimal) -> str:
    """A time as the table writes it (``_native.table_time``): seconds to the millisecond
    for small (relative) times, ISO 8601 UTC for wall-clock ones."""
    from spaseq.engine._native import table_time
    from spaseq.engine.values.timestamps import to_nanoseconds

    return table_time(to_nanoseconds(seconds))


class Progress:
    """Counts of one run, drawn on ``out`` as a line (when ``show``) and summed up as
    ``Stats``."""

    def __init__(self, out: IO[str], show: bool, probe: Probe) -> None:
        self.out = out
        self.show = show
        self.terminal = show and out.isatty()
        self.probe = probe
        self.began = monotonic()
        self.stats = Stats()
        self._due = self.began  # when the line may next be drawn
        self._runs_due = self.began  # when open runs may next be counted
        self._drawn = False
        self._runs: int | None = None  # the open runs last counted

    def tick(self, events: int, time: Decimal | None) -> None:
        """The run has pushed ``events`` events, the latest at ``time``; cheap unless it is
        time to draw."""
        stats = self.stats
        stats.events = events
        if time is not None and time.is_finite():
            stats.event_time = time
        now = monotonic()
        if now < self._due:
            return
        self._due = now + (INTERVAL if self.terminal or not self.show else LOG_INTERVAL)
        self._sample(now)
        if self.show:
            self._draw(now)

    def events(self, items: Iterable[T], time: Callable[[T], Decimal | None]) -> Iterator[T]:
        """``items`` passed through, ticking after each one is consumed (the Python paths:
        an event pushed there costs far more than the clock read)."""
        n = 0
        for item in items:
            yield item
            n += 1
            self.tick(n, time(item))

    def _sample(self, now: float) -> None:
        """Read the matches, and the open runs when counting them is due."""
        count_runs = now >= self._runs_due
        matches, runs = self.probe(count_runs)
        self.stats.matches = matches
        if runs is not None:
            took = monotonic() - now
            self._runs_due = now + max(INTERVAL, took / RUNS_SHARE)
            self._runs = runs
            peak = self.stats.open_runs_peak
            self.stats.open_runs_peak = runs if peak is None else max(peak, runs)

    def _draw(self, now: float) -> None:
        s = self.stats
        rate = s.events / (now - self.began) if now > self.began else 0.0
        parts = [f"spaseq: {s.events:,} events", f"{rate:,.0f} events/s"]
        if s.event_time is not None:
            parts.append(f"at {time_text(s.event_time)}")
        if self._runs is not None:
            parts.append(f"{self._runs:,} open runs")
        parts.append(f"{s.matches:,} matches")
        line = "  ".join(parts)
        self._drawn = True  # before writing: a Ctrl-C from here on still clears the line
        if self.terminal:  # rewritten in place, never wider than the terminal (no wrap)
            width = _columns(self.out) - 1
            self.out.write("\r" + line[:width] + "\x1b[K")
        else:
            self.out.write(line + "\n")
        self.out.flush()

    def finish(self, dropped_late: int = 0, late: dict[str, int] | None = None) -> Stats:
        """The run is over: the line cleared, the final counts returned."""
        now = monotonic()
        self._sample(now)
        if self.terminal and self._drawn:
            self.out.write("\r\x1b[K")
            self.out.flush()
        s = self.stats
        s.seconds = now - self.began
        s.events_per_second = s.events / s.seconds if s.seconds > 0 else 0.0
        s.dropped_late = dropped_late
        s.late = dict(late or {})
        return s


def _columns(out: IO[str]) -> int:
    """The width of the terminal ``out`` writes to (80 when it cannot be told)."""
    try:
        return os.get_terminal_size(out.fileno()).columns or 80
    except (AttributeError, OSError, ValueError):
        return 80


def progress_wanted(choice: bool | None, out: IO[str] = sys.stderr) -> bool:
    """``--progress``/``--no-progress``, or by default whether stderr is a terminal."""
    if choice is not None:
        return choice
    try:
        return out.isatty()
    except (AttributeError, ValueError):
        return False
