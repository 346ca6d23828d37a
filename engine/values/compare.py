"""Ordering (< > <= >=), equality (=) and effective boolean value, in each dialect's version.

The ``*_spec`` and ``*_oxigraph`` functions are the two columns of the dialect tables
(``dialects.SPEC``/``dialects.OXIGRAPH``): callers take them from a table, not from here.
"""

from __future__ import annotations

import math

from spaseq.engine.values.kinds import (
    FAMILY_DATETIME,
    K_BAD,
    K_BOOL,
    K_DBL,
    K_DT,
    K_IRI,
    K_LANG,
    K_OTHER,
    K_STR,
    ExprError,
)
from spaseq.engine.values.literals import INFO_CACHE, info_slow
from spaseq.engine.values.numbers import promote
from spaseq.engine.values.xsd_datetime import datetime_compare, datetime_equal


def _num_cmp(ka, va, kb, vb) -> int:
    """-1/0/1, or 2 when unordered (NaN)."""
    if ka != kb:
        _, va, vb = promote(ka, va, kb, vb)
    if va < vb:
        return -1
    if va > vb:
        return 1
    if va == vb:
        return 0
    return 2


def compare_spec(a, b) -> int:
    """Ordering for < > <= >= (SPARQL 1.1 operator table): -1/0/1, 2 when unordered (NaN);
    ExprError for operands without an order."""
    ka, va = INFO_CACHE.get(a) or info_slow(a)
    kb, vb = INFO_CACHE.get(b) or info_slow(b)
    if ka <= K_DBL and kb <= K_DBL:
        return _num_cmp(ka, va, kb, vb)
    if ka == kb:
        if ka == K_STR or ka == K_BOOL:
            return (va > vb) - (va < vb)
        if ka == K_DT:
            return datetime_compare(va, vb)
    raise ExprError("operands cannot be ordered")


def _same_value(ka, va, kb, vb) -> bool:
    """pyoxigraph's "same encoded term" shortcut before ordering."""
    if ka != kb:
        return False
    if ka == K_DT:
        return datetime_equal(va, vb)
    if va == vb:
        return True
    # pyoxigraph compares floating-point values bitwise here: NaN is NaN, but not -NaN
    return ka <= K_DBL and va != va and vb != vb and math.copysign(1.0, va) == math.copysign(1.0, vb)


def compare_oxigraph(a, b) -> int:
    """Ordering as pyoxigraph: identical values compare equal, NaN and booleans are not
    ordered (an error), lang strings with the same tag are."""
    ka, va = INFO_CACHE.get(a) or info_slow(a)
    kb, vb = INFO_CACHE.get(b) or info_slow(b)
    if _same_value(ka, va, kb, vb):
        return 0
    if ka <= K_DBL and kb <= K_DBL:
        c = _num_cmp(ka, va, kb, vb)
        if c == 2:
            raise ExprError("NaN is not ordered")
        return c
    if ka == kb:
        if ka == K_STR:
            return (va > vb) - (va < vb)
        if ka == K_LANG and va[1] == vb[1]:
            return (va[0] > vb[0]) - (va[0] < vb[0])
        if ka == K_DT:
            return datetime_compare(va, vb)
    raise ExprError("operands cannot be ordered")


def equal_spec(a, b) -> bool:
    """``=`` (SPARQL 1.1 17.3 and RDFterm-equal 17.4.1.7)."""
    ka, va = INFO_CACHE.get(a) or info_slow(a)
    kb, vb = INFO_CACHE.get(b) or info_slow(b)
    if ka == kb:
        if ka <= K_BOOL and ka != K_LANG or ka >= K_IRI:
            return va == vb
        if ka == K_DT:
            return datetime_equal(va, vb)
        if va == vb:  # K_LANG, K_OTHER, K_BAD: the same term
            return True
        raise ExprError("literals of unknown equality")
    if ka <= K_DBL and kb <= K_DBL:
        return _num_cmp(ka, va, kb, vb) == 0
    if ka >= K_IRI or kb >= K_IRI:
        return False
    raise ExprError("literals of unknown equality")


def equal_oxigraph(a, b) -> bool:
    """``=`` as pyoxigraph: literals of different known types are unequal, not an error."""
    ka, va = INFO_CACHE.get(a) or info_slow(a)
    kb, vb = INFO_CACHE.get(b) or info_slow(b)
    if ka == kb:
        if ka == K_DT:
            return datetime_equal(va, vb)
        if ka == K_OTHER or ka == K_BAD:
            if va == vb:
                return True
            raise ExprError("literals of unknown equality")
        return va == vb
    if ka <= K_DBL and kb <= K_DBL:
        return _num_cmp(ka, va, kb, vb) == 0
    if ka >= K_IRI or kb >= K_IRI or ka == K_LANG or kb == K_LANG:
        return False
    if ka >= K_OTHER or kb >= K_OTHER:
        raise ExprError("literals of unknown equality")
    return False


def ebv_spec(v) -> bool:
    """Effective boolean value (SPARQL 1.1 17.2.2)."""
    if v is True or v is False:
        return v
    k, x = INFO_CACHE.get(v) or info_slow(v)
    if k <= K_DBL:
        return not (x == 0 or x != x)
    if k == K_STR:
        return x != ""
    if k == K_BOOL:
        return x
    if k == K_LANG:  # a "plain literal" in the SPARQL 1.1 text
        return x[0] != ""
    if k == K_BAD and x[0] != FAMILY_DATETIME:  # ill-typed numeric/boolean: false
        return False
    raise ExprError("no effective boolean value")


def ebv_oxigraph(v) -> bool:
    """Effective boolean value as pyoxigraph: an error for lang strings and ill-typed literals."""
    if v is True or v is False:
        return v
    k, x = INFO_CACHE.get(v) or info_slow(v)
    if k <= K_DBL:
        return not (x == 0 or x != x)
    if k == K_STR:
        return x != ""
    if k == K_BOOL:
        return x
    raise ExprError("no effective boolean value")
