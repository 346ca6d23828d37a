"""Which of an event's triples a GPM's solution takes, for CONSUMPTION MATCHED (docs/decisions.md
65): RSEP-QL consumes the triples that matched, so the planner lists, per GPM, the triple
patterns that read the event; the core instantiates them with a taken solution's bindings, and
those of the results that are triples of the event are what an emitted match uses up."""

from __future__ import annotations

from collections.abc import Iterator

from spaseq.engine.algebra import operators as A


def consumed_patterns(group: A.GroupPattern) -> tuple[A.TriplePattern, ...]:
    """The triple patterns of ``group`` that read the event: its triples and those of its
    OPTIONAL, UNION and nested groups, with a constant or variable predicate (a one-IRI path is
    its IRI); not those of GRAPH (the knowledge base), MINUS, FILTER EXISTS or sub-selects,
    which take nothing into the solution, nor longer paths (their middle nodes are unbound)."""
    return tuple(dict.fromkeys(_patterns(group)))


def _patterns(group: A.GroupPattern) -> Iterator[A.TriplePattern]:
    for el in group.elements:
        if isinstance(el, A.BGP):
            for tp in el.triples:
                pattern = A.simple_pattern(tp)
                if pattern is not None:
                    yield pattern
        elif isinstance(el, A.OptionalPattern):
            yield from _patterns(el.pattern)
        elif isinstance(el, A.UnionPattern):
            for alternative in el.alternatives:
                yield from _patterns(alternative)

