"""Ordering (< > <= >=), equality (=) and effective boolean value as the SPARQL 1.1 text
has them: the ``dialects.SPEC`` table's entries (callers take them from the table).
"""

from __future__ import annotations

from spaseq.engine.values.kinds import (
    FAMILY_DATETIME,
    K_BAD,
    K_BOOL,
    K_DBL,
    K_DT,
    K_IRI,
    K_LANG,
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
