"""lark's contextual lexer with each terminal's pattern compiled once per process.

lark's contextual lexer compiles, for every parser state a query reaches, one alternation of all
the terminals that state accepts: ~30 large alternations for a small query, most of a
``spaseq run``'s start-up. An alternation tries its branches in order and the first that
matches wins, so trying the state's terminals one by one, in lark's order, with one compiled
pattern per terminal shared by every state, gives the same tokens. Plugged in through lark's
``_plugins`` hook (the one lark-cython uses); the tokens are tested against lark's own lexer.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

from lark.lexer import (
    BasicLexer,
    CallChain,
    ContextualLexer,
    PatternRE,
    PatternStr,
    Scanner,
    TerminalDef,
    TextSlice,
    UnlessCallback,
)

__all__ = ["SharedPatternContextualLexer"]


@cache
def _compiled(re_module: Any, regexp: str, flags: int) -> Any:
    """One compiled pattern per terminal regexp, shared by every state's scanner."""
    return re_module.compile(regexp, flags)


class _OrderedScanner(Scanner):
    """A scanner that tries its terminals in order instead of compiling their alternation."""

    _ordered: list[tuple[str, Any]]

    def _build_mres(self, terminals: Sequence[TerminalDef], max_size: int) -> list[Any]:
        self._ordered = [
            (t.name, _compiled(self.re_, t.pattern.to_regexp(), self.g_regex_flags)) for t in terminals
        ]
        return []

    def match(self, text: TextSlice, pos: int) -> tuple[str, str] | None:
        for name, pattern in self._ordered:
            found = pattern.match(text.text, pos, text.end)
            if found:
                return found.group(0), name
        return None

    def fullmatch(self, text: str) -> str | None:
        for name, pattern in self._ordered:
            if pattern.fullmatch(text):
                return name
        return None


@cache
def _str_matched_by(re_module: Any, regexp: str, value: str, flags: int) -> bool:
    """Whether a regex terminal matches a string terminal's whole text (a keyword it spells)."""
    found = _compiled(re_module, regexp, flags).match(value)
    return found is not None and found.group(0) == value


class _SharedPatternBasicLexer(BasicLexer):
    """lark's basic lexer (one per parser state) over an ``_OrderedScanner``."""

    def _build_scanner(self) -> Scanner:
        terminals, self.callback = self._unless(list(self.terminals))
        for type_, f in self.user_callbacks.items():
            if type_ in self.callback:
                self.callback[type_] = CallChain(self.callback[type_], f, lambda t, type_=type_: t.type == type_)
            else:
                self.callback[type_] = f
        return _OrderedScanner(terminals, self.g_regex_flags, self.re, self.use_bytes)

    def _unless(self, terminals: list[TerminalDef]) -> tuple[list[TerminalDef], dict[str, Any]]:
        """lark's ``_create_unless``: a keyword that a regex terminal also matches is recognised
        by a callback on that terminal (and dropped from the scanner when the regex covers it)."""
        strs = [t for t in terminals if isinstance(t.pattern, PatternStr)]
        embedded: set[str] = set()
        callback: dict[str, Any] = {}
        for retok in terminals:
            if not isinstance(retok.pattern, PatternRE):
                continue
            unless = [
                s for s in strs
                if s.priority == retok.priority
                and _str_matched_by(self.re, retok.pattern.to_regexp(), s.pattern.value, self.g_regex_flags)
            ]
            embedded.update(s.name for s in unless if frozenset(s.pattern.flags) <= frozenset(retok.pattern.flags))
            if unless:
                callback[retok.name] = UnlessCallback(
                    _OrderedScanner(unless, self.g_regex_flags, self.re, self.use_bytes)
                )
        return [t for t in terminals if t.name not in embedded], callback


class SharedPatternContextualLexer(ContextualLexer):
    """lark's contextual lexer whose per-state lexers share compiled terminal patterns."""

    BasicLexer = _SharedPatternBasicLexer
