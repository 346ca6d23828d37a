"""How a query's input may be split across partitions that run the engine independently
(issue 27, docs/decisions.md 67): by key, by time with an overlap of the window, or not at
all, with the reason. The Spark runner follows it; ``spaseq explain`` says it.

- **By key**: every GPM of the sequence (absences too) binds the key variable on every
  solution, so the events of one match, and those that can stop it, all give the match's key;
  and no operator looks at events of other keys: strict contiguity ``,`` and the iterations
  after the first atom (which follow by ``,``) are judged against every event of the
  streamset, as are ``EVENTS`` windows, tumbling windows (anchored at the first event of all)
  and C-SPARQL's LATEST (each GPM's latest event of all); and under ``CONSUMPTION MATCHED``
  one triple could serve matches of two keys.
- **By time**: a sliding time window ω bounds every match and whatever decides it, so chunk
  i reads the events in ``[t_i - before, t_(i+1) + ω]`` and keeps the matches that start in
  ``[t_i, t_(i+1))``; ``before`` is ω under a head negation (it looks back a window), 0
  otherwise. A selection or consumption policy depends on the partial matches and releases
  before the chunk, so neither splits by time.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal

from pyoxigraph import BlankNode, NamedNode, QuerySolutions, Store, Triple

from spaseq.engine.algebra import operators as A
from spaseq.engine.events import Event

KEY, TIME, NONE = "key", "time", "none"


@dataclass(frozen=True)
class SplitPlan:
    """How the query's input may be split (``kind`` KEY, TIME or NONE) and why."""

    kind: str = NONE
    keys: tuple[str, ...] = ()      # KEY: the variables events are routed by
    kb: bool = False                # KEY: some GPM binds them through a GRAPH join: route with the KB
    before: Decimal = Decimal(0)    # TIME: how far before its start a chunk reads (seconds)
    after: Decimal = Decimal(0)     # TIME: how far after its end a chunk reads (seconds)
    why: str = ""                   # what explain says


def split_plan(query: A.Query) -> SplitPlan:
    """The way ``query`` may be split: by key when it can, else by time, else not at all."""
    blocked = _key_blocked(query)
    keys, from_kb = _key_candidates(query), False
    if not keys:
        keys, from_kb = _key_candidates(query, with_kb=True), True
    if not blocked and keys:
        chosen = keys if query.partition_by else keys[:1]
        where = "PARTITION BY" if query.partition_by else "every GPM binds it"
        if from_kb:
            where += ", some through a GRAPH join: events are routed with the KB"
        return SplitPlan(KEY, chosen, kb=from_kb,
                         why=f"by key {' '.join('?' + k for k in chosen)} ({where}): "
                             "a match's events, and what can stop it, all give its key")
    reason = blocked or "no variable is bound by every GPM on every solution"
    time_blocked = _time_blocked(query)
    if time_blocked is None:
        omega = Decimal(query.window.amount)
        before = omega if query.seq.head else Decimal(0)
        return SplitPlan(TIME, before=before, after=omega,
                         why=f"by time with an overlap of the window ({_seconds(omega)} after each chunk"
                             f"{', and before it: the head negation looks back' if before else ''}); "
                             f"not by key: {reason}")
    return SplitPlan(NONE, why=f"not split (one partition): not by key, {reason}; not by time, {time_blocked}")


def _key_candidates(query: A.Query, with_kb: bool = False) -> tuple[str, ...]:
    """PARTITION BY's variables when every GPM's routing patterns bind them, else the
    variables every GPM of the sequence binds by its routing patterns (so on every solution);
    ``with_kb``: or by the GRAPH blocks joined with them (``kb_blocks``)."""
    common: set[str] | None = None
    for atom in query.seq.atoms:
        for g in A.operand_gpms(atom.operand):
            pattern = query.events[g].pattern
            bound = _vars(routing_patterns(pattern))
            if with_kb:
                bound |= {v for _, tps in kb_blocks(pattern) for v in _vars(tps)}
            common = bound if common is None else common & bound
    if query.partition_by:
        return query.partition_by if set(query.partition_by) <= (common or set()) else ()
    return tuple(sorted(common or ()))


def routing_patterns(group: A.GroupPattern) -> tuple[A.TriplePattern, ...]:
    """The top-level triple patterns of a GPM body with an IRI or variable predicate (a
    one-IRI path as its IRI): every solution matches them, so the keys they give an event are
    a superset of the keys of its solutions in any context (FILTERs, OPTIONAL, paths and
    GRAPH blocks only remove solutions or bind other variables)."""
    simple = (A.simple_pattern(tp) for el in group.elements if isinstance(el, A.BGP) for tp in el.triples)
    return tuple(tp for tp in simple if tp is not None)


def kb_blocks(group: A.GroupPattern) -> tuple[tuple[NamedNode, tuple[A.TriplePattern, ...]], ...]:
    """The top-level ``GRAPH <iri> { ... }`` blocks of a GPM body that share a variable with
    its routing patterns, each with its own top-level simple triple patterns: every solution
    matches them in the knowledge base, so the keys they bind, joined with the event's, are a
    superset of the keys of its solutions."""
    joined = _vars(routing_patterns(group))
    out = []
    for el in group.elements:
        if isinstance(el, A.GraphPattern) and isinstance(el.graph, NamedNode):
            tps = routing_patterns(el.pattern)
            if tps and _vars(tps) & joined:
                out.append((el.graph, tps))
    return tuple(out)


def routing_table(query: A.Query) -> list[tuple[str, list[tuple[str, str, str]]]]:
    """Each GPM's stream and routing patterns as the native router takes them
    (``_native.Router``, the rule of ``event_keys`` without the KB): a variable (a pattern's
    blank nodes are variables already) as ``?name``, a term in N-Triples."""
    def spelled(term: object) -> str:
        return f"?{term.name}" if isinstance(term, A.Var) else str(term)

    return [(ev.stream, [(spelled(tp.subject), spelled(tp.predicate), spelled(tp.object))
                         for tp in routing_patterns(ev.pattern)])
            for ev in query.events.values()]


def event_keys(query: A.Query, keys: tuple[str, ...], event: Event, kb: Store | None = None) -> set[str]:
    """The keys (their terms in N-Triples, joined by a space) the GPMs on ``event``'s stream
    give it by their routing patterns, or for a key bound through a GRAPH join
    (``SplitPlan.kb``), by those joined with their GRAPH blocks over ``kb``: the parts a key
    split sends it to."""
    out = set()
    for ev in query.events.values():
        if ev.stream != event.stream:
            continue
        blocks = kb_blocks(ev.pattern) if kb is not None else ()
        for solution in _bgp(routing_patterns(ev.pattern), event.triples, {}):
            if all(k in solution for k in keys):
                out.add(" ".join(str(solution[k]) for k in keys))
                continue
            for joined in _kb_solutions(kb, blocks, solution):
                if all(k in joined for k in keys):
                    out.add(" ".join(str(joined[k]) for k in keys))
    return out


def _kb_solutions(kb: Store | None, blocks: tuple, bound: dict) -> Iterator[dict]:
    """``bound`` extended by each solution of the GRAPH ``blocks`` over ``kb`` (SPARQL, the
    bound variables put in as their terms); none when a bound term cannot be in a KB (a blank
    node of an event)."""
    if kb is None or not blocks or any(isinstance(t, BlankNode | Triple) for t in bound.values()):
        return
    groups = []
    for graph, tps in blocks:
        body = " ".join(f"{_sparql(tp.subject, bound)} {_sparql(tp.predicate, bound)} {_sparql(tp.object, bound)} ."
                        for tp in tps)
        groups.append(f"GRAPH {graph} {{ {body} }}")
    solutions = kb.query(f"SELECT * WHERE {{ {' '.join(groups)} }}")
    assert isinstance(solutions, QuerySolutions)  # a SELECT
    for row in solutions:
        found = dict(bound)
        for var in solutions.variables:
            value = row[var]
            if value is not None:
                found[var.value] = value
        yield found


def _sparql(term: object, bound: dict) -> str:
    """A pattern's term in SPARQL, a bound variable as its term."""
    if isinstance(term, A.Var):
        return str(bound[term.name]) if term.name in bound else f"?{term.name}"
    return str(term)


def _vars(patterns: tuple[A.TriplePattern, ...]) -> set[str]:
    return {v for tp in patterns for v in A.triple_vars(tp)}


def _bgp(patterns: tuple[A.TriplePattern, ...], triples: tuple[Triple, ...], bound: dict) -> Iterator[dict]:
    """The solutions of triple patterns over an event's triples (terms compared as RDF terms,
    as SPARQL matches a BGP; a blank node of a pattern is a variable)."""
    if not patterns:
        yield bound
        return
    tp, rest = patterns[0], patterns[1:]
    for t in triples:
        found = dict(bound)
        if all(_unify(p, term, found) for p, term in ((tp.subject, t.subject), (tp.predicate, t.predicate),
                                                       (tp.object, t.object))):
            yield from _bgp(rest, triples, found)


def _unify(pattern: object, term: object, bound: dict) -> bool:
    if isinstance(pattern, A.Var):
        if pattern.name in bound:
            return bool(bound[pattern.name] == term)
        bound[pattern.name] = term
        return True
    return pattern == term


def _key_blocked(query: A.Query) -> str | None:
    """Why an operator of ``query`` looks at events of other keys, or None."""
    for i, atom in enumerate(query.seq.positive):
        if atom.modifier == A.KLEENE and i == 0:
            return (f"the iterations of {atom.written}, opening the sequence, bind their variables "
                    "each on its own (iteration-local), so one match may span keys")
        if atom.strategy == A.STRICT:
            return "strict contiguity ',' is judged against every event of the streamset"
        if atom.modifier == A.KLEENE and i > 0:
            return (f"the iterations of {atom.written} follow each other by strict contiguity, "
                    "judged against every event")
    if query.window.kind == "events":
        return "an EVENTS window counts every event of the streamset"
    if query.window.tumbling:
        return "tumbling windows are anchored at the first event of all"
    if query.selection == A.LATEST:
        return "SELECTION LATEST takes each GPM's latest event of all"
    if query.consumption == A.CONSUME_MATCHED:
        return "under CONSUMPTION MATCHED one triple may serve matches of two keys"
    return None


def _time_blocked(query: A.Query) -> str | None:
    """Why chunks of time overlapping by the window would not give the single engine's
    matches, or None."""
    if query.window.kind != "time":
        return "the window is not a time window" if query.window.kind else "the window is unbounded"
    if query.window.tumbling:
        return "tumbling windows are anchored at the first event of all"
    if query.selection != A.UNRESTRICTED or query.consumption != A.CONSUME_NONE:
        return "a selection or consumption policy depends on what came before the chunk"
    return None


def _seconds(amount: Decimal) -> str:
    return f"{format(amount.normalize(), 'f')}s"
