"""PyFlink peer: the stock V-shape under skip-till-any (``vshape-any``) as a Flink SQL interval self-join.

``SEQ(A: B: C)`` with ``B.price > A.price``, ``C.price < B.price``, one company, ``end - start <=
WITHIN`` asks for *every* combination of three ordered events of a company in the window: in
Flink SQL that is a three-way self-join. It runs in streaming mode as two chained interval joins
(``B.ts`` in ``[A.ts, A.ts + w]``, ``C.ts`` in ``[B.ts, B.ts + w]``, plus ``A.seq < B.seq < C.seq``
and ``C - A <= w``), so Flink keeps only a window of state and the join output stays append-only;
the matches are counted by a tumbling-window COUNT over ``C.ts`` (append-only too: a plain
streaming ``COUNT(*)`` would send one changelog row per match back through py4j). Batch mode gives
the same count but plans a hash join on company with the time bounds as a residual filter, about
ten times slower here. ``MATCH_RECOGNIZE`` is no peer: it keeps one match per start event.

Flink cannot read RDF, so each event graph is first flattened with pyoxigraph (the same streaming
reader the spaseq measurement uses) into rows ``seq, company, price, volume, epoch-ms`` of a CSV
file that Flink's filesystem connector reads: one row per solution of the GPM
``{ ?company pred:price ?p ; pred:volume ?v }``. That conversion is timed and reported separately
(``convert_s``), never inside Flink's time. Flink's time (``elapsed_s``) is the counting job from
submission to its result, the CSV scan included; starting the JVM, the DDL and a warm-up job that
counts the rows (``warmup_s``) are setup. Settings: parallelism 1 or 2, ``pipeline.object-reuse``,
otherwise Flink's defaults (heap state backend, local MiniCluster inside the py4j gateway JVM).

``python -m benchmarks.peers.pyflink_stock --check`` compares the matches with spaseq's
(``spaseq.engine.api.evaluate``) on a small generated input, match for match.
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from pyoxigraph import Literal, NamedNode

from benchmarks.generators import PRED, Dataset, generate
from benchmarks.workloads import WORKLOADS, iter_events

WORKLOAD = "vshape-any"
"""The one workload this peer implements."""
INSTALL_HINT = "pip install .[bench-peers]"
PRICE = NamedNode(PRED + "price")
VOLUME = NamedNode(PRED + "volume")
XSD = "http://www.w3.org/2001/XMLSchema#"
NUMERIC_TYPES = frozenset(XSD + t for t in ("decimal", "integer", "int", "long", "short", "byte",
                                            "nonNegativeInteger", "positiveInteger", "unsignedInt"))
PRICE_SCALE = 8
"""Fractional digits of the Flink DECIMAL price column; a price needing more is refused."""
DAY_MS = 86_400_000


def unavailable() -> str | None:
    """Why the peer cannot run here (PyFlink not installed), or None; does not import PyFlink."""
    if importlib.util.find_spec("pyflink") is None:
        return f"pyflink not installed: {INSTALL_HINT}"
    return None


@dataclass
class FlatTrades:
    """The flattened stock events: the CSV file Flink reads and what went into it."""

    path: Path
    events: int = 0
    triples: int = 0
    rows: int = 0
    convert_s: float = 0.0
    names: list[str] = field(default_factory=list)
    """Event graph name per seq (kept only when asked: for the check)."""


def _price(term: object, event: str) -> Decimal:
    """A numeric literal as a Decimal that the price column holds exactly (else ValueError)."""
    if not isinstance(term, Literal) or term.datatype.value not in NUMERIC_TYPES:
        raise ValueError(f"event {event}: price {term} is not an xsd:decimal/integer literal; "
                         "the flat Flink rows need numeric prices")
    try:
        value = Decimal(term.value)
    except InvalidOperation:
        raise ValueError(f"event {event}: price {term} is not a valid number") from None
    if value != value.quantize(Decimal(1).scaleb(-PRICE_SCALE)) or abs(value) >= Decimal(10) ** 22:
        raise ValueError(f"event {event}: price {term} does not fit DECIMAL(30, {PRICE_SCALE})")
    return value


def _solutions(triples: tuple, event: str) -> Iterator[tuple[str, Decimal, str]]:
    """The solutions of ``{ ?company pred:price ?p ; pred:volume ?v }`` in one event graph."""
    prices: dict[str, list[Decimal]] = {}
    volumes: dict[str, list[str]] = {}
    for t in triples:
        if t.predicate == PRICE:
            prices.setdefault(str(t.subject), []).append(_price(t.object, event))
        elif t.predicate == VOLUME:
            volumes.setdefault(str(t.subject), []).append(str(t.object))
    for company, company_prices in prices.items():
        for price in company_prices:
            for volume in volumes.get(company, ()):
                yield company, price, volume


def flatten_stock(dataset: Dataset, out_path: Path, limit: int | None = None,
                  keep_names: bool = False) -> FlatTrades:
    """Write the dataset's events as CSV rows ``seq, company, price, volume, ms`` (timed).

    ``seq`` is the event's position in the streamset (ties in time keep it); ``company`` the
    subject in N-Triples form; ``volume`` the volume literal in N-Triples form (projected only);
    ``ms`` the event time in epoch milliseconds.
    """
    flat = FlatTrades(out_path)
    start = time.perf_counter()
    with open(out_path, "w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        for event in iter_events(dataset, limit):
            name = str(event.name)
            ms = round(event.time * 1000)
            for company, price, volume in _solutions(event.triples, name):
                writer.writerow((event.seq, company, price, volume, ms))
                flat.rows += 1
            flat.events += 1
            flat.triples += len(event.triples)
            if keep_names:
                flat.names.append(name)
    flat.convert_s = time.perf_counter() - start
    return flat


def interval_literal(ms: int) -> str:
    """A Flink SQL ``DAY TO SECOND`` interval literal of ``ms`` milliseconds (under 100 days)."""
    seconds, millis = divmod(ms, 1000)
    minutes, seconds = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    days, hours = divmod(hours, 24)
    return f"INTERVAL '{days} {hours:02d}:{minutes:02d}:{seconds:02d}.{millis:03d}' DAY TO SECOND(3)"


def vshape_join_sql(window_ms: int, columns: str) -> str:
    """The V-shape under skip-till-any as a streaming interval self-join, selecting ``columns``."""
    w = interval_literal(window_ms)
    return f"""SELECT {columns} FROM trades A, trades B, trades C
WHERE A.company = B.company AND B.company = C.company
  AND B.ts BETWEEN A.ts AND A.ts + {w}
  AND C.ts BETWEEN B.ts AND B.ts + {w}
  AND A.seq < B.seq AND B.seq < C.seq AND C.ms - A.ms <= {window_ms}
  AND B.price > A.price AND C.price < B.price"""


class FlinkVShape:
    """A local PyFlink TableEnvironment (streaming mode) over one flattened CSV file."""

    def __init__(self, csv_path: Path, window_seconds: float, parallelism: int) -> None:
        """Start (or reuse) the py4j gateway JVM and declare the ``trades`` table."""
        from pyflink.table import EnvironmentSettings, TableEnvironment

        self.window_ms = round(window_seconds * 1000)
        self.env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
        config = self.env.get_config()
        config.set("parallelism.default", str(parallelism))
        config.set("pipeline.object-reuse", "true")  # the usual tuning; SQL operators copy what they keep
        path = str(csv_path.resolve()).replace("'", "''")
        self.env.execute_sql(f"""CREATE TEMPORARY TABLE trades (
  seq BIGINT, company STRING, price DECIMAL(30, {PRICE_SCALE}), volume STRING, ms BIGINT,
  ts AS TO_TIMESTAMP_LTZ(ms, 3),
  WATERMARK FOR ts AS ts - INTERVAL '0.001' SECOND
) WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = 'csv')""")

    def _windowed_count(self, view: str) -> int:
        """``COUNT(*)`` of an append-only view with rowtime ``ts``, as day-long tumbling counts."""
        rows = self.env.execute_sql(
            f"SELECT COUNT(*) FROM TABLE(TUMBLE(TABLE {view}, DESCRIPTOR(ts), INTERVAL '1' DAY)) "
            "GROUP BY window_start, window_end").collect()
        with rows:
            return sum(int(r[0]) for r in rows)

    def count_rows(self) -> int:
        """The rows of the CSV file as Flink reads them (the warm-up job)."""
        return self._windowed_count("trades")

    def count_matches(self) -> int:
        """The number of V-shape matches."""
        self.env.create_temporary_view("vshape", self.env.sql_query(vshape_join_sql(self.window_ms, "C.ts AS ts")))
        try:
            return self._windowed_count("vshape")
        finally:
            self.env.drop_temporary_view("vshape")

    def matches(self) -> list[tuple[int, int, int]]:
        """Every match as the seqs of its A, B and C events (for checking).

        Fetched as one string per hour of ``C.ts`` (``LISTAGG`` in a tumbling window): PyFlink's
        result iterator makes py4j calls per row, a few milliseconds each.
        """
        columns = "CAST(A.seq AS STRING) || ',' || CAST(B.seq AS STRING) || ',' || CAST(C.seq AS STRING) AS m, C.ts AS ts"
        self.env.create_temporary_view("vshape_seqs", self.env.sql_query(vshape_join_sql(self.window_ms, columns)))
        try:
            rows = self.env.execute_sql(
                "SELECT LISTAGG(m, ';') FROM TABLE(TUMBLE(TABLE vshape_seqs, DESCRIPTOR(ts), INTERVAL '1' HOUR)) "
                "GROUP BY window_start, window_end").collect()
            with rows:
                chunks = [str(r[0]) for r in rows]
        finally:
            self.env.drop_temporary_view("vshape_seqs")
        found = []
        for chunk in chunks:
            for item in chunk.split(";"):
                a, b, c = item.split(",")
                found.append((int(a), int(b), int(c)))
        return found


def _jvm_pids() -> list[int]:
    """The PyFlink gateway JVM(s): java processes that are children of this process."""
    me, found = os.getpid(), []
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        comm_end = stat.rfind(")")
        fields = stat[comm_end + 2:].split()
        if int(fields[1]) == me and "java" in stat[stat.find("(") + 1:comm_end]:
            found.append(int(entry))
    return found


def _jvm_cpu_s(pids: list[int]) -> float:
    """User + system CPU seconds of the given processes so far."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2:].split()
        total += int(fields[11]) + int(fields[12])
    return total / ticks


def _jvm_peak_rss_mb(pids: list[int]) -> float | None:
    """Peak resident set size (VmHWM) of the given processes, in MiB, or None if unknown."""
    peak = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    peak += int(line.split()[1])
        except OSError:
            continue
    return peak / 1024 if peak else None


def measure_spec(spec: dict, setup_start: float) -> dict[str, Any]:
    """The runner's ``pyflink`` measurement: flatten (timed apart), set up, warm up, count matches."""
    from benchmarks.measure import peak_rss_mb, result_of

    if spec["workload"] != WORKLOAD:
        return {"status": "n/a", "reason": f"the PyFlink peer implements {WORKLOAD} only"}
    reason = unavailable()
    if reason is not None:
        return {"status": "n/a", "reason": reason}
    dataset = Dataset.from_json(spec["dataset"])
    parallelism = int(spec.get("parallelism", 1))
    with tempfile.TemporaryDirectory(prefix="spaseq-pyflink-") as tmp:
        flat = flatten_stock(dataset, Path(tmp) / "trades.csv", spec.get("max_events"))
        setup0 = time.perf_counter()
        flink = FlinkVShape(flat.path, spec["window_minutes"] * 60.0, parallelism)
        warm0 = time.perf_counter()
        rows = flink.count_rows()
        warmup_s = time.perf_counter() - warm0
        if rows != flat.rows:
            return {"status": "error", "reason": f"Flink read {rows} rows of the {flat.rows} written"}
        setup_s = (setup0 - setup_start) - flat.convert_s + (time.perf_counter() - setup0)
        setup_rss = peak_rss_mb()
        jvms = _jvm_pids()
        jvm_cpu0, cpu0 = _jvm_cpu_s(jvms), time.process_time()
        start = time.perf_counter()
        matches = flink.count_matches()
        elapsed = time.perf_counter() - start
        cpu = time.process_time() - cpu0 + _jvm_cpu_s(jvms) - jvm_cpu0
        jvm_rss = _jvm_peak_rss_mb(jvms)
    result = result_of(flat.events, flat.triples, matches, elapsed, cpu, setup_s, setup_rss,
                     flat.events < dataset.events)
    py_rss = peak_rss_mb()
    result.update({
        "mode": "streaming", "parallelism": parallelism, "flat_rows": flat.rows,
        "convert_s": flat.convert_s, "warmup_s": warmup_s,
        "events_per_s_incl_convert": flat.events / (elapsed + flat.convert_s),
        "python_peak_rss_mb": py_rss, "jvm_peak_rss_mb": jvm_rss,
        "reason": (f"streaming interval join, parallelism {parallelism}; RDF->CSV flattening "
                   f"{flat.convert_s:.2f} s not in ev/s ({_rate(flat.events / (elapsed + flat.convert_s))} "
                   f"ev/s with it); MB = Python + JVM"),
    })
    if jvm_rss is not None:
        result["peak_rss_mb"] = py_rss + jvm_rss  # measure() keeps a peak_rss_mb already set
    return result


def _rate(value: float) -> str:
    """A rate in a short form (12.3k)."""
    return f"{value / 1000:.3g}k" if value >= 1000 else f"{value:.3g}"


def check(events: int = 1200, window_minutes: int = 1, parallelisms: tuple[int, ...] = (1, 2)) -> list[str]:
    """Flink's matches against spaseq's on a small generated stock input; the lines of a report.

    Raises SystemExit with a message when they differ.
    """
    from spaseq.engine.api import evaluate
    from spaseq.engine.language.query import parse_query

    lines = []
    with tempfile.TemporaryDirectory(prefix="spaseq-pyflink-check-") as tmp:
        dataset = generate("stock", events, Path(tmp) / "data")
        query = parse_query(WORKLOADS[WORKLOAD].query_text(window_minutes))
        seq_of = {str(e.name): e.seq for e in iter_events(dataset)}
        expected = sorted(tuple(seq_of[str(t.event.name)] for t in m.taken)
                          for m in evaluate(query, list(iter_events(dataset))))
        if not expected:
            raise SystemExit("check input has no matches: nothing would be checked")
        lines.append(f"spaseq: {len(expected)} matches on {events} stock events, WITHIN {window_minutes} MINUTES")
        flat = flatten_stock(dataset, Path(tmp) / "trades.csv", keep_names=True)
        for parallelism in parallelisms:
            flink = FlinkVShape(flat.path, window_minutes * 60.0, parallelism)
            found = sorted(flink.matches())
            counted = flink.count_matches()
            if found != expected:
                missing, extra = set(expected) - set(found), set(found) - set(expected)
                raise SystemExit(f"pyflink p{parallelism}: {len(found)} matches, spaseq {len(expected)}; "
                                 f"{len(missing)} missing (e.g. {sorted(missing)[:3]}), "
                                 f"{len(extra)} extra (e.g. {sorted(extra)[:3]})")
            if counted != len(expected):
                raise SystemExit(f"pyflink p{parallelism}: the counting job says {counted}, spaseq {len(expected)}")
            lines.append(f"pyflink p{parallelism} (streaming): the same {len(found)} matches, event for event; "
                         f"counting job: {counted}")
    return lines


def main(argv: list[str] | None = None) -> int:
    """``python -m benchmarks.peers.pyflink_stock --check``: check the peer against spaseq."""
    p = argparse.ArgumentParser(prog="python -m benchmarks.peers.pyflink_stock", description=__doc__.split("\n")[0])
    p.add_argument("--check", action="store_true", help="compare the matches with spaseq's on a small input")
    p.add_argument("--events", type=int, default=1200, help="events of the check input (%(default)s)")
    p.add_argument("--window", type=int, default=1, help="WITHIN minutes of the check (%(default)s)")
    args = p.parse_args(argv)
    if not args.check:
        p.print_help()
        print("\nmeasure with: python -m benchmarks --workloads vshape-any --systems spaseq,baseline,pyflink")
        return 0
    reason = unavailable()
    if reason is not None:
        print(f"n/a: {reason}", file=sys.stderr)
        return 2
    for line in check(args.events, args.window):
        print(line)
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
