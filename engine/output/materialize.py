"""Materialisation: every result of every registered query stored in a pyoxigraph store (on
disk for ``--materialize DIR``), in the spaseq vocabulary (docs/vocabulary.md), so matches can
be queried afterwards with plain SPARQL.

Layout: the default graph holds each query (``<q> a spaseq:Query``) and each match
(``derived.result_graph``); the graph a CONSTRUCT query builds is stored as the named graph
``<m>`` with ``<m> prov:generatedAtTime τ`` in the default graph, so a TriG dump of the store is
itself a replay file of those graphs.
"""

from __future__ import annotations

import os

from pyoxigraph import DefaultGraph, NamedNode, Quad, Store, Triple

from spaseq.engine.algebra import operators as A
from spaseq.engine.errors import UsageError
from spaseq.engine.output.derived import Derived, result_graph
from spaseq.engine.output.match_rdf import FORM, QUERY, TEXT, describe_query, stamp_quads
from spaseq.engine.output.times import DEFAULT_TIME_FORMAT, check_time_format

DEFAULT = DefaultGraph()


def open_store(target: Store | str | os.PathLike) -> Store:
    """A store object as given, or the on-disk store at a directory (created if missing)."""
    if isinstance(target, Store):
        return target
    path = os.fspath(target)
    if os.path.exists(path) and not os.path.isdir(path):
        raise UsageError(f"--materialize {path}: not a directory")
    try:
        return Store(path)
    except OSError as exc:
        raise UsageError(f"--materialize {path}: cannot open an Oxigraph store there: {exc}") from None


class Materializer:
    """Stores the output events of queries, their times as ``time_format`` says (``times``);
    writes in batches, all of them by ``flush``."""

    BATCH = 4096

    def __init__(self, target: Store | str | os.PathLike, time_format: str = DEFAULT_TIME_FORMAT) -> None:
        self.time_format = check_time_format(time_format)
        self.store = open_store(target)
        self._pending: list[Quad] = []
        self._queries: set[str] = set()

    def check_query(self, iri: str) -> None:
        """Refuse a query whose matches the store already holds (a second run into the same
        store would mix two runs' match numbers): nothing is written then."""
        node = NamedNode(iri)
        if iri in self._queries or next(self.store.quads_for_pattern(None, QUERY, node, DEFAULT), None):
            raise UsageError(
                f"the materialisation store already holds matches of <{iri}>; use an empty store "
                "or directory, or give the query another output IRI"
            )

    def add_query(self, iri: str, query: A.Query, resume: bool = False) -> None:
        """Describe a registered query (replacing an earlier description without matches);
        ``resume``: a restored engine continues the query's matches in this store."""
        if not resume:
            self.check_query(iri)
        node = NamedNode(iri)
        for pred in (TEXT, FORM):
            for quad in list(self.store.quads_for_pattern(node, pred, None, DEFAULT)):
                self.store.remove(quad)
        form = "construct" if query.match.is_construct else "select"
        self.store.extend(_quads(describe_query(node, query.source, form)))
        self._queries.add(iri)

    def __call__(self, derived: Derived) -> None:
        """Store one result (and, for CONSTRUCT, the graph it built)."""
        self._pending += _quads(result_graph(derived.stream, derived.number, derived.row, None,
                                             self.time_format))
        if derived.query.match.is_construct:
            self._pending += _quads(derived.triples, derived.name)
            self._pending += stamp_quads(derived.name, derived.start, derived.time)
        if len(self._pending) >= self.BATCH:
            self.flush()

    def write(self) -> None:
        """Write everything stored so far (one transaction), visible to queries of the store
        at once; ``flush`` also forces it to disk."""
        if self._pending:
            self.store.extend(self._pending)
            self._pending = []

    def flush(self) -> None:
        """Write everything stored so far (one transaction) and flush it to disk."""
        self.write()
        self.store.flush()

    def close(self) -> None:
        """Flush, then let go of the store (an on-disk store is unlocked once unreferenced)."""
        if self.store is not None:
            self.flush()
            self.store = None  # type: ignore[assignment]


def _quads(triples: list[Triple] | tuple[Triple, ...], graph: NamedNode | DefaultGraph = DEFAULT) -> list[Quad]:
    return [Quad(t.subject, t.predicate, t.object, graph) for t in triples]
