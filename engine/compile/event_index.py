"""An event's triples indexed for the compiled GPM matcher (``gpm_codegen``).

Built once per event: triples grouped by predicate as ``(subject, object)`` pairs, plus a
``memo`` dict where compiled patterns keep their per-event results (the base solutions of a
GPM do not depend on the context, so all the runs that try the event share them).
"""

from __future__ import annotations

from collections.abc import Iterable

from pyoxigraph import Triple

Pair = tuple  # (subject, object)


class EventIndex:
    """Triples by predicate: ``by_pred[p]`` is the list of ``(subject, object)`` pairs."""

    __slots__ = ("by_pred", "memo", "size", "_predicates", "_by_subject", "_by_object")

    def __init__(self, by_pred: dict, size: int) -> None:
        self.by_pred = by_pred
        self.size = size
        self.memo: dict = {}
        self._predicates = self._by_subject = self._by_object = None

    @classmethod
    def of(cls, triples: Iterable[Triple], assume_distinct: bool = False) -> EventIndex:
        """Index ``triples`` (pyoxigraph Triples). Repeated triples are dropped (a graph is a
        set) unless the caller vouches they are distinct with ``assume_distinct``."""
        by_pred: dict = {}
        get = by_pred.get
        n = 0
        for s, p, o in triples:
            n += 1
            lst = get(p)
            if lst is None:
                by_pred[p] = [(s, o)]
            else:
                lst.append((s, o))
        if not assume_distinct and n > len(by_pred):
            for p, lst in by_pred.items():
                if len(lst) > 1 and len(set(lst)) != len(lst):
                    by_pred[p] = list(dict.fromkeys(lst))
        return cls(by_pred, n)

    @property
    def predicates(self) -> frozenset:
        if self._predicates is None:
            self._predicates = frozenset(self.by_pred)
        return self._predicates

    def by_subject(self, p) -> dict:
        """``{subject: [(subject, object), ...]}`` for predicate ``p`` (built on first use)."""
        if self._by_subject is None:
            self._by_subject = {}
        d = self._by_subject.get(p)
        if d is None:
            d = {}
            for pair in self.by_pred.get(p, ()):
                lst = d.get(pair[0])
                if lst is None:
                    d[pair[0]] = [pair]
                else:
                    lst.append(pair)
            self._by_subject[p] = d
        return d

    def by_object(self, p) -> dict:
        """``{object: [(subject, object), ...]}`` for predicate ``p`` (built on first use)."""
        if self._by_object is None:
            self._by_object = {}
        d = self._by_object.get(p)
        if d is None:
            d = {}
            for pair in self.by_pred.get(p, ()):
                lst = d.get(pair[1])
                if lst is None:
                    d[pair[1]] = [pair]
                else:
                    lst.append(pair)
            self._by_object[p] = d
        return d

    def triples(self) -> list[Triple]:
        return [Triple(s, p, o) for p, lst in self.by_pred.items() for s, o in lst]

    def __len__(self) -> int:
        return sum(len(lst) for lst in self.by_pred.values())

    def __repr__(self) -> str:
        return f"EventIndex({len(self)} triples, {len(self.by_pred)} predicates)"
