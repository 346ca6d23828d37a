"""rdflib's ``initBindings`` for a SPAseq query: an initial context every GPM is evaluated in.

SEMANTICS.md section 2 evaluates a GPM body as ``VALUES(mu) . body`` with mu joined before the
body's FILTERs. Initial bindings are such a context from the start, so they are written into the
query as a ``VALUES`` block at the head of every GPM body: FILTERs see them, triple patterns must
agree with them, they hold for negated and optional atoms too, and they are part of every match
(so ``SELECT *`` and projections show them, as with rdflib's own SPARQL processor).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from rdflib import BNode, Literal, URIRef

from spaseq.engine.algebra import operators as A
from spaseq.engine.errors import QueryError, UsageError

_VARNAME = re.compile(r"[A-Za-z0-9_\u00b7\u00c0-\ufffd]+")


def values_block(bindings: Mapping[object, object]) -> str:
    """``VALUES (?a ?b) { (term term) }`` for the bindings; UsageError for what VALUES can't hold."""
    names: list[str] = []
    terms: list[str] = []
    for var, term in bindings.items():
        name = str(var).removeprefix("?").removeprefix("$")
        if not _VARNAME.fullmatch(name):
            raise UsageError(f"initBindings: {str(var)!r} is not a SPARQL variable name")
        if isinstance(term, BNode):
            raise UsageError(f"initBindings: ?{name} is bound to a blank node, which a query cannot name")
        if not isinstance(term, URIRef | Literal):
            raise UsageError(f"initBindings: ?{name} must be bound to an rdflib URIRef or Literal, not {term!r}")
        names.append(f"?{name}")
        terms.append(term.n3())
    return f"VALUES ({' '.join(names)}) {{ ({' '.join(terms)}) }}"


def _offset(text: str, line: int, column: int) -> int:
    """The character offset of a 1-based line and column."""
    lines = text.split("\n")
    return sum(len(s) + 1 for s in lines[: line - 1]) + column - 1


def bind_initial(text: str, query: A.Query, bindings: Mapping[object, object]) -> str:
    """The query text with the bindings' VALUES block at the head of every GPM body (a body that
    is a sub-select is wrapped, ``{ VALUES ... { SELECT ... } }``, since a sub-select group holds
    nothing else)."""
    if not bindings:
        return text
    block = values_block(bindings)
    edits: list[tuple[int, int, str]] = []
    for event in query.events.values():
        group = event.pattern
        loc = group.location
        if loc is None or loc.line is None or loc.column is None:
            raise QueryError(f"GPM {event.name}: cannot locate its body to add initBindings")
        start = _offset(text, loc.line, loc.column)
        if text[start : start + len(group.text)] != group.text:
            raise QueryError(f"GPM {event.name}: cannot locate its body to add initBindings", loc)
        if len(group.elements) == 1 and isinstance(group.elements[0], A.SubSelect):
            edits.append((start, start + len(group.text), f"{{ {block} {group.text} }}"))
        else:
            edits.append((start + 1, start + 1, f" {block} "))
    for begin, end, new in sorted(edits, reverse=True):
        text = text[:begin] + new + text[end:]
    return text
