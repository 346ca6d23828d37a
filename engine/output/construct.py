"""CONSTRUCT templates instantiated with one match's mapping, as SPARQL 1.1 section 16.2 does
for one solution: blank nodes are fresh per match, and a template triple with an unbound
variable, or one that would not be valid RDF (a literal subject, a non-IRI predicate), is
skipped."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pyoxigraph import BlankNode, Literal, NamedNode, Triple

from spaseq.engine.algebra import operators as A
from spaseq.engine.matches import Term


def instantiate(template: Sequence[A.TriplePattern], mapping: Mapping[str, Term]) -> list[Triple]:
    """The triples of ``template`` under ``mapping``, in template order, without repeats."""
    fresh: dict[str, BlankNode] = {}
    out: dict[Triple, None] = {}
    for tp in template:
        s = _term(tp.subject, mapping, fresh)
        p = _term(tp.predicate, mapping, fresh)  # type: ignore[arg-type]
        o = _term(tp.object, mapping, fresh)
        if s is None or o is None or not isinstance(p, NamedNode) or isinstance(s, Literal):
            continue
        out[Triple(s, p, o)] = None
    return list(out)


def _term(t: A.PatternTerm, mapping: Mapping[str, Term],
          fresh: dict[str, BlankNode]) -> Term | None:
    if not isinstance(t, A.Var):
        return t
    if t.is_blank:
        if t.name not in fresh:
            fresh[t.name] = BlankNode()
        return fresh[t.name]
    return mapping.get(t.name)


def template_variables(template: Sequence[A.TriplePattern]) -> list[str]:
    """The (non-blank) variables a template mentions, in order of first mention."""
    seen: dict[str, None] = {}
    for tp in template:
        for t in (tp.subject, tp.predicate, tp.object):
            if isinstance(t, A.Var) and not t.is_blank:
                seen.setdefault(t.name, None)
    return list(seen)
