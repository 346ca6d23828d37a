"""``+`` and ``/`` as the SPARQL 1.1 text has them, for the run functions (``spaseq:sum``/``avg``):
numeric promotion, decimals truncated to 18 fraction digits (pyoxigraph's precision). GPM
FILTERs do not use them: the native core follows pyoxigraph (docs/decisions.md 23), which
also makes ``0 / 1.5`` (a zero decimal divided by a non-integral one) an error."""

from __future__ import annotations

import math
from decimal import Decimal

from spaseq.engine.values.kinds import F32, K_DBL, K_DEC, K_FLT, K_INT, ExprError
from spaseq.engine.values.literals import INFO_CACHE, info_slow
from spaseq.engine.values.numbers import DCTX, INF, dec_div, dec_limit, f32, promote


def _num2(a, b):
    ka, va = INFO_CACHE.get(a) or info_slow(a)
    kb, vb = INFO_CACHE.get(b) or info_slow(b)
    if ka > K_DBL or kb > K_DBL:
        raise ExprError("arithmetic on a non-numeric value")
    if ka == kb:
        return ka, va, vb
    return promote(ka, va, kb, vb)


def _make(k: int, x):
    if k == K_DBL:
        return x
    if k == K_FLT:
        return F32(f32(x))
    if k == K_DEC:
        return dec_limit(x)
    return x


def op_add(a, b):
    k, x, y = _num2(a, b)
    if k == K_INT:
        return x + y
    if k == K_DEC:
        return dec_limit(DCTX.add(x, y))
    return _make(k, x + y)


def op_div(a, b):
    """``/`` (SPARQL 1.1: integer / integer is a decimal)."""
    k, x, y = _num2(a, b)
    if k == K_INT:
        return dec_div(Decimal(x), Decimal(y))
    if k == K_DEC:
        return dec_div(x, y)
    if y == 0:
        if x == 0 or x != x:
            q = math.nan
        else:
            q = math.copysign(INF, x) * math.copysign(1.0, y)
    else:
        q = x / y
    return _make(k, q)
