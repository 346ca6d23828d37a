"""GPM evaluation for the incremental engine.

Each pushed event gets one ``EventContext`` shared by every run and every query: its
predicate set (for the pre-filter), its index by predicate, and per-GPM caches of the
context-independent solutions. A ``GpmMatcher`` evaluates one GPM on a context for the
native runtime, which calls it back for the bodies its own evaluators leave (GRAPH blocks
inside SPARQL-path constructs, ``spaseq:`` functions there, docs/decisions.md 37), with
pyoxigraph's SPARQL engine on a store holding the events being processed as named graphs
(``EventGraphs``, a ``sparql_store.SparqlStore``: the same store, spellings and queries as
the reference evaluator's ``sparql_eval``); and answers the KB rows of a compiled body's
GRAPH blocks (``kb_rows``), one pyoxigraph query per distinct binding of their variables.

Join-shaped bodies (see ``compile.gpm_texts``) are split into a context-free part evaluated
once per event (``base``) and a per-run part (``extend``: compatibility, FILTERs).
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import cast

from pyoxigraph import NamedNode, Store

from spaseq.engine.algebra import operators as A
from spaseq.engine.compile.gpm_texts import GpmTexts
from spaseq.engine.compile.kb_relevance import QuadFilter, query_filter
from spaseq.engine.compile.plan import EngineOptions, GpmPlan
from spaseq.engine.events import Event
from spaseq.engine.functions.run_functions import RunContext
from spaseq.engine.gpm_eval.kb_source import KbSource, kb_source
from spaseq.engine.gpm_eval.sparql_store import (
    Solution,
    SparqlStore,
    compatible,
    graph_text,
    query_functions,
    select_solutions,
    values_clause,
)
from spaseq.engine.matches import Term


class EventContext:
    """One event as the engine sees it, with caches shared by all runs and queries."""

    __slots__ = ("event", "_predicates", "graph", "cache")

    def __init__(self, event: Event) -> None:
        self.event = event
        self._predicates: frozenset | None = None
        self.graph: NamedNode | None = None
        self.cache: dict = {}

    @property
    def predicates(self) -> frozenset:
        if self._predicates is None:
            self._predicates = frozenset(t.predicate for t in self.event.triples)
        return self._predicates


class EventGraphs(SparqlStore):
    """The pyoxigraph store used by fallback evaluation: the KB quads the registered queries'
    GRAPH patterns can use (``compile.kb_relevance``, copied lazily) plus the graphs of the
    events currently being processed (removed as soon as they are done). The KB itself
    (``kb.store``: in memory, or the current version of an on-disk store) is queried directly
    by the compiled path; ``kb_version`` changes when a long-running engine switches to a new
    store version."""

    def __init__(self, kb: Store | KbSource | None) -> None:
        super().__init__()
        self.kb = kb_source(kb) if kb is not None else None
        self.kb_graphs = self.kb.graphs() if self.kb is not None else []
        self.kb_version = self.kb.version if self.kb is not None else 0
        self._kb_filter: QuadFilter | None = None
        self._kb_copied: QuadFilter | None = None
        self._live: list[EventContext] = []

    def use(self, query: A.Query) -> None:
        """Note a query whose GRAPH patterns fallback evaluation may run (copied lazily)."""
        if self.kb is None:
            return
        f = query_filter(query)
        self._kb_filter = f if self._kb_filter is None else self._kb_filter.union(f)

    def poll_kb(self, force: bool = False) -> None:
        """Switch to a newer KB store version if one became current (throttled unless forced)."""
        if self.kb is not None:
            self.kb.refresh(force)
            self.sync_kb()

    def sync_kb(self) -> None:
        """Follow the KB source's version: drop the copied KB quads, so they are copied again."""
        if self.kb is None or self.kb.version == self.kb_version:
            return
        for g in self.kb_graphs:
            self.store.remove_graph(g)
        self._kb_copied = None
        self.kb_graphs = self.kb.graphs()
        self.kb_version = self.kb.version

    def _copy_kb(self) -> None:
        if self.kb is not None and self._kb_filter is not None and self._kb_copied != self._kb_filter:
            done = set(self._kb_copied.patterns) if self._kb_copied is not None else set()
            todo = QuadFilter(tuple(p for p in self._kb_filter.patterns if p not in done))
            self.store.extend(todo.select(self.kb.store))
            self._kb_copied = self._kb_filter

    def graph_of(self, ctx: EventContext) -> NamedNode:
        """The event's graph, added on first use (with the KB quads still to copy)."""
        if ctx.graph is None:
            self.sync_kb()
            self._copy_kb()
            ctx.graph = self.add_events([ctx.event])[0]
            self._live.append(ctx)
        return ctx.graph

    def release(self, before: Decimal) -> None:
        """Drop the graphs of events earlier than ``before`` (processed as far as anything
        but a head negation knows: one that asks again has its event's graph added again)."""
        keep = []
        for ctx in self._live:
            if ctx.event.time < before:
                self.remove_event(cast(NamedNode, ctx.graph))  # a live context has its graph (graph_of)
                ctx.graph = None
            else:
                keep.append(ctx)
        self._live = keep


class GpmMatcher:
    """Evaluates one GPM (``eval(A, e, mu)`` of SEMANTICS section 2) for the engine."""

    def __init__(self, plan: GpmPlan, query: A.Query, graphs: EventGraphs,
                 options: EngineOptions) -> None:
        """The matcher the plan describes (``plan``: ``Plan.gpms[name]`` of ``query``'s plan)."""
        ev = query.events[plan.name]
        self.plan = plan
        self.name = plan.name
        self.stream = plan.stream
        self.query = query
        self.graphs = graphs
        self.share = options.share_context_free
        self.prefilter = options.prefilter
        self.text = GpmTexts.of(ev)
        # run functions (functions.run_functions) make results per run: no shared hot path
        self.run_aware = plan.run_aware
        self.join_shaped = self.text.join_shaped
        self.key_vars = plan.key_vars
        self.local_vars = frozenset(plan.local_vars)
        self.required = frozenset(plan.required)
        graphs.use(query)
        self._graph_parts = []
        for el, shared in zip(plan.graph_elements, plan.graph_vars, strict=True):
            self._graph_parts.append((el, list(shared), graph_text(el)))
        self.cost = plan.cost

    def can_match(self, ctx: EventContext) -> bool:
        """The SummaryGraph pre-filter: an event lacking a constant predicate never matches."""
        return not self.prefilter or self.required <= ctx.predicates

    def base(self, ctx: EventContext) -> list[Solution]:
        """Context-independent solutions of a join-shaped body on this event, as it spells
        them."""
        sols = self._base(ctx)
        if not sols:
            return sols
        graph = self.graphs.graph_of(ctx)  # added when the solutions were found
        return [self.graphs.spelled(self.text, graph, s, {}) for s in sols]

    def _base(self, ctx: EventContext) -> list[Solution]:
        """``base`` as evaluated (cached; what ``extend`` joins)."""
        key = ("base", self.name)
        if self.share and key in ctx.cache:
            return ctx.cache[key]
        if not self.can_match(ctx):
            sols: list[Solution] = []
        else:
            sols = self.graphs.filterless(self.text, self.graphs.graph_of(ctx), self.query)
        if self.share:
            ctx.cache[key] = sols
        return sols

    def extend(self, ctx: EventContext, mu: Mapping[str, Term], nu: Solution,
               run: RunContext | None = None) -> list[Solution]:
        """mu ∪ nu where the FILTERs hold; [] if incompatible (``nu`` from ``base``, GRAPH
        blocks joined). ``run``: what run functions see (bodies calling them only)."""
        if not compatible(nu, mu):
            return []
        merged = {**mu, **nu}
        if not self._check(ctx, merged, run):
            return []
        return [self.graphs.spelled(self.text, self.graphs.graph_of(ctx), merged, mu)]

    def results(self, ctx: EventContext, mu: Mapping[str, Term],
                run: RunContext | None = None) -> list[Solution]:
        """eval(A, e, mu): every mu ∪ nu of SEMANTICS section 2 (``run``: see ``extend``)."""
        if self.prefilter and not self.required <= ctx.predicates:
            return []
        if self.join_shaped:
            out: list[Solution] = []
            for nu in self._base(ctx):
                out.extend(self.extend(ctx, mu, nu, run))
            return out
        relevant = {v: t for v, t in mu.items() if v in self.text.mentioned}
        key: tuple[object, ...] = ("full", self.name, tuple(sorted(relevant.items(), key=lambda kv: kv[0])))
        if self.run_aware:
            key += (run,)
        local = ctx.cache.get(key)
        if local is None:
            local = self.graphs.body(self.text, self.graphs.graph_of(ctx), self.query, relevant, run)
            ctx.cache[key] = local
        # mu's own spelling of its values (pyoxigraph answers a VALUES term canonically:
        # "1e0"^^xsd:double comes back as "1"; decision 7 keeps the event's spelling)
        return [{**nu, **mu} for nu in local]

    def _check(self, ctx: EventContext, merged: Solution, run: RunContext | None = None) -> bool:
        if not self.text.filters:
            return True
        return self.graphs.filters_hold(self.text, self.graphs.graph_of(ctx), self.query, merged, run)

    @property
    def graph_vars(self) -> list[list[str]]:
        """Each top-level GRAPH element's variables (what its KB rows bind)."""
        return [shared for _el, shared, _text in self._graph_parts]

    def kb_rows(self, element: int, bound: Mapping[str, Term]) -> list[Solution]:
        """The KB rows of GRAPH element ``element`` agreeing with ``bound`` (a query of the
        current KB version; callers cache)."""
        graphs = self.graphs
        graphs.sync_kb()
        _el, shared, text = self._graph_parts[element]
        kb_store = graphs.kb.store if graphs.kb is not None else graphs.store
        values, subst = values_clause(dict(bound))
        projection = " ".join(f"?{v}" for v in shared) or "*"
        result = select_solutions(kb_store.query(
            f"SELECT {projection} WHERE {{ {values}{text} }}",
            default_graph=[], named_graphs=graphs.kb_graphs,
            prefixes=self.query.prefixes, base_iri=self.query.base,
            substitutions=subst or None, custom_functions=query_functions(self.text, None),
        ))
        names = [v.value for v in result.variables]
        return [{n: r[n] for n in names if r[n] is not None} for r in result]

