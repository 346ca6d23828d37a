"""Static checks of a translated query: errors that make it meaningless, warnings for
what is legal but almost certainly a mistake."""

from __future__ import annotations

from dataclasses import replace

import pyoxigraph

from spaseq.engine.algebra import operators as A
from spaseq.engine.errors import Location, QueryError
from spaseq.engine.functions.registry import pyoxigraph_functions
from spaseq.engine.functions.static_checks import check_calls


def check(query: A.Query) -> A.Query:
    """Raise QueryError for the first static error; return the query with its warnings."""
    atoms = query.seq.atoms
    if not atoms:
        raise QueryError("SEQ(...) is empty", Location(query.file))
    used: dict[str, A.GpmRef] = {}
    for atom in atoms:
        for ref in _refs(atom.operand):
            if ref.name not in query.events:
                defined = ", ".join(query.events) or "none"
                raise QueryError(
                    f"SEQ uses GPM {ref.name}, which is not defined (defined: {defined})", ref.location
                )
            if ref.name in used:
                raise QueryError(
                    f"GPM {ref.name} is used twice in SEQ; define a second GPM with the same body "
                    "to match it twice",
                    ref.location,
                )
            used[ref.name] = ref
    _check_head(query)
    _check_timers(query)
    _check_policies(query)
    first, last = query.seq.positive[0], atoms[-1]
    if first.modifier == A.OPTIONAL:
        raise QueryError(
            f"a sequence cannot start with an optional atom ({first.name_text}?): there is no "
            "earlier event to measure its absence from",
            first.location,
        )
    if _may_skip(first):  # X* and X{0,n} without their event are an optional atom's absence
        raise QueryError(
            f"a sequence cannot start with {first.written}, which may take no "
            "event: there is no earlier event to measure its absence from; give it a lower bound "
            "of at least 1",
            first.location,
        )
    if last.modifier == A.OPTIONAL:
        raise QueryError(
            f"a sequence cannot end with an optional atom ({last.name_text}?): the match without it "
            "would have to wait for an event that never comes; drop the '?' or add a later atom",
            last.location,
        )
    if _may_skip(last):
        raise QueryError(
            f"a sequence cannot end with {last.written}, which may take no "
            "event: the match without it would have to wait for an event that never comes; give "
            "it a lower bound of at least 1 or add a later atom",
            last.location,
        )
    check_calls(query)
    for ev in query.events.values():
        _check_body(query, ev)
    for var in query.partition_by:
        for name in used:
            if var not in query.events[name].variables:
                raise QueryError(
                    f"PARTITION BY ?{var}: GPM {name} does not bind ?{var} (every GPM must bind the "
                    "partitioning variables)",
                    query.events[name].location,
                )
    return replace(query, warnings=tuple(_warnings(query, used)))


def _check_policies(query: A.Query) -> None:
    """SELECTION and CONSUMPTION where they mean something (docs/decisions.md 65): a selection
    chooses among the partial matches an event could extend, so it needs a second step; LATEST,
    C-SPARQL's naive SEQ, pairs the latest event of each GPM and knows no iterations, absences
    or groups, nor anything consumed."""
    where = query.policy_location or Location(query.file)
    positive = query.seq.positive
    if query.selection == A.UNRESTRICTED:
        return
    keyword = f"SELECTION {query.selection.upper()}"
    if len(positive) == 1 and positive[0].modifier != A.KLEENE:
        raise QueryError(
            f"{keyword} chooses, for each event, among the partial matches it could extend; "
            f"SEQ({positive[0].name_text}) takes one event per match, so there is nothing to choose: "
            "drop the SELECTION clause",
            where,
        )
    if query.selection != A.LATEST:
        return
    for atom in query.seq.atoms:
        if not isinstance(atom.operand, A.GpmRef) or atom.modifier != A.PLAIN:
            raise QueryError(
                f"{keyword} (C-SPARQL's naive SEQ) pairs the latest event of each GPM: it applies "
                "to a sequence of plain GPMs, not to iterations, optional or negated atoms or "
                f"groups such as {atom.written}",
                atom.location or where,
            )
    if query.consumption == A.CONSUME_MATCHED:
        raise QueryError(
            f"{keyword} pairs the latest event of each GPM, consumed or not (C-SPARQL consumes "
            "nothing): CONSUMPTION MATCHED means nothing with it; use CHRONOLOGICAL or RECENT",
            where,
        )


def _check_timers(query: A.Query) -> None:
    """Relative timers (docs/decisions.md 71): a timer GPM is a plain atom of SEQ after its
    anchor, a plain GPM atom that takes one event; SELECT expressions read what COLLECT
    timers gather, so a query with one has such a timer."""
    plain = {a.operand.name: i for i, a in enumerate(query.seq.atoms)
             if isinstance(a.operand, A.GpmRef) and a.modifier == A.PLAIN}
    collects = False
    for name, ev in query.events.items():
        timer = ev.timer
        if timer is None:
            continue
        collects |= timer.mode == A.COLLECT
        if name not in plain:
            raise QueryError(f"GPM {name} has a timer: SEQ uses it as an atom of its own, without "
                             "+, ?, ! or a group", timer.location)
        if timer.anchor not in query.events:
            raise QueryError(f"the timer of GPM {name} is anchored on {timer.anchor}, which is not "
                             f"defined", timer.location)
        if plain.get(timer.anchor, len(query.seq.atoms)) >= plain[name] or query.events[timer.anchor].timer:
            raise QueryError(f"the timer of GPM {name} is anchored on {timer.anchor}, which does not "
                             f"precede it in SEQ as an atom taking one event", timer.location)
    if query.match.expressions and not collects:
        raise QueryError("a SELECT expression reads the results a COLLECT timer gathers; this query "
                         "has none (DEFINE GPM X ON S BEFORE A FOR 1 MINUTE COLLECT { ... })",
                         Location(query.file))


def _check_head(query: A.Query) -> None:
    """Head negation (``SEQ(A! ; B ...)``, docs/decisions.md 62): the absence is looked for in
    the window before the first positive event, so the query needs a time window, and a
    positive atom to follow."""
    head = query.seq.head
    if not head:
        return
    first = head[0]
    if len(head) == len(query.seq.atoms):
        raise QueryError(
            f"a sequence of negated atoms only ({first.name_text}!...) matches nothing: add a positive atom",
            first.location,
        )
    window = query.window
    if window.kind != "time":
        why = ("without a window there is no bound on how far back to look" if window.kind is None
               else "an event-count window does not bound it in time")
        raise QueryError(
            f"a sequence can start with a negated atom ({first.name_text}!) only under a time window "
            f"(WITHIN n SECONDS, MINUTES, ...): its absence is looked for in the window before the "
            f"first event, and {why}",
            first.location,
        )


def _refs(op: A.Operand) -> list[A.GpmRef]:
    if isinstance(op, A.GpmRef):
        return [op]
    return [r for o in op.operands for r in _refs(o)]


def _may_skip(atom: A.Atom) -> bool:
    """A Kleene atom with lower bound 0 (``X*``, ``X{0,n}``): its zero iterations are an
    optional atom left untaken (docs/decisions.md 61)."""
    return atom.modifier == A.KLEENE and atom.low == 0


def _check_body(query: A.Query, ev: A.EventPattern) -> None:
    """Reject bodies pyoxigraph cannot evaluate (e.g. BIND to an in-scope variable)."""
    for el in ev.pattern.walk():
        if isinstance(el, A.ServicePattern):
            raise QueryError(
                f"GPM {ev.name}: SERVICE is not supported in GPM bodies (events are matched locally)",
                ev.location,
            )
    try:
        pyoxigraph.Store().query(
            f"SELECT * WHERE {ev.pattern.text}", prefixes=query.prefixes, base_iri=query.base,
            custom_functions=pyoxigraph_functions(),
        )
    except SyntaxError as exc:
        raise QueryError(f"GPM {ev.name}: {exc}", ev.pattern.location) from None
    except (RuntimeError, ValueError) as exc:  # e.g. a function pyoxigraph does not know
        raise QueryError(f"GPM {ev.name}: {exc}", ev.pattern.location) from None


def _read_vars(expr: A.Expr) -> set[str]:
    """The variables an expression reads the value of: outside EXISTS and outside BOUND,
    which is false, not an error, on an unbound variable."""
    if isinstance(expr, A.EVar):
        return {expr.name}
    if isinstance(expr, A.ECall) and expr.op != "BOUND":
        return set().union(*(_read_vars(a) for a in expr.args))
    return set()


def _warnings(query: A.Query, used: dict[str, A.GpmRef]) -> list[str]:
    out: list[str] = []
    bound: set[str] = set()
    for ev in query.events.values():
        bound |= ev.variables
    bound |= {v for v, _ in query.match.expressions}
    for var in query.match.variables or ():
        if var not in bound:
            out.append(f"{Location(query.file)}: warning: ?{var} is projected but no GPM binds it")
    template_vars = {v for tp in query.match.template for v in A.triple_vars(tp)}
    for var in sorted(template_vars - bound):
        out.append(f"{Location(query.file)}: warning: the CONSTRUCT template uses ?{var}, which no "
                   "GPM binds: its triples are never produced")
    for name, ev in query.events.items():
        if name not in used:
            out.append(f"{ev.location}: warning: GPM {name} is defined but not used in SEQ")
    # FILTER variables that nothing can bind before the FILTER is evaluated: always an error.
    # a head negation is evaluated in the whole match's context (docs/decisions.md 62)
    matched = {v for atom in query.seq.positive for r in _refs(atom.operand)
               for v in query.events[r.name].variables}
    seen: set[str] = set()
    for i, atom in enumerate(query.seq.atoms):
        names = [r.name for r in _refs(atom.operand)]
        before = matched if i < len(query.seq.head) else seen
        for name in names:
            ev = query.events[name]
            local = ev.variables
            for el in ev.pattern.elements:
                if isinstance(el, A.Filter):
                    for var in sorted(_read_vars(el.expr) - local - before):
                        out.append(
                            f"{ev.location}: warning: the FILTER of GPM {name} uses ?{var}, which no "
                            f"GPM binds before {name}: what reads it is an error there (the FILTER "
                            "is false unless ||, IF or COALESCE gets past the error)"
                        )
        if i >= len(query.seq.head):  # an absence binds nothing
            for name in names:
                seen |= query.events[name].variables
    return out
