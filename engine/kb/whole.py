"""Dumps that are not line-splittable (Turtle, TriG, RDF/XML, N3, JSON-LD: their prefixes,
blocks and nesting span lines) read whole by the load and refresh jobs (decision 76).

The format is the file name's (``io.kb.kb_format``, as ``spaseq run --kb`` reads it; ``.gz``
decompressed). Each such file is one row of Spark's ``binaryFile`` source, parsed in an
executor by pyoxigraph into the rows ``parse`` gives for N-Quads lines (``OK``, ``COUNT``,
``PRUNED``), so the rest of the job (graphs, skolemisation, ``--for-query``, deduplication,
the export and the bulk load) is the same. A syntax error cannot be skipped as a bad line
can (what follows it in the file may depend on it): it is one ``BROKEN`` row, and the job
refuses the file at its ``FILE:LINE:COLUMN`` with the store unchanged. Blank nodes are named
by their order of first appearance in the file (pyoxigraph gives ``[]`` a random label),
then skolemised per file as the line dumps' are.

On the driver, before Spark starts: ``split_dumps`` sorts the expanded inputs into those read
as lines and the files read whole, and ``check_line_dumps`` refuses a file named as lines
whose first statement is a Turtle prefix line (a Turtle file named ``.nt`` would otherwise
reach the job only to have every line rejected)."""

from __future__ import annotations

import gzip
import os
import re
from collections.abc import Iterable, Iterator, Sequence

from pyoxigraph import BlankNode, NamedNode, Quad, RdfFormat, parse

from spaseq.engine.compile.kb_relevance import QuadFilter
from spaseq.engine.errors import Location, UsageError
from spaseq.engine.io.kb import kb_format
from spaseq.engine.io.parsing import GZIP_MAGIC, READ_ERRORS, open_rdf, syntax_error_location
from spaseq.engine.kb.parse import (
    BROKEN,
    COUNT,
    OK,
    PRUNED,
    Row,
    graph_key,
    normalise,
    nquads_line,
    skolem_prefix,
)

#: the formats read a line at a time (N-Triples is a subset of N-Quads)
LINE_FORMATS = (RdfFormat.N_TRIPLES, RdfFormat.N_QUADS)
_PREFIX_LINE = re.compile(rb"\s*(@prefix|@base|prefix|base)(?![\w])", re.IGNORECASE)
#: bytes of a line dump looked at for its first statement
_SNIFF_BYTES = 1 << 16


def whole_format(path: str) -> RdfFormat | None:
    """The format of a dump read whole (its name says one pyoxigraph reads that is not a line
    format), None for a dump read as N-Triples/N-Quads lines (any other name)."""
    fmt = kb_format(path)
    return None if fmt is None or fmt in LINE_FORMATS else fmt


def _hidden(name: str) -> bool:
    """Whether Spark's file listing leaves ``name`` out (it starts with ``.`` or ``_``)."""
    return name.startswith((".", "_"))


def split_dumps(sources: Sequence[str]) -> tuple[list[str], list[str]]:
    """The expanded inputs (files and directories) as (read as lines, files read whole). A
    directory holding files read whole is replaced by its other files (hidden ones left out,
    as Spark lists them); any other directory stays one input."""
    lines: list[str] = []
    whole: list[str] = []
    for src in sources:
        if not os.path.isdir(src):
            (whole if whole_format(src) else lines).append(src)
            continue
        files = []
        for folder, dirs, names in os.walk(src):
            dirs[:] = [d for d in dirs if not _hidden(d)]
            files += [os.path.join(folder, f) for f in names if not _hidden(f)]
        files.sort()
        inside = [f for f in files if whole_format(f)]
        if inside:
            whole += inside
            lines += [f for f in files if not whole_format(f)]
        else:
            lines.append(src)
    return lines, whole


def check_line_dumps(sources: Sequence[str]) -> None:
    """UsageError for a file given to be read as N-Triples/N-Quads lines whose first statement
    is a Turtle prefix line (``@prefix``, ``PREFIX``, ``@base``, ``BASE``): a Turtle or TriG
    file under another name, which only its name would make readable."""
    for src in sources:
        if os.path.isdir(src) or whole_format(src):
            continue
        try:
            with open_rdf(src) as handle:
                head = handle.read(_SNIFF_BYTES)
        except READ_ERRORS:
            continue  # the job reports what it cannot read
        for number, line in enumerate(head.splitlines(), start=1):
            text = line.strip()
            if not text or text.startswith(b"#"):
                continue
            if _PREFIX_LINE.match(line):
                raise UsageError(
                    "a Turtle prefix line in a file read as N-Triples/N-Quads lines (its name says no other "
                    "format): name it .ttl or .trig (optionally .gz) and it is read whole", Location(src, number, 1))
            break


def parse_whole(files: Iterable[tuple[str, bytes]], graph: str | None, keep: QuadFilter | None) -> Iterator[Row]:
    """The rows of whole files, each given as (its path as Spark names it, its bytes): its
    quads as ``OK`` rows (blank nodes named in order of appearance, then skolemised), its
    count of lines (``COUNT``) and of quads ``--for-query`` dropped (``PRUNED``); for a file
    that does not parse, a ``BROKEN`` row after the quads before its error (``idx`` the
    error's line, ``reason`` its message, after ``column N: `` when known): the job then
    builds nothing."""
    target = NamedNode(graph) if graph else None
    for path, content in files:
        data = bytes(content)
        fmt = whole_format(path)
        assert fmt is not None, path  # only files read whole are given
        pruned = 0
        try:
            if data.startswith(GZIP_MAGIC):
                data = gzip.decompress(data)
            prefix = skolem_prefix(path)
            labels: dict[str, BlankNode] = {}
            for q in parse(data, format=fmt, rename_blank_nodes=False):
                q = normalise(_numbered(q, labels), prefix, target)
                if keep is not None and not keep.keeps(q):
                    pruned += 1
                    continue
                yield (OK, nquads_line(q), graph_key(q), None, None, None, None)
        except SyntaxError as err:
            location, message = syntax_error_location(err, path)
            where = f"column {location.column}: " if location.column is not None else ""
            yield (BROKEN, None, None, path, 0, location.line, f"{where}{fmt.name} syntax error: {message}")
        except READ_ERRORS as err:
            yield (BROKEN, None, None, path, 0, None, f"cannot read the file: {err}")
        lines = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
        yield (COUNT, None, None, path, 0, lines, None)
        if pruned:
            yield (PRUNED, None, None, path, 0, pruned, None)


def _numbered(quad: Quad, labels: dict[str, BlankNode]) -> Quad:
    """``quad`` with each blank node named ``b1``, ``b2``... by first appearance in its file."""
    def term(t):
        if not isinstance(t, BlankNode):
            return t
        named = labels.get(t.value)
        if named is None:
            named = labels[t.value] = BlankNode(f"b{len(labels) + 1}")
        return named

    return Quad(term(quad.subject), quad.predicate, term(quad.object), term(quad.graph_name))
