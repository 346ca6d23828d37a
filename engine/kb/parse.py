"""N-Triples / N-Quads lines parsed in Spark executors with pyoxigraph's parser.

A partition's lines are parsed in batches (one parser call per batch); a batch with a syntax
error is parsed again line by line so that exactly the bad lines are rejected, with their
position. Each good statement becomes one canonical N-Quads line with its target graph:
triples go into ``--graph`` (or stay in the default graph), quads keep their own graph.
Blank nodes are skolemised per file (RDF 1.1 section 3.5) into IRIs of the spaseq namespace,
so that they keep their identity across export files, store versions and refreshes.

Rows are tuples ``(kind, text, graph, file, block, index, reason)``:
``OK`` (text = the N-Quads line, graph = its graph IRI, "" for the default graph), ``BAD``
(text = the line, ``index`` its 0-based position in the file split starting at byte
``block``, ``reason`` pyoxigraph's message), ``COUNT`` (``index`` = the split's number of
lines, to turn split positions into file line numbers), ``PRUNED`` (``index`` = the
split's statements dropped by ``--for-query``) and ``BROKEN`` (a file read whole that does
not parse, ``whole``: ``index`` the line of its error, ``reason`` the message).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator
from typing import TypeVar

from pyoxigraph import BlankNode, DefaultGraph, NamedNode, Quad, RdfFormat, parse

from spaseq.engine.compile.kb_relevance import QuadFilter
from spaseq.engine.vocab import SPASEQ_NS

OK, BAD, COUNT, PRUNED, BROKEN = 0, 1, 2, 3, 4
BATCH_LINES = 2000
MAX_REJECT_TEXT = 2000
_POSITION = re.compile(r"^Parser error (?:at|between) [^:]*: ")
_COLUMN = re.compile(r"^column (\d+): ")

Row = tuple[int, str | None, str | None, str | None, int | None, int | None, str | None]


def skolem_prefix(file: str) -> str:
    """The IRI prefix that replaces the blank nodes of one file."""
    return f"{SPASEQ_NS}genid-{hashlib.sha1(file.encode('utf-8')).hexdigest()[:16]}-"


_T = TypeVar("_T")


def _skolem(term: _T, prefix: str) -> _T | NamedNode:
    """``term``, a blank node replaced by its skolem IRI."""
    return NamedNode(prefix + term.value) if isinstance(term, BlankNode) else term


def normalise(quad: Quad, prefix: str, graph: NamedNode | None) -> Quad:
    """Skolemise blank nodes and move a default-graph triple into ``graph`` (if given)."""
    g = quad.graph_name
    if isinstance(g, DefaultGraph):
        g = graph if graph is not None else g
    else:
        g = _skolem(g, prefix)
    return Quad(_skolem(quad.subject, prefix), quad.predicate, _skolem(quad.object, prefix), g)


def nquads_line(quad: Quad) -> str:
    return f"{quad} ."


def graph_key(quad: Quad) -> str:
    g = quad.graph_name
    return g.value if isinstance(g, NamedNode) else ""


def reason_of(err: SyntaxError) -> tuple[str, int | None]:
    """pyoxigraph's message without its position prefix, and the column of the error
    (1-based: SyntaxError.offset, which pyoxigraph sets)."""
    msg = str(err.msg if getattr(err, "msg", None) else err)
    m = _POSITION.match(msg)
    column = err.offset if isinstance(err.offset, int) and err.offset > 0 else None
    return (msg[m.end():] if m else msg), column


def split_reason(reason: str) -> tuple[int | None, str]:
    """A BAD row's reason as (column, message): the inverse of the ``column N:`` prefix."""
    m = _COLUMN.match(reason)
    return (int(m.group(1)), reason[m.end():]) if m else (None, reason)


def parse_rows(rows: Iterable, graph: str | None, keep: QuadFilter | None) -> Iterator[Row]:
    """Parse a partition of ``(line, file, block)`` rows (a file split's lines are consecutive)."""
    target = NamedNode(graph) if graph else None
    key: tuple[str, int] | None = None
    index = 0
    batch: list[str] = []
    start = 0
    prefix = ""
    for line, file, block in rows:
        if (file, block) != key:
            if key is not None:
                yield from _flush(batch, key, start, prefix, target, keep)
                yield (COUNT, None, None, key[0], key[1], index, None)
            key, index, batch, start, prefix = (file, block), 0, [], 0, skolem_prefix(file)
        if not batch:
            start = index
        batch.append(line)
        index += 1
        if len(batch) >= BATCH_LINES:
            yield from _flush(batch, key, start, prefix, target, keep)
            batch = []
    if key is not None:
        yield from _flush(batch, key, start, prefix, target, keep)
        yield (COUNT, None, None, key[0], key[1], index, None)


def _flush(batch: list[str], key: tuple[str, int], start: int, prefix: str,
           target: NamedNode | None, keep: QuadFilter | None) -> Iterator[Row]:
    if not batch:
        return
    try:
        quads = list(parse("\n".join(batch), format=RdfFormat.N_QUADS, rename_blank_nodes=False))
    except SyntaxError:
        quads = []
        for i, line in enumerate(batch):
            try:
                quads.extend(parse(line, format=RdfFormat.N_QUADS, rename_blank_nodes=False))
            except SyntaxError as err:
                reason, column = reason_of(err)
                if column is not None:
                    reason = f"column {column}: {reason}"
                yield (BAD, line[:MAX_REJECT_TEXT], None, key[0], key[1], start + i, reason)
    pruned = 0
    for q in quads:
        q = normalise(q, prefix, target)
        if keep is not None and not keep.keeps(q):
            pruned += 1
            continue
        yield (OK, nquads_line(q), graph_key(q), None, None, None, None)
    if pruned:
        yield (PRUNED, None, None, key[0], key[1], pruned, None)


def line_offsets(counts: Iterable[tuple[str, int, int]]) -> dict[tuple[str, int], int]:
    """For each (file, split start) the number of lines before that split in its file."""
    by_file: dict[str, list[tuple[int, int]]] = {}
    for file, block, n in counts:
        by_file.setdefault(file, []).append((block, n))
    out: dict[tuple[str, int], int] = {}
    for file, blocks in by_file.items():
        total = 0
        for block, n in sorted(blocks):
            out[(file, block)] = total
            total += n
    return out
