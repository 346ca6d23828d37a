"""Background knowledge base: RDF files loaded into an in-memory pyoxigraph Store.

Each file is given on the command line as ``[GRAPH-IRI=]PATH`` (``parse_kb_option``); its format
is guessed from the extension (any format pyoxigraph reads; a ``.gz`` suffix or gzip content is
decompressed). Decisions:

* Quads in named graphs keep their graphs. Triples outside any named graph (every triple of a
  triples-only format) go into the file's graph IRI if one is given, otherwise into the single
  graph the query's GRAPH clauses name; if the query names none or several, that is an error
  asking for ``--kb IRI=PATH``. A file with no default-graph triples needs no graph IRI.
* Blank nodes are renamed per file, so two files never share a blank node by accident.
* Loading is all-or-nothing: every file goes into a fresh store, returned only if all succeeded.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass

from pyoxigraph import DefaultGraph, NamedNode, Quad, RdfFormat, Store, parse

from spaseq.engine.errors import KnowledgeBaseError, Location, UsageError
from spaseq.engine.io.parsing import READ_ERRORS, extension, open_rdf, syntax_error_location

EXTRA_EXTENSIONS: dict[str, RdfFormat] = {
    "nquads": RdfFormat.N_QUADS,
    "ntriples": RdfFormat.N_TRIPLES,
    "turtle": RdfFormat.TURTLE,
    "owl": RdfFormat.RDF_XML,
}

_SCHEME_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]+:\S*")


@dataclass(frozen=True)
class KbSpec:
    """One knowledge-base file and the named graph its default-graph triples go into, if given."""

    path: str
    graph: str | None = None


@dataclass
class KnowledgeBase:
    """The loaded knowledge base: the store and the named graphs it holds (sorted by IRI)."""

    store: Store
    graphs: list[NamedNode]

    def missing(self, query_graphs: list[str]) -> list[str]:
        """The query's GRAPH IRIs the knowledge base has no data for (the CLI warns about them)."""
        present = {g.value for g in self.graphs}
        return [g for g in dict.fromkeys(query_graphs) if g not in present]


def parse_kb_option(text: str) -> KbSpec:
    """Split the CLI text ``[GRAPH-IRI=]PATH`` into a KbSpec; UsageError if the IRI is invalid.

    The text is split at its first ``=`` only when it starts with ``<IRI>=`` or the part before
    the first ``=`` is an absolute IRI (a scheme of two or more letters, so ``C:`` stays a path);
    otherwise the whole text is a path.
    """
    graph: str | None = None
    path = text
    if text.startswith("<") and ">=" in text:
        graph, path = text[1:].split(">=", 1)
    elif "=" in text:
        head, rest = text.split("=", 1)
        if _SCHEME_RE.fullmatch(head):
            graph, path = head, rest
    if graph is not None:
        try:
            NamedNode(graph)
        except ValueError as err:
            raise UsageError(f"--kb {text}: {graph!r} is not a valid absolute IRI ({err})") from None
    if not path:
        raise UsageError(f"--kb {text}: no file given (expected [GRAPH-IRI=]PATH)")
    return KbSpec(path, graph)


def kb_format(path: str) -> RdfFormat | None:
    """The RDF format a knowledge-base file's name says, or None if it says none pyoxigraph reads."""
    ext = extension(path)
    return EXTRA_EXTENSIONS.get(ext) or RdfFormat.from_extension(ext)


def _target_graph(spec: KbSpec, query_graphs: list[str]) -> NamedNode | None:
    """Where a file's default-graph triples go, or None if that cannot be decided."""
    if spec.graph is not None:
        return NamedNode(spec.graph)
    distinct = list(dict.fromkeys(query_graphs))
    if len(distinct) == 1:
        return NamedNode(distinct[0])
    return None


def _ambiguous(spec: KbSpec, query_graphs: list[str]) -> KnowledgeBaseError:
    """The error for triples outside any named graph with no graph to put them in."""
    distinct = list(dict.fromkeys(query_graphs))
    if not distinct:
        reason = "the query's GRAPH clauses name no graph to put them in"
        hint = f"give one with --kb IRI={spec.path}"
    else:
        names = ", ".join(f"<{g}>" for g in distinct)
        reason = f"the query's GRAPH clauses name several graphs ({names}) and it is not clear which one they are"
        hint = f"pick one with --kb IRI={spec.path}, e.g. --kb {distinct[0]}={spec.path}"
    return KnowledgeBaseError(
        f"the file has triples outside any named graph, but {reason}; {hint}", Location(spec.path)
    )


def _file_quads(spec: KbSpec, fmt: RdfFormat, query_graphs: list[str]) -> Iterator[Quad]:
    """The quads of one file with default-graph triples moved into their target graph."""
    target = _target_graph(spec, query_graphs)
    with open_rdf(spec.path) as source:
        for quad in parse(source, fmt, rename_blank_nodes=True):
            if isinstance(quad.graph_name, DefaultGraph):
                if target is None:
                    raise _ambiguous(spec, query_graphs)
                quad = Quad(quad.subject, quad.predicate, quad.object, target)
            yield quad


def load_kb(specs: list[KbSpec], query_graphs: list[str]) -> KnowledgeBase:
    """Load the knowledge-base files into a fresh in-memory store; KnowledgeBaseError on any failure."""
    store = Store()
    for spec in specs:
        if not os.path.exists(spec.path):
            raise KnowledgeBaseError("no such file", Location(spec.path))
        if os.path.isdir(spec.path):
            raise KnowledgeBaseError("is a directory, not an RDF file", Location(spec.path))
        fmt = kb_format(spec.path)
        if fmt is None:
            raise KnowledgeBaseError(
                "cannot tell the RDF format from the file name (expected an extension such as .ttl, .nt,"
                " .nq, .trig, .n3, .rdf or .jsonld, optionally followed by .gz)",
                Location(spec.path),
            )
        try:
            store.extend(_file_quads(spec, fmt, query_graphs))
        except SyntaxError as err:
            location, message = syntax_error_location(err, spec.path)
            raise KnowledgeBaseError(f"{fmt.name} syntax error: {message}", location) from None
        except READ_ERRORS as err:
            raise KnowledgeBaseError(f"cannot read the file: {err}", Location(spec.path)) from None
    graphs = sorted(
        (g for g in store.named_graphs() if isinstance(g, NamedNode)),
        key=lambda g: g.value,
    )
    return KnowledgeBase(store, graphs)
