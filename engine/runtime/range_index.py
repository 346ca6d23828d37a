"""Range indexes over waiting runs: the partitioning idea of the paper's Section 7.2 carried
from equality joins to order comparisons between a run's variable and the event's.

A GPM such as ``B { ?c :price ?p2 . FILTER(?p2 > ?p1) }`` can only extend runs whose ``?p1`` is
below the event's ``?p2``. Runs waiting at such a step are kept sorted by the numeric value of
their ``?p1``; an event then visits the runs on the right side of its own value and no others.
The index is a conservative pre-filter: every run it returns is still checked by the GPM's
FILTERs, and it never leaves out a run the FILTER could accept (see ``order_key``). Which
comparison a step is sorted by is the plan's choice (``compile.range_keys``).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right, insort

from spaseq.engine.values.kinds import K_DBL
from spaseq.engine.values.literals import INFO_CACHE, info_slow

_CACHE = INFO_CACHE  # literal -> (kind, value), filled by info_slow (cleared in place, never replaced)


def order_key(term: object) -> object | None:
    """The exact numeric value of a numeric literal (int, Decimal or float, which Python
    compares exactly with each other), or None for anything else and NaN.

    Why conservative: SPARQL compares mixed numerics after promotion to the wider type, and
    promotion rounds monotonically, so ``promoted(a) < promoted(b)`` implies ``a <= b`` on
    the exact values. Selecting runs by the non-strict exact comparison keeps every run
    the FILTER could accept.
    """
    info = _CACHE.get(term)
    if info is None:
        try:
            info = info_slow(term)
        except Exception:  # not an RDF value: leave it to the FILTER
            return None
    kind, value = info
    if kind <= K_DBL and value == value:
        return value
    return None


class RangeBucket:
    """Runs of one partition (step, loop, equality-key values), sorted by their range key.

    Looks like the dict ``{run id: run}`` the runtime keeps elsewhere (``pop``, ``values``,
    ``len``), so killing a run works the same way; the sorted list is cleaned lazily.
    """

    __slots__ = ("runs", "keys", "misc")

    def __init__(self) -> None:
        self.runs: dict[int, object] = {}
        self.keys: list[tuple[object, int]] = []   # (value, run id), sorted
        self.misc: dict[int, object] = {}           # runs whose key is not an ordered number

    def add(self, run_id: int, run: object, value: object | None) -> None:
        self.runs[run_id] = run
        if value is None:
            self.misc[run_id] = run
        else:
            insort(self.keys, (value, run_id))

    def pop(self, run_id: int, default: object = None) -> object:
        run = self.runs.pop(run_id, default)
        self.misc.pop(run_id, None)
        if len(self.keys) > 2 * len(self.runs) + 16:
            runs = self.runs
            self.keys = [k for k in self.keys if k[1] in runs]
        return run

    def values(self):
        return self.runs.values()

    def __len__(self) -> int:
        return len(self.runs)

    def select(self, requests: list[tuple[object | None, bool]]) -> list:
        """The runs an event may extend, in creation order: the union over ``requests``
        ``(value, below)`` of the runs with key <= value (below) or >= value; a None value
        (the event's side is not an ordered number, or its GPM has no range) asks for all."""
        runs = self.runs
        if len(requests) == 1 and not self.misc:  # the usual case: one solution, one bound
            value, below = requests[0]
            if value is None:
                return list(runs.values())
            keys = self.keys
            part = (keys[:bisect_right(keys, (value, float("inf")))] if below
                    else keys[bisect_left(keys, (value, -1)):])
            return [runs[i] for i in sorted([i for _, i in part if i in runs])]
        hi = lo = None
        for value, below in requests:
            if value is None:
                return list(runs.values())
            if below:
                hi = value if hi is None or value > hi else hi
            else:
                lo = value if lo is None or value < lo else lo
        keys = self.keys
        ids = set(self.misc)
        if hi is not None:
            ids.update(i for _, i in keys[:bisect_right(keys, (hi, float("inf")))] if i in runs)
        if lo is not None:
            ids.update(i for _, i in keys[bisect_left(keys, (lo, -1)):] if i in runs)
        return [runs[i] for i in sorted(ids)]
