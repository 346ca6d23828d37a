"""The shared-pattern contextual lexer (engine/language/lexer.py) against lark's own: the same
trees for every query in the repository, and the same tree or the same error (kind, position,
expected terminals) for generated token soups."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lark import Lark, Tree, UnexpectedInput

from spaseq.engine.language.parser import build_lark

ROOT = Path(__file__).resolve().parents[2]
QUERY_FILES = sorted(
    p for folder in ("fixtures", "benchmarks/queries", "examples") if (ROOT / folder).exists()
    for p in (ROOT / folder).rglob("*.rq")
)


@lru_cache(maxsize=2)
def parser(shared: bool) -> Lark:
    return build_lark(shared_patterns=shared)


def outcome(shared: bool, text: str) -> Tree | tuple:
    try:
        return parser(shared).parse(text)
    except UnexpectedInput as exc:
        expected = getattr(exc, "expected", None) or getattr(exc, "allowed", None) or ()
        return (type(exc).__name__, exc.line, exc.column, frozenset(expected))


def test_the_repository_has_queries_to_compare() -> None:
    assert len(QUERY_FILES) >= 10


@pytest.mark.parametrize("path", QUERY_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_query_file_gives_lark_s_own_tree(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    mine = outcome(True, text)
    assert isinstance(mine, Tree), mine
    assert mine == outcome(False, text)


# Tokens that meet in SPAseq: keywords in any case, names that start like keywords, prefixed
# names and ':' (skip-till-any or a prefix), '<' (an IRI or less-than), numbers, strings, tags.
TOKENS = [
    "PREFIX", "prefix", "BASE", "SELECT", "select", "DISTINCT", "CONSTRUCT", "WITHIN", "MINUTES",
    "SECONDS", "TUMBLING", "PARTITION", "BY", "FROM", "STREAM", "WHERE", "SEQ", "seq", "DEFINE",
    "GPM", "ON", "FILTER", "OPTIONAL", "UNION", "MINUS", "GRAPH", "BIND", "AS", "VALUES", "UNDEF",
    "a", "A", "B", "C", "S", "S1", "ON1", "selected", "seqs", "true", "false", "NOT", "IN", "EXISTS",
    "?x", "?p1", "$y", "ex:", ":", "ex:p", ":p", "ex:a.b", "_:b1", "[]", "()", "<http://e/x>",
    "<", "<=", ">", "=", "!=", "&&", "||", "!", "+", "-", "*", "/", "^^", "^", "|", "&", ",", ";",
    ".", "?", "{", "}", "(", ")", "[", "]", "1", "-2", "+3", "1.5", ".5", "1e3", "2E-2", "'s'",
    '"t"', '"""u"""', "@en", "@en-GB", "xsd:integer", "COUNT", "SUM", "STR", "REGEX", "#c\n", "\n",
]

PREFIX = "PREFIX ex: <http://e/>\nPREFIX : <http://d/>\n"
SHELL = "SELECT * WITHIN 5 MINUTES FROM STREAM S <http://s> WHERE { SEQ(A, B) DEFINE GPM A ON S { "


@settings(max_examples=400, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(TOKENS), max_size=30), st.sampled_from(["", PREFIX, PREFIX + SHELL]))
def test_token_soups_give_lark_s_own_tree_or_error(tokens: list[str], head: str) -> None:
    text = head + " ".join(tokens)
    assert outcome(True, text) == outcome(False, text)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.lists(st.sampled_from(TOKENS), max_size=12))
def test_group_pattern_soups_inside_a_whole_query(tokens: list[str]) -> None:
    text = PREFIX + SHELL + " ".join(tokens) + " } DEFINE GPM B ON S { ?x ex:p ?y } }"
    assert outcome(True, text) == outcome(False, text)
