"""A match as Spark's parts keep it (``Found``): plain values, times in nanoseconds and terms
in N-Triples, read from the native match without building a term or an event
(``runtime.native.released_values``); what ``spark.order`` orders and ``spark.matching``
writes as a row."""

from __future__ import annotations

from typing import NamedTuple

from spaseq.engine.matches import Match
from spaseq.engine.runtime.native import released_values
from spaseq.engine.values.timestamps import to_nanoseconds

#: (variable, term in N-Triples) pairs
Pairs = tuple[tuple[str, str], ...]


class Took(NamedTuple):
    """An event a match took: the GPM that took it, where and when it came (``time`` in ns,
    ``dated``: stamped with an xsd:dateTime), its number, its graph name and the variables
    the GPM bound there."""

    atom: str
    stream: str
    time: int
    dated: bool
    seq: int
    graph: str | None
    bindings: Pairs


class Found(NamedTuple):
    """A match: its start and end (ns), its bindings sorted by variable, the events it took,
    first to last."""

    start: int
    time: int
    bindings: Pairs
    taken: tuple[Took, ...]


def found(m: Match) -> Found:
    """``m`` as plain values (read natively when the native runtime released it)."""
    values = released_values(m)
    if values is not None:
        start, time, bindings, taken = values
        return Found(start, time, tuple(bindings),
                     tuple(Took(a, s, t, d, q, g, tuple(b)) for a, s, t, d, q, g, b in taken))
    return Found(to_nanoseconds(m.start), to_nanoseconds(m.time), tuple(sorted((v, str(t)) for v, t in m.bindings)),
                 tuple(Took(t.atom or "", t.event.stream, to_nanoseconds(t.event.time), t.event.dated, t.event.seq,
                            None if t.event.name is None else str(t.event.name),
                            tuple((v, str(term)) for v, term in t.bindings)) for t in m.taken))
