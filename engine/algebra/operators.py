"""The SPAseq query algebra.

SPARQL 1.1 group graph patterns (the GPM bodies) are kept as a small pattern algebra with
their source text; around them sit the four extension operators:

- ``EventPattern`` (EVENT): a GPM, i.e. a SPARQL group pattern bound to a named stream;
- ``Seq`` (SEQ): atoms joined by selection strategies, with Kleene+, optional, negation,
  conjunction and disjunction;
- ``Window`` (WINDOW): the WITHIN clause;
- ``MatchSpec`` (MATCH): projection and DISTINCT of the matches.

Nodes are plain frozen dataclasses; nothing here evaluates anything.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from decimal import Decimal

from pyoxigraph import BlankNode, Literal, NamedNode

from spaseq.engine.errors import Location

# ---------------------------------------------------------------- SPARQL terms and paths


@dataclass(frozen=True)
class Var:
    """A SPARQL variable (name without '?'); blank nodes in patterns become ``_:label`` vars."""

    name: str

    @property
    def is_blank(self) -> bool:
        return self.name.startswith("_:")


PatternTerm = NamedNode | BlankNode | Literal | Var


@dataclass(frozen=True)
class Path:
    """A property path. kind: link (args=(iri,)), inv, seq, alt, zero_or_one, zero_or_more,
    one_or_more, nps (args = iris, inverse flags in ``inverse``)."""

    kind: str
    args: tuple = ()
    inverse: tuple[bool, ...] = ()


@dataclass(frozen=True)
class TriplePattern:
    subject: PatternTerm
    predicate: NamedNode | Var | Path
    object: PatternTerm


# ---------------------------------------------------------------- SPARQL expressions


@dataclass(frozen=True)
class EVar:
    name: str


@dataclass(frozen=True)
class ETerm:
    term: NamedNode | Literal


@dataclass(frozen=True)
class ECall:
    """An operator or function call. ``op`` is an operator symbol ('||', '&&', '=', '!=',
    '<', '>', '<=', '>=', '+', '-', '*', '/', 'neg', 'pos', '!', 'IN', 'NOT IN'), an
    upper-case built-in or aggregate name, or a function IRI string in angle brackets."""

    op: str
    args: tuple[Expr, ...]
    distinct: bool = False


@dataclass(frozen=True)
class EExists:
    pattern: GroupPattern
    negated: bool = False


Expr = EVar | ETerm | ECall | EExists


# ---------------------------------------------------------------- SPARQL group patterns


@dataclass(frozen=True)
class BGP:
    triples: tuple[TriplePattern, ...]


@dataclass(frozen=True)
class Filter:
    """``FILTER(expr)``; ``span`` is the whole element's (start, end) offset in its group's text."""

    expr: Expr
    text: str
    span: tuple[int, int] = field(default=(0, 0), compare=False)


@dataclass(frozen=True)
class OptionalPattern:
    pattern: GroupPattern


@dataclass(frozen=True)
class MinusPattern:
    pattern: GroupPattern


@dataclass(frozen=True)
class UnionPattern:
    """``{A} UNION {B} ...``; a single alternative is a plain sub-group ``{A}``."""

    alternatives: tuple[GroupPattern, ...]


@dataclass(frozen=True)
class GraphPattern:
    graph: NamedNode | Var
    pattern: GroupPattern


@dataclass(frozen=True)
class ServicePattern:
    endpoint: NamedNode | Var
    pattern: GroupPattern
    silent: bool


@dataclass(frozen=True)
class Bind:
    """``BIND(expr AS ?var)``; ``text`` is the expression's source text."""

    expr: Expr
    var: str
    text: str = field(default="", compare=False)


@dataclass(frozen=True)
class Values:
    variables: tuple[str, ...]
    rows: tuple[tuple[NamedNode | Literal | None, ...], ...]


@dataclass(frozen=True)
class SubSelect:
    projected: tuple[str, ...]
    pattern: GroupPattern
    text: str


Element = (
    BGP | Filter | OptionalPattern | MinusPattern | UnionPattern | GraphPattern | ServicePattern
    | Bind | Values | SubSelect
)


@dataclass(frozen=True)
class GroupPattern:
    """A SPARQL group graph pattern ``{ ... }`` with its exact source text."""

    elements: tuple[Element, ...]
    text: str
    location: Location | None = field(default=None, compare=False)

    def walk(self) -> Iterator[Element]:
        """Every element of this group and of the groups nested in it (including EXISTS)."""
        for el in self.elements:
            yield el
            for sub in _subgroups(el):
                yield from sub.walk()


def _subgroups(el: Element) -> Iterator[GroupPattern]:
    if isinstance(el, OptionalPattern | MinusPattern | GraphPattern | ServicePattern | SubSelect):
        yield el.pattern
    elif isinstance(el, UnionPattern):
        yield from el.alternatives
    elif isinstance(el, Filter | Bind):
        yield from (e.pattern for e in _exprs(el.expr) if isinstance(e, EExists))


def _exprs(expr: Expr) -> Iterator[Expr]:
    yield expr
    if isinstance(expr, ECall):
        for a in expr.args:
            yield from _exprs(a)


def expr_vars(expr: Expr) -> set[str]:
    """Variables an expression mentions outside EXISTS."""
    return {e.name for e in _exprs(expr) if isinstance(e, EVar)}


def _term_vars(t: PatternTerm) -> Iterator[str]:
    if isinstance(t, Var) and not t.is_blank:
        yield t.name


def simple_pattern(tp: TriplePattern) -> TriplePattern | None:
    """``tp`` with an IRI or variable predicate (a one-IRI path as its IRI), None for a longer
    path: a pattern whose instances by a solution are triples (what consumption uses up, what
    routing matches events with)."""
    predicate = tp.predicate
    if isinstance(predicate, Path):
        if predicate.kind != "link" or not isinstance(predicate.args[0], NamedNode):
            return None
        predicate = predicate.args[0]
    return TriplePattern(tp.subject, predicate, tp.object)


def triple_vars(tp: TriplePattern) -> set[str]:
    out = set(_term_vars(tp.subject)) | set(_term_vars(tp.object))
    if isinstance(tp.predicate, Var):
        out.add(tp.predicate.name)
    return out


def in_scope_vars(group: GroupPattern) -> set[str]:
    """The variables the group can bind (SPARQL 1.1 section 18.2.1, in-scope variables)."""
    out: set[str] = set()
    for el in group.elements:
        if isinstance(el, BGP):
            for tp in el.triples:
                out |= triple_vars(tp)
        elif isinstance(el, OptionalPattern):
            out |= in_scope_vars(el.pattern)
        elif isinstance(el, UnionPattern):
            for alt in el.alternatives:
                out |= in_scope_vars(alt)
        elif isinstance(el, GraphPattern | ServicePattern):
            out |= in_scope_vars(el.pattern)
            graph = getattr(el, "graph", None)  # a ServicePattern has none
            if isinstance(graph, Var):
                out.add(graph.name)
        elif isinstance(el, Bind):
            out.add(el.var)
        elif isinstance(el, Values):
            out |= set(el.variables)
        elif isinstance(el, SubSelect):
            out |= set(el.projected)
    return out


def mentioned_vars(group: GroupPattern) -> set[str]:
    """Every variable named anywhere in the group, nested groups and expressions included."""
    out: set[str] = set()
    for el in group.walk():
        if isinstance(el, BGP):
            for tp in el.triples:
                out |= triple_vars(tp)
        elif isinstance(el, Filter):
            out |= expr_vars(el.expr)
        elif isinstance(el, Bind):
            out |= expr_vars(el.expr) | {el.var}
        elif isinstance(el, Values):
            out |= set(el.variables)
        elif isinstance(el, SubSelect):
            out |= set(el.projected)
        elif isinstance(el, GraphPattern) and isinstance(el.graph, Var):
            out.add(el.graph.name)
    return out


def graph_iris(group: GroupPattern) -> list[str]:
    """Constant IRIs named by GRAPH clauses anywhere in the group, in order, without repeats."""
    seen: dict[str, None] = {}
    for el in group.walk():
        if isinstance(el, GraphPattern) and isinstance(el.graph, NamedNode):
            seen.setdefault(el.graph.value, None)
    return list(seen)


# ---------------------------------------------------------------- SPAseq extension operators


#: A timer's side: after its anchor's end, or before its anchor's start.
AFTER, BEFORE = "after", "before"
#: What a timer asks of its events: none (NOT), or every one (COLLECT).
ABSENT, COLLECT = "not", "collect"


@dataclass(frozen=True)
class Timer:
    """A relative timer (docs/decisions.md 71): ``AFTER anchor FOR seconds`` is the interval
    ``[end(anchor), end(anchor) + seconds]``, ``BEFORE anchor FOR seconds`` is ``[start(anchor)
    - seconds, start(anchor)]``; ``mode`` NOT (no event of the GPM's stream with a result lies
    in it) or COLLECT (the results of those that do, at least one)."""

    side: str
    anchor: str
    seconds: Decimal
    mode: str
    location: Location | None = field(default=None, compare=False)

    def interval(self, start: Decimal, end: Decimal) -> tuple[Decimal, Decimal]:
        """The timer's interval for an anchor event over ``[start, end]``."""
        if self.side == AFTER:
            return end, end + self.seconds
        return start - self.seconds, start


@dataclass(frozen=True)
class EventPattern:
    """EVENT: ``DEFINE GPM name ON stream { pattern }``, or with a relative timer
    (``DEFINE GPM name ON stream AFTER A FOR 12 SECONDS NOT { pattern }``)."""

    name: str
    stream_name: str
    stream: str
    pattern: GroupPattern
    location: Location | None = field(default=None, compare=False)
    timer: Timer | None = None

    @property
    def variables(self) -> set[str]:
        return in_scope_vars(self.pattern)


@dataclass(frozen=True)
class GpmRef:
    """A GPM used inside SEQ (an operand of a binary operator or a plain atom)."""

    name: str
    location: Location | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Conjunction:
    """``(A & B & ...)``: one result of each operand, all at the same time."""

    operands: tuple[Operand, ...]


@dataclass(frozen=True)
class Disjunction:
    """``(A | B | ...)``: a result of any one operand."""

    operands: tuple[Operand, ...]


Operand = GpmRef | Conjunction | Disjunction

PLAIN, KLEENE, OPTIONAL, NEGATION = "", "+", "?", "!"
SKIP_TILL_ANY, SKIP_TILL_NEXT, STRICT = ":", ";", ","
# RSEP-QL's selection policies (SELECTION ...) and consumption policies (CONSUMPTION ...),
# docs/decisions.md 65; the first of each is the default, the language's meaning without them
UNRESTRICTED, CHRONOLOGICAL, RECENT, LATEST = "unrestricted", "chronological", "recent", "latest"
SELECTIONS = (UNRESTRICTED, CHRONOLOGICAL, RECENT, LATEST)
CONSUME_NONE, CONSUME_MATCHED = "none", "matched"
CONSUMPTIONS = (CONSUME_NONE, CONSUME_MATCHED)

#: The largest bound a quantifier ``X{m,n}`` may name (docs/decisions.md 61): more iterations
#: than a window could sensibly hold is a typing mistake, and the core counts them in 32 bits.
MAX_ITERATIONS = 10_000


def iteration_text(low: int, high: int | None) -> str:
    """The one spelling of a Kleene atom's iteration bounds, as the plan's ``Step.modifier``
    writes it (docs/plan.md): ``{1,}`` is ``+``, ``{0,}`` is ``*``, ``{n,n}`` is ``{n}``."""
    if high is None:
        return {0: "*", 1: KLEENE}.get(low, f"{{{low},}}")
    return f"{{{low}}}" if low == high else f"{{{low},{high}}}"


_QUANTIFIER = re.compile(r"\{([0-9]+)(?:(,)([0-9]*))?\}")


def iteration_bounds(modifier: str) -> tuple[int, int | None] | None:
    """The bounds a Step's modifier text spells (the inverse of ``iteration_text``), or None
    when it is no Kleene atom's ('', '?', '!')."""
    if modifier in (KLEENE, "*"):
        return (1 if modifier == KLEENE else 0), None
    found = _QUANTIFIER.fullmatch(modifier)
    if found is None:
        return None
    low = int(found.group(1))
    if found.group(2) is None:
        return low, low
    return low, (int(found.group(3)) if found.group(3) else None)


@dataclass(frozen=True)
class Atom:
    """One step of a sequence: an operand, its modifier ('', '+', '?', '!') and the
    selection strategy (',', ';', ':') that attaches it to what precedes (None first).

    Every iteration form (``X+``, ``X*``, ``X{n}``, ``X{m,n}``, ``X{m,}``) is a Kleene atom,
    ``modifier == KLEENE``, taking between ``low`` and ``high`` events (``high`` None: no
    upper bound); ``X+`` is ``low=1, high=None``. Other atoms leave the bounds at that."""

    operand: Operand
    modifier: str = PLAIN
    strategy: str | None = None
    location: Location | None = field(default=None, compare=False)
    low: int = 1
    high: int | None = None

    @property
    def modifier_text(self) -> str:
        """The modifier as the plan and ``spaseq explain`` spell it: a Kleene atom's bounds in
        their one spelling (``iteration_text``), the others' modifier itself."""
        return iteration_text(self.low, self.high) if self.modifier == KLEENE else self.modifier

    @property
    def name_text(self) -> str:
        """The atom's GPM name, or ``(...)`` for a group: how messages name it."""
        return self.operand.name if isinstance(self.operand, GpmRef) else "(...)"

    @property
    def written(self) -> str:
        """The atom as messages write it: its name and its modifier (``B{2,3}``, ``(...)+``)."""
        return f"{self.name_text}{self.modifier_text}"


@dataclass(frozen=True)
class Seq:
    """SEQ(...): atoms evaluated left to right."""

    atoms: tuple[Atom, ...]

    @property
    def head(self) -> tuple[Atom, ...]:
        """The negated atoms the sequence starts with (head negation: no compatible event of
        theirs in the window before the first positive event)."""
        n = 0
        while n < len(self.atoms) and self.atoms[n].modifier == NEGATION:
            n += 1
        return self.atoms[:n]

    @property
    def positive(self) -> tuple[Atom, ...]:
        """The atoms after the head negations, the first of them opening the sequence: the
        operator written after a head negation attaches nothing (docs/decisions.md 62)."""
        rest = self.atoms[len(self.head):]
        if not rest or not self.head:
            return rest
        return (replace(rest[0], strategy=None), *rest[1:])


@dataclass(frozen=True)
class Window:
    """WITHIN: kind is 'time' (amount in seconds), 'events' (a count) or None (unbounded)."""

    kind: str | None = None
    amount: Decimal | int = 0   # seconds, exact (values.timestamps), or a number of events
    tumbling: bool = False

    def describe(self) -> str:
        if self.kind is None:
            return "unbounded"
        unit = "s" if self.kind == "time" else " events"
        amount = format(Decimal(self.amount).normalize(), "f")
        return f"{amount}{unit}{' tumbling' if self.tumbling else ''}"


@dataclass(frozen=True)
class MatchSpec:
    """MATCH: the projected variables (None for ``*``) and DISTINCT; for a CONSTRUCT query
    (``form == "construct"``) the template instantiated once per match (variables None)."""

    variables: tuple[str, ...] | None
    distinct: bool = False
    form: str = "select"
    template: tuple[TriplePattern, ...] = ()
    #: ``(expression AS ?v)`` of the SELECT: (v, the expression's SPARQL text), evaluated per
    #: match over the results its COLLECT timers gathered (aggregates: docs/decisions.md 71)
    expressions: tuple[tuple[str, str], ...] = ()

    @property
    def is_construct(self) -> bool:
        return self.form == "construct"


@dataclass(frozen=True)
class Query:
    """A whole SPAseq query: MATCH(WINDOW(SEQ(EVENT ...))) plus its declarations."""

    match: MatchSpec
    window: Window
    seq: Seq
    events: dict[str, EventPattern]
    streams: dict[str, str]
    partition_by: tuple[str, ...] = ()
    prefixes: dict[str, str] = field(default_factory=dict)
    base: str | None = None
    source: str = ""
    file: str = "<query>"
    warnings: tuple[str, ...] = ()
    #: LATENESS in seconds: how far behind the latest time seen on its streams an event may
    #: come and still be evaluated in time order (None: the engine's default, 0 if none)
    lateness: Decimal | None = None
    #: SELECTION: which earlier partial matches an event extends (UNRESTRICTED: all of them)
    selection: str = UNRESTRICTED
    #: CONSUMPTION: whether the event triples an emitted match took are used up (MATCHED)
    consumption: str = CONSUME_NONE
    #: where the SELECTION / CONSUMPTION clauses were written (for the checks' errors)
    policy_location: Location | None = field(default=None, compare=False)

    @property
    def stream_iris(self) -> list[str]:
        return list(dict.fromkeys(self.streams.values()))

    def graph_iris(self) -> list[str]:
        out: dict[str, None] = {}
        for ev in self.events.values():
            for g in graph_iris(ev.pattern):
                out.setdefault(g, None)
        return list(out)


def operand_gpms(op: Operand) -> Iterator[str]:
    """The GPM names an operand uses, in written order."""
    if isinstance(op, GpmRef):
        yield op.name
    else:
        for o in op.operands:
            yield from operand_gpms(o)
