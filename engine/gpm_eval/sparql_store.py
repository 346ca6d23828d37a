"""pyoxigraph's SPARQL engine as the GPM evaluator for bodies the compiled path does not cover
(SEMANTICS.md section 2): the one home of what the reference evaluator (``sparql_eval``) and
the incremental engine's fallback (``matcher``) share.

Events and KB graphs live in one pyoxigraph store: each event is a named graph under an
internal name (``EVENT_GRAPH_PREFIX``), and a GPM body runs with that graph as the default
graph and the KB's graphs as the named graphs, so ``GRAPH <kb> {...}`` queries the KB. The
store keeps literals in canonical form (``"14.0"^^xsd:double`` is ``"14"`` there, and
``"+1"^^xsd:integer`` the same term as ``"1"``), so the body's patterns are matched by
``identity`` over the event's own triples, by term identity and in the event's spellings
(decision 7), and the store answers for values: FILTER and BIND expressions, with a
solution as a leading ``VALUES`` row (blank nodes, which VALUES cannot hold, and triple
terms holding one go through pyoxigraph's substitutions instead), GRAPH blocks and
sub-selects. Solutions are deduplicated. A body ``identity`` does not cover (SERVICE) is
one pyoxigraph query, its literals given back in the event's spelling of their values.

Which KB quads the store holds, and for how long events stay, is the users' business: the
reference loads all of the KB (it is the oracle) and keeps every event; the engine copies
only the relevant KB quads and drops events once processed (``matcher.EventGraphs``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import cast

from pyoxigraph import (
    BlankNode,
    Literal,
    NamedNode,
    Quad,
    QueryBoolean,
    QuerySolutions,
    QueryTriples,
    Store,
    Triple,
    Variable,
)

from spaseq.engine.algebra import operators as A
from spaseq.engine.compile.gpm_texts import GpmTexts
from spaseq.engine.events import Event
from spaseq.engine.functions.registry import CustomFunctions, pyoxigraph_functions
from spaseq.engine.functions.run_functions import RunContext
from spaseq.engine.gpm_eval.identity import (
    Evaluator,
    EventTriples,
    Node,
    Solution,
    Spellings,
    Unsupported,
    compatible,
    distinct,
)

EVENT_GRAPH_PREFIX = "urn:spaseq:event:"

__all__ = ["EVENT_GRAPH_PREFIX", "Node", "Solution", "SparqlStore", "compatible", "graph_text",
           "query_functions", "select_solutions", "spellings", "values_clause"]
_INDEX = "_spaseq_row"
_RESULT = "_spaseq_value"
_BATCH = 256


def sparql_term(term: Node) -> str:
    """A term as SPARQL writes it: ``str`` of a triple term (an event's object may be one) is
    its bare N-Triples, without the ``<<( )>>`` around it."""
    if isinstance(term, Triple):
        return f"<<( {sparql_term(term.subject)} {term.predicate} {sparql_term(term.object)} )>>"
    return str(term)


def in_values(term: Node) -> bool:
    """Whether a VALUES row can hold the term: not a blank node, nor a triple term holding one."""
    if isinstance(term, Triple):
        return in_values(term.subject) and in_values(term.object)
    return not isinstance(term, BlankNode)


def values_clause(mu: Mapping[str, Node]) -> tuple[str, dict[Variable, Node]]:
    """``VALUES (...) {(...)}`` text for the bindings of mu a VALUES row can hold, and
    substitutions for the others (blank nodes)."""
    plain = {v: t for v, t in mu.items() if in_values(t)}
    subst: dict[Variable, Node] = {Variable(v): t for v, t in mu.items() if not in_values(t)}
    if not plain:
        return "", subst
    names = sorted(plain)
    head = " ".join(f"?{v}" for v in names)
    row = " ".join(sparql_term(plain[v]) for v in names)
    return f"VALUES ({head}) {{ ({row}) }}\n", subst


def select_solutions(result: QuerySolutions | QueryBoolean | QueryTriples) -> QuerySolutions:
    """What ``Store.query`` gives for a SELECT query, typed so (its type covers ASK and
    CONSTRUCT queries too)."""
    return cast(QuerySolutions, result)  # every caller asks a SELECT query


def graph_text(el: A.GraphPattern) -> str:
    """A GRAPH element as SPARQL text."""
    name = f"?{el.graph.name}" if isinstance(el.graph, A.Var) else f"<{el.graph.value}>"
    return f"GRAPH {name} {el.pattern.text}"


_STATIC_FUNCTIONS = pyoxigraph_functions()


def query_functions(c: GpmTexts, run: RunContext | None) -> CustomFunctions | None:
    """The custom_functions a query of this body needs: none for bodies without spaseq calls,
    the run functions answering for ``run`` where the body is run-aware."""
    if not c.functions:
        return None
    return pyoxigraph_functions(run=run) if run is not None else _STATIC_FUNCTIONS


def spellings(events: Sequence[Event]) -> list[Spellings]:
    """Per event, the spelling a canonical literal it does not hold takes (decision 7): for
    each value the event spells only non-canonically (literals, and triple terms holding
    them), from the canonical form to the least of its spellings (N-Triples text, code point
    order, whatever the triples' order: the native path's rule). One scratch store for all
    the events."""
    objects = list(dict.fromkeys(
        t.object for e in events for t in e.triples if not isinstance(t.object, NamedNode | BlankNode)
    ))
    if not objects:
        return [{} for _ in events]
    scratch = Store()
    probe = NamedNode("urn:spaseq:probe")
    scratch.extend(Quad(NamedNode(f"urn:spaseq:l:{i}"), probe, o) for i, o in enumerate(objects))
    canonical: Spellings = {}
    for q in scratch.quads_for_pattern(None, probe, None):
        subject = cast(NamedNode, q.subject)  # an urn:spaseq:l: IRI (added just above)
        original = objects[int(subject.value.rsplit(":", 1)[1])]
        # the same datatype only: the store makes "1"^^xsd:byte the integer 1, another term
        if q.object != original and getattr(q.object, "datatype", None) == getattr(original, "datatype", None):
            canonical[original] = q.object
    out = []
    for e in events:
        held = {t.object for t in e.triples}
        back: Spellings = {}
        for t in e.triples:
            c = canonical.get(t.object)
            if c is not None and c not in held and (c not in back or str(t.object) < str(back[c])):
                back[c] = t.object
        out.append(back)
    return out


class SparqlStore:
    """A pyoxigraph store of event graphs and KB graphs, queried one event graph at a time
    (the default graph) with the KB graphs as named graphs."""

    def __init__(self) -> None:
        self.store = Store()
        self.kb_graphs: list[NamedNode | BlankNode] = []
        self._events: dict[NamedNode, EventTriples] = {}
        self._counter = 0

    def load_kb(self, kb: Store) -> None:
        """Copy all of ``kb`` into the store; its named graphs become the queries' named graphs."""
        self.store.extend(kb)
        self.kb_graphs = list(kb.named_graphs())

    # ------------------------------------------------------------------ events

    def add_events(self, events: Sequence[Event]) -> list[NamedNode]:
        """Store each event as a new named graph (keeping its own triples and spellings)."""
        graphs: list[NamedNode] = []
        quads: list[Quad] = []
        for e, back in zip(events, spellings(events), strict=True):
            g = NamedNode(f"{EVENT_GRAPH_PREFIX}{self._counter}")
            self._counter += 1
            graphs.append(g)
            quads.extend(Quad(t.subject, t.predicate, t.object, g) for t in e.triples)
            self._events[g] = EventTriples(e.triples, back)
        self.store.extend(quads)
        return graphs

    def remove_event(self, graph: NamedNode) -> None:
        """Drop an event graph (and its triples)."""
        self.store.remove_graph(graph)
        self._events.pop(graph, None)

    # ------------------------------------------------------------------ queries

    def select(self, text: str, graph: NamedNode, query: A.Query,
               subst: dict[Variable, Node] | None = None,
               functions: CustomFunctions | None = None) -> list[Solution]:
        """The distinct solutions of SELECT ``text`` (of ``query``'s prefixes and base) with
        event ``graph`` as the default graph (the store's canonical terms)."""
        result = select_solutions(self.store.query(
            text,
            default_graph=graph,
            named_graphs=self.kb_graphs,
            prefixes=query.prefixes,
            base_iri=query.base,
            substitutions=subst or None,
            custom_functions=functions,
        ))
        names = [v.value for v in result.variables]
        return distinct({n: row[n] for n in names if row[n] is not None} for row in result)

    def _evaluator(self, graph: NamedNode, query: A.Query, functions: CustomFunctions | None) -> Evaluator:
        return Evaluator(self._events[graph], _Values(self, graph, query, functions))

    def spelled(self, c: GpmTexts, graph: NamedNode, sol: Solution, context: Mapping[str, Node]) -> Solution:
        """``sol`` as the event spells it (decision 7): a canonical literal the event does not
        hold (computed, or written in the query), bound by the body, not by ``context`` or a
        GRAPH block, in the event's spelling of its value."""
        event = self._events[graph]
        if not event.spellings:
            return sol
        return {v: t if v in context or v in c.kb_vars else event.respell(t) for v, t in sol.items()}

    def body(self, c: GpmTexts, graph: NamedNode, query: A.Query, mu: Mapping[str, Node],
             run: RunContext | None = None) -> list[Solution]:
        """The solutions nu of ``VALUES(mu) . body`` on the event, as it spells them (``run``:
        for run functions)."""
        functions = query_functions(c, run)
        try:
            sols = _project(self._evaluator(graph, query, functions).group(c.event.pattern, [dict(mu)]),
                            c.mentioned)
        except Unsupported:
            values, subst = values_clause(mu)
            sols = self.select(f"SELECT {c.projection} WHERE {{ {values}{c.body_inner} }}", graph, query,
                               subst, functions)
        return [self.spelled(c, graph, s, mu) for s in sols]

    def filterless(self, c: GpmTexts, graph: NamedNode, query: A.Query) -> list[Solution]:
        """Solutions of a join-shaped body without its FILTERs and without context, as
        evaluated (``spelled`` once joined with a context)."""
        functions = query_functions(c, None)
        try:
            return _project(self._evaluator(graph, query, functions).group(c.event.pattern, filters=False),
                            c.mentioned)
        except Unsupported:
            return self.select(f"SELECT {c.projection} WHERE {c.filterless}", graph, query, functions=functions)

    def filters_hold(self, c: GpmTexts, graph: NamedNode, query: A.Query, merged: Mapping[str, Node],
                     run: RunContext | None = None) -> bool:
        """Whether the body's FILTERs all hold on ``merged`` (a context joined with a solution)."""
        values = _Values(self, graph, query, query_functions(c, run))
        return all(values.filter(f, [dict(merged)])[0] for f in c.filters)


def _project(sols: Iterable[Solution], names: frozenset[str]) -> list[Solution]:
    """The solutions on the body's named variables (blank-node variables dropped), distinct."""
    return distinct({v: t for v, t in sol.items() if v in names} for sol in sols)


class _Values:
    """``identity.Backend`` on the store: each question is one query over a batch of rows,
    a leading ``VALUES`` row each (one query per row for rows holding blank nodes)."""

    def __init__(self, sparql: SparqlStore, graph: NamedNode, query: A.Query,
                 functions: CustomFunctions | None) -> None:
        self.sparql = sparql
        self.event_graph = graph
        self.query = query
        self.functions = functions

    def _each(self, rows: Sequence[Solution], where: str, out_vars: Sequence[str]) -> list[list[Solution]]:
        """Per row, the solutions of ``{ VALUES(row) where }`` on ``out_vars``."""
        found: list[list[Solution]] = [[] for _ in rows]
        rows = [{v: t for v, t in r.items() if not v.startswith("_:")} for r in rows]  # not variables
        plain = [i for i, r in enumerate(rows) if all(in_values(t) for t in r.values())]
        projection = " ".join(f"?{v}" for v in [_INDEX, *out_vars])
        for lo in range(0, len(plain), _BATCH):
            batch = plain[lo:lo + _BATCH]
            names = sorted({v for i in batch for v in rows[i]})
            head = " ".join(f"?{v}" for v in [_INDEX, *names])
            body = " ".join(
                "(" + " ".join([str(i), *(sparql_term(rows[i][v]) if v in rows[i] else "UNDEF" for v in names)]) + ")"
                for i in batch)
            self._collect(f"SELECT {projection} WHERE {{ VALUES ({head}) {{ {body} }} {where} }}",
                          None, out_vars, found)
        for i in sorted(set(range(len(rows))) - set(plain)):
            values, subst = values_clause({_INDEX: _literal_index(i), **rows[i]})
            # pyoxigraph substitutes projected variables only
            projected = dict.fromkeys([_INDEX, *out_vars, *(v.value for v in subst)])
            self._collect(f"SELECT {' '.join(f'?{v}' for v in projected)} WHERE {{ {values}{where} }}", subst,
                          out_vars, found)
        return found

    def _collect(self, text: str, subst: dict[Variable, Node] | None, out_vars: Sequence[str],
                 found: list[list[Solution]]) -> None:
        for sol in self.sparql.select(text, self.event_graph, self.query, subst, self.functions):
            row = cast(Literal, sol[_INDEX])  # the row's number, from its VALUES row (_literal_index)
            found[int(row.value)].append({v: sol[v] for v in out_vars if v in sol})

    def filter(self, text: str, rows: Sequence[Solution]) -> list[bool]:
        """Whether FILTER ``text`` holds on each row."""
        return [bool(f) for f in self._each(rows, f"FILTER({text})", [])]

    def bind(self, text: str, rows: Sequence[Solution]) -> list[Node | None]:
        """Expression ``text``'s value on each row (None on an error)."""
        return [f[0].get(_RESULT) if f else None
                for f in self._each(rows, f"BIND(({text}) AS ?{_RESULT})", [_RESULT])]

    def graph(self, el: A.GraphPattern, rows: Sequence[Solution]) -> list[list[Solution]]:
        """Per row, the GRAPH block's solutions agreeing with it in value (the caller joins
        them by identity)."""
        shared = sorted(A.in_scope_vars(el.pattern) | ({el.graph.name} if isinstance(el.graph, A.Var) else set()))
        restricted = [{v: r[v] for v in shared if v in r} for r in rows]
        return self._each(restricted, graph_text(el), shared)

    def sub_select(self, el: A.SubSelect) -> list[Solution]:
        """The sub-select's solutions on the event (canonical terms)."""
        projection = " ".join(f"?{v}" for v in el.projected) or "*"
        return self.sparql.select(f"SELECT {projection} WHERE {{ {{ {el.text} }} }}", self.event_graph, self.query,
                                  functions=self.functions)


def _literal_index(i: int) -> Literal:
    return Literal(str(i), datatype=NamedNode("http://www.w3.org/2001/XMLSchema#integer"))
