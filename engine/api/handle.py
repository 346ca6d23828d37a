"""A registered query as its caller holds it: the ``QueryHandle`` ``Engine.register`` returns,
which receives the query's matches (callback, kept matches, output stream)."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from decimal import Decimal

from spaseq.engine.algebra import operators as A
from spaseq.engine.compile.plan import Plan
from spaseq.engine.matches import Match, Row, project_row
from spaseq.engine.output.derived import QueryOutput
from spaseq.engine.runtime.native import QueryRuntime


@dataclass
class QueryHandle:
    """A registered query: its algebra, its matches so far, and its statistics."""

    query: A.Query
    runtime: QueryRuntime = field(repr=False)
    _pending: deque = field(default_factory=deque, repr=False)
    callback: Callable[[Match], None] | None = field(default=None, repr=False)
    keep: bool = True
    output: QueryOutput | None = field(default=None, repr=False)  # its output stream
    plan: Plan | None = field(default=None, repr=False)           # what its runtime runs

    def _emit(self, match: Match) -> None:
        if self.callback is not None:
            self.callback(match)
        if self.keep:
            self._pending.append(match)
        if self.output is not None and self.output.listeners:  # no call per match otherwise
            self.output(match)

    def matches(self) -> Iterator[Match]:
        """Matches completed since the last call, in completion order."""
        while self._pending:
            yield self._pending.popleft()

    def rows(self) -> list[Row]:
        """Matches completed since the last call, projected per the query's SELECT; with
        DISTINCT, a row returned by an earlier call (or before a snapshot) is not returned
        again: the engine numbers the query's results once over the whole run (a match
        DISTINCT drops has no ``number``), for the CLI and the output stream alike."""
        variables = self.query.match.variables
        return [project_row(m, variables) for m in self.matches() if m.number is not None]

    @property
    def late(self) -> int:
        """The late events this query dropped: earlier than a promise it holds (its clock,
        its watermark, a flush, a heartbeat), skipped by it under ``late="drop"`` while the
        queries they were on time for took them (decision 64). Kept by snapshots."""
        return self.runtime.late

    @property
    def flushed(self) -> Decimal:
        """Where ``flush()`` closed the query's instants (kept by the core)."""
        return self.runtime.flushed

    @property
    def stats(self) -> dict:
        return dict(self.runtime.stats)
