"""Numbers: the integer datatypes' ranges, exact decimal arithmetic, single precision and numeric
promotion (integer < decimal < float < double)."""

from __future__ import annotations

import math
import struct
from decimal import ROUND_DOWN, Context, Decimal, InvalidOperation

from spaseq.engine.values.kinds import K_DBL, K_DEC, K_FLT, ExprError

#: Exact arithmetic for + - * (precision large enough never to round realistic values).
DCTX = Context(prec=2000, Emax=999_999, Emin=-999_999, traps=[InvalidOperation])
#: Computed decimals keep this many fraction digits (pyoxigraph's precision), truncated.
DEC_FRACTION_DIGITS = 18
_DEC_SCALE = Decimal("1e-18")
_F32 = struct.Struct("f")
INF = math.inf

#: xsd:integer and its derived types (local names) -> (least, greatest) value, None: unbounded.
INT_RANGES: dict[str, tuple[int | None, int | None]] = {
    "integer": (None, None),
    "nonPositiveInteger": (None, 0),
    "negativeInteger": (None, -1),
    "long": (-(2**63), 2**63 - 1),
    "int": (-(2**31), 2**31 - 1),
    "short": (-(2**15), 2**15 - 1),
    "byte": (-(2**7), 2**7 - 1),
    "nonNegativeInteger": (0, None),
    "unsignedLong": (0, 2**64 - 1),
    "unsignedInt": (0, 2**32 - 1),
    "unsignedShort": (0, 2**16 - 1),
    "unsignedByte": (0, 2**8 - 1),
    "positiveInteger": (1, None),
}


def f32(x: float) -> float:
    """Round a double to the nearest single-precision value (overflow gives +-INF)."""
    try:
        return _F32.unpack(_F32.pack(x))[0]
    except OverflowError:
        return math.copysign(INF, x)


def exponent(d: Decimal) -> int:
    """The exponent of a finite decimal (its digits times 10**exponent); ValueError for an
    infinity or NaN."""
    e = d.as_tuple().exponent
    if not isinstance(e, int):
        raise ValueError(f"{d} has no exponent")
    return e


def dec_limit(d: Decimal) -> Decimal:
    """Truncate a computed decimal to 18 fractional digits (pyoxigraph's precision)."""
    if exponent(d) < -DEC_FRACTION_DIGITS:
        d = d.quantize(_DEC_SCALE, rounding=ROUND_DOWN, context=DCTX)
    if not d:
        return Decimal(0)
    return d


def dec_div(a: Decimal, b: Decimal) -> Decimal:
    """``a / b`` truncated to 18 fraction digits; ExprError for a zero divisor."""
    if not b:
        raise ExprError("decimal division by zero")
    if not a:
        return Decimal(0)
    digits = max(1, a.adjusted() - b.adjusted() + 2) + DEC_FRACTION_DIGITS + 2
    q = Context(prec=digits, rounding=ROUND_DOWN, Emax=999_999, Emin=-999_999).divide(a, b)
    return dec_limit(q)


def promote(ka: int, va, kb: int, vb):
    """Both operands converted to their common numeric type (integer < decimal < float <
    double); returns (kind, a, b)."""
    k = ka if ka > kb else kb
    if k == K_DBL:
        return k, float(va), float(vb)
    if k == K_FLT:
        return k, (va if ka == K_FLT else f32(float(va))), (vb if kb == K_FLT else f32(float(vb)))
    if k == K_DEC:
        return k, (va if ka == K_DEC else Decimal(va)), (vb if kb == K_DEC else Decimal(vb))
    return k, va, vb
