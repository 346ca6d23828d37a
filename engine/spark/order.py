"""The engine's total order of matches as one binary column Spark sorts by (``order``): the
matches of independent parts, sorted by it, come in the order the single engine releases
them (docs/decisions.md 4, 65, 69), so DISTINCT and numbering can follow the merge.

The single engine releases a match when the event completing it arrives, or, for a match
whose sequence ends in untaken atoms (a trailing negation or optional), when the clock passes
its window's close: at the first event later than ``start + ω``, before that event's own
matches (end of input when there is none). Ordering by *time* reproduces that without the
other parts' events: a match completed by its last event ``s`` comes at ``(t_s, 0, s)``, one
closed by the clock at ``(close, 1)``: it is released before the match completed by ``s``
exactly when ``t_s > close``. Ties are broken by ``match_order`` (start, the events' places,
the bindings' spelling), encoded so that bytes compare as its tuples do. A part split by
neither key nor time is one engine: its release index is the order.
"""

from __future__ import annotations

from decimal import Decimal

from spaseq.engine.algebra import operators as A
from spaseq.engine.values.timestamps import to_nanoseconds
from spaseq.spark.found import Found

#: offsets making signed numbers compare as unsigned big-endian bytes
_TIME_BIAS = 1 << 127
_SEQ_BIAS = 1 << 63
#: how a string ends, and a NUL inside it (so that a prefix sorts first, as in Python)
_END, _NUL = b"\x00\x01", b"\x00\xff"
#: before each item of a tuple, and after its last one (so that a shorter tuple sorts first)
_ITEM, _TUPLE_END = b"\x01", b"\x00"
#: the flag after the completion time: completed by an event, closed by the clock
_BY_EVENT, _BY_CLOCK = b"\x00", b"\x01"
#: a close time that never comes (no time window: at end of input): later than any time
NEVER = 1 << 200


def released(index: int) -> bytes:
    """The order of the ``index``-th match a single engine released (a part not split)."""
    return (index + _SEQ_BIAS).to_bytes(8, "big")


def order_key(m: Found, close: int | None) -> bytes:
    """Where ``m`` stands among every match of the query, as sortable bytes; ``close``: the
    time (ns, or ``NEVER``) its window closes when the clock releases it (``clock_close``),
    else None."""
    if close is None:
        last = max((t.time, t.seq) for t in m.taken)
        head = _time(last[0]) + _BY_EVENT + _seq(last[1])
    else:
        head = _time(close) + _BY_CLOCK
    return head + rank(m)


def rank(m: Found) -> bytes:
    """``match_order(m)`` (start, the events' places, the bindings' spelling) as bytes that
    compare as its tuples do."""
    out = [_time(m.start)]
    for t in m.taken:
        out += [_ITEM, _time(t.time), _seq(t.seq)]
    out.append(_TUPLE_END)
    out.append(_pairs(m.bindings))
    for t in m.taken:
        out += [_ITEM, _pairs(t.bindings)]
    out.append(_TUPLE_END)
    return b"".join(out)


def clock_close(query: A.Query, m: Found) -> int | None:
    """The time (ns) the clock releases ``m`` after (its start plus the window; ``NEVER``
    without a time window: at end of input) when atoms after the last one it took are left
    untaken, or None when its last event completed it. Only for a query with a sliding time
    window or none (the splits' queries, ``compile.splitting``)."""
    took = {t.atom for t in m.taken}
    atoms = query.seq.atoms
    last = max(i for i, atom in enumerate(atoms) if took & set(A.operand_gpms(atom.operand)))
    if last == len(atoms) - 1:
        return None
    if query.window.kind == "time":
        return m.start + to_nanoseconds(Decimal(query.window.amount))
    return NEVER


def _time(ns: int) -> bytes:
    if ns >= NEVER:
        return b"\xff" * 16
    return (ns + _TIME_BIAS).to_bytes(16, "big")


def _seq(seq: int) -> bytes:
    return (seq + _SEQ_BIAS).to_bytes(8, "big")


def _pairs(pairs: tuple[tuple[str, str], ...]) -> bytes:
    return b"".join(_ITEM + _text(v) + _text(t) for v, t in pairs) + _TUPLE_END


def _text(s: str) -> bytes:
    return s.encode("utf-8").replace(b"\x00", _NUL) + _END
