"""TriG output: each result of a query as a named graph event (``derived``), its timestamp as
``<graph> prov:generatedAtTime τ`` in the default graph, so that the output is itself a
spaseq replay file (a derived stream another query can run over). Written incrementally:
one block per result, flushed as it completes. ``spaseq run`` writes TriG natively
(engine/native/output/src/trig.rs, ``output.native``) byte for byte as this writer does (blank
nodes aside, fresh on both sides): this writer is its oracle, and writes what it does not take
(composed queries, --materialize, --engine reference)."""

from __future__ import annotations

from typing import IO

from pyoxigraph import DefaultGraph, Quad, RdfFormat, serialize

from spaseq.engine.output.derived import Derived
from spaseq.engine.output.match_rdf import stamp_literal
from spaseq.engine.vocab import GENERATED_AT_TIME, PROV_NS, SPASEQ_NS, XSD_NS


class TrigWriter:
    """``start`` once (prefix declarations), ``event`` per result, ``finish`` once."""

    def __init__(self, out: IO[str], prefixes: dict[str, str] | None = None) -> None:
        self.out = out
        self.prefixes = {"prov": PROV_NS, "xsd": XSD_NS, "spaseq": SPASEQ_NS, **(prefixes or {})}

    def start(self) -> None:
        for prefix, ns in self.prefixes.items():
            self.out.write(f"@prefix {prefix}: <{ns}> .\n")

    def event(self, derived: Derived) -> None:
        quads = [Quad(derived.name, GENERATED_AT_TIME, stamp_literal(derived.time), DefaultGraph())]
        quads += [Quad(t.subject, t.predicate, t.object, derived.name) for t in derived.triples]
        text = serialize(quads, format=RdfFormat.TRIG, prefixes=self.prefixes).decode("utf-8")  # type: ignore[union-attr]  # pyoxigraph's stubs: bytes, not None, without an output
        lines = text.splitlines(keepends=True)
        while lines and lines[0].startswith("@prefix "):  # declared once, in start()
            lines.pop(0)
        self.out.write("".join(lines))
        self.out.flush()

    def finish(self) -> None:
        self.out.flush()
