"""Human-readable views of a query: its algebra, its NFA_scep and its plan, as indented text
or Graphviz DOT (``spaseq explain``); rendered from the algebra and the plan, never from a
running engine."""

from __future__ import annotations

from spaseq.engine.algebra import operators as A
from spaseq.engine.compile.nfa import automaton_dot, automaton_text, compile_query
from spaseq.engine.compile.plan import NATIVE, SPAREVAL, EngineOptions, Plan
from spaseq.engine.compile.planner import plan_query

_STRATEGY = {A.STRICT: "strict contiguity ','", A.SKIP_TILL_NEXT: "skip-till-next ';'",
             A.SKIP_TILL_ANY: "skip-till-any ':'"}
_MODIFIER = {A.OPTIONAL: "optional", A.NEGATION: "negation"}


def modifier_words(atom: A.Atom) -> str:
    """What an atom's modifier means, in words (``Kleene+``, ``Kleene, 2 to 5 iterations``)."""
    if atom.modifier != A.KLEENE:
        return _MODIFIER.get(atom.modifier, "")
    low, high = atom.low, atom.high
    if high is None:
        return "Kleene+" if low == 1 else f"Kleene, {low} or more iterations"
    if low == high:
        return f"Kleene, exactly {low} iteration{'s' if low > 1 else ''}"
    return f"Kleene, {low} to {high} iterations"


def operand_text(op: A.Operand) -> str:
    if isinstance(op, A.GpmRef):
        return op.name
    sep = " & " if isinstance(op, A.Conjunction) else " | "
    return "(" + sep.join(operand_text(o) for o in op.operands) + ")"


#: What each selection policy does, as explain says it (docs/decisions.md 65).
_POLICY = {
    A.UNRESTRICTED: "every partial match an event may extend",
    A.CHRONOLOGICAL: "an event extends the earliest partial matches it may extend",
    A.RECENT: "an event extends the latest partial matches it may extend",
    A.LATEST: "each event of a match is its GPM's latest (C-SPARQL's naive SEQ)",
}
_CONSUMED = "; a released match uses up the event triples it took"


def explain_text(query: A.Query, options: EngineOptions | None = None) -> str:
    """MATCH / WINDOW / SEQ / EVENT as an indented tree, with each GPM's body, the automaton
    and the plan (under ``options``; a query reading another query's results, run with
    ``--with``, is planned for events that last whatever they say)."""
    proj = "*" if query.match.variables is None else " ".join(f"?{v}" for v in query.match.variables)
    lines = [f"MATCH {'DISTINCT ' if query.match.distinct else ''}{proj}"]
    if query.partition_by:
        lines.append("  PARTITION BY " + " ".join(f"?{v}" for v in query.partition_by))
    lateness = "" if not query.lateness else f" LATENESS {format(query.lateness.normalize(), 'f')}s"
    lines.append(f"  WINDOW {query.window.describe()}{lateness}")
    if query.selection != A.UNRESTRICTED or query.consumption != A.CONSUME_NONE:
        lines.append(f"  POLICY SELECTION {query.selection.upper()} CONSUMPTION "
                     f"{query.consumption.upper()}   [{_POLICY[query.selection]}"
                     f"{_CONSUMED if query.consumption == A.CONSUME_MATCHED else ''}]")
    lines.append("    SEQ")
    head = len(query.seq.head)
    for i, atom in enumerate((*query.seq.head, *query.seq.positive)):
        timer = query.events[atom.operand.name].timer if isinstance(atom.operand, A.GpmRef) else None
        if i < head:
            how = "head negation: absent in the window before the first event"
        elif timer is not None:
            how = (f"relative timer {'after the end' if timer.side == A.AFTER else 'before the start'} of "
                   f"{timer.anchor}: {'no such event' if timer.mode == A.ABSENT else 'every such event'} "
                   f"in {format(timer.seconds.normalize(), 'f')} s, judged when the clock passes its end")
        else:
            how = "first" if atom.strategy is None else _STRATEGY[atom.strategy]
            how += f" {modifier_words(atom)}" if atom.modifier else ""
        lines.append(f"      {operand_text(atom.operand)}{atom.modifier_text}   [{how}]")
    for name, ev in query.events.items():
        timer = ev.timer
        timed = (f" {timer.side.upper()} {timer.anchor} FOR {timer.seconds} SECONDS {timer.mode.upper()}"
                 if timer is not None else "")
        lines.append(f"  EVENT {name} ON {ev.stream_name} <{ev.stream}>{timed}")
        for body_line in ev.pattern.text.splitlines():
            lines.append(f"      {body_line.strip()}")
    lines.append("")
    lines.append(automaton_text(query))
    lines.append("")
    lines.extend(plan_lines(plan_query(query, options)))
    return "\n".join(lines)


def plan_lines(plan: Plan) -> list[str]:
    """How the engine will run each state: the runs' indexes and each GPM's evaluation path,
    read off the plan (``compile.planner``)."""
    query, steps = plan.query, plan.steps
    lines = ["Plan (default engine options):" if plan.options == EngineOptions() else "Plan:"]
    for i, (step, index) in enumerate(zip(steps, plan.run_indexes, strict=True)):
        streams = "{" + ",".join(sorted(_short(s, query) for s in step.streams)) + "}"
        if step.modifier == A.NEGATION:
            lines.append(f"  x{i}: absence of {operand_text(step.operand)} watched on {streams}")
            continue
        timer = query.events[step.operand.name].timer if isinstance(step.operand, A.GpmRef) else None
        if timer is not None:
            lines.append(f"  x{i}: runs waiting for the end of {operand_text(step.operand)}'s timer "
                         f"({timer.side.upper()} {timer.anchor} FOR {format(timer.seconds.normalize(), 'f')} "
                         "SECONDS), "
                         f"then judged on the events of {streams} kept back")
            continue
        how = [f"indexed by stream {streams}"]
        if i and plan.options.index_streams and all(plan.gpms[g].join_shaped for g in step.gpms):
            how = [f"indexed by stream {streams} and state, visited only by events "
                   f"{' or '.join(step.gpms)} has a solution on"]
        keys, rng = index.partition_keys, index.range
        if keys:
            how = ["partitioned by " + " ".join(f"?{k}" for k in keys)]
        if rng is not None:
            events = ", ".join(f"{'<=' if rk.below else '>='} {g}'s ?{rk.event_var}"
                               for g, rk in rng.by_gpm.items())
            how.append(f"sorted by ?{rng.run_var} ({events})")
        lines.append(f"  x{i}: runs waiting for {operand_text(step.operand)}: {', '.join(how)}")
    lazy_prefix = plan.explain.lazy_prefix
    t, trigger = plan.lazy_chain, operand_text(steps[lazy_prefix].operand)
    if t:
        buffered = ", ".join(operand_text(s.operand) for s in steps[:t])
        lines.append(f"  lazy chain (--lazy-chain): no runs before x{t}; events {buffered} can take are "
                     f"buffered for the window and chained when {trigger} matches")
    elif lazy_prefix:
        lines.append(f"  lazy chain: possible over x0..x{lazy_prefix}, not chosen (it pays only when {trigger} "
                     f"is rarer than the atoms before it, which the planner cannot know: decision 49); "
                     f"--lazy-chain turns it on")
    if plan.options.intervals:
        lines.append("  events that last (intervals): runs wait until their window ends, each result "
                     "judged on its begin; no lazy chain or lazy conjunction")
    lines.append(f"  split: {plan.split.why}")
    why_not = plan.explain.evaluators
    for name, g in plan.gpms.items():
        why = why_not.get(name)
        if g.evaluator == NATIVE:
            runs = "native join and FILTERs"
        elif g.evaluator == SPAREVAL:
            runs = "native SPARQL (spareval) on the event graph"
        else:
            runs = f"pyoxigraph SPARQL, called back ({why.removeprefix(f'GPM {name} ') if why else 'a callback'})"
        extra = " + cached KB join" if g.graph_elements else ""
        pre = (", pre-filter on " + ", ".join(f"<{p.value}>" for p in g.required)
               if g.required and plan.options.prefilter else "")
        lines.append(f"  {name}: {runs}{extra}{pre}")
    return lines


def _short(iri: str, query: A.Query) -> str:
    for name, s in query.streams.items():
        if s == iri:
            return name
    return iri


def explain_dot(query: A.Query) -> str:
    """The algebra tree as a Graphviz digraph."""
    out = ["digraph spaseq {", '  node [shape=box, fontname="monospace"];']
    proj = "*" if query.match.variables is None else " ".join(f"?{v}" for v in query.match.variables)
    out.append(f'  match [label="MATCH {_esc(proj)}"];')
    out.append(f'  window [label="WINDOW {_esc(query.window.describe())}"];')
    out.append('  seq [label="SEQ"];')
    out.append("  match -> window; window -> seq;")
    for i, atom in enumerate((*query.seq.head, *query.seq.positive)):  # as the automaton runs them
        label = f"{operand_text(atom.operand)}{atom.modifier_text}"
        edge = atom.strategy or "first"
        out.append(f'  atom{i} [label="{_esc(label)}", shape=ellipse];')
        out.append(f'  seq -> atom{i} [label="{_esc(edge)}"];')
        for name in A.operand_gpms(atom.operand):
            ev = query.events[name]
            out.append(f'  ev_{name} [label="EVENT {name} ON {ev.stream_name}"];')
            out.append(f"  atom{i} -> ev_{name};")
    out.extend(automaton_dot(compile_query(query), query))
    out.append("}")
    return "\n".join(out)


def _esc(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')
