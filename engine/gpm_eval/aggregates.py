"""A SELECT's ``(expression AS ?v)`` over the results a match's COLLECT timers gathered
(docs/decisions.md 71): the rows (the match's mapping joined with each collected result) are
one group, and the expressions are evaluated by pyoxigraph as SPARQL 1.1 evaluates a
SELECT's expressions over an implicit group, so ``AVG``, ``COUNT``, ``SUM``, ``MIN``, ``MAX``,
``SAMPLE`` and ``GROUP_CONCAT`` mean exactly what they mean in SPARQL."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pyoxigraph import BlankNode, QuerySolutions, Store

from spaseq.engine.algebra import operators as A
from spaseq.engine.errors import UsageError
from spaseq.engine.gpm_eval.sparql_store import Node


def select_expressions(query: A.Query, rows: Sequence[Mapping[str, Node]]) -> dict[str, Node]:
    """The values of ``query``'s SELECT expressions over ``rows`` (one group); a variable
    whose expression errs is left out, as SPARQL leaves it unbound. UsageError for an
    expression SPARQL refuses (a variable outside an aggregate that the group does not fix)."""
    names = sorted({v for row in rows for v, t in row.items() if not isinstance(t, BlankNode)})
    values = " ".join("(" + " ".join(str(row[v]) if v in row and not isinstance(row[v], BlankNode) else "UNDEF"
                                     for v in names) + ")" for row in rows)
    prologue = (f"BASE <{query.base}>\n" if query.base else "") + "".join(
        f"PREFIX {p}: <{iri}>\n" for p, iri in query.prefixes.items())
    selected = " ".join(f"({expr} AS ?{v})" for v, expr in query.match.expressions)
    text = f"{prologue}SELECT {selected} WHERE {{ VALUES ({' '.join('?' + v for v in names)}) {{ {values} }} }}"
    try:
        found = Store().query(text)
    except (SyntaxError, ValueError, OSError) as exc:
        raise UsageError(f"the SELECT expressions of {query.file}: {exc}") from None
    assert isinstance(found, QuerySolutions)  # a SELECT
    out: dict[str, Node] = {}
    for solution in found:
        for v, _ in query.match.expressions:
            value = solution[v]
            if value is not None:
                out[v] = value
    return out
