"""What a Python user would write without spaseq, and the parse-only ceiling.

``WindowStoreBaseline`` keeps the current window's events as named graphs in a pyoxigraph
``Store`` (each with ``bench:time`` and ``bench:stream`` triples in the default graph) and, on
each arriving event, runs one SPARQL SELECT joining the new event (substituted as the variable
of the atom its stream can complete) with the earlier events of the window for the whole
pattern, with timestamp FILTERs; then graphs that left the window are evicted. It computes
skip-till-any-like semantics: every combination of events in time order within the window.
Its matches equal spaseq's exactly for ``SEQ(A: B: C)`` (the V-shape under ``:``); for the other
workloads it is the usual hand-written approximation (strategies ignored, a Kleene+ atom taken
as one event), so its match counts differ and are reported for information.

``parse_ceiling`` is the speed limit of anything reading the files: pyoxigraph parsing them and
touching each quad's terms, nothing else.
"""

from __future__ import annotations

import time as _time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal

from pyoxigraph import DefaultGraph, NamedNode, Quad, RdfFormat, Store, Variable, parse

from benchmarks.generators import Dataset
from spaseq.engine.events import Event
from spaseq.engine.values.timestamps import seconds_literal

BENCH = "urn:spaseq-bench:"
TIME = NamedNode(BENCH + "time")
STREAM = NamedNode(BENCH + "stream")

_STOCK = "http://stockmarket.org/stocks"
_CC = "http://creditcard.org/transactions"
_SG = ("http://smartgrid.org/mainSource", "http://smartgrid.org/weather", "http://smartgrid.org/storageSource")
_TD = (
    "http://www.insight-centre.org/dataset/SampleEventService#AarhusTrafficData182955",
    "http://www.insight-centre.org/dataset/SampleEventService#AarhusTrafficData195578",
    "http://www.insight-centre.org/dataset/SampleEventService#AarhusTrafficData195446",
)

_PREFIXES = f"""PREFIX bench: <{BENCH}>
PREFIX pred: <http://example/>
PREFIX sg: <http://smartgrid.org/ns#>
PREFIX cc: <http://creditcard.org/ns#>
PREFIX ssn: <http://purl.oclc.org/NET/ssnx/ssn#>
PREFIX sao: <http://purl.oclc.org/NET/sao/>
"""

# Each query selects ?g1 .. ?gn, the graphs of the atoms in SEQ order; the arriving event is
# substituted for the graph variable of the atom its stream completes; {window} is in seconds.
_VSHAPE = """SELECT ?g1 ?g2 ?g3 WHERE {
  ?g3 bench:time ?t3 .
  GRAPH ?g3 { ?company pred:price ?p3 ; pred:volume ?vol3 }
  GRAPH ?g2 { ?company pred:price ?p2 ; pred:volume ?vol2 }
  ?g2 bench:time ?t2 ; bench:stream <http://stockmarket.org/stocks> .
  FILTER(?t2 < ?t3 && ?p3 < ?p2)
  GRAPH ?g1 { ?company pred:price ?p1 ; pred:volume ?vol1 }
  ?g1 bench:time ?t1 ; bench:stream <http://stockmarket.org/stocks> .
  FILTER(?t1 < ?t2 && ?p2 > ?p1 && ?t3 - ?t1 <= {window})
}"""

_SPIKE = """SELECT ?g1 ?g2 WHERE {
  ?g2 bench:time ?t2 .
  GRAPH ?g2 { ?company pred:price ?p2 ; pred:volume ?vol2 }
  FILTER(?vol2 > 4950)
  GRAPH ?g1 { ?company pred:price ?p1 }
  ?g1 bench:time ?t1 ; bench:stream <http://stockmarket.org/stocks> .
  FILTER(?t1 < ?t2 && ?p2 > ?p1 && ?t2 - ?t1 <= {window})
}"""

_HEAD_SHOULDERS = """SELECT ?g1 ?g2 ?g3 ?g4 ?g5 ?g6 ?g7 WHERE {
  ?g7 bench:time ?t7 .
  GRAPH ?g7 { ?company pred:price ?p7 }
  GRAPH ?g6 { ?company pred:price ?p6 } ?g6 bench:time ?t6 .
  FILTER(?t6 < ?t7 && ?p7 < ?p6)
  GRAPH ?g5 { ?company pred:price ?p5 } ?g5 bench:time ?t5 .
  FILTER(?t5 < ?t6 && ?p6 > ?p5 && ?p7 > ?p5)
  GRAPH ?g4 { ?company pred:price ?p4 } ?g4 bench:time ?t4 .
  FILTER(?t4 < ?t5 && ?p5 < ?p4 && ?p6 < ?p4)
  GRAPH ?g3 { ?company pred:price ?p3 } ?g3 bench:time ?t3 .
  FILTER(?t3 < ?t4 && ?p5 > ?p3)
  GRAPH ?g2 { ?company pred:price ?p2 } ?g2 bench:time ?t2 .
  FILTER(?t2 < ?t3 && ?p3 < ?p2 && ?p4 > ?p2)
  GRAPH ?g1 { ?company pred:price ?p1 } ?g1 bench:time ?t1 .
  FILTER(?t1 < ?t2 && ?p2 > ?p1 && ?p3 > ?p1 && ?t7 - ?t1 <= {window})
}"""

_CREDITCARD = """SELECT ?g1 ?g2 WHERE {
  ?g2 bench:time ?t2 .
  GRAPH ?g2 { ?card pred:id ?id ; pred:amount ?amount2 }
  GRAPH <http://creditcard.org/db> { ?id cc:cardHolder ?name ; cc:holderAddress ?address }
  GRAPH ?g1 { ?card pred:id ?id ; pred:amount ?amount1 }
  ?g1 bench:time ?t1 .
  FILTER(?t1 < ?t2 && ?t2 - ?t1 <= {window} && ?amount1 > 0 && ?amount1 < 5 && ?amount2 >= ?amount1 * 10)
}"""

_SMARTGRID = """SELECT ?g1 ?g2 ?g3 WHERE {
  ?g3 bench:time ?t3 .
  GRAPH ?g3 { ?storage sg:loc ?l ; sg:pow ?pw2 . ?pw2 sg:source "solar" ; sg:fare ?fr2 }
  GRAPH ?g1 { ?house sg:loc ?l ; sg:pow ?pw . ?pw sg:source "fuel" ; sg:fare ?fr1 }
  ?g1 bench:time ?t1 ; bench:stream <http://smartgrid.org/mainSource> .
  FILTER(?fr1 > 20 && ?fr2 < ?fr1 && ?t1 < ?t3 && ?t3 - ?t1 <= {window})
  GRAPH <http://smartgrid.org/db> { ?house sg:locatedIn ?city ; sg:nearBy ?house2 ; sg:ownerName ?oname }
  GRAPH ?g2 { ?wther sg:loc ?l ; sg:value ?vl . ?vl sg:light ?lt ; sg:windsp ?sp }
  ?g2 bench:time ?t2 ; bench:stream <http://smartgrid.org/weather> .
  FILTER(?sp > 3 && ?lt > 40 && ?t1 < ?t2 && ?t2 < ?t3)
}"""

_TRAFFIC_B = """SELECT ?g1 ?g2 ?g3 WHERE {
  ?g2 bench:time ?t2 .
  GRAPH ?g2 { ?obs2 ssn:observedProperty ?p1 ; sao:hasValue ?v2 }
  GRAPH ?g3 { ?obs3 ssn:observedProperty ?p1 ; sao:hasValue ?v3 }
  ?g3 bench:time ?t2 ; bench:stream <http://www.insight-centre.org/dataset/SampleEventService#AarhusTrafficData195446> .
  GRAPH ?g1 { ?obs1 ssn:observedProperty ?p1 ; sao:hasValue ?v1 }
  ?g1 bench:time ?t1 ; bench:stream <http://www.insight-centre.org/dataset/SampleEventService#AarhusTrafficData182955> .
  FILTER(?v1 > 3 && ?v2 >= ?v1 && ?v3 >= ?v1 && ?t1 < ?t2 && ?t2 - ?t1 <= {window})
}"""

_TRAFFIC_C = """SELECT ?g1 ?g2 ?g3 WHERE {
  ?g3 bench:time ?t2 .
  GRAPH ?g3 { ?obs3 ssn:observedProperty ?p1 ; sao:hasValue ?v3 }
  GRAPH ?g2 { ?obs2 ssn:observedProperty ?p1 ; sao:hasValue ?v2 }
  ?g2 bench:time ?t2 ; bench:stream <http://www.insight-centre.org/dataset/SampleEventService#AarhusTrafficData195578> .
  GRAPH ?g1 { ?obs1 ssn:observedProperty ?p1 ; sao:hasValue ?v1 }
  ?g1 bench:time ?t1 ; bench:stream <http://www.insight-centre.org/dataset/SampleEventService#AarhusTrafficData182955> .
  FILTER(?v1 > 3 && ?v2 >= ?v1 && ?v3 >= ?v1 && ?t1 < ?t2 && ?t2 - ?t1 <= {window})
}"""

BASELINE_QUERIES: dict[str, dict[str, tuple[str, str]]] = {
    "vshape-strict": {_STOCK: ("g3", _VSHAPE)},
    "vshape-next": {_STOCK: ("g3", _VSHAPE)},
    "vshape-any": {_STOCK: ("g3", _VSHAPE)},
    "vshape-any-matched": {_STOCK: ("g3", _VSHAPE)},  # every combination: counts for information
    "spike-any": {_STOCK: ("g2", _SPIKE)},
    "head-shoulders": {_STOCK: ("g7", _HEAD_SHOULDERS)},
    "creditcard": {_CC: ("g2", _CREDITCARD)},
    "smartgrid": {_SG[2]: ("g3", _SMARTGRID)},
    "traffic": {_TD[1]: ("g2", _TRAFFIC_B), _TD[2]: ("g3", _TRAFFIC_C)},
}
"""Per workload and stream: the graph variable the arriving event is substituted for and the
SPARQL query run (events of streams not listed only join the window)."""

BASELINE_EXACT = frozenset({"vshape-any", "spike-any"})
"""Workloads whose baseline computes exactly spaseq's matches."""


@dataclass
class WindowStoreBaseline:
    """Sliding-window SPARQL re-evaluation over a pyoxigraph Store (see the module docstring)."""

    workload: str
    window_seconds: float
    kb: Store | None = None
    keep_matches: bool = False
    store: Store = field(init=False)
    queries: dict[str, tuple[Variable, str]] = field(init=False)
    matches: int = 0
    found: list[tuple[str, ...]] = field(default_factory=list)
    _window: deque[tuple[float, NamedNode, Quad, Quad]] = field(default_factory=deque)
    _anonymous: int = 0

    def __post_init__(self) -> None:
        """Prepare the store (with the KB's quads, if any) and the per-stream queries."""
        if self.workload not in BASELINE_QUERIES:
            raise ValueError(f"no baseline query for workload {self.workload!r}")
        window = repr(float(self.window_seconds))
        self.queries = {
            stream: (Variable(var), _PREFIXES + text.replace("{window}", window))
            for stream, (var, text) in BASELINE_QUERIES[self.workload].items()
        }
        self.store = Store()
        if self.kb is not None:
            self.store.extend(self.kb)

    def push(self, event: Event, deadline: float | None = None) -> int:
        """Process one event: evict, insert, query; return the number of matches it completed."""
        horizon = event.time - Decimal(repr(float(self.window_seconds)))  # times are exact Decimal seconds
        while self._window and self._window[0][0] < horizon:
            _, graph, time_quad, stream_quad = self._window.popleft()
            self.store.remove_graph(graph)
            self.store.remove(time_quad)
            self.store.remove(stream_quad)
        graph = event.name if isinstance(event.name, NamedNode) else None
        if graph is None:
            self._anonymous += 1
            graph = NamedNode(f"{BENCH}event/{self._anonymous}")
        time_quad = Quad(graph, TIME, seconds_literal(event.time), DefaultGraph())
        stream_quad = Quad(graph, STREAM, NamedNode(event.stream), DefaultGraph())
        quads = [Quad(t.subject, t.predicate, t.object, graph) for t in event.triples]
        quads.append(time_quad)
        quads.append(stream_quad)
        self.store.extend(quads)
        self._window.append((event.time, graph, time_quad, stream_quad))
        query = self.queries.get(event.stream)
        if query is None:
            return 0
        var, text = query
        count = 0
        for solution in self.store.query(text, substitutions={var: graph}):
            count += 1
            if self.keep_matches:
                self.found.append(tuple(term.value for term in solution))
            if deadline is not None and count % 1024 == 0 and _time.perf_counter() > deadline:
                break
        self.matches += count
        return count

    def run(self, events: Iterable[Event]) -> int:
        """Push every event; return the total number of matches."""
        for event in events:
            self.push(event)
        return self.matches


def parse_ceiling(dataset: Dataset) -> int:
    """Parse every replay file of the dataset with pyoxigraph, touching each quad; return the quad count."""
    quads = 0
    for path in dataset.files():
        for quad in parse(path=path, format=RdfFormat.N_QUADS):
            quad.subject  # noqa: B018
            quad.predicate  # noqa: B018
            quad.object  # noqa: B018
            quad.graph_name  # noqa: B018
            quads += 1
    return quads
