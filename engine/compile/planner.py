"""The planner: a checked query and the engine options to a ``Plan`` (``compile.plan``), the
one place the runtime's precomputed choices are made: the automaton, each GPM's evaluation
path, join order and FILTERs, how waiting runs are indexed (partition keys, range keys, the
per-stream probe order) and whether the lazy chain applies."""

from __future__ import annotations

import dataclasses
from functools import partial

from pyoxigraph import NamedNode

from spaseq.engine.algebra import operators as A
from spaseq.engine.compile.consumption import consumed_patterns
from spaseq.engine.compile.gpm_shape import compiled_shape, join_order
from spaseq.engine.compile.gpm_texts import GpmTexts
from spaseq.engine.compile.nfa import Step, compile_query
from spaseq.engine.compile.plan import (
    COMPILED,
    SPARQL,
    EngineOptions,
    Explain,
    GpmPlan,
    Plan,
    ProbeStep,
    RunIndexPlan,
)
from spaseq.engine.compile.plan_json import plan_to_json
from spaseq.engine.compile.range_keys import StepRange, find_range_key, step_range
from spaseq.engine.compile.splitting import split_plan
from spaseq.engine.functions.run_functions import kleene_gpms
from spaseq.engine.native_core import _native


def plan_query(query: A.Query, options: EngineOptions | None = None) -> Plan:
    """Compile ``query`` for the runtime under ``options`` (default: every optimisation)."""
    options = options or EngineOptions()
    if query.selection != A.UNRESTRICTED or query.consumption != A.CONSUME_NONE:
        # a policy chooses among every extension an event offers, as it is offered: the lazy
        # forms, which build extensions later, do not apply (docs/decisions.md 65)
        options = dataclasses.replace(options, lazy_conjunction=False, lazy_chain=False)
    if any(ev.timer is not None for ev in query.events.values()):
        options = dataclasses.replace(options, intervals=True)  # a timer's interval lasts
    if options.intervals:
        # the lazy forms evaluate an instant's events once it is complete, and an instant of an
        # event that lasts is no longer where its extensions are decided (docs/decisions.md 71)
        options = dataclasses.replace(options, lazy_conjunction=False, lazy_chain=False)
    automaton = compile_query(query)
    gpms = {name: plan_gpm(ev, query, options) for name, ev in query.events.items()}
    indexes = tuple(_run_index(step, gpms, options) for step in automaton.steps)
    lazy = lazy_prefix_length(automaton.steps, gpms, query.window)
    return _with_evaluators(Plan(
        query=query,
        options=options,
        automaton=automaton,
        gpms=gpms,
        run_indexes=indexes,
        probes=_probes(automaton.steps, indexes, gpms),
        kleene_gpms=kleene_gpms(query),
        lazy_chain=lazy_trigger(lazy, options),
        split=split_plan(query),
        explain=Explain(lazy_prefix=lazy),
    ))


def _with_evaluators(plan: Plan) -> Plan:
    """``plan`` with each GPM's evaluator recorded: the native core is asked (a pure function
    of the plan, ``gpm_evaluators``), so the runtime that will follow the plan is the one
    that decided; why a GPM is not native goes under ``explain``."""
    answers = {name: (evaluator, why) for name, evaluator, why in _native.gpm_evaluators(plan_to_json(plan, indent=None))}
    gpms = {name: dataclasses.replace(g, evaluator=answers[name][0]) for name, g in plan.gpms.items()}
    why = {name: reason for name, (_, reason) in answers.items() if reason}
    return dataclasses.replace(plan, gpms=gpms, explain=dataclasses.replace(plan.explain, evaluators=why))


def plan_gpm(ev: A.EventPattern, query: A.Query, options: EngineOptions) -> GpmPlan:
    """The evaluation path of one GPM: compiled join and FILTER code where the body's shape
    allows it (top-level triples, FILTERs and GRAPH blocks), a SPARQL engine otherwise."""
    texts = GpmTexts.of(ev)
    run_aware = texts.run_aware
    triples = [tp for el in ev.pattern.elements if isinstance(el, A.BGP) for tp in el.triples]
    order = tuple(join_order(triples))
    compiled = None
    # run functions outside the top-level FILTERs make even the join per run: SPARQL path
    if options.compiled_gpm and not (run_aware and not texts.join_shaped):
        compiled = compiled_shape(ev.pattern)
    local_vars = tuple(sorted(ev.variables))
    required = tuple(sorted({tp.predicate for tp in triples if isinstance(tp.predicate, NamedNode)},
                            key=lambda p: p.value))
    consumes = consumed_patterns(ev.pattern) if query.consumption == A.CONSUME_MATCHED else ()
    plan = partial(GpmPlan, name=ev.name, stream=ev.stream, run_aware=run_aware,
                   key_vars=frozenset(texts.always_bound), local_vars=local_vars,
                   required=required, cost=len(triples), consumes=consumes)
    if compiled is None:
        return plan(path=SPARQL, join_shaped=texts.join_shaped)
    return plan(
        path=COMPILED, join_shaped=True, join_order=order, variables=compiled.variables,
        filters=compiled.filters, graph_elements=compiled.graph_elements,
        graph_vars=tuple(graph_block_vars(el) for el in compiled.graph_elements),
    )


def graph_block_vars(el: A.GraphPattern) -> tuple[str, ...]:
    """A GRAPH block's variables, sorted: what its KB rows bind (the block's in-scope
    variables and the graph's own variable), and so what the runtime caches them by."""
    own = {el.graph.name} if isinstance(el.graph, A.Var) else set()
    return tuple(sorted(A.in_scope_vars(el.pattern) | own))


def _run_index(step: Step, gpms: dict[str, GpmPlan], options: EngineOptions) -> RunIndexPlan:
    rng = _range_key(step, gpms, options)
    keys = _partition_keys(step, gpms, rng, options)
    return RunIndexPlan(keys, rng)


def _partition_keys(step: Step, gpms: dict[str, GpmPlan], rng: StepRange | None,
                    options: EngineOptions) -> tuple[str, ...] | None:
    """Variables a run waiting at ``step`` can be indexed by: bound before the step and
    bound by every context-free solution of its GPM (equality joins); () when only a
    range key applies. For a conjunction or disjunction: the variables every operand
    GPM binds, since an event feeds the run only through a GPM on its stream."""
    if not options.partition_runs:
        return None
    plans = [gpms[g] for g in step.gpms]
    if not plans or not all(p.join_shaped for p in plans):
        return None
    keys = tuple(sorted(step.bound_before.intersection(*(p.key_vars for p in plans))))
    return keys if keys or rng is not None else None


def _range_key(step: Step, gpms: dict[str, GpmPlan], options: EngineOptions) -> StepRange | None:
    """The FILTER comparison runs at ``step`` can be sorted by (``range_keys``)."""
    if not (options.range_index and options.partition_runs):
        return None
    candidates = {}
    for g in step.gpms:
        p = gpms[g]
        if p.path != COMPILED:
            return None
        candidates[g] = find_range_key(p.filters, step.bound_before, frozenset(p.variables))
    return step_range(candidates)


def _probes(steps: tuple[Step, ...], indexes: tuple[RunIndexPlan, ...],
            gpms: dict[str, GpmPlan]) -> dict[str, tuple[ProbeStep, ...]]:
    """Per stream, the partitioned steps an event of it can feed, in step order."""
    out: dict[str, list[ProbeStep]] = {}
    for step, index in zip(steps, indexes, strict=True):
        if index.partition_keys is None:
            continue
        loops = (False, True) if step.is_kleene else (False,)
        for stream in sorted(step.streams):
            names = tuple(g for g in step.gpms if gpms[g].stream == stream)
            if names:
                out.setdefault(stream, []).append(ProbeStep(step.index, index.range is not None, loops, names))
    return {s: tuple(p) for s, p in out.items()}


def lazy_trigger(lazy_prefix: int, options: EngineOptions) -> int:
    """The lazy chain's trigger step, 0 for the eager automaton: the whole lazy prefix when
    ``options.lazy_chain`` asks for it, never by the planner's own choice (docs/decisions.md
    49: eager runs are visited only by events that can extend them, so neither is cheaper
    whatever the stream; the lazy chain wins when its trigger is rare and loses several
    times over when it is frequent, and the planner knows no frequencies)."""
    return lazy_prefix if options.lazy_chain else 0


def lazy_prefix_length(steps: tuple[Step, ...], gpms: dict[str, GpmPlan], window: A.Window) -> int:
    """t >= 1 when steps 0..t (t + 1 atoms) can be evaluated lazily, triggered by step t's
    events (the native runtime's lazy_chain.rs); 0 when the query has no such prefix: plain GPM atoms
    joined by ``:`` on the compiled path without KB joins or run functions (those answer as
    of the event's arrival), under a sliding time window or none."""
    if window.kind not in (None, "time") or window.tumbling:
        return 0
    t = 0
    for i, step in enumerate(steps):
        op = step.operand
        if step.modifier != A.PLAIN or not isinstance(op, A.GpmRef):
            break
        p = gpms[op.name]
        if p.path != COMPILED or p.graph_elements or p.run_aware:
            break
        if i > 0 and step.strategy != A.SKIP_TILL_ANY:
            break
        t = i
    return t
