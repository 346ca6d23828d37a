"""SPAseq text to syntax tree (lark, LALR), with errors that name FILE:LINE:COLUMN."""

from __future__ import annotations

from functools import lru_cache
from importlib import resources

from lark import Lark, Tree, UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from spaseq.engine.errors import Location, QueryError
from spaseq.engine.language.lexer import SharedPatternContextualLexer

# Readable names for the grammar's regex terminals in "expected ..." messages.
_TERMINAL_NAMES = {
    "NAME": "a name",
    "VAR1": "a variable",
    "VAR2": "a variable",
    "IRIREF": "an IRI",
    "PNAME_LN": "a prefixed name",
    "PNAME_NS": "a prefixed name",
    "INTEGER": "a number",
    "DECIMAL": "a number",
    "DOUBLE": "a number",
    "STRING_LITERAL1": "a string",
    "STRING_LITERAL2": "a string",
    "STRING_LITERAL_LONG1": "a string",
    "STRING_LITERAL_LONG2": "a string",
    "BLANK_NODE_LABEL": "a blank node",
    "ANON": "a blank node",
    "NIL": "'()'",
    "LANGTAG": "a language tag",
    "BUILTIN": "a built-in function",
    "AGGREGATE": "an aggregate",
    "SEQ_OP": "',', ';' or ':'",
    "REL_OP": "a comparison",
    "PLUS": "'+'",
    "MINUS": "'-'",
    "QMARK": "'?'",
    "BANG": "'!'",
    "SLASH": "'/'",
    "INTEGER_POSITIVE": "a number",
    "DECIMAL_POSITIVE": "a number",
    "DOUBLE_POSITIVE": "a number",
    "INTEGER_NEGATIVE": "a number",
    "DECIMAL_NEGATIVE": "a number",
    "DOUBLE_NEGATIVE": "a number",
    "ORDER_DIR": "ASC or DESC",
    "A": "'a'",
    "TRUE": "true",
    "FALSE": "false",
    "STAR": "'*'",
    "$END": "end of query",
}


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
def _parser() -> Lark:
    return build_lark()


def _describe_terminal(name: str) -> str:
    if name in _TERMINAL_NAMES:
        return _TERMINAL_NAMES[name]
    try:
        term = _parser().get_terminal(name)
    except KeyError:
        return "end of query" if "END" in name else name
    pattern = term.pattern
    if pattern.type == "str":
        return repr(pattern.value).replace('"', "'")
    value = pattern.value
    for flag in ("(?i:", "(?i)"):
        value = value.replace(flag, "")
    return value.rstrip(")") if value.isupper() or value.strip("()").isalpha() else name


def expected_list(names: set[str]) -> str:
    described = sorted({_describe_terminal(n) for n in names})
    if len(described) > 12:
        described = described[:12] + ["..."]
    return ", ".join(described)


def parse_tree(text: str, file: str = "<query>") -> Tree:
    """Parse SPAseq text; raise QueryError at the offending line and column."""
    try:
        return _parser().parse(text)
    except UnexpectedInput as exc:
        raise _error(exc, text, file) from None


def _error(exc: UnexpectedInput, text: str, file: str) -> QueryError:
    line = getattr(exc, "line", None)
    column = getattr(exc, "column", None)
    if isinstance(exc, UnexpectedEOF) or (
        isinstance(exc, UnexpectedToken) and exc.token.type == "$END"
    ):
        lines = text.splitlines() or [""]
        line, column = len(lines), len(lines[-1]) + 1
        expected = exc.expected if isinstance(exc, UnexpectedEOF) else exc.expected
        return QueryError(
            f"unexpected end of query; expected {expected_list(set(expected))}",
            Location(file, line, column),
        )
    if isinstance(exc, UnexpectedToken):
        shown = exc.token.value if len(exc.token.value) <= 40 else exc.token.value[:37] + "..."
        return QueryError(
            f"unexpected {shown!r}; expected {expected_list(set(exc.expected))}",
            Location(file, line, column),
        )
    if isinstance(exc, UnexpectedCharacters):
        pos = exc.pos_in_stream
        char = text[pos] if pos is not None and pos < len(text) else ""
        allowed = set(exc.allowed or ())
        tail = f"; expected {expected_list(allowed)}" if allowed else ""
        return QueryError(f"unexpected character {char!r}{tail}", Location(file, line, column))
    return QueryError(str(exc), Location(file, line, column))
