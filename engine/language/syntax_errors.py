"""A syntax error of a SPAseq query said as a person would: a bracket never closed, or one
that closes nothing, named with where it was opened; a misspelt keyword with "did you mean";
otherwise what may come there, grouped (a variable, an operator, a keyword ...) and short.

The query is parsed again token by token (lark's interactive LALR parser), keeping the
parser's state before the offending token: LALR may reduce on a token it then rejects, so the
state lark reports with its error can accept less than the state before, and its "expected"
set (an LALR state's lookaheads, merged across contexts) names tokens that cannot come there.
What can come is what that state ``accepts()``.
"""

from __future__ import annotations

import re
from copy import copy
from dataclasses import dataclass
from functools import cache
from typing import Any

from lark import Lark, Token, UnexpectedCharacters, UnexpectedInput, UnexpectedToken
from lark.parsers.lalr_interactive_parser import InteractiveParser

from spaseq.engine.errors import Location, QueryError
from spaseq.engine.language.suggest import did_you_mean

__all__ = ["describe", "expected_list"]

#: opening bracket terminals and the terminal that closes each
_CLOSER_OF = {"LBRACE": "RBRACE", "LPAR": "RPAR", "LSQB": "RSQB"}
_OPENER_OF = {v: k for k, v in _CLOSER_OF.items()}
_CHAR = {"LBRACE": "{", "RBRACE": "}", "LPAR": "(", "RPAR": ")", "LSQB": "[", "RSQB": "]"}
#: how the regex terminals that are punctuation are written
_TEXT = {"NIL": "()", "ANON": "[]"}

_VARIABLE = {"VAR1", "VAR2"}
_IRI = {"IRIREF", "PNAME_LN", "PNAME_NS"}
_NUMBERS = {f"{kind}{sign}" for kind in ("INTEGER", "DECIMAL", "DOUBLE") for sign in ("", "_POSITIVE", "_NEGATIVE")}
_LITERAL = {"STRING_LITERAL1", "STRING_LITERAL2", "STRING_LITERAL_LONG1", "STRING_LITERAL_LONG2", "TRUE",
            "FALSE"} | _NUMBERS
_BLANK = {"BLANK_NODE_LABEL", "ANON", "LSQB", "LPAR", "NIL"}  # '(' and '[' open collections and [ ... ]
#: tokens that may follow a closed bracket as readily as a missing operator or separator
_TERMS = _VARIABLE | _IRI | _LITERAL | {"BLANK_NODE_LABEL", "ANON", "NIL", "NAME"}
_FUNCTION = {"BUILTIN", "AGGREGATE", "BOUND", "EXISTS", "GROUP_CONCAT"}
_EXPRESSION = _VARIABLE | _IRI | _LITERAL | _FUNCTION | {"BANG", "PLUS", "MINUS", "LPAR", "NIL", "NOT"}
_EXPRESSION_OPERATORS = {"REL_OP", "IN", "NOT", "PLUS", "MINUS", "STAR", "SLASH"}  # and && ||: _logical
_MODIFIERS = {"PLUS", "STAR", "QMARK", "BANG", "LBRACE"}
_PATH_OPERATORS = {"PLUS", "STAR", "QMARK", "SLASH", "VBAR"}

#: the labels of groups, in the order an "expected" list names them
_ORDER = ("an expression", "a triple pattern", "a variable", "an IRI", "a literal", "a number", "a whole number",
          "a blank node",
          "a function call", "a name", "an operator", "a sequence operator (',', ';' or ':')",
          "a modifier (+, *, ?, ! or {m,n})", "a path operator", "a language tag")
_NAMED = {"NAME": "a name", "LANGTAG": "a language tag", "SEQ_OP": "a sequence operator (',', ';' or ':')",
          "REL_OP": "an operator", **dict.fromkeys(_VARIABLE, "a variable"), **dict.fromkeys(_IRI, "an IRI"),
          **dict.fromkeys(_LITERAL, "a literal"), **dict.fromkeys(_FUNCTION - {"BOUND", "EXISTS"}, "a function call")}
#: keywords an "expected" list names first when it cannot name them all
_COMMON = ("WHERE", "FROM", "WITHIN", "DEFINE", "FILTER", "OPTIONAL", "BIND", "SELECT", "PREFIX")
_MOST_KEYWORDS = 4
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass
class _Failure:
    """Where the replayed parse stopped: the error, the parser before the offending token (and
    before the one preceding it), and the tokens the parser took."""

    exc: UnexpectedInput
    before: InteractiveParser
    previous: InteractiveParser | None
    tokens: list[Token]


def describe(lark: Lark, exc: UnexpectedInput, text: str, file: str) -> QueryError:
    """The QueryError for lark's error ``exc`` in parsing ``text``, located in ``file``."""
    failure = _replay(lark, text)
    if failure is None or not isinstance(failure.exc, (UnexpectedCharacters, UnexpectedToken)):
        # the replay parsed, or failed otherwise: cannot happen with LALR, but never hide an error
        return QueryError(str(exc), Location(file, getattr(exc, "line", None), getattr(exc, "column", None)))
    exc = failure.exc
    accepted = failure.before.accepts()
    if isinstance(exc, UnexpectedCharacters):
        pos: int = exc.pos_in_stream or 0
        char = text[pos] if pos < len(text) else ""
        if char and char in "'\"":  # a string the lexer could not end: its closing quote is missing
            back = 2 if text[max(pos - 2, 0):pos] == char * 2 else 0  # '' was lexed before '...
            said = f"this {char * 3} opens a string that is never closed" if back or text.startswith(
                char * 3, pos) else f"this {char} opens a string that is not closed on its line"
            start = pos - back
            return QueryError(said, Location(file, text.count("\n", 0, start) + 1, start - text.rfind("\n", 0, start)))
        tail = f"; expected {expected_list(lark, accepted)}" if accepted else ""
        return QueryError(f"unexpected character {char!r}{tail}", Location(file, exc.line, exc.column))
    token = exc.token
    at_end = token.type == "$END"
    if at_end:
        lines = text.splitlines() or [""]
        where = Location(file, len(lines), len(lines[-1]) + 1)
        unexpected = "unexpected end of query"
    else:
        where = Location(file, token.line, token.column)
        shown = token.value if len(token.value) <= 40 else token.value[:37] + "..."
        unexpected = f"unexpected {shown!r}"
    return QueryError(_message(lark, failure, token, accepted, unexpected), where)


def _message(lark: Lark, failure: _Failure, token: Token, accepted: set[str], unexpected: str) -> str:
    """What is wrong at ``token``, in the first of these that applies: a bracket left open, a
    bracket that closes nothing, a misspelt keyword, chained comparisons, an IRI that does not
    end, text after the end of the query, text after a bracket that closed too early, or what
    may come there."""
    opened, closed = _brackets(failure.tokens)
    missing = None if token.type in _TERMS else _missing_closer(failure.before, opened, token)
    if missing is not None:
        closer = _CHAR[_CLOSER_OF[missing.type]]
        place = "at the end of the query" if token.type == "$END" else f"before {token.value!r}"
        return f"{_CHAR[missing.type]!r} opened at {_at(missing)} is never closed (a {closer!r} is missing {place})"
    if token.type in _OPENER_OF and not any(o.type == _OPENER_OF[token.type] for o in opened):
        return f"this {token.value!r} closes nothing{_last_closed(closed, _OPENER_OF[token.type])}"
    if _WORD.fullmatch(token.value):
        suggestion = did_you_mean(token.value, _keywords(lark, accepted))
        if suggestion is not None:
            return f"{unexpected}; did you mean {suggestion}?"
    if token.type in ("REL_OP", "IN") and accepted & _logical(lark) and "REL_OP" not in accepted:
        return f"{unexpected}: comparisons do not chain; put the first in parentheses, as in (?a < ?b) = true"
    if token.value == "<" and "IRIREF" in accepted:  # lexed as less-than: no IRI ends there
        return "this '<' starts an IRI that does not end: an IRI is <...>, with no space in it"
    if accepted == {"$END"}:
        return f"{unexpected} after the end of the query{_last_closed(closed, None)}"
    early = _closed_too_early(failure, closed, token)
    if early is not None:
        return early
    return f"{unexpected}; expected {expected_list(lark, accepted)}"


def _replay(lark: Lark, text: str) -> _Failure | None:
    """Parse ``text`` again a token at a time, up to the error."""
    ip = lark.parse_interactive(text)
    tokens: list[Token] = []
    previous: InteractiveParser | None = None
    lexed = ip.lexer_thread.lex(ip.parser_state)
    while True:
        try:
            token = next(lexed)
        except StopIteration:
            break
        except UnexpectedInput as exc:  # the lexer: no terminal there, or one the state does not take
            return _Failure(exc, ip, previous, tokens)
        before = ip.copy(deepcopy_values=False)
        try:
            ip.feed_token(token)
        except UnexpectedToken as exc:
            return _Failure(exc, before, previous, tokens)
        tokens.append(token)
        previous = before
    before = ip.copy(deepcopy_values=False)
    try:
        ip.feed_eof(tokens[-1] if tokens else None)
    except UnexpectedToken as exc:
        return _Failure(exc, before, previous, tokens)
    return None


def _brackets(tokens: list[Token]) -> tuple[list[Token], list[tuple[Token, Token]]]:
    """The brackets still open after ``tokens`` (innermost last) and the (opener, closer) pairs
    closed, in the order they closed (the grammar nests them: what the parser took is balanced)."""
    opened: list[Token] = []
    closed: list[tuple[Token, Token]] = []
    for token in tokens:
        if token.type in _CLOSER_OF:
            opened.append(token)
        elif token.type in _OPENER_OF and opened:
            closed.append((opened.pop(), token))
    return opened, closed


def _trial(ip: InteractiveParser) -> InteractiveParser:
    """A copy of ``ip`` to feed made-up tokens to, building no trees."""
    trial = ip.copy(deepcopy_values=False)
    conf = copy(trial.parser_state.parse_conf)
    conf.callbacks = {}
    trial.parser_state.parse_conf = conf
    return trial


def _missing_closer(before: InteractiveParser, opened: list[Token], token: Token) -> Token | None:
    """The innermost open bracket if closing it (and, if need be, the ones around it) lets the
    parser take ``token``: that bracket's closer is missing before ``token``."""
    trial = _trial(before)
    for opener in reversed(opened):
        closer = _CLOSER_OF[opener.type]
        if closer not in trial.accepts():
            return None
        trial.feed_token(Token(closer, _CHAR[closer]))
        if token.type in trial.accepts():
            return opened[-1]
    return None


def _closed_too_early(failure: _Failure, closed: list[tuple[Token, Token]], token: Token) -> str | None:
    """When the token before ``token`` is a closing bracket and the parser would have taken
    ``token`` without it: that bracket closed too early (or is one too many)."""
    if not failure.tokens or failure.previous is None or not closed or closed[-1][1] is not failure.tokens[-1]:
        return None
    opener, closer = closed[-1]
    if token.type not in failure.previous.accepts():
        return None
    what = "the end of the query" if token.type == "$END" else repr(token.value)
    return (f"unexpected {what} after the {closer.value!r} at {_at(closer)}, which closes the "
            f"{opener.value!r} opened at {_at(opener)}: is that {closer.value!r} one too many?")


def _last_closed(closed: list[tuple[Token, Token]], kind: str | None) -> str:
    """`` (the '{' opened at 4:7 was closed at 6:33)``: the last bracket of ``kind`` (any if
    None) closed, which may be where one too many was written; empty if there is none."""
    for opener, closer in reversed(closed):
        if kind is None or opener.type == kind:
            return f" (the {opener.value!r} opened at {_at(opener)} was closed at {_at(closer)})"
    return ""


def _at(token: Token) -> str:
    return f"{token.line}:{token.column}"


# ---------------------------------------------------------------- what may come


def expected_list(lark: Lark, names: set[str]) -> str:
    """The terminals ``names`` as a short phrase: groups for what has many spellings (a
    variable, an IRI, a literal, an operator, an expression, a triple pattern), keywords bare
    (only a few of them when there are many), punctuation quoted, in a fixed order."""
    names = set(names)
    groups: set[str] = set()
    if "BUILTIN" in names:  # the start of an expression
        names -= _EXPRESSION
        groups.add("an expression")
    if "BLANK_NODE_LABEL" in names:  # a term: '(' and '[' start a collection or a [ ... ] node
        names -= _BLANK
        groups.add("a blank node")
        if names >= _VARIABLE and "FILTER" in names and names & _IRI and names & _LITERAL:
            names -= _VARIABLE | _IRI | _LITERAL
            groups = (groups - {"a blank node"}) | {"a triple pattern"}
    if names & (_logical(lark) | {"REL_OP", "IN"}):
        groups.add("an operator")
        names -= _EXPRESSION_OPERATORS | _logical(lark)
    elif "SEQ_OP" in names and len(names & _MODIFIERS) > 1:
        groups.add("a modifier (+, *, ?, ! or {m,n})")
        names -= _MODIFIERS
    elif names & {"SLASH", "VBAR"} and names & _PATH_OPERATORS and names & (_IRI | _VARIABLE):
        groups.add("a path operator")
        names -= _PATH_OPERATORS
    if names & _LITERAL and names & _LITERAL <= _NUMBERS:  # a number, not any literal
        groups.add("a whole number" if names & _LITERAL == {"INTEGER"} else "a number")
        names -= _NUMBERS
    keywords: set[str] = set()
    punctuation: list[str] = []
    for name in sorted(names):
        if name in _NAMED:
            groups.add(_NAMED[name])
        elif name == "$END":
            continue
        elif words := _keywords(lark, {name}):
            keywords.update(w.upper() for w in words)
        else:
            punctuation.append(f"{_spelling(lark, name)!r}".replace('"', "'"))
    items = [g for g in _ORDER if g in groups]
    ranked = sorted(keywords, key=lambda k: (_COMMON.index(k) if k in _COMMON else len(_COMMON), k))
    if len(ranked) > _MOST_KEYWORDS:
        items.append(f"a keyword ({', '.join(ranked[:3])}, ...)")
    else:
        items.extend(ranked)
    items.extend(sorted(punctuation, key=_punctuation_order))
    if "$END" in names:
        items.append("the end of the query")
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} or {items[-1]}"


def _punctuation_order(quoted: str) -> tuple[int, str]:
    """Separators first, then openers, then closers (the last thing a list says)."""
    char = quoted.strip("'")
    return (2 if char in ")}]" else 1 if char in "({[" else 0, char)


def _spelling(lark: Lark, name: str) -> str:
    """How punctuation terminal ``name`` is written (its name if it has no one spelling)."""
    if name in _TEXT:
        return _TEXT[name]
    try:
        pattern = lark.get_terminal(name).pattern
    except KeyError:
        return name
    return str(pattern.value) if pattern.type == "str" else name


@cache
def _logical(lark: Lark) -> frozenset[str]:
    """The terminals of ``&&`` and ``||`` (lark names them itself)."""
    return frozenset(t.name for t in lark.terminals if t.pattern.type == "str" and t.pattern.value in ("&&", "||"))


def _keywords(lark: Lark, accepted: set[str]) -> list[str]:
    """The words that may come where ``accepted`` terminals may: keywords, the built-in
    function names, ASC/DESC (not true/false: a word where a term may come is more likely a
    misspelt name than a misspelt boolean)."""
    words: list[str] = []
    for name in accepted - {"TRUE", "FALSE"}:
        try:
            pattern: Any = lark.get_terminal(name).pattern
        except KeyError:
            continue
        value = pattern.value
        if pattern.type == "str":
            if _WORD.fullmatch(value) and value != "a":
                words.append(value)
        else:
            alternation = re.match(r"\(?([A-Za-z_]+(?:\|[A-Za-z_0-9]+)*)\)?(?:\(\?[=!]|$)", value)
            if alternation:
                words.extend(alternation.group(1).split("|"))
    return words
