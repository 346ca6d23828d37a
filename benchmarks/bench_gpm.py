"""Micro-benchmark: the compiled GPM matcher against pyoxigraph, one GPM on many events.

The V-shape stock GPM ``{ ?company pred:price ?p2 . ?company pred:volume ?vol2 .
FILTER(?p2 > ?p1) }`` is evaluated on N generated stock-quote events in a context binding
?p1 (and, in the "company" variant, ?company too, as the V-shape query does). Measured:

- ``compiled``: ``EventIndex.of(event.triples)`` + ``CompiledPattern.solutions`` per event;
- ``pyoxigraph_query``: one SPARQL query per event (``VALUES(mu) body`` on the event's graph
  in a store that holds all events, loaded beforehand and not timed);
- ``gpm_evaluator``: the engine's existing pyoxigraph path (``gpm.GpmEvaluator.solutions``:
  base solutions per event, then a FILTER query per context), events loaded beforehand.

Every method must give the same solutions. Prints JSON: events/s, triples/s and the ratios.

    python benchmarks/bench_gpm.py [--events N] [--repeat R]
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import sys
import time

from pyoxigraph import Literal, NamedNode, Quad, Store, Triple

from spaseq.engine.compile.event_index import EventIndex
from spaseq.engine.compile.gpm_codegen import compile_pattern
from spaseq.engine.events import Event
from spaseq.engine.gpm_eval.sparql_eval import GpmEvaluator
from spaseq.engine.gpm_eval.sparql_store import values_clause
from spaseq.engine.language.query import parse_query
from spaseq.engine.vocab import XSD_DOUBLE, XSD_INTEGER

PRED = "http://example.org/pred/"
COMPANY = "http://example.org/company/"
STREAM = "http://example.org/stock"

QUERY = f"""PREFIX pred: <{PRED}>
SELECT ?company ?p1 ?p2
FROM STREAM S1 <{STREAM}>
WHERE {{
  SEQ(A, B)
  DEFINE GPM A ON S1 {{ ?company pred:price ?p1 . }}
  DEFINE GPM B ON S1 {{ ?company pred:price ?p2 . ?company pred:volume ?vol2 . FILTER(?p2 > ?p1) }}
}}"""


def make_events(n: int, seed: int = 42) -> list[Event]:
    rng = random.Random(seed)
    price, volume, ts = NamedNode(PRED + "price"), NamedNode(PRED + "volume"), NamedNode(PRED + "time")
    companies = [NamedNode(f"{COMPANY}C{i}") for i in range(20)]
    double, integer = XSD_DOUBLE, XSD_INTEGER
    events = []
    for i in range(n):
        c = rng.choice(companies)
        triples = (
            Triple(c, price, Literal(f"{rng.randint(500, 1500) / 10:g}", datatype=double)),
            Triple(c, volume, Literal(str(rng.randint(1, 10_000)), datatype=integer)),
            Triple(c, ts, Literal(str(i), datatype=integer)),
        )
        events.append(Event(STREAM, float(i), triples, i))
    return events


def contexts(events: list[Event], with_company: bool) -> list[dict]:
    rng = random.Random(7)
    price = NamedNode(PRED + "price")
    out = []
    for e in events:
        subject = e.triples[0].subject
        mu = {"p1": Literal(f"{rng.randint(500, 1500) / 10:g}", datatype=XSD_DOUBLE)}
        if with_company:
            mu["company"] = subject if rng.random() < 0.8 else NamedNode(COMPANY + "other")
        assert e.triples[0].predicate == price
        out.append(mu)
    return out


def run_compiled(events, mus, pattern):
    compiled = compile_pattern(pattern)
    assert compiled is not None
    solutions = compiled.solutions
    of = EventIndex.of
    start = time.perf_counter()
    results = [solutions(of(e.triples), mu) for e, mu in zip(events, mus, strict=True)]
    return time.perf_counter() - start, results


def run_pyoxigraph_query(events, mus, pattern):
    store = Store()
    graphs = [NamedNode(f"urn:event:{i}") for i in range(len(events))]
    store.extend(Quad(t.subject, t.predicate, t.object, g)
                 for e, g in zip(events, graphs, strict=True) for t in e.triples)
    body = pattern.text[1:-1]
    prefixes = {"pred": PRED}
    start = time.perf_counter()
    results = []
    for g, mu in zip(graphs, mus, strict=True):
        values, subst = values_clause(mu)
        res = store.query(f"SELECT * WHERE {{ {values}{body} }}", default_graph=g,
                          prefixes=prefixes, substitutions=subst or None)
        names = [v.value for v in res.variables]
        results.append([{n: row[n] for n in names if row[n] is not None} for row in res])
    return time.perf_counter() - start, results


def run_gpm_evaluator(events, mus, query):
    evaluator = GpmEvaluator(query)
    evaluator.add_events(events)
    start = time.perf_counter()
    results = [evaluator.solutions("B", e, mu) for e, mu in zip(events, mus, strict=True)]
    return time.perf_counter() - start, results


def canonical(results):
    return [sorted(tuple(sorted((k, str(v)) for k, v in sol.items())) for sol in r) for r in results]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=3, help="best of R runs")
    args = ap.parse_args(argv)

    query = parse_query(QUERY)
    pattern = query.events["B"].pattern
    events = make_events(args.events)
    n_triples = sum(len(e.triples) for e in events)
    report: dict = {
        "gpm": pattern.text,
        "events": len(events),
        "triples": n_triples,
        "python": platform.python_version(),
        "variants": {},
    }
    for variant, with_company in (("p1_bound", False), ("company_and_p1_bound", True)):
        mus = contexts(events, with_company)
        timings = {}
        answers = {}
        for name, fn, arg in (
            ("compiled", run_compiled, pattern),
            ("pyoxigraph_query", run_pyoxigraph_query, pattern),
            ("gpm_evaluator", run_gpm_evaluator, query),
        ):
            best = None
            for _ in range(args.repeat if name == "compiled" else 1):
                elapsed, results = fn(events, mus, arg)
                best = elapsed if best is None else min(best, elapsed)
            timings[name] = best
            answers[name] = canonical(results)
        assert answers["compiled"] == answers["pyoxigraph_query"] == answers["gpm_evaluator"]
        matches = sum(len(r) for r in answers["compiled"])
        report["variants"][variant] = {
            "solutions": matches,
            **{
                name: {
                    "seconds": round(t, 4),
                    "events_per_s": round(len(events) / t),
                    "triples_per_s": round(n_triples / t),
                }
                for name, t in timings.items()
            },
            "speedup_vs_pyoxigraph_query": round(timings["pyoxigraph_query"] / timings["compiled"], 1),
            "speedup_vs_gpm_evaluator": round(timings["gpm_evaluator"] / timings["compiled"], 1),
        }
    json.dump(report, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
