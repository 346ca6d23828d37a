"""Ordering (< > <= >=) as the SPARQL 1.1 text has it, for the run functions
(``spaseq:min``/``max``). GPM FILTERs do not use it: the native core follows pyoxigraph
(docs/decisions.md 23), which orders lang strings with the same tag, makes booleans and NaN
unordered (an error; SPARQL: op:boolean-less-than, and false for NaN) and compares identical
terms of any kind equal (``<http://a> <= <http://a>`` is true; SPARQL: an error).
"""

from __future__ import annotations

from typing import cast

from spaseq.engine.values.kinds import (
    K_BOOL,
    K_DBL,
    K_DT,
    K_STR,
    ExprError,
)
from spaseq.engine.values.literals import INFO_CACHE, info_slow
from spaseq.engine.values.numbers import promote
from spaseq.engine.values.xsd_datetime import DateTime, datetime_compare


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
        if ka == K_STR:  # the kind says which type the values have
            s, t = cast(str, va), cast(str, vb)
            return (s > t) - (s < t)
        if ka == K_BOOL:
            p, q = cast(bool, va), cast(bool, vb)
            return (p > q) - (p < q)
        if ka == K_DT:
            return datetime_compare(cast(DateTime, va), cast(DateTime, vb))
    raise ExprError("operands cannot be ordered")
