"""The prologue of a plain SPARQL query (``BASE`` and ``PREFIX`` declarations, with comments
between): the prefixes ``spaseq kb query``'s table shortens IRIs with, as ``spaseq run``'s
table uses a SPAseq query's (which the grammar reads with the rest of the query). Read with
the SPAseq grammar's tokens (the prologue is SPARQL's there), up to the first token that is
not a declaration's."""

from __future__ import annotations

from lark import UnexpectedInput

from spaseq.engine.language.parser import lark_parser

__all__ = ["sparql_prefixes"]

#: the tokens of BASE and PREFIX declarations in the grammar (spaseq.lark's ``prologue``)
_DECLARATION = {"BASE", "PREFIX", "PNAME_NS", "IRIREF"}


def sparql_prefixes(text: str) -> dict[str, str]:
    """The prefixes ``text``'s prologue declares, in order (a later one of a name wins), up to
    the first thing that is not a declaration. The query is assumed to parse (pyoxigraph read
    it first): a prologue this cannot read gives the prefixes before it."""
    prefixes: dict[str, str] = {}
    name: str | None = None  # a PREFIX's name, until its IRI
    try:
        for token in lark_parser().parse_interactive(text).iter_parse():
            if token.type not in _DECLARATION:
                break
            if token.type == "PNAME_NS":
                name = str(token)[:-1]
            elif token.type == "IRIREF" and name is not None:
                prefixes[name] = str(token)[1:-1]
                name = None
    except UnexpectedInput:
        pass
    return prefixes
