"""Human-readable views of a query: its algebra and its NFA_scep, as indented text or
Graphviz DOT (``spaseq explain``)."""

from __future__ import annotations

from spaseq.engine.algebra import operators as A
from spaseq.engine.compile.nfa import automaton_dot, automaton_text, compile_query
from spaseq.engine.runtime.lazy_chain import lazy_prefix_length

_STRATEGY = {A.STRICT: "strict contiguity ','", A.SKIP_TILL_NEXT: "skip-till-next ';'",
             A.SKIP_TILL_ANY: "skip-till-any ':'"}
_MODIFIER = {A.KLEENE: "Kleene+", A.OPTIONAL: "optional", A.NEGATION: "negation"}


def operand_text(op: A.Operand) -> str:
    if isinstance(op, A.GpmRef):
        return op.name
    sep = " & " if isinstance(op, A.Conjunction) else " | "
    return "(" + sep.join(operand_text(o) for o in op.operands) + ")"


def explain_text(query: A.Query) -> str:
    """MATCH / WINDOW / SEQ / EVENT as an indented tree, with each GPM's body."""
    proj = "*" if query.match.variables is None else " ".join(f"?{v}" for v in query.match.variables)
    lines = [f"MATCH {'DISTINCT ' if query.match.distinct else ''}{proj}"]
    if query.partition_by:
        lines.append("  PARTITION BY " + " ".join(f"?{v}" for v in query.partition_by))
    lines.append(f"  WINDOW {query.window.describe()}")
    lines.append("    SEQ")
    for atom in query.seq.atoms:
        how = "first" if atom.strategy is None else _STRATEGY[atom.strategy]
        mod = f" {_MODIFIER[atom.modifier]}" if atom.modifier else ""
        lines.append(f"      {operand_text(atom.operand)}{atom.modifier}   [{how}{mod}]")
    for name, ev in query.events.items():
        lines.append(f"  EVENT {name} ON {ev.stream_name} <{ev.stream}>")
        for body_line in ev.pattern.text.splitlines():
            lines.append(f"      {body_line.strip()}")
    lines.append("")
    lines.append(automaton_text(query))
    lines.append("")
    lines.extend(plan_lines(query))
    return "\n".join(lines)


def plan_lines(query: A.Query) -> list[str]:
    """How the engine will run each state: the runs' indexes and each GPM's evaluation path."""
    from spaseq.engine.api import Engine  # the runtime's own choices, not a re-derivation

    runtime = Engine().register(query, keep=False).runtime
    lines = ["Plan (default engine options):"]
    for i, step in enumerate(runtime.steps):
        streams = "{" + ",".join(sorted(_short(s, query) for s in step.streams)) + "}"
        if step.modifier == A.NEGATION:
            lines.append(f"  x{i}: absence of {operand_text(step.operand)} watched on {streams}")
            continue
        index = [f"indexed by stream {streams}"]
        keys, rng = runtime.keys[i], runtime.ranges[i]
        if keys:
            index = ["partitioned by " + " ".join(f"?{k}" for k in keys)]
        if rng is not None:
            events = ", ".join(f"{'<=' if rk.below else '>='} {g}'s ?{rk.event_var}"
                               for g, rk in rng.by_gpm.items())
            index.append(f"sorted by ?{rng.run_var} ({events})")
        lines.append(f"  x{i}: runs waiting for {operand_text(step.operand)}: {', '.join(index)}")
    t = lazy_prefix_length(runtime.steps, runtime.matchers, query.window)
    if t:
        buffered = ", ".join(operand_text(s.operand) for s in runtime.steps[:t])
        lines.append(f"  with lazy_chain: no runs before x{t}; events {buffered} can take are buffered "
                     f"for the window and chained when {operand_text(runtime.steps[t].operand)} matches")
    for name, m in runtime.matchers.items():
        how = "compiled Python" if m.compiled is not None else "pyoxigraph SPARQL"
        extra = " + cached KB join" if m._graph_parts else ""
        pre = ", pre-filter on " + ", ".join(sorted(f"<{p.value}>" for p in m.required)) if m.required else ""
        lines.append(f"  {name}: {how}{extra}{pre}")
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
    for i, atom in enumerate(query.seq.atoms):
        label = f"{operand_text(atom.operand)}{atom.modifier}"
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
