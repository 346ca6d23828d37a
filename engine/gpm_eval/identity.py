"""A GPM body's solutions on one event by RDF term identity (decision 7): the reference
evaluator's and the engine fallback's group evaluation, SPARQL 1.1's algebra (section 18)
written directly over the event's own triples.

pyoxigraph's store keeps literals in canonical form, so a query over it joins
``"1"^^xsd:integer`` with ``"+1"^^xsd:integer`` and cannot say which of them a binding was
matched on. Here triple patterns (and property paths) are matched against the event's
triples as parsed, so a binding keeps the spelling of the triple it was matched on and joins
compare terms. Values stay pyoxigraph's business (``Backend``): FILTER and BIND expressions
(by value, as everywhere: ``STR("+1"^^xsd:integer)`` is ``"1"``), GRAPH blocks on the
knowledge base (whose store is canonical) and sub-selects. Solutions hold the terms as
evaluated (a computed value canonical, as the native SPARQL path's spareval has them); the
caller gives them back in the event's spelling (``EventTriples.respell``) once joined.

Not covered (``Unsupported``: the caller evaluates the whole body with pyoxigraph): SERVICE.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from pyoxigraph import NamedNode, Triple

from spaseq.engine.algebra import operators as A
from spaseq.engine.matches import Term

#: A term a solution binds: one of the engine's terms, or an RDF 1.2 triple term, which an
#: event's triple may hold as its object (pyoxigraph types a subject as possibly one too)
Node = Term | Triple
Solution = dict[str, Node]
Spellings = dict[Node, Node]  # a value's canonical term -> the event's spelling of it


class Unsupported(Exception):
    """A construct this evaluator leaves to pyoxigraph (the whole body goes there)."""


class Backend(Protocol):
    """What pyoxigraph answers for the evaluation of one body on one event."""

    def filter(self, text: str, rows: Sequence[Solution]) -> list[bool]:
        """Whether FILTER expression ``text`` holds on each row (an error is false)."""

    def bind(self, text: str, rows: Sequence[Solution]) -> list[Node | None]:
        """Expression ``text``'s value on each row (None on an error)."""

    def graph(self, el: A.GraphPattern, rows: Sequence[Solution]) -> list[list[Solution]]:
        """Per row, the solutions of the GRAPH block joined with it (the KB's terms)."""

    def sub_select(self, el: A.SubSelect) -> list[Solution]:
        """The sub-select's solutions on the event (canonical terms)."""


def _key(sol: Solution) -> tuple:
    return tuple(sorted(sol.items(), key=lambda kv: kv[0]))


def distinct(sols: Iterable[Solution]) -> list[Solution]:
    """The solutions without repeats, in first-seen order."""
    seen: set[tuple] = set()
    out = []
    for s in sols:
        k = _key(s)
        if k not in seen:
            seen.add(k)
            out.append(s)
    return out


def compatible(a: Mapping[str, Node], b: Mapping[str, Node]) -> bool:
    """SPARQL compatibility: the two mappings agree (as RDF terms) on every shared variable."""
    if len(a) > len(b):
        a, b = b, a
    for k, v in a.items():
        w = b.get(k)
        if w is not None and w != v:
            return False
    return True


def join(left: Sequence[Solution], right: Sequence[Solution]) -> list[Solution]:
    """Join(left, right): every compatible pair merged."""
    return [{**m, **n} for m in left for n in right if compatible(m, n)]


@dataclass
class EventTriples:
    """One event's triples as parsed, indexed by predicate, with its spellings of values."""

    triples: Sequence[Triple]
    spellings: Spellings = field(default_factory=dict)
    by_predicate: dict[NamedNode, list[tuple[Node, Node]]] = field(init=False)

    def __post_init__(self) -> None:
        self.by_predicate = {}
        for t in self.triples:
            self.by_predicate.setdefault(t.predicate, []).append((t.subject, t.object))

    def respell(self, term: Node) -> Node:
        """A canonical literal the event does not hold, in the event's spelling of its value."""
        return self.spellings.get(term, term)

    def nodes(self) -> set[Node]:
        """The graph's subjects and objects (the ends of zero-length paths)."""
        return {t.subject for t in self.triples} | {t.object for t in self.triples}


class Evaluator:
    """Evaluates group patterns of one body on one event (``EventTriples``), ``backend``
    answering for values."""

    def __init__(self, event: EventTriples, backend: Backend) -> None:
        self.event = event
        self.backend = backend

    # ------------------------------------------------------------------ groups

    def group(self, group: A.GroupPattern, start: Sequence[Solution] = ({},),
              filters: bool = True) -> list[Solution]:
        """The group's solutions joined with ``start`` (``filters``: apply its top FILTERs)."""
        omega = [dict(s) for s in start]
        for el in group.elements:
            if not omega:
                return []
            if isinstance(el, A.Filter):
                continue
            omega = self._element(el, omega)
        if filters:
            for el in group.elements:
                if isinstance(el, A.Filter) and omega:
                    omega = [m for m, ok in zip(omega, self.backend.filter(el.text, omega), strict=True)
                             if ok]
        return distinct(omega)

    def _element(self, el: A.Element, omega: list[Solution]) -> list[Solution]:
        if isinstance(el, A.BGP):
            return [n for m in omega for n in self._bgp(el.triples, m)]
        if isinstance(el, A.UnionPattern):
            right = distinct(s for alt in el.alternatives for s in self.group(alt))
            return join(omega, right)
        if isinstance(el, A.OptionalPattern):
            return self._left_join(omega, el.pattern)
        if isinstance(el, A.MinusPattern):
            right = self.group(el.pattern)
            return [m for m in omega
                    if not any(compatible(m, n) and m.keys() & n.keys() for n in right)]
        if isinstance(el, A.Bind):
            return self._extend(omega, el)
        if isinstance(el, A.Values):
            rows: list[Solution] = [{v: t for v, t in zip(el.variables, row, strict=True) if t is not None}
                                    for row in el.rows]
            return join(omega, rows)
        if isinstance(el, A.GraphPattern):
            return [{**m, **n} for m, found in zip(omega, self.backend.graph(el, omega), strict=True)
                    for n in found if compatible(m, n)]
        if isinstance(el, A.SubSelect):
            return join(omega, self.backend.sub_select(el))
        raise Unsupported(type(el).__name__)

    def _left_join(self, omega: list[Solution], pattern: A.GroupPattern) -> list[Solution]:
        """LeftJoin(omega, P, F), F the optional group's FILTERs."""
        right = self.group(pattern, filters=False)
        conditions = [el.text for el in pattern.elements if isinstance(el, A.Filter)]
        pairs = [(i, {**m, **n}) for i, m in enumerate(omega) for n in right if compatible(m, n)]
        for text in conditions:
            if pairs:
                ok = self.backend.filter(text, [p for _, p in pairs])
                pairs = [p for p, keep in zip(pairs, ok, strict=True) if keep]
        extended = {i for i, _ in pairs}
        out = [p for _, p in pairs]
        out.extend(m for i, m in enumerate(omega) if i not in extended)
        return out

    def _extend(self, omega: list[Solution], el: A.Bind) -> list[Solution]:
        """Extend(omega, var, expr): a bare variable passes its term on; an error leaves the
        variable unbound."""
        if isinstance(el.expr, A.EVar):
            values = [m.get(el.expr.name) for m in omega]
        else:
            values = self.backend.bind(el.text, omega)
        return [{**m, el.var: v} if v is not None else m for m, v in zip(omega, values, strict=True)]

    # ------------------------------------------------------------------ triples

    def _bgp(self, triples: Sequence[A.TriplePattern], mu: Solution) -> Iterable[Solution]:
        if not triples:
            yield mu
            return
        tp, rest = triples[0], triples[1:]
        for s, p, o in self._triple(tp, mu):
            nu = dict(mu)
            if _bind(nu, tp.subject, s) and _bind(nu, tp.predicate, p) and _bind(nu, tp.object, o):
                yield from self._bgp(rest, nu)

    def _triple(self, tp: A.TriplePattern, mu: Solution) -> Iterable[tuple[Node, Node | None, Node]]:
        """Candidate (subject, predicate, object) for one pattern (predicate None: a path)."""
        s = _value(tp.subject, mu)
        o = _value(tp.object, mu)
        pred = tp.predicate
        if isinstance(pred, A.Path) and pred.kind == "link":
            pred = pred.args[0]
        if isinstance(pred, A.Path):
            for a, b in self._path(pred, s, o):
                yield a, None, b
            return
        p = _value(pred, mu)
        pairs: Iterable[tuple[Node, Node, Node]]
        if p is not None:
            # (a variable bound by an earlier atom to a term that is no IRI is no triple's predicate)
            found = self.event.by_predicate.get(p, ()) if isinstance(p, NamedNode) else ()
            pairs = ((a, p, b) for a, b in found)
        else:
            pairs = ((t.subject, t.predicate, t.object) for t in self.event.triples)
        for a, q, b in pairs:
            if (s is None or a == s) and (o is None or b == o):
                yield a, q, b

    def _path(self, path: A.Path, s: Node | None, o: Node | None) -> set[tuple[Node, Node]]:
        """The (start, end) pairs of a property path, restricted to bound ends."""
        pairs = self._path_pairs(path)
        if path.kind in ("zero_or_more", "zero_or_one"):  # from a bound end outside the graph too
            pairs |= {(t, t) for t in (s, o) if t is not None}
        return {(a, b) for a, b in pairs if (s is None or a == s) and (o is None or b == o)}

    def _path_pairs(self, path: A.Path) -> set[tuple[Node, Node]]:
        kind, args = path.kind, path.args
        if kind == "link":
            return set(self.event.by_predicate.get(args[0], ()))
        if kind == "inv":
            return {(b, a) for a, b in self._path_pairs(args[0])}
        if kind == "alt":
            return set().union(*(self._path_pairs(p) for p in args))
        if kind == "seq":
            pairs = self._path_pairs(args[0])
            for p in args[1:]:
                step = self._path_pairs(p)
                pairs = {(a, d) for a, b in pairs for c, d in step if b == c}
            return pairs
        if kind == "nps":
            forward = {i for i, inv in zip(args, path.inverse, strict=True) if not inv}
            backward = {i for i, inv in zip(args, path.inverse, strict=True) if inv}
            out: set[tuple[Node, Node]] = set()
            if forward or not backward:
                out |= {(t.subject, t.object) for t in self.event.triples if t.predicate not in forward}
            if backward:
                out |= {(t.object, t.subject) for t in self.event.triples if t.predicate not in backward}
            return out
        if kind in ("one_or_more", "zero_or_more", "zero_or_one"):
            step = self._path_pairs(args[0])
            zero = {(n, n) for n in self.event.nodes()} if kind != "one_or_more" else set()
            if kind == "zero_or_one":
                return step | zero
            closure = set(step)
            while True:
                more = {(a, d) for a, b in closure for c, d in step if b == c} - closure
                if not more:
                    return closure | zero
                closure |= more
        raise Unsupported(f"the property path {kind}")


def _value(t: A.PatternTerm | NamedNode, mu: Solution) -> Node | None:
    """A pattern position's term: a constant, a bound variable's value, or None."""
    if isinstance(t, A.Var):
        return mu.get(t.name)
    return t


def _bind(mu: Solution, t: A.PatternTerm | NamedNode | A.Path, value: Node | None) -> bool:
    """Bind a variable position to ``value`` (False when it is bound otherwise)."""
    if value is None or not isinstance(t, A.Var):
        return True
    held = mu.get(t.name)
    if held is None:
        mu[t.name] = value
        return True
    return held == value
