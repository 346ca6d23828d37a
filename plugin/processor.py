"""The rdflib query processor ``spaseq``: ``ds.query(text, processor="spaseq")`` evaluates a
SPAseq query over the recorded stream held in an rdflib Dataset (see ``dataset_streams``).

Registered through the ``rdf.plugins.queryprocessor`` entry point, so no registration code is
needed. Keyword arguments of ``Graph.query`` reach the processor:

* ``engine="nfa"`` (default, the incremental engine) or ``"reference"`` (the direct, slow
  implementation of the semantics, for checking);
* ``time_predicate``: the timestamp predicate IRI (default ``prov:generatedAtTime``);
* ``with_time=True``: add the variables ``_time`` and ``_start`` (as ``spaseq run --with-time``);
* ``time_format``: how those times are written (as ``spaseq run --time-format``): ``"input"``
  (default: xsd:dateTime for a match whose events were all stamped with one, xsd:decimal
  seconds otherwise), ``"dateTime"`` or ``"epoch"``;
* ``file``: the name used for the query in error locations (default ``<query>``).

``initNs`` are predeclared prefixes (the query's PREFIX lines win); ``initBindings`` are an
initial context of every GPM (``init_bindings``). The whole recording is input: windows still
open at its end are closed, so trailing negations complete.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from rdflib.graph import Graph
from rdflib.query import Processor

from spaseq.engine.algebra import operators as A
from spaseq.engine.api import Engine
from spaseq.engine.compile.plan import EngineOptions
from spaseq.engine.errors import UsageError
from spaseq.engine.language.query import parse_query
from spaseq.engine.matches import Row, project
from spaseq.engine.output.times import DEFAULT_TIME_FORMAT, check_time_format
from spaseq.engine.reference.evaluator import evaluate as reference_evaluate
from spaseq.plugin.dataset_streams import Recording, read_dataset
from spaseq.plugin.init_bindings import bind_initial
from spaseq.plugin.result import result_mapping

ENGINES = ("nfa", "reference")
OPTIONS = ("engine", "time_predicate", "with_time", "time_format", "file")
_PREFIX_NAME = re.compile(r"(?:[A-Za-z][A-Za-z0-9_.\-]*)?")


def prefixes_of(init_ns: Mapping[str, Any] | None) -> dict[str, str]:
    """initNs as prefix -> IRI, keeping only what a PREFIX declaration could say."""
    out: dict[str, str] = {}
    for prefix, iri in (init_ns or {}).items():
        text = str(iri)
        if _PREFIX_NAME.fullmatch(str(prefix)) and not str(prefix).endswith(".") and ">" not in text:
            out[str(prefix)] = text
    return out


def prepare(query: str | A.Query, init_ns: Mapping[str, Any] | None,
            init_bindings: Mapping[Any, Any] | None, file: str = "<query>") -> A.Query:
    """Parse (or take) the query with initNs predeclared and initBindings as initial context."""
    prefixes = prefixes_of(init_ns)
    if isinstance(query, A.Query):
        parsed, text, prefixes = query, query.source, dict(query.prefixes)
    elif isinstance(query, str):
        parsed, text = parse_query(query, file, prefixes), query
    else:
        raise UsageError(f"processor='spaseq' takes SPAseq query text, not a {type(query).__name__}")
    if not init_bindings:
        return parsed
    bound = parse_query(bind_initial(text, parsed, init_bindings), file, prefixes)
    return replace(bound, warnings=parsed.warnings)  # warnings located in the user's text


def results(query: A.Query, recording: Recording, engine: str = "nfa") -> list[Row]:
    """Every result of ``query`` over the whole recording, in completion order: the engine's
    rows (projected, DISTINCT applied by the core), or the reference evaluator's matches
    projected here."""
    if engine == "reference":
        matches = reference_evaluate(query, recording.events, recording.kb, end_of_input=True)
        return list(project(matches, query.match.variables, query.match.distinct))
    # the whole recording is read first: a query over events that last is planned for them
    lasting = any(e.start != e.time for e in recording.events)
    spaseq_engine = Engine(recording.kb, EngineOptions(intervals=lasting))
    handle = spaseq_engine.register(query)
    spaseq_engine.run(recording.events)
    return handle.rows()


def output_variables(query: A.Query) -> list[str]:
    """The result's variables: the SELECT list, or for ``SELECT *`` every GPM variable (sorted),
    as ``spaseq run`` writes them."""
    if query.match.variables is not None:
        return list(query.match.variables)
    return sorted({v for ev in query.events.values() for v in ev.variables})


class SpaseqProcessor(Processor):
    """rdflib ``Processor`` evaluating SPAseq queries over a Dataset's recorded streams."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph

    def query(  # type: ignore[override]
        self,
        strOrQuery: str | A.Query,  # noqa: N803 (rdflib's signature)
        initBindings: Mapping[str, Any] | None = None,  # noqa: N803
        initNs: Mapping[str, Any] | None = None,  # noqa: N803
        base: str | None = None,
        DEBUG: bool = False,  # noqa: N803
        **kwargs: Any,
    ) -> dict[str, Any]:
        """The mapping rdflib's result plugins are built from (see ``result.result_mapping``)."""
        unknown = sorted(set(kwargs) - set(OPTIONS))
        if unknown:
            raise UsageError(
                f"processor='spaseq' has no option {', '.join(unknown)} (it takes: {', '.join(OPTIONS)})"
            )
        if base is not None:
            raise UsageError("processor='spaseq' takes no base argument: use BASE in the query")
        engine = kwargs.get("engine", "nfa")
        if engine not in ENGINES:
            raise UsageError(f"engine={engine!r}: expected one of {', '.join(ENGINES)}")
        time_format = check_time_format(kwargs.get("time_format", DEFAULT_TIME_FORMAT))
        query = prepare(strOrQuery, initNs, initBindings, kwargs.get("file", "<query>"))
        if getattr(query.match, "is_construct", False):
            raise UsageError("processor='spaseq' answers SELECT queries; CONSTRUCT output is written by"
                             " 'spaseq run --format trig'")
        for line in query.warnings:
            warnings.warn(line, stacklevel=3)
        recording = read_dataset(self.graph, query, kwargs.get("time_predicate"))
        rows = results(query, recording, engine)
        return result_mapping(rows, output_variables(query), bool(kwargs.get("with_time", False)),
                              time_format)
