"""How many bad lines a KB job tolerates (``--max-rejects N|RATIO``) before it refuses the
whole input: a count (``100``) or a share of the lines read (``0.01``, ``1%``)."""

from __future__ import annotations

from dataclasses import dataclass

from spaseq.engine.errors import UsageError

#: The default (docs/decisions.md 41): a few bad lines in a large dump are kept aside in
#: rejects.jsonl; a file in the wrong format, or mostly garbage, fails the job.
DEFAULT_MAX_REJECTS = "1%"


@dataclass(frozen=True)
class RejectLimit:
    """At most ``count`` bad lines, or at most ``ratio`` of the lines read (exactly one is set)."""

    count: int | None = None
    ratio: float | None = None
    text: str = ""

    @classmethod
    def parse(cls, text: str) -> RejectLimit:
        """``N`` (an integer count), ``0.1`` or ``10%`` (a ratio); UsageError otherwise."""
        raw = text.strip()
        try:
            if raw.endswith("%"):
                ratio = float(raw[:-1]) / 100
            elif raw.isdigit():
                return cls(count=int(raw), text=raw)
            else:
                ratio = float(raw)
        except ValueError:
            ratio = -1.0
        if not 0 <= ratio <= 1:
            raise UsageError(f"--max-rejects {text}: expected a count (N >= 0) or a ratio "
                             "between 0 and 1 (0.01 or 1%)")
        return cls(ratio=ratio, text=raw)

    def exceeded(self, rejected: int, lines: int) -> bool:
        """More bad lines than the limit allows."""
        if self.count is not None:
            return rejected > self.count
        return rejected > (self.ratio or 0.0) * lines

    def __str__(self) -> str:
        return self.text or (str(self.count) if self.count is not None else f"{self.ratio:g}")


DEFAULT_LIMIT = RejectLimit.parse(DEFAULT_MAX_REJECTS)
