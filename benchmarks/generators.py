"""Deterministic workload generators writing N-Quads replay files (one named graph per event).

Each event is a named graph ``<g>`` plus the default-graph triple
``<g> prov:generatedAtTime "..."^^xsd:dateTime``, written before the graph's triples, in time
order, so the files can be read whole or streamed by the native reader (``spaseq run``,
``spaseq.engine.io.native_events``). The
four datasets model the paper's Section 8 (synthetic stand-ins for its real datasets):

* ``stock`` (SMD): trades ``{ ?company pred:price ?p ; pred:volume ?v }`` of a few companies with
  a random-walk price, one trade per second on one stream; the trading company is "sticky" (the
  next trade is by the same company with probability ``STOCK_STICKINESS``) so that strictly
  contiguous patterns (``,``) occur.
* ``creditcard`` (CCD): transactions ``{ ?card pred:id ?id ; pred:amount ?a }``, one per second,
  with injected "small purchase then big purchases" bursts on one card, and a knowledge base of
  card holders (N-Triples for the graph ``http://creditcard.org/db``).
* ``smartgrid`` (SHD): the three streams of ``fixtures/smartgrid`` (power, weather, storage) at
  one event per second over a few locations (sticky, like a local burst of readings), with a
  knowledge base of houses (location city, neighbours, owner).
* ``traffic`` (TD): three road-segment streams (the paper's Query 5) reporting two observed
  properties each every ``TRAFFIC_TICK`` seconds, all at the same instants.
* ``sensors``: program P's stream (cera-xchangeeq-two-semantics.txt, ``fixtures/cera``) scaled
  up: temperature readings ``{ ?e a ex:Temp ; ex:area ?a ; ex:sensor ?s ; ex:value ?v }`` and
  smoke ``{ ?e a ex:Smoke ; ex:area ?a }``, one ending per second, each lasting 0 to 3 s (an
  event that lasts has ``prov:startedAtTime`` and ``prov:endedAtTime`` instead of the
  timestamp, decision 71); some sensors fall silent for a while after a hot reading.

``generate(kind, size, out_dir)`` writes the files once per (kind, size, seed) and caches them
with a manifest; sizes are total event counts over all streams.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from fractions import Fraction
from io import TextIOWrapper
from pathlib import Path

PROV_GENERATED_AT = "http://www.w3.org/ns/prov#generatedAtTime"
PROV_STARTED_AT = "http://www.w3.org/ns/prov#startedAtTime"
PROV_ENDED_AT = "http://www.w3.org/ns/prov#endedAtTime"
XSD = "http://www.w3.org/2001/XMLSchema#"
BASE_TIME = int(datetime(2026, 1, 1, tzinfo=timezone.utc).timestamp())
DEFAULT_SEED = 42
MANIFEST_VERSION = 2

PRED = "http://example/"
STOCK_STREAM = "http://stockmarket.org/stocks"
STOCK_COMPANIES = 4
STOCK_STICKINESS = 0.75
STOCKMANY_COMPANIES = 40  # the many-key stock stream (issue 29): 40 companies, 10 trades a second
STOCKMANY_RATE = 10

CC_STREAM = "http://creditcard.org/transactions"
CC_KB_GRAPH = "http://creditcard.org/db"
CC_NS = "http://creditcard.org/ns#"
CC_CARDS = 1000
CC_BURST_PROBABILITY = 0.02

SG = "http://smartgrid.org/ns#"
SG_STREAMS = (
    "http://smartgrid.org/mainSource",
    "http://smartgrid.org/weather",
    "http://smartgrid.org/storageSource",
)
SG_KB_GRAPH = "http://smartgrid.org/db"
SG_LOCATIONS = 4
SG_HOUSES_PER_LOCATION = 5
SG_STICKINESS = 0.7

SSN = "http://purl.oclc.org/NET/ssnx/ssn#"
SAO = "http://purl.oclc.org/NET/sao/"
CT = "http://www.insight-centre.org/citytraffic#"
TRAFFIC_STREAMS = (
    "http://www.insight-centre.org/dataset/SampleEventService#AarhusTrafficData182955",
    "http://www.insight-centre.org/dataset/SampleEventService#AarhusTrafficData195578",
    "http://www.insight-centre.org/dataset/SampleEventService#AarhusTrafficData195446",
)
TRAFFIC_PROPERTIES = (CT + "CongestionLevel", CT + "AverageSpeed")
TRAFFIC_TICK = 5

SENSORS = "http://example.org/sensors#"
SENSORS_STREAM = "http://example.org/sensors"
SENSORS_AREAS = 20
SENSORS_PER_AREA = 5
SENSORS_SMOKE_PROBABILITY = 0.02
SENSORS_SILENCE_PROBABILITY = 0.3  # after a hot reading, the sensor stays silent for 15-40 s

KINDS = ("stock", "stockmany", "creditcard", "smartgrid", "traffic", "sensors")

Triple = tuple[str, str, str]
"""A triple as three N-Triples term strings."""


@dataclass(frozen=True)
class Dataset:
    """A generated workload: its replay files per stream (in FROM STREAM order) and its KB."""

    kind: str
    size: int
    seed: int
    streams: dict[str, str]
    events: int
    triples: int
    kb: str | None = None
    kb_graph: str | None = None
    kb_triples: int = 0
    first_time: float = 0.0
    last_time: float = 0.0
    version: int = MANIFEST_VERSION
    extra: dict[str, object] = field(default_factory=dict)

    def to_json(self) -> dict[str, object]:
        """The manifest as JSON-ready data."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> Dataset:
        """A Dataset from its manifest data."""
        return cls(**data)

    def files(self) -> list[str]:
        """Every replay file of the dataset, in stream order."""
        return list(self.streams.values())


def iri(value: str) -> str:
    """An IRI as an N-Triples term."""
    return f"<{value}>"


def lit(value: str, datatype: str | None = None) -> str:
    """A literal as an N-Triples term (the lexical form must need no escaping)."""
    return f'"{value}"' if datatype is None else f'"{value}"^^<{datatype}>'


def integer(value: int) -> str:
    """An xsd:integer literal."""
    return lit(str(value), XSD + "integer")


def decimal_cents(cents: int) -> str:
    """An xsd:decimal literal for an amount in hundredths (``12345`` -> ``123.45``)."""
    sign = "-" if cents < 0 else ""
    cents = abs(cents)
    return lit(f"{sign}{cents // 100}.{cents % 100:02d}", XSD + "decimal")


def datetime_literal(seconds: int | Fraction) -> str:
    """The xsd:dateTime literal of ``BASE_TIME + seconds`` (UTC; a fraction of a second in
    tenths, for streams of several events a second)."""
    whole = int(seconds)
    stamp = datetime.fromtimestamp(BASE_TIME + whole, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
    tenths = int((seconds - whole) * 10)
    return lit(f"{stamp}.{tenths}Z" if tenths else f"{stamp}Z", XSD + "dateTime")


class ReplayWriter:
    """Writes events to one N-Quads file per stream and counts them."""

    def __init__(self, paths: list[str]) -> None:
        """Open one file per stream for writing."""
        self.paths = paths
        self.files: list[TextIOWrapper] = [
            open(p, "w", encoding="utf-8", newline="\n") for p in paths
        ]
        self.events = 0
        self.lasting = 0
        self.triples = 0
        self.first_time: int | Fraction | None = None
        self.last_time: int | Fraction = 0

    def event(self, stream: int, graph: str, seconds: int | Fraction, triples: list[Triple],
              start: int | None = None) -> None:
        """Write one event: its timestamp triple (or, lasting from ``start``, its start and end
        triples), then its graph's triples."""
        g = iri(graph)
        out = self.files[stream]
        if start is None or start == seconds:
            lines = [f"{g} <{PROV_GENERATED_AT}> {datetime_literal(seconds)} .\n"]
        else:
            lines = [f"{g} <{PROV_STARTED_AT}> {datetime_literal(start)} .\n",
                     f"{g} <{PROV_ENDED_AT}> {datetime_literal(seconds)} .\n"]
            self.lasting += 1
        lines.extend(f"{s} {p} {o} {g} .\n" for s, p, o in triples)
        out.write("".join(lines))
        self.events += 1
        self.triples += len(triples)
        if self.first_time is None:
            self.first_time = seconds
        self.last_time = seconds

    def close(self) -> None:
        """Close every file."""
        for f in self.files:
            f.close()


def write_ntriples(path: str, triples: list[Triple]) -> int:
    """Write triples as an N-Triples file; return how many."""
    with open(path, "w", encoding="utf-8", newline="\n") as out:
        out.write("".join(f"{s} {p} {o} .\n" for s, p, o in triples))
    return len(triples)


# ---------------------------------------------------------------------------------- stock


def stock_events(size: int, rng: random.Random, companies: int = STOCK_COMPANIES) -> Iterator[
    tuple[int, int, str, list[Triple]]
]:
    """Stock trades: (stream index, second, graph IRI, triples), one trade per second."""
    names = [iri(f"http://stockmarket.org/company/C{i}") for i in range(companies)]
    cents = [10000 + 2500 * i for i in range(companies)]
    price, volume = iri(PRED + "price"), iri(PRED + "volume")
    current = rng.randrange(companies)
    for i in range(size):
        if rng.random() >= STOCK_STICKINESS:
            current = rng.randrange(companies)
        cents[current] = max(100, cents[current] + round(rng.gauss(0.0, 25.0)))
        company = names[current]
        triples = [
            (company, price, decimal_cents(cents[current])),
            (company, volume, integer(rng.randint(100, 5000))),
        ]
        yield 0, i, f"http://stockmarket.org/event/{i}", triples


def stockmany_events(size: int, rng: random.Random) -> Iterator[tuple[int, Fraction, str, list[Triple]]]:
    """Many-key stock trades: ``STOCKMANY_COMPANIES`` companies trading at random (no
    stickiness), ``STOCKMANY_RATE`` trades a second (times in tenths), random-walk prices:
    many partitions of a few events each in a window, as a real ticker has."""
    names = [iri(f"http://stockmarket.org/company/M{i}") for i in range(STOCKMANY_COMPANIES)]
    cents = [10000 + 500 * i for i in range(STOCKMANY_COMPANIES)]
    price, volume = iri(PRED + "price"), iri(PRED + "volume")
    for i in range(size):
        k = rng.randrange(STOCKMANY_COMPANIES)
        cents[k] = max(100, cents[k] + round(rng.gauss(0.0, 55.0)))
        triples = [(names[k], price, decimal_cents(cents[k])), (names[k], volume, integer(rng.randint(100, 5000)))]
        yield 0, Fraction(i, STOCKMANY_RATE), f"http://stockmarket.org/many/{i}", triples


# ---------------------------------------------------------------------------------- credit card


def creditcard_kb(cards: int) -> list[Triple]:
    """The card-holder knowledge base: ``?id :cardHolder ?name ; :holderAddress ?addr``."""
    holder, address = iri(CC_NS + "cardHolder"), iri(CC_NS + "holderAddress")
    out: list[Triple] = []
    for c in range(cards):
        card_id = iri(f"http://creditcard.org/id/{c}")
        out.append((card_id, holder, lit(f"Holder {c}")))
        out.append((card_id, address, lit(f"{c + 1} Main Street, Springfield")))
    return out


def creditcard_events(size: int, rng: random.Random, cards: int = CC_CARDS) -> Iterator[
    tuple[int, int, str, list[Triple]]
]:
    """Card transactions, one per second, with injected small-then-big bursts on one card."""
    pid, pamount = iri(PRED + "id"), iri(PRED + "amount")
    burst: list[tuple[int, int]] = []
    for i in range(size):
        if burst:
            card, cents = burst.pop(0)
        elif rng.random() < CC_BURST_PROBABILITY:
            card = rng.randrange(cards)
            cents = rng.randint(50, 499)
            burst = [(card, cents * rng.randint(10, 60)) for _ in range(rng.randint(1, 3))]
        else:
            card = rng.randrange(cards)
            cents = min(500000, max(100, round(rng.lognormvariate(3.5, 1.0) * 100)))
        node = iri(f"http://creditcard.org/card/{card}")
        triples = [
            (node, pid, iri(f"http://creditcard.org/id/{card}")),
            (node, pamount, decimal_cents(cents)),
        ]
        yield 0, i, f"http://creditcard.org/event/{i}", triples


# ---------------------------------------------------------------------------------- smart grid


def smartgrid_kb(locations: int = SG_LOCATIONS, per_location: int = SG_HOUSES_PER_LOCATION) -> list[Triple]:
    """Houses: ``:locatedIn`` a city, ``:nearBy`` one or two houses of the same location, ``:ownerName``."""
    out: list[Triple] = []
    located, near, owner = iri(SG + "locatedIn"), iri(SG + "nearBy"), iri(SG + "ownerName")
    for loc in range(locations):
        for k in range(per_location):
            h = loc * per_location + k
            house = iri(f"{SG}H{h}")
            out.append((house, located, iri(f"{SG}City{loc % 2}")))
            out.append((house, owner, lit(f"Owner {h}")))
            out.append((house, near, iri(f"{SG}H{loc * per_location + (k + 1) % per_location}")))
            if k % 2 == 0:
                out.append((house, near, iri(f"{SG}H{loc * per_location + (k + 2) % per_location}")))
    return out


def smartgrid_events(
    size: int,
    rng: random.Random,
    locations: int = SG_LOCATIONS,
    per_location: int = SG_HOUSES_PER_LOCATION,
) -> Iterator[tuple[int, int, str, list[Triple]]]:
    """Power (S1), weather (S2) and storage (S3) events, one per second, at a sticky location."""
    loc_p, pow_p, src_p, fare_p = iri(SG + "loc"), iri(SG + "pow"), iri(SG + "source"), iri(SG + "fare")
    watt_p, value_p, light_p, wind_p = iri(SG + "watt"), iri(SG + "value"), iri(SG + "light"), iri(SG + "windsp")
    fuel, solar = lit("fuel"), lit("solar")
    current = rng.randrange(locations)
    counters = [0, 0, 0]
    for i in range(size):
        if rng.random() >= SG_STICKINESS:
            current = rng.randrange(locations)
        location = iri(f"{SG}L{current}")
        r = rng.random()
        stream = 0 if r < 0.4 else 1 if r < 0.8 else 2
        counters[stream] += 1
        n = counters[stream]
        if stream == 0:
            house = iri(f"{SG}H{current * per_location + rng.randrange(per_location)}")
            pw = iri(f"{SG}pw{n}")
            triples = [
                (house, loc_p, location), (house, pow_p, pw), (pw, src_p, fuel),
                (pw, fare_p, integer(rng.randint(10, 40))), (pw, watt_p, integer(rng.randint(300, 400))),
            ]
            graph = f"http://smartgrid.org/event/power/{n}"
        elif stream == 1:
            station, vl = iri(f"{SG}wsL{current}"), iri(f"{SG}vl{n}")
            triples = [
                (station, loc_p, location), (station, value_p, vl),
                (vl, light_p, integer(rng.randint(20, 100))), (vl, wind_p, integer(rng.randint(0, 12))),
            ]
            graph = f"http://smartgrid.org/event/weather/{n}"
        else:
            storage, spw = iri(f"{SG}stL{current}"), iri(f"{SG}spw{n}")
            triples = [
                (storage, loc_p, location), (storage, pow_p, spw), (spw, src_p, solar),
                (spw, fare_p, integer(rng.randint(5, 35))),
            ]
            graph = f"http://smartgrid.org/event/storage/{n}"
        yield stream, i, graph, triples


# ---------------------------------------------------------------------------------- traffic


def traffic_events(size: int, rng: random.Random) -> Iterator[tuple[int, int, str, list[Triple]]]:
    """Three road segments observing two properties each, all every ``TRAFFIC_TICK`` seconds."""
    prop_p, value_p, by_p = iri(SSN + "observedProperty"), iri(SAO + "hasValue"), iri(SSN + "observedBy")
    props = [iri(p) for p in TRAFFIC_PROPERTIES]
    values = [[rng.randint(0, 40) for _ in props] for _ in TRAFFIC_STREAMS]
    bounds = [(0, 60), (10, 90)]
    i = 0
    tick = 0
    while i < size:
        for s in range(len(TRAFFIC_STREAMS)):
            sensor = iri(f"http://www.insight-centre.org/dataset/sensor/{s}")
            for k, prop in enumerate(props):
                if i >= size:
                    return
                lo, hi = bounds[k]
                values[s][k] = min(hi, max(lo, values[s][k] + rng.randint(-4, 4)))
                obs = iri(f"http://www.insight-centre.org/dataset/observation/{s}/{k}/{tick}")
                triples = [(obs, prop_p, prop), (obs, value_p, integer(values[s][k])), (obs, by_p, sensor)]
                yield s, tick * TRAFFIC_TICK, f"http://www.insight-centre.org/dataset/event/{s}/{k}/{tick}", triples
                i += 1
        tick += 1


# ---------------------------------------------------------------------------------- sensors


def sensors_events(size: int, rng: random.Random) -> Iterator[tuple[int, int, str, list[Triple], int]]:
    """Program P's readings and smoke, one event ending per second, each lasting 0-3 s."""
    type_p, area_p, sensor_p, value_p = (iri("http://www.w3.org/1999/02/22-rdf-syntax-ns#type"),
                                         iri(SENSORS + "area"), iri(SENSORS + "sensor"), iri(SENSORS + "value"))
    temp, smoke = iri(SENSORS + "Temp"), iri(SENSORS + "Smoke")
    sensors = SENSORS_AREAS * SENSORS_PER_AREA
    values = [rng.randint(20, 40) for _ in range(sensors)]
    silent_until = [0] * sensors
    for i in range(size):
        start = i - rng.randint(0, 3)
        e = iri(f"{SENSORS}e{i}")
        if rng.random() < SENSORS_SMOKE_PROBABILITY:
            area = iri(f"{SENSORS}a{rng.randrange(SENSORS_AREAS)}")
            yield 0, i, f"{SENSORS_STREAM}/event/{i}", [(e, type_p, smoke), (e, area_p, area)], start
            continue
        awake = [s for s in range(sensors) if silent_until[s] <= i] or [rng.randrange(sensors)]
        s = rng.choice(awake)
        values[s] = min(50, max(15, values[s] + rng.randint(-3, 3)))
        if values[s] > 40 and rng.random() < SENSORS_SILENCE_PROBABILITY:
            silent_until[s] = i + rng.randint(15, 40)
        triples = [(e, type_p, temp), (e, area_p, iri(f"{SENSORS}a{s // SENSORS_PER_AREA}")),
                   (e, sensor_p, iri(f"{SENSORS}s{s}")), (e, value_p, integer(values[s]))]
        yield 0, i, f"{SENSORS_STREAM}/event/{i}", triples, start


# ---------------------------------------------------------------------------------- driver

EventSource = Callable[[int, random.Random], Iterator[tuple]]
"""Events as (stream index, seconds, graph IRI, triples[, start seconds])."""

_SPECS: dict[str, tuple[tuple[str, ...], tuple[str, ...], EventSource]] = {
    "stock": ((STOCK_STREAM,), ("stocks",), stock_events),
    "stockmany": ((STOCK_STREAM,), ("stocks",), stockmany_events),
    "creditcard": ((CC_STREAM,), ("transactions",), creditcard_events),
    "smartgrid": (SG_STREAMS, ("power", "weather", "storage"), smartgrid_events),
    "traffic": (TRAFFIC_STREAMS, ("segment1", "segment2", "segment3"), traffic_events),
    "sensors": ((SENSORS_STREAM,), ("sensors",), sensors_events),
}


def _kb(kind: str) -> tuple[list[Triple], str] | None:
    """The knowledge base triples and graph of a dataset kind, if it has one."""
    if kind == "creditcard":
        return creditcard_kb(CC_CARDS), CC_KB_GRAPH
    if kind == "smartgrid":
        return smartgrid_kb(), SG_KB_GRAPH
    return None


def generate(
    kind: str, size: int, out_dir: str | os.PathLike[str], seed: int = DEFAULT_SEED, force: bool = False
) -> Dataset:
    """Write (or reuse, if already written) the dataset ``kind`` with ``size`` events; return it."""
    if kind not in _SPECS:
        raise ValueError(f"unknown dataset {kind!r}; expected one of {', '.join(KINDS)}")
    if size < 1:
        raise ValueError("size must be at least 1")
    directory = Path(out_dir)
    directory.mkdir(parents=True, exist_ok=True)
    stem = f"{kind}-{size}-s{seed}"
    manifest = directory / f"{stem}.json"
    if manifest.exists() and not force:
        data = json.loads(manifest.read_text(encoding="utf-8"))
        if data.get("version") == MANIFEST_VERSION:
            dataset = Dataset.from_json(data)
            if all(os.path.exists(p) for p in dataset.files()) and (dataset.kb is None or os.path.exists(dataset.kb)):
                return dataset
    streams, labels, source = _SPECS[kind]
    paths = [str(directory / f"{stem}-{label}.nq") for label in labels]
    rng = random.Random(f"{kind}:{seed}")
    writer = ReplayWriter(paths)
    try:
        for stream, seconds, graph, triples, *start in source(size, rng):
            writer.event(stream, graph, seconds, triples, *start)
    finally:
        writer.close()
    kb_path: str | None = None
    kb_graph: str | None = None
    kb_triples = 0
    kb = _kb(kind)
    if kb is not None:
        kb_path = str(directory / f"{stem}-kb.nt")
        kb_triples = write_ntriples(kb_path, kb[0])
        kb_graph = kb[1]
    dataset = Dataset(
        kind=kind,
        size=size,
        seed=seed,
        streams=dict(zip(streams, paths, strict=True)),
        events=writer.events,
        triples=writer.triples,
        kb=kb_path,
        kb_graph=kb_graph,
        kb_triples=kb_triples,
        first_time=float(BASE_TIME + (writer.first_time or 0)),
        last_time=float(BASE_TIME + writer.last_time),
        extra={"lasting": writer.lasting} if writer.lasting else {},
    )
    manifest.write_text(json.dumps(dataset.to_json(), indent=2) + "\n", encoding="utf-8")
    return dataset
