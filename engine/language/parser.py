"""SPAseq text to syntax tree (lark, LALR), with errors that name FILE:LINE:COLUMN (said by
``syntax_errors``)."""

from __future__ import annotations

from functools import lru_cache
from importlib import resources

from lark import Lark, Tree, UnexpectedInput

from spaseq.engine.language.lexer import SharedPatternContextualLexer


def build_lark(*, shared_patterns: bool = True) -> Lark:
    """The LALR parser of the SPAseq grammar; ``shared_patterns=False`` gives lark's own lexer
    (the tests compare the two)."""
    grammar = resources.files("spaseq.engine.language").joinpath("spaseq.lark").read_text(encoding="utf-8")
    plugins = {"ContextualLexer": SharedPatternContextualLexer} if shared_patterns else {}
    return Lark(
        grammar,
        parser="lalr",
        lexer="contextual",
        propagate_positions=True,
        maybe_placeholders=False,
        regex=True,  # the grammar's character classes need the `regex` module
        cache=True,  # grammar analysis cached in the temp dir (lark rebuilds it if unusable)
        _plugins=plugins,
    )


@lru_cache(maxsize=1)
def lark_parser() -> Lark:
    """The SPAseq grammar's parser, built once (``parse_tree``'s, and the reader of a SPARQL
    prologue's, ``prologue``, which reads it with the grammar's own terminals)."""
    return build_lark()


def parse_tree(text: str, file: str = "<query>") -> Tree:
    """Parse SPAseq text; raise QueryError at the offending line and column."""
    try:
        return lark_parser().parse(text)
    except UnexpectedInput as exc:
        from spaseq.engine.language.syntax_errors import describe  # only a failed parse needs it

        raise describe(lark_parser(), exc, text, file) from None
