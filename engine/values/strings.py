"""String functions: CONTAINS, STRSTARTS, STRENDS, STRLEN, UCASE, LCASE, SUBSTR, CONCAT,
LANGMATCHES, and the string arguments they accept."""

from __future__ import annotations

from spaseq.engine.values.kinds import K_INT, K_LANG, K_STR, ExprError, LangStr
from spaseq.engine.values.literals import INFO_CACHE, info_slow


def string_arg(v) -> tuple[str, str | None]:
    """(text, language or None) of a string literal; ExprError for anything else."""
    k, x = INFO_CACHE.get(v) or info_slow(v)
    if k == K_STR:
        return x, None  # type: ignore[return-value]
    if k == K_LANG:
        return x[0], x[1]  # type: ignore[index]
    raise ExprError("not a string literal")


def simple_arg(v) -> str:
    """The text of a simple literal (or xsd:string); ExprError for anything else."""
    k, x = INFO_CACHE.get(v) or info_slow(v)
    if k != K_STR:
        raise ExprError("not a simple literal")
    return x  # type: ignore[return-value]


def _compatible(a, b) -> tuple[str, str]:
    ta, la = string_arg(a)
    tb, lb = string_arg(b)
    if lb is not None and la != lb:
        raise ExprError("incompatible string arguments")
    return ta, tb


def fn_contains(a, b) -> bool:
    ta, tb = _compatible(a, b)
    return tb in ta


def fn_strstarts(a, b) -> bool:
    ta, tb = _compatible(a, b)
    return ta.startswith(tb)


def fn_strends(a, b) -> bool:
    ta, tb = _compatible(a, b)
    return ta.endswith(tb)


def _like(text: str, lang: str | None):
    return text if lang is None else LangStr(text, lang)


def fn_strlen(v) -> int:
    return len(string_arg(v)[0])


def fn_ucase(v):
    text, lang = string_arg(v)
    return _like(text.upper(), lang)


def fn_lcase(v):
    text, lang = string_arg(v)
    return _like(text.lower(), lang)


def _integer_arg(v) -> int:
    k, x = INFO_CACHE.get(v) or info_slow(v)
    if k != K_INT:
        raise ExprError("not an integer")
    return x  # type: ignore[return-value]


def fn_substr(s, start, length=None):
    text, lang = string_arg(s)
    b = _integer_arg(start)
    if length is None:
        return _like(text[max(b, 1) - 1 :], lang)
    e = b + _integer_arg(length)
    lo = max(b, 1) - 1
    hi = e - 1
    return _like(text[lo:hi] if hi > lo else "", lang)


def fn_concat(*args):
    texts = []
    lang: str | None = None
    same = True
    for i, a in enumerate(args):
        t, la = string_arg(a)
        texts.append(t)
        if i == 0:
            lang = la
        elif la != lang:
            same = False
    text = "".join(texts)
    if args and same and lang is not None:
        return LangStr(text, lang)
    return text


def fn_langmatches(tag, rng) -> bool:
    t = simple_arg(tag)
    r = simple_arg(rng)
    if r == "*":
        return t != ""
    t, r = t.lower(), r.lower()
    return t == r or (t.startswith(r) and t[len(r)] == "-")
