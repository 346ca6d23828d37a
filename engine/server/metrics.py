"""``/metrics`` in the Prometheus text format (or OpenMetrics, by ``Accept``), with
prometheus-client (docs/decisions.md 73). Counters are read at each scrape from what the
engine service already keeps (events accepted and unread, each query's matches, late events
and runs), so nothing is counted twice; the two latency histograms are observed as the
engine works (a batch's processing time, a match's delay per query). Each application has
its own registry: several servers may live in one process (the tests')."""

from __future__ import annotations

import threading
from collections.abc import Iterator

from fastapi import APIRouter, Request, Response
from prometheus_client import CollectorRegistry, Histogram
from prometheus_client.exposition import choose_encoder
from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from .service import EngineService

#: seconds: from a millisecond (a small batch) to a minute (a large one on a busy engine)
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


class ServiceCollector(Collector):
    """The service's own counts as metric families, read when scraped."""

    def __init__(self, service: EngineService) -> None:
        self.service = service
        self.followers = 0  # open SSE/ndjson responses (the application's count, set per scrape)

    def collect(self) -> Iterator[Metric]:
        service = self.service
        queries = list(service.queries.values())
        yield CounterMetricFamily("spaseq_events_accepted", "Events accepted (POST /events), all streams",
                                  value=service.events_accepted)
        yield CounterMetricFamily("spaseq_events_unread", "Events accepted on a stream no registered query reads",
                                  value=service.events_unread)
        yield GaugeMetricFamily("spaseq_queries", "Registered queries", value=len(queries))
        yield GaugeMetricFamily("spaseq_followers", "Clients following matches (SSE or ndjson)",
                                value=self.followers)
        matches = CounterMetricFamily("spaseq_matches", "Matches numbered, per query", labels=["query"])
        late = CounterMetricFamily("spaseq_late_events", "Late events a query dropped", labels=["query"])
        runs = CounterMetricFamily("spaseq_runs", "Runs (partial matches) a query started", labels=["query"])
        for reg in queries:
            matches.add_metric([reg.id], len(reg.log))
            late.add_metric([reg.id], reg.late)
            stats = reg.handle.stats if reg.handle is not None else {}
            runs.add_metric([reg.id], stats.get("runs", 0))
        yield from (matches, late, runs)


def router(service: EngineService) -> APIRouter:
    """The ``/metrics`` route, with a registry of its own, observing ``service``."""
    registry = CollectorRegistry()
    collector = ServiceCollector(service)
    registry.register(collector)
    batch = Histogram("spaseq_batch_seconds", "Processing time of an accepted event batch (read, "
                      "journaled, evaluated, matches materialised)", registry=registry, buckets=LATENCY_BUCKETS)
    delay = Histogram("spaseq_match_delay_seconds", "From the engine beginning the batch, heartbeat or idle "
                      "tick that completed a match to the match being numbered, per query", ["query"],
                      registry=registry, buckets=LATENCY_BUCKETS)
    observed: set[str] = set()  # the query labels of ``delay`` (removed with their query)
    lock = threading.Lock()  # ``observed`` grows on the engine's thread, shrinks at a scrape

    def on_match(qid: str, seconds: float) -> None:
        with lock:
            observed.add(qid)
        delay.labels(qid).observe(seconds)

    service.on_batch.append(batch.observe)
    service.on_match.append(on_match)
    routes = APIRouter()

    @routes.get("/metrics", summary="Prometheus metrics: events, matches, late events and runs per query, "
                                    "batch and match latency histograms", response_class=Response)
    async def metrics(request: Request) -> Response:
        collector.followers = request.app.state.streams
        with lock:
            gone = observed - set(service.queries)  # a deleted query's series go with it
            observed.difference_update(gone)
        for qid in gone:
            delay.remove(qid)
        encoder, content_type = choose_encoder(request.headers.get("accept", ""))
        return Response(encoder(registry), media_type=content_type)

    return routes
