"""Did-you-mean suggestions for a misspelt word (a keyword, a window unit, a policy): the
closest of the words that were possible there, found with difflib, and only when close."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

#: how alike a word and a suggestion must be (difflib's ratio): one letter wrong, missing or
#: extra in a word of 3 letters or more (``SEK`` for SEQ is 0.67, ``WITHN`` for WITHIN 0.91)
CUTOFF = 0.66


def did_you_mean(word: str, candidates: Iterable[str]) -> str | None:
    """The candidate closest to ``word`` (compared case-insensitively), if it is close enough
    and not ``word`` itself; None otherwise."""
    by_key = {c.upper(): c for c in candidates}
    key = word.upper()
    if key in by_key:
        return None
    found = difflib.get_close_matches(key, sorted(by_key), n=1, cutoff=CUTOFF)
    return by_key[found[0]] if found else None


def hint(word: str, candidates: Iterable[str]) -> str:
    """``"; did you mean X?"`` to end a message about ``word`` with, or nothing."""
    suggestion = did_you_mean(word, candidates)
    return f"; did you mean {suggestion}?" if suggestion else ""
