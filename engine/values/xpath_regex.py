"""XPath regular expressions (REGEX's patterns and flags) translated to Python's ``re``, for the
subset whose meaning is the same in both."""

from __future__ import annotations

import re

from spaseq.engine.values.kinds import ExprError
from spaseq.engine.values.strings import string_arg


class UnsupportedRegex(Exception):
    """An XPath regular expression this module does not translate (left to pyoxigraph)."""


_VALID_FLAGS = frozenset("smixq")
_CLASS_S = " \\t\\n\\r"


def _class_char(c: str) -> str:
    return c if c.isalnum() else f"\\U{ord(c):08x}"


def _strip_x(pattern: str) -> str:
    """The x flag: whitespace removed outside character classes (XPath F&O 3.1 5.6.1.1)."""
    out = []
    depth = 0
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if c == "[":
            depth += 1
        elif c == "]" and depth:
            depth -= 1
        if depth or c not in " \t\n\r":
            out.append(c)
        i += 1
    return "".join(out)


def translate_regex(pattern: str, flags: str) -> re.Pattern:
    """An XPath/XSD regular expression (with SPARQL flags) as a Python pattern.

    Raises ExprError for invalid flags and UnsupportedRegex for syntax outside the subset
    translated exactly (\\w, \\p{..}, class subtraction, back-references, ...)."""
    if any(f not in _VALID_FLAGS for f in flags):
        raise ExprError(f"invalid regex flags {flags!r}")
    pyflags = re.IGNORECASE if "i" in flags else 0
    if "q" in flags:
        return re.compile(re.escape(pattern), pyflags)
    if "x" in flags:
        pattern = _strip_x(pattern)
    dotall = "s" in flags
    multiline = "m" in flags
    out: list[str] = []
    i, n = 0, len(pattern)
    after_quantifier = False
    while i < n:
        c = pattern[i]
        quant = False
        if c == "\\":
            if i + 1 >= n:
                raise UnsupportedRegex("trailing backslash")
            e = pattern[i + 1]
            i += 2
            if e in "nrt\\|.-^?*+{}()[]$":
                out.append("\\" + e if e not in "nrt" else {"n": "\\n", "r": "\\r", "t": "\\t"}[e])
            elif e in "dD":
                out.append("\\" + e)
            elif e == "s":
                out.append(f"[{_CLASS_S}]")
            elif e == "S":
                out.append(f"[^{_CLASS_S}]")
            else:
                raise UnsupportedRegex(f"escape \\{e}")
        elif c == "[":
            j, cls = _translate_class(pattern, i)
            out.append(cls)
            i = j
        elif c == ".":
            out.append("(?s:.)" if dotall else "[^\\n\\r]")
            i += 1
        elif c == "^":
            out.append("^")
            i += 1
        elif c == "$":
            out.append("$" if multiline else "\\Z")
            i += 1
        elif c == "(":
            if pattern.startswith("(?:", i):
                out.append("(?:")
                i += 3
            elif pattern.startswith("(?", i):
                raise UnsupportedRegex("group extension")
            else:
                out.append("(")
                i += 1
        elif c in ")|":
            out.append(c)
            i += 1
        elif c in "*+?":
            if after_quantifier and c != "?":
                raise UnsupportedRegex("possessive quantifier")
            if after_quantifier and out[-1].endswith("?") and c == "?":
                raise UnsupportedRegex("double reluctant quantifier")
            out.append(c)
            i += 1
            quant = not after_quantifier
        elif c == "{":
            m = re.compile(r"\{([0-9]+)(,([0-9]*))?\}").match(pattern, i)
            if m is None or after_quantifier:
                raise UnsupportedRegex("bad quantifier")
            if m.group(3) and int(m.group(3)) < int(m.group(1)):
                raise UnsupportedRegex("bad quantifier range")
            out.append(m.group(0))
            i = m.end()
            quant = True
        elif c in "}]":
            raise UnsupportedRegex(f"unescaped {c}")
        else:
            out.append(re.escape(c))
            i += 1
        after_quantifier = quant
    try:
        return re.compile("".join(out), pyflags | (re.MULTILINE if multiline else 0))
    except re.error as exc:
        raise UnsupportedRegex(str(exc)) from None


def _translate_class(p: str, i: int) -> tuple[int, str]:
    """A character class starting at p[i] == '['; returns (end index, Python class)."""
    j = i + 1
    negated = j < len(p) and p[j] == "^"
    if negated:
        j += 1
    items: list[str] = []
    first = True
    while True:
        if j >= len(p):
            raise UnsupportedRegex("unterminated class")
        c = p[j]
        if c == "]":
            if first:
                raise UnsupportedRegex("empty class or unescaped ]")
            j += 1
            break
        if c == "[":
            raise UnsupportedRegex("nested class / subtraction")
        if c == "-" and j + 1 < len(p) and p[j + 1] == "[":
            raise UnsupportedRegex("class subtraction")
        lo, j, esc = _class_atom(p, j)
        if esc is not None:
            items.append(esc)
        elif j + 1 < len(p) and p[j] == "-" and p[j + 1] != "]":
            hi, j2, esc2 = _class_atom(p, j + 1)
            if esc2 is not None or hi < lo:  # type: ignore[operator]
                raise UnsupportedRegex("bad range")
            items.append(f"{_class_char(lo)}-{_class_char(hi)}")  # type: ignore[arg-type]
            j = j2
        else:
            items.append(_class_char(lo))  # type: ignore[arg-type]
        first = False
    if not items:
        raise UnsupportedRegex("empty class")
    return j, "[" + ("^" if negated else "") + "".join(items) + "]"


def _class_atom(p: str, j: int) -> tuple[str | None, int, str | None]:
    """(char, next index, None) or (None, next index, class escape text)."""
    c = p[j]
    if c != "\\":
        return c, j + 1, None
    if j + 1 >= len(p):
        raise UnsupportedRegex("trailing backslash")
    e = p[j + 1]
    if e in "nrt":
        return {"n": "\n", "r": "\r", "t": "\t"}[e], j + 2, None
    if e in "\\|.-^?*+{}()[]$":
        return e, j + 2, None
    if e in "dD":
        return None, j + 2, "\\" + e
    if e == "s":
        return None, j + 2, _CLASS_S
    raise UnsupportedRegex(f"class escape \\{e}")


def regex_match(compiled: re.Pattern, text) -> bool:
    return compiled.search(string_arg(text)[0]) is not None

