"""The SPARQL 1.1 Protocol's query operation over a pyoxigraph store (the KB's named graphs
and the materialised matches), with pyoxigraph's serialisers and content negotiation, and the
test that tells a SPAseq query (the streaming extension) from plain SPARQL."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import pyoxigraph
from pyoxigraph import NamedNode, QueryBoolean, QueryResultsFormat, QuerySolutions, RdfFormat, Store

from . import negotiation as mt

#: SELECT/ASK results: media type -> format (the first is the default)
RESULT_FORMATS: dict[str, QueryResultsFormat] = {
    mt.SPARQL_JSON: QueryResultsFormat.JSON, mt.SPARQL_XML: QueryResultsFormat.XML,
    mt.CSV: QueryResultsFormat.CSV, mt.TSV: QueryResultsFormat.TSV, mt.JSON: QueryResultsFormat.JSON,
    "application/xml": QueryResultsFormat.XML,
}
#: CONSTRUCT/DESCRIBE results
GRAPH_FORMATS: dict[str, RdfFormat] = {
    mt.TURTLE: RdfFormat.TURTLE, mt.NTRIPLES: RdfFormat.N_TRIPLES, mt.NQUADS: RdfFormat.N_QUADS,
    mt.TRIG: RdfFormat.TRIG, mt.RDF_XML: RdfFormat.RDF_XML, "text/plain": RdfFormat.N_TRIPLES,
}

# A SPAseq query names streams, a window or a sequence: none of these is SPARQL 1.1.
_SPASEQ = re.compile(r"\bFROM\s+STREAM\b|\bWITHIN\s+[0-9]|\bSEQ\s*\(", re.IGNORECASE)
_STRINGS = re.compile(r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|<[^<>"\s]*>|#[^\n]*')
_PYOX_ERROR = re.compile(r"^(?:error at )?(\d+):(\d+)(?:-\d+:\d+)?: (.*)$", re.S)


def is_spaseq(text: str) -> bool:
    """Whether ``text`` is a SPAseq query (WITHIN, FROM STREAM or SEQ outside strings, IRIs
    and comments) rather than a plain SPARQL one."""
    return _SPASEQ.search(_STRINGS.sub(" ", text)) is not None


_DATASET_CLAUSE = re.compile(r"\bUSING\b|\bWITH\b", re.IGNORECASE)


def names_its_dataset(update: str) -> bool:
    """Whether a SPARQL Update gives its own dataset (USING, USING NAMED or WITH, outside
    strings, IRIs and comments): the protocol then forbids the using-graph-uri parameters."""
    return _DATASET_CLAUSE.search(_STRINGS.sub(" ", update)) is not None


_WORD = re.compile(r"[{}]|\b(?:WHERE|DELETE)\b", re.IGNORECASE)


def with_using(update: str, using: list[str], using_named: list[str]) -> str:
    """The update with the protocol's ``using-graph-uri``/``using-named-graph-uri`` written
    into it: ``USING <g>`` / ``USING NAMED <g>`` before the WHERE of each DELETE/INSERT
    operation (SPARQL 1.1 Protocol 2.2.3: the same as writing them there). The text is read
    with strings, IRIs and comments masked, braces counted, so only top-level WHEREs move;
    ``DELETE WHERE`` takes no USING and is left as it is."""
    clauses = "".join(f"USING <{g}> " for g in using) + "".join(f"USING NAMED <{g}> " for g in using_named)
    masked = _STRINGS.sub(lambda m: " " * len(m.group()), update)
    depth, previous, cuts = 0, "", []
    for m in _WORD.finditer(masked):
        token = m.group().upper()
        if token == "{":
            depth += 1
        elif token == "}":
            depth -= 1
        elif token == "WHERE" and depth == 0 and previous != "DELETE":
            cuts.append(m.start())
        if token in ("WHERE", "DELETE") or token in "{}":
            previous = token if depth == 0 or token in "{}" else previous
    for at in reversed(cuts):
        update = update[:at] + clauses + update[at:]
    return update


class SparqlError(Exception):
    """A query the store refuses (400): ``LINE:COLUMN: message`` when it says where."""


class NotAcceptable(Exception):
    """No result format the client accepts (406); the message lists those offered."""


@dataclass
class Dataset:
    """The protocol's ``default-graph-uri`` and ``named-graph-uri`` parameters."""

    default: list[str] = field(default_factory=list)
    named: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Answer:
    body: bytes
    media_type: str


def evaluate(store: Store, query: str, dataset: Dataset, accept: str | None) -> Answer:
    """Run ``query`` on ``store`` and serialise the result as the client prefers."""
    kwargs: dict = {}
    try:
        if dataset.default:
            kwargs["default_graph"] = [NamedNode(g) for g in dataset.default]
        if dataset.named:
            kwargs["named_graphs"] = [NamedNode(g) for g in dataset.named]
    except ValueError as exc:
        raise SparqlError(f"a graph URI is not an absolute IRI: {exc}") from None
    try:
        result = store.query(query, **kwargs)
    except SyntaxError as exc:
        raise SparqlError(_located(exc.msg or str(exc))) from None
    except (OSError, ValueError, RuntimeError) as exc:
        raise SparqlError(str(exc)) from None
    if isinstance(result, QuerySolutions | QueryBoolean):
        media = mt.negotiate(accept, list(RESULT_FORMATS))
        if media is None:
            raise NotAcceptable("SELECT and ASK results come as " + ", ".join(RESULT_FORMATS))
        return Answer(result.serialize(format=RESULT_FORMATS[media]), with_charset(media))  # type: ignore[arg-type]  # pyoxigraph's stubs: bytes, not None, without an output
    media = mt.negotiate(accept, list(GRAPH_FORMATS))
    if media is None:
        raise NotAcceptable("CONSTRUCT and DESCRIBE results come as " + ", ".join(GRAPH_FORMATS))
    return Answer(result.serialize(format=GRAPH_FORMATS[media]), with_charset(media))  # type: ignore[arg-type]  # pyoxigraph's stubs: bytes, not None, without an output


def results_from_json(document: dict, media: str) -> bytes:
    """A SPARQL JSON results document in another results format, by pyoxigraph."""
    import json

    solutions = pyoxigraph.parse_query_results(json.dumps(document).encode(), format=QueryResultsFormat.JSON)
    return solutions.serialize(format=RESULT_FORMATS[media])  # type: ignore[return-value]  # pyoxigraph's stubs: bytes, not None, without an output


def _located(message: str) -> str:
    m = _PYOX_ERROR.match(message)
    return f"{m[1]}:{m[2]}: {m[3]}" if m else message


def with_charset(media: str) -> str:
    """A text media type's Content-Type: UTF-8 said (XML says its own encoding)."""
    return media if media.endswith("xml") else f"{media}; charset=utf-8"
