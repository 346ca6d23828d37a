"""NFACompiler: SEQ to the paper's NFA_scep (Definition 17, Figures 4-10).

The automaton is a chain of states x0 .. xn, one step per atom. Each step records the
state-transition predicate of its edges (the streams U, the operator and the GPMs), the
selection strategy attaching it to what precedes, and what the runtime needs to index runs
waiting there: the streams it reads and the variables certainly bound on arrival (the keys
runs can be partitioned by): the runtime executes ``steps``. ``automaton_edges`` gives the
paper's graph view (states and edges) that ``spaseq explain`` draws; it is not in the plan.
"""

from __future__ import annotations

from dataclasses import dataclass

from spaseq.engine.algebra import operators as A


@dataclass(frozen=True)
class Edge:
    """An edge of NFA_scep: source -> target labelled theta = (streams, op, GPMs)."""

    source: int
    target: int
    streams: frozenset[str]
    op: str
    gpms: tuple[str, ...]
    label: str = ""


@dataclass(frozen=True)
class Step:
    """What a run waiting at state ``index`` needs: the atom, its strategy, its streams."""

    index: int
    operand: A.Operand
    modifier: str
    strategy: str | None
    streams: frozenset[str]
    gpms: tuple[str, ...]
    bound_before: frozenset[str]
    bound_after: frozenset[str]

    @property
    def is_kleene(self) -> bool:
        """Every iteration form (``+``, ``*``, ``{n}``, ``{m,n}``, ``{m,}``) loops."""
        return self.bounds is not None

    @property
    def bounds(self) -> tuple[int, int | None] | None:
        """A Kleene step's iteration bounds (low, high or None), read off its modifier."""
        return A.iteration_bounds(self.modifier)

    @property
    def loop_strategy(self) -> str:
        """How a Kleene iteration attaches to the previous one (SEMANTICS section 6)."""
        return A.SKIP_TILL_NEXT if self.strategy is None else A.STRICT


@dataclass(frozen=True)
class Automaton:
    steps: tuple[Step, ...]
    all_streams: frozenset[str]

    @property
    def final(self) -> int:
        return len(self.steps)


def certainly_bound(op: A.Operand, query: A.Query) -> set[str]:
    """Variables every result of ``op`` binds: BGP variables of its GPMs (conjunction:
    union; disjunction: intersection)."""
    if isinstance(op, A.GpmRef):
        out: set[str] = set()
        for el in query.events[op.name].pattern.elements:
            if isinstance(el, A.BGP):
                for tp in el.triples:
                    out |= A.triple_vars(tp)
        return out
    parts = [certainly_bound(o, query) for o in op.operands]
    return set.union(*parts) if isinstance(op, A.Conjunction) else set.intersection(*parts)


def operand_streams(op: A.Operand, query: A.Query) -> frozenset[str]:
    return frozenset(query.events[g].stream for g in A.operand_gpms(op))


def compile_query(query: A.Query) -> Automaton:
    """NFACompiler: one state per atom plus the final state."""
    steps: list[Step] = []
    bound: set[str] = set()
    # head negations first (states the runs never wait at), then the positive atoms, the
    # first of which opens the sequence (strategy None: Seq.positive)
    for i, atom in enumerate((*query.seq.head, *query.seq.positive)):
        streams = operand_streams(atom.operand, query)
        gpms = tuple(A.operand_gpms(atom.operand))
        after = set(bound)
        if atom.modifier == A.PLAIN or (atom.modifier == A.KLEENE and atom.low > 0):
            after |= certainly_bound(atom.operand, query)  # X* may take no event: binds nothing
        steps.append(Step(i, atom.operand, atom.modifier_text, atom.strategy, streams, gpms,
                          frozenset(bound), frozenset(after)))
        bound = after
    return Automaton(tuple(steps), frozenset(query.streams.values()))


def automaton_edges(auto: Automaton, query: A.Query | None = None) -> tuple[Edge, ...]:
    """The paper's graph view of the automaton (Figures 4-10): each state's edges (a timer's
    step, known from ``query``, one edge judged at the timer's end)."""
    timers = {n: e.timer for n, e in (query.events.items() if query else ()) if e.timer is not None}
    return tuple(e for step in auto.steps
                 for e in _edges(step.index, step, step.streams, step.gpms, auto.all_streams, timers))


def _edges(i: int, atom: Step, streams: frozenset[str], gpms: tuple[str, ...],
           all_streams: frozenset[str], timers: dict[str, A.Timer]) -> list[Edge]:
    out: list[Edge] = []
    op = atom.operand
    strategy = atom.strategy or ""
    timer = timers.get(op.name) if isinstance(op, A.GpmRef) else None
    if timer is not None:  # no event is waited for: the run is judged at the timer's end
        side = "after" if timer.side == A.AFTER else "before"
        return [Edge(i, i + 1, streams, f"{side} {timer.anchor}", gpms, timer.mode.lower())]
    if atom.strategy in (A.SKIP_TILL_NEXT, A.SKIP_TILL_ANY):
        # Figure 7: a self-loop that skips irrelevant events.
        out.append(Edge(i, i, all_streams, atom.strategy, (), "skip"))
    if atom.modifier == A.NEGATION:
        out.append(Edge(i, i + 1, streams, "!", gpms, "absent"))
        return out
    if isinstance(op, A.GpmRef):
        kind = atom.modifier if atom.is_kleene else strategy
        out.append(Edge(i, i + 1, streams, kind, gpms, "take"))
    else:
        sym = "&" if isinstance(op, A.Conjunction) else "|"
        for g in gpms:  # Figures 8-9: one edge per operand GPM
            out.append(Edge(i, i + 1, streams, sym, (g,), "take"))
    if atom.is_kleene:
        out.append(Edge(i + 1, i + 1, streams, atom.modifier, gpms, "iterate"))
    if atom.modifier == A.OPTIONAL or (atom.bounds or (1,))[0] == 0:  # X?, and X* not taken
        out.append(Edge(i, i + 1, streams, atom.modifier, gpms, "skip-if-absent"))
    return out


def automaton_text(auto: A.Query | Automaton, query: A.Query | None = None) -> str:
    """States and edges, one line each, for ``spaseq explain``."""
    if isinstance(auto, A.Query):
        query, auto = auto, compile_query(auto)
    lines = [f"NFA_scep: states x0..x{auto.final} (x0 initial, x{auto.final} final)"]
    for e in automaton_edges(auto, query):
        lines.append(f"  x{e.source} -> x{e.target}  [{e.label}]  ({edge_theta(e, query)})")
    return "\n".join(lines)


def edge_theta(e: Edge, query: A.Query | None) -> str:
    """An edge's predicate theta as the paper writes it: ``{streams}, op, GPMs`` (streams by
    the query's names), as ``explain`` prints and draws it."""
    streams = ",".join(sorted(_short(s, query) for s in e.streams))
    return f"{{{streams}}}, {e.op or 'ø'}, {','.join(e.gpms) or '-'}"


def automaton_dot(auto: Automaton, query: A.Query) -> list[str]:
    """DOT lines for the automaton (a cluster inside the explain graph)."""
    out = ["  subgraph cluster_nfa {", '    label="NFA_scep";']
    for i in range(auto.final + 1):
        shape = "doublecircle" if i == auto.final else "circle"
        out.append(f'    x{i} [shape={shape}, label="x{i}"];')
    for e in automaton_edges(auto, query):
        out.append(f'    x{e.source} -> x{e.target} [label="{edge_theta(e, query)}"];')
    out.append("  }")
    return out


def _short(iri: str, query: A.Query | None) -> str:
    if query is not None:
        for name, s in query.streams.items():
            if s == iri:
                return name
    return iri
