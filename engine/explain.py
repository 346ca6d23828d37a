"""Human-readable views of a query's algebra: indented text and Graphviz DOT."""

from __future__ import annotations

from spaseq.engine import algebra as A

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
    return "\n".join(lines)


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
    out.append("}")
    return "\n".join(out)


def _esc(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')
