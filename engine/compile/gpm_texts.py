"""A GPM body as SPARQL texts for a SPARQL engine (the evaluation path for bodies the compiled
path does not cover, and the reference evaluator's only path).

Bodies whose top level is only triples, GRAPH, VALUES, sub-groups, UNION and FILTER
("join-shaped") are evaluated once per event without their FILTERs, and then per context
by a compatibility check and the FILTERs alone: ``Filter(F, mu JOIN P) = Filter(F, {mu} JOIN
[[P]])``, which is exact for such bodies and avoids one full query per (run, event).
"""

from __future__ import annotations

from dataclasses import dataclass

from spaseq.engine.algebra import operators as A
from spaseq.engine.functions.run_functions import (
    calls_run_functions,
    pattern_calls,
    run_calls_only_in_top_filters,
)

_JOIN_SHAPED = (A.BGP, A.Filter, A.UnionPattern, A.GraphPattern, A.Values, A.SubSelect)


@dataclass
class GpmTexts:
    """The SPARQL texts of one GPM body for pyoxigraph (or any SPARQL engine), prepared once,
    and the body's shape: which variables it always binds, whether it is join-shaped (see the
    module docstring), whether it calls spaseq functions."""

    event: A.EventPattern
    projection: str
    mentioned: frozenset[str]
    always_bound: frozenset[str]
    join_shaped: bool
    body_inner: str
    filterless: str = ""
    filters: tuple[str, ...] = ()
    functions: bool = False  # calls spaseq functions (queries need them as custom_functions)
    run_aware: bool = False  # calls run functions: evaluated per run (extension_functions)
    kb_vars: frozenset[str] = frozenset()  # variables a GRAPH block binds (the KB's terms)

    @classmethod
    def of(cls, ev: A.EventPattern) -> GpmTexts:
        group = ev.pattern
        mentioned = A.mentioned_vars(group) | A.in_scope_vars(group)
        projection = " ".join(f"?{v}" for v in sorted(mentioned)) or "*"
        always = set()
        for el in group.elements:
            if isinstance(el, A.BGP):
                for tp in el.triples:
                    always |= A.triple_vars(tp)
        text = group.text
        is_sub = len(group.elements) == 1 and isinstance(group.elements[0], A.SubSelect)
        body_inner = text if is_sub else text[1:-1]
        join_shaped = all(isinstance(el, _JOIN_SHAPED) for el in group.elements) and not is_sub
        run_aware = calls_run_functions(group)
        if run_aware and not run_calls_only_in_top_filters(group):
            join_shaped = False  # the base solutions would depend on the run
        kb_vars: set[str] = set()
        for el in group.walk():
            if isinstance(el, A.GraphPattern):
                kb_vars |= A.in_scope_vars(el.pattern) | ({el.graph.name} if isinstance(el.graph, A.Var) else set())
        compiled = cls(ev, projection, frozenset(mentioned), frozenset(always), join_shaped, body_inner,
                       functions=any(True for _ in pattern_calls(group)), run_aware=run_aware,
                       kb_vars=frozenset(kb_vars))
        if join_shaped:
            cut = text
            for el in sorted(
                (e for e in group.elements if isinstance(e, A.Filter)), key=lambda f: -f.span[0]
            ):
                start, end = el.span
                rest = cut[end:]
                if rest.lstrip().startswith("."):  # the optional '.' after a FILTER goes too
                    end += len(rest) - len(rest.lstrip()) + 1
                cut = cut[:start] + " " * (end - start) + cut[end:]
            compiled.filterless = cut
            compiled.filters = tuple(
                el.text for el in group.elements if isinstance(el, A.Filter)
            )
        return compiled
