"""Matches and result rows: what evaluation produces (SEMANTICS.md sections 3 and 9)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, NamedTuple

from pyoxigraph import BlankNode, Literal, NamedNode

from spaseq.engine.events import Event

Term = NamedNode | BlankNode | Literal
Bindings = Mapping[str, Term]


class Taken(NamedTuple):
    """One event an atom took: the GPM's name, the event and the solution it gave there.

    ``bindings`` are the variables the GPM bound on this event (for a Kleene+ atom: this
    iteration's local bindings), shown in detailed output. A NamedTuple rather than a frozen
    dataclass: the engine builds one per event taken, and this is several times cheaper.
    """

    atom: str
    event: Event
    bindings: tuple[tuple[str, Term], ...] = ()


@dataclass(frozen=True, init=False, eq=False)
class Match:
    """A complete match: the mapping mu, the events each atom took, start and end time.

    Equal to any match (of any subclass: the engine's are read lazily from native ones) with
    the same four fields; pickled as a plain Match with its fields built."""

    bindings: tuple[tuple[str, Term], ...]
    taken: tuple[Taken, ...]
    start: Decimal
    time: Decimal
    if TYPE_CHECKING:  # not a field: the engine's matches read it from the core
        #: k for the query's k-th result (``<output#match-k>``); None when DISTINCT dropped
        #: the match, or for a match the engine did not number (the reference evaluator's)
        number: int | None

    def __init__(self, bindings: tuple[tuple[str, Term], ...], taken: tuple[Taken, ...], start: Decimal,
                 time: Decimal) -> None:
        # into __dict__ directly: the engine builds one per match, and a frozen dataclass's
        # generated __init__ costs twice as much
        d = self.__dict__
        d["bindings"] = bindings
        d["taken"] = taken
        d["start"] = start
        d["time"] = time

    @classmethod
    def deferred(cls, mu: Mapping[str, Term], taken: Callable[[], tuple[Taken, ...]], start: Decimal,
                 time: Decimal) -> Match:
        """A match whose ``bindings`` and ``taken`` are built on first access from ``mu`` (not
        changed afterwards) and ``taken()``: the engine emits matches that a counter, a
        callback or a projection may never look at in full."""
        m = cls.__new__(cls)
        d = m.__dict__
        d["start"] = start
        d["time"] = time
        d["_mu"] = mu
        d["_taken"] = taken
        return m

    def __getattr__(self, name: str) -> object:
        """The deferred fields, computed once (only called for attributes not yet set)."""
        d = self.__dict__
        if name == "bindings" and "_mu" in d:
            d["bindings"] = tuple(sorted(d["_mu"].items()))  # names are unique: terms never compared
            return d["bindings"]
        if name == "taken" and "_taken" in d:
            d["taken"] = d["_taken"]()
            return d["taken"]
        if name == "number":  # only the engine numbers its matches (runtime.native)
            return None
        raise AttributeError(name)

    def _fields(self) -> tuple:
        return (self.bindings, self.taken, self.start, self.time)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Match):
            return NotImplemented
        return self is other or self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __reduce__(self) -> tuple:
        return (Match, self._fields())

    @property
    def mapping(self) -> dict[str, Term]:
        return dict(self.bindings)

    def identity(self) -> tuple:
        """What makes two matches the same match: the events per atom and the mapping."""
        return (
            tuple((t.atom, id(t.event), t.bindings) for t in self.taken),
            self.bindings,
        )


def match_order(m: Match) -> tuple:
    """Where a match stands among matches completed at the same moment (docs/decisions.md, 4):
    by start time, then the positions of its events (time, then arrival: ``Event.sort_key``),
    then, as a final tie-break that makes the order total, the N-Triples spelling of its
    bindings and of each taken event's bindings. Both evaluators order by it, so DISTINCT
    keeps the same representative (the first match of each row in this order)."""
    return (m.start, tuple(t.event.sort_key() for t in m.taken), spelling(m))


def spelling(m: Match) -> tuple:
    """The match's bindings and its taken events' bindings in N-Triples (the tie-break)."""
    return (tuple((v, str(t)) for v, t in m.bindings),
            tuple(tuple((v, str(t)) for v, t in taken.bindings) for taken in m.taken))


class MatchTimes:
    """``time`` and ``start`` of a result read through to the match it came from: every result
    type (``Row``, an output stream's ``Derived`` event, the rdflib plugin's ``MatchBindings``)
    gets them here, from its ``match`` (a field or a property)."""

    __slots__ = ()
    if TYPE_CHECKING:  # a field of the subclass or a property: read only here
        @property
        def match(self) -> Match: ...

    @property
    def time(self) -> Decimal:
        return self.match.time

    @property
    def start(self) -> Decimal:
        return self.match.start


@dataclass(frozen=True)
class Row(MatchTimes):
    """A match after projection: what the output formats write."""

    bindings: dict[str, Term]
    match: Match

    @property
    def taken(self) -> tuple[Taken, ...]:
        return self.match.taken


def project_row(m: Match, variables: Sequence[str] | None) -> Row:
    """SELECT's projection of one match: the bound ``variables`` in their order (every bound
    variable by name when None)."""
    mu = m.mapping
    if variables is None:
        return Row(dict(sorted(mu.items())), m)
    return Row({v: mu[v] for v in variables if v in mu}, m)


class Projector:
    """SELECT applied one match at a time, for matches the engine did not number (the
    reference evaluator's): keep ``variables`` (all of mu when None) and, with DISTINCT,
    only the first row of each distinct projected mapping."""

    def __init__(self, variables: Sequence[str] | None, distinct: bool = False) -> None:
        self.variables = variables
        self.distinct = distinct
        self._seen: set[tuple] = set()

    def __call__(self, m: Match) -> Row | None:
        projected = project_row(m, self.variables)
        row = projected.bindings
        if self.distinct:
            key = tuple(sorted(row.items(), key=lambda kv: kv[0]))
            if key in self._seen:
                return None
            self._seen.add(key)
        return projected


def project(
    matches: Iterable[Match], variables: Sequence[str] | None, distinct: bool = False
) -> Iterator[Row]:
    """Apply SELECT to matches in completion order (see Projector)."""
    projector = Projector(variables, distinct)
    for m in matches:
        row = projector(m)
        if row is not None:
            yield row
