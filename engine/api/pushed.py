"""What ``Engine.push`` did with an event (``Pushed``): whether a query took it, and the
queries it was late for (decision 64)."""

from __future__ import annotations

from dataclasses import dataclass

from spaseq.engine.api.handle import QueryHandle


@dataclass(frozen=True)
class Pushed:
    """What ``Engine.push`` did with one event. ``fed``: at least one query took it (False:
    it was late for every query reading its stream, or no query reads its stream and
    ``drop_unread`` dropped it). ``late_for``: the queries it was late for, in registration
    order, each of which skipped it and counted it (``QueryHandle.late``); empty for an
    event on time everywhere. Under ``late="error"`` a late event raises instead."""

    fed: bool
    late_for: tuple[QueryHandle, ...] = ()

    @property
    def late(self) -> bool:
        """Whether some query dropped it as late."""
        return bool(self.late_for)
