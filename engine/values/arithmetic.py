"""Arithmetic (+ - * / and unary minus/plus) and the numeric functions ABS, CEIL, FLOOR, ROUND."""

from __future__ import annotations

import math
from decimal import ROUND_FLOOR, Decimal

from spaseq.engine.values.kinds import F32, K_DBL, K_DEC, K_FLT, K_INT, ExprError
from spaseq.engine.values.literals import INFO_CACHE, info, info_slow
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


def op_sub(a, b):
    k, x, y = _num2(a, b)
    if k == K_INT:
        return x - y
    if k == K_DEC:
        return dec_limit(DCTX.subtract(x, y))
    return _make(k, x - y)


def op_mul(a, b):
    k, x, y = _num2(a, b)
    if k == K_INT:
        return x * y
    if k == K_DEC:
        return dec_limit(DCTX.multiply(x, y))
    return _make(k, x * y)


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


def op_neg(a):
    k, x = info(a)
    if k > K_DBL:
        raise ExprError("unary minus on a non-numeric value")
    if k == K_INT:
        return -x
    if k == K_DEC:
        return dec_limit(-x)
    return F32(-x) if k == K_FLT else -x


def op_pos(a):
    k, x = info(a)
    if k > K_DBL:
        raise ExprError("unary plus on a non-numeric value")
    return x


def fn_abs(a):
    k, x = info(a)
    if k > K_DBL:
        raise ExprError("ABS of a non-numeric value")
    if k == K_FLT:
        return F32(abs(x))
    if k == K_DEC:
        return dec_limit(abs(x))
    return abs(x)


def _float_round(x: float, mode: str) -> float:
    if x != x or x in (INF, -INF):
        return x
    if mode == "ceil":
        r = float(math.ceil(x))
    elif mode == "floor":
        r = float(math.floor(x))
    else:  # round half towards positive infinity
        fl = math.floor(x)
        r = float(fl + 1 if x - fl >= 0.5 else fl)
    if r == 0 and (x < 0 or math.copysign(1.0, x) < 0):
        return -0.0
    return r


def _rounding(mode: str):
    def fn(a):
        k, x = info(a)
        if k > K_DBL:
            raise ExprError(f"{mode.upper()} of a non-numeric value")
        if k == K_INT:
            return x
        if k == K_DEC:
            if mode == "ceil":
                r = -((-x).to_integral_value(rounding=ROUND_FLOOR))
            elif mode == "floor":
                r = x.to_integral_value(rounding=ROUND_FLOOR)
            else:
                r = DCTX.add(x, Decimal("0.5")).to_integral_value(rounding=ROUND_FLOOR)
            return r if r else Decimal(0)
        r = _float_round(x, mode)
        return F32(r) if k == K_FLT else r

    return fn


fn_ceil = _rounding("ceil")
fn_floor = _rounding("floor")
fn_round = _rounding("round")
