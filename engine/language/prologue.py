"""The prologue of a plain SPARQL query (``BASE`` and ``PREFIX`` declarations, with comments
between): the prefixes ``spaseq kb query``'s table shortens IRIs with, as ``spaseq run``'s
table uses a SPAseq query's (which the grammar reads with the rest of the query)."""

from __future__ import annotations

import re

__all__ = ["sparql_prefixes"]

#: white space and comments, a BASE declaration, or a PREFIX declaration (SPARQL 1.1 §19.8:
#: keywords in any case; PNAME_NS is a prefix then a colon, IRIREF has no white space)
_SKIP = re.compile(r"(?:\s+|#[^\n]*)+")
_BASE = re.compile(r"BASE\s*<[^<>\"{}|^`\\\s]*>", re.I)
_PREFIX = re.compile(r"PREFIX\s+([^\s:#]*):\s*<([^<>\"{}|^`\\\s]*)>", re.I)


def sparql_prefixes(text: str) -> dict[str, str]:
    """The prefixes ``text``'s prologue declares, in order (a later one of a name wins), up to
    the first thing that is not a declaration. The query is assumed to parse (pyoxigraph read
    it first): a prologue this cannot read gives the prefixes before it."""
    prefixes: dict[str, str] = {}
    at = 0
    while True:
        skipped = _SKIP.match(text, at)
        if skipped:
            at = skipped.end()
        if base := _BASE.match(text, at):
            at = base.end()
        elif prefix := _PREFIX.match(text, at):
            prefixes[prefix.group(1)] = prefix.group(2)
            at = prefix.end()
        else:
            return prefixes
