"""A CONSTRUCT template's variables: the columns its results are written with. The template
is instantiated by the core (``output.derived.result_graph``; SPARQL 1.1 section 16.2, one
solution at a time)."""

from __future__ import annotations

from collections.abc import Sequence

from spaseq.engine.algebra import operators as A


def template_variables(template: Sequence[A.TriplePattern]) -> list[str]:
    """The (non-blank) variables a template mentions, in order of first mention."""
    seen: dict[str, None] = {}
    for tp in template:
        for t in (tp.subject, tp.predicate, tp.object):
            if isinstance(t, A.Var) and not t.is_blank:
                seen.setdefault(t.name, None)
    return list(seen)
