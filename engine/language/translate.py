"""Syntax tree to query algebra: resolves prefixes, builds SEQ/EVENT/WINDOW/MATCH nodes
and the SPARQL pattern algebra of each GPM body. Static checks live in ``checks``."""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import ROUND_FLOOR, Decimal
from typing import cast

from lark import Token, Tree
from pyoxigraph import Literal, NamedNode

from spaseq.engine.algebra import operators as A
from spaseq.engine.errors import Location, QueryError
from spaseq.engine.language.suggest import hint
from spaseq.engine.values.timestamps import MAX_SECONDS, NANOSECOND
from spaseq.engine.vocab import RDF_NS, RDF_TYPE, XSD_BOOLEAN, xsd

RDF_FIRST, RDF_REST, RDF_NIL = NamedNode(RDF_NS + "first"), NamedNode(RDF_NS + "rest"), NamedNode(RDF_NS + "nil")

#: window units in seconds, exact (times are Decimal seconds: values.timestamps)
TIME_UNITS = {
    **dict.fromkeys(("millisecond", "milliseconds", "ms"), Decimal("0.001")),
    **dict.fromkeys(("second", "seconds", "sec", "secs"), Decimal(1)),
    **dict.fromkeys(("minute", "minutes", "min", "mins"), Decimal(60)),
    **dict.fromkeys(("hour", "hours"), Decimal(3600)),
    **dict.fromkeys(("day", "days"), Decimal(86400)),
}
EVENT_UNITS = {"event", "events"}
#: the time units a "did you mean" may suggest: the words, not the abbreviations
_UNIT_WORDS = ("MILLISECONDS", "SECONDS", "MINUTES", "HOURS", "DAYS")

_ESCAPES = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'", "\\": "\\"}
_UNICODE_ESCAPE = re.compile(r"\\u([0-9A-Fa-f]{4})|\\U([0-9A-Fa-f]{8})")
_STRING_ESCAPE = re.compile(r"\\(.)")


def unescape_string(token: str) -> str:
    """The value of a SPARQL string literal token (quotes removed, escapes applied)."""
    if token.startswith(('"""', "'''")):
        body = token[3:-3]
    else:
        body = token[1:-1]
    body = _UNICODE_ESCAPE.sub(lambda m: chr(int(m.group(1) or m.group(2), 16)), body)
    return _STRING_ESCAPE.sub(lambda m: _ESCAPES.get(m.group(1), m.group(0)), body)


@dataclass
class _Context:
    """What translation of one query needs: its text, file, prefixes, base, fresh names."""

    text: str
    file: str
    prefixes: dict[str, str] = field(default_factory=dict)
    base: str | None = None
    counter: itertools.count = field(default_factory=itertools.count)

    def loc(self, node: Tree | Token) -> Location:
        if isinstance(node, Token):
            return Location(self.file, node.line, node.column)
        return Location(self.file, node.meta.line, node.meta.column)

    def span(self, node: Tree) -> str:
        return self.text[node.meta.start_pos : node.meta.end_pos]

    def fresh_blank(self) -> A.Var:
        return A.Var(f"_:anon{next(self.counter)}")


def _token(node: Tree | Token) -> Token:
    """A child where the grammar (spaseq.lark) has a terminal: lark types every child as a
    token or a tree."""
    return cast(Token, node)  # the grammar's rule has a terminal there


def sparql_text(tree: Tree, text: str) -> str:
    """``text`` as SPARQL engines read it: the boolean literals written in upper case (``TRUE``,
    a keyword, so case-insensitive in SPARQL 1.1) lower-cased, as spargebra and pyoxigraph
    want them; the same length, so every span and location holds (docs/decisions.md 75)."""
    booleans = list(tree.scan_values(lambda t: isinstance(t, Token) and t.type in ("TRUE", "FALSE")))
    if not booleans:
        return text
    chars = list(text)
    for token in booleans:
        start, end = token.start_pos, token.end_pos
        chars[start:end] = text[start:end].lower()
    return "".join(chars)


def translate(tree: Tree, text: str, file: str, prefixes: Mapping[str, str] | None = None) -> A.Query:
    """Build the algebra of a parsed SPAseq query (no static checks beyond name resolution);
    ``prefixes`` are predeclared (e.g. rdflib's initNs), the query's PREFIX lines override them."""
    ctx = _Context(sparql_text(tree, text), file, dict(prefixes or {}))
    prologue, query = tree.children
    for decl in prologue.children:
        if decl.data == "base_decl":
            ctx.base = _token(decl.children[0])[1:-1]
        else:
            ctx.prefixes[_token(decl.children[0])[:-1]] = _resolve(ctx, _token(decl.children[1])[1:-1])

    head, *clauses, where = query.children
    match = _construct(ctx, head) if head.data == "construct_clause" else _select(ctx, head)
    window: A.Window | None = None
    lateness: Decimal | None = None
    policies: dict[str, tuple[str, Tree]] = {}
    partition: tuple[str, ...] | None = None
    streams: dict[str, str] = {}
    for clause in clauses:
        if clause.data == "within_clause":
            if window is not None:
                raise QueryError("a query has at most one WITHIN clause", ctx.loc(clause))
            window = _window(ctx, clause)
        elif clause.data == "lateness_clause":
            if lateness is not None:
                raise QueryError("a query has at most one LATENESS clause", ctx.loc(clause))
            lateness = _lateness(ctx, clause)
        elif clause.data in _POLICIES:
            keyword, _ = _POLICIES[clause.data]
            if clause.data in policies:
                raise QueryError(f"a query has at most one {keyword} clause", ctx.loc(clause))
            policies[clause.data] = (_policy(ctx, clause), clause)
        elif clause.data == "partition_clause":
            if partition is not None:
                raise QueryError("a query has at most one PARTITION BY clause", ctx.loc(clause))
            partition = tuple(_var_name(v) for v in clause.children)
        else:
            name_tok, iri = clause.children
            if str(name_tok) in streams:
                raise QueryError(f"stream {name_tok} is declared twice", ctx.loc(name_tok))
            streams[str(name_tok)] = _iri(ctx, iri).value

    seq_clause, *defines = where.children
    events: dict[str, A.EventPattern] = {}
    for d in defines:
        name_tok, stream_tok, *timer_node, body = d.children
        name = str(name_tok)
        if name in events:
            raise QueryError(f"GPM {name} is defined twice", ctx.loc(name_tok))
        if str(stream_tok) not in streams:
            declared = ", ".join(streams) or "none"
            raise QueryError(
                f"GPM {name} is defined on stream {stream_tok}, which no FROM STREAM clause "
                f"declares (declared: {declared})",
                ctx.loc(stream_tok),
            )
        events[name] = A.EventPattern(
            name, str(stream_tok), streams[str(stream_tok)], _group(ctx, body), ctx.loc(name_tok),
            _timer(ctx, timer_node[0]) if timer_node else None,
        )
    seq = _seq(ctx, seq_clause.children[0])
    return A.Query(
        match=match,
        window=window or A.Window(),
        seq=seq,
        events=events,
        streams=streams,
        partition_by=partition or (),
        prefixes=dict(ctx.prefixes),
        base=ctx.base,
        source=text,
        file=file,
        lateness=lateness,
        selection=policies.get("selection_clause", (A.UNRESTRICTED, None))[0],
        consumption=policies.get("consumption_clause", (A.CONSUME_NONE, None))[0],
        policy_location=next((ctx.loc(c) for _, c in policies.values()), None),
    )


# ---------------------------------------------------------------- SPAseq clauses

#: clause -> (its keyword, the policies it takes)
_POLICIES = {
    "selection_clause": ("SELECTION", A.SELECTIONS),
    "consumption_clause": ("CONSUMPTION", A.CONSUMPTIONS),
}


def _policy(ctx: _Context, node: Tree) -> str:
    """SELECTION p / CONSUMPTION p: the policy, or a located error naming the valid ones."""
    keyword, valid = _POLICIES[node.data]
    token = node.children[0]
    policy = str(token).lower()
    if policy not in valid:
        names = ", ".join(v.upper() for v in valid[:-1]) + f" or {valid[-1].upper()}"
        raise QueryError(f"{keyword} takes {names}, not {token!s}{hint(str(token), (v.upper() for v in valid))}",
                         ctx.loc(token))
    return policy


def _select(ctx: _Context, node: Tree) -> A.MatchSpec:
    distinct = False
    variables: list[str] = []
    expressions: list[tuple[str, str]] = []
    star = False
    for child in node.children:
        if isinstance(child, Tree) and child.data == "select_modifier":
            distinct = _token(child.children[0]).type == "DISTINCT"
        elif isinstance(child, Tree) and child.data == "select_var":
            variables.append(_var_name(child.children[0]))
        elif isinstance(child, Tree) and child.data == "select_expression_var":
            expr, var = child.children
            _expr(ctx, expr)  # its prefixed names resolve
            name = _var_name(var)
            if name in variables or any(name == v for v, _ in expressions):
                raise QueryError(f"?{name} is selected twice", ctx.loc(var))
            expressions.append((name, ctx.span(expr)))
            variables.append(name)
        elif isinstance(child, Token) and child.type == "STAR":
            star = True
    return A.MatchSpec(None if star else tuple(dict.fromkeys(variables)), distinct, expressions=tuple(expressions))


def _construct(ctx: _Context, node: Tree) -> A.MatchSpec:
    """CONSTRUCT { template }: triple patterns (blank nodes become ``_:`` vars, fresh per match)."""
    template: list[A.TriplePattern] = []
    triples = node.children[0].children
    for tss in triples[0].children if triples else ():
        _triples_same_subject(ctx, tss, template)
    return A.MatchSpec(None, False, "construct", tuple(template))


#: The longest event-count window (a count the native core keeps in 64 bits).
MAX_WINDOW_EVENTS = 10**18


def _window(ctx: _Context, node: Tree) -> A.Window:
    amount_node, unit_node = node.children[0], node.children[1]
    tumbling = len(node.children) > 2
    token = amount_node.children[0]
    text = str(token)
    amount = Decimal(text)
    unit_tok = unit_node.children[0]
    unit = str(unit_tok).lower()
    where = ctx.loc(token)
    if amount <= 0:
        what = "a negative window" if amount < 0 else "a window of length 0"
        raise QueryError(f"WITHIN {text} {unit_tok!s}: {what}; the WITHIN amount must be positive", where)
    if unit in EVENT_UNITS:
        if amount >= MAX_WINDOW_EVENTS:
            raise QueryError(f"WITHIN {text} {unit_tok!s} is too large: a window spans at most 10^18 "
                             "events", where)
        if amount != int(amount):
            raise QueryError("WITHIN ... EVENTS takes a whole number of events", where)
        return A.Window("events", int(amount), tumbling)
    if unit not in TIME_UNITS:
        raise QueryError(
            f"unknown window unit {unit_tok!s}; use MILLISECOND(S), SECOND(S), MINUTE(S), "
            f"HOUR(S), DAY(S) or EVENTS{hint(str(unit_tok), _UNIT_WORDS + ('EVENTS',))}",
            ctx.loc(unit_tok),
        )
    try:
        seconds = _exact_seconds(amount, unit, f"WITHIN {text} {unit_tok!s}", "a window spans at most")
    except DurationError as exc:
        raise QueryError(str(exc), where) from None
    return A.Window("time", seconds, tumbling)


def _timer(ctx: _Context, node: Tree) -> A.Timer:
    """AFTER|BEFORE anchor FOR n UNIT NOT|COLLECT (docs/decisions.md 71)."""
    side, anchor, amount, unit, mode = node.children
    token, unit_tok = amount.children[0], unit.children[0]
    try:
        seconds = duration_seconds(str(token), str(unit_tok), "FOR")
    except DurationError as exc:
        raise QueryError(str(exc), ctx.loc(unit_tok if exc.in_unit else token)) from None
    if seconds <= 0:
        raise QueryError(f"FOR {token} {unit_tok}: a timer lasts more than 0 seconds", ctx.loc(token))
    return A.Timer(A.AFTER if side.data == "after" else A.BEFORE, str(anchor), seconds,
                   A.ABSENT if mode.data == "absent" else A.COLLECT, ctx.loc(anchor))


def _lateness(ctx: _Context, node: Tree) -> Decimal:
    """LATENESS n UNIT: a duration in seconds, 0 or more, to the nanosecond."""
    token, unit_tok = node.children[0].children[0], node.children[1].children[0]
    try:
        return duration_seconds(str(token), str(unit_tok), "LATENESS")
    except DurationError as exc:
        raise QueryError(str(exc), ctx.loc(unit_tok if exc.in_unit else token)) from None


class DurationError(ValueError):
    """A duration that is not one; ``in_unit``: its unit is at fault, not its amount."""

    def __init__(self, message: str, in_unit: bool = False) -> None:
        super().__init__(message)
        self.in_unit = in_unit


_DURATION = re.compile(r"\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*([A-Za-z]+)?\s*$")


#: the short units an option's duration may also use (``1s``, ``2h``, ``1d``)
_SHORT_UNITS = {"s": "seconds", "h": "hours", "d": "days"}


def parse_duration(text: str, what: str) -> Decimal:
    """A duration written ``N UNIT`` (``500 MILLISECONDS``, ``500ms``, ``1s``, ``2 MIN``: the
    language's time units, and ``s``, ``h``, ``d``; a bare number is seconds) in exact
    seconds; DurationError naming ``what`` (e.g. ``--lateness``) otherwise."""
    m = _DURATION.match(text)
    if m is None:
        raise DurationError(f"{what} {text!r}: expected a duration such as 30 SECONDS, 500ms or 1s")
    unit = m.group(2) or "seconds"
    return duration_seconds(m.group(1), _SHORT_UNITS.get(unit.lower(), unit), what)


def duration_seconds(amount_text: str, unit_text: str, what: str) -> Decimal:
    """``amount_text`` ``unit_text`` (a time unit of the language) in exact seconds, 0 or more,
    to the nanosecond; DurationError saying why not."""
    amount, unit = Decimal(amount_text), unit_text.lower()
    if amount < 0:
        raise DurationError(f"{what} {amount_text} {unit_text}: a negative duration; give 0 or more")
    if unit not in TIME_UNITS:
        raise DurationError(f"{what} takes a time unit, not {unit_text}: MILLISECOND(S), SECOND(S), "
                            f"MINUTE(S), HOUR(S) or DAY(S){hint(unit_text, _UNIT_WORDS)}", in_unit=True)
    return _exact_seconds(amount, unit, f"{what} {amount_text} {unit_text}", "at most")


def _exact_seconds(amount: Decimal, unit: str, said: str, most: str) -> Decimal:
    """``amount`` of the time unit ``unit`` in exact seconds: within the range of times and
    to the nanosecond, else DurationError starting with ``said`` (how it was written) and
    giving the bound as ``most`` says it (``a window spans at most``)."""
    if amount >= MAX_SECONDS or amount * TIME_UNITS[unit] >= MAX_SECONDS:  # no overflow either
        raise DurationError(f"{said} is too large: {most} 10^18 seconds, the range of times")
    seconds = amount * TIME_UNITS[unit]
    if seconds != seconds.quantize(NANOSECOND, rounding=ROUND_FLOOR):
        raise DurationError(f"{said} is finer than a nanosecond, the resolution of times")
    return seconds


def _seq(ctx: _Context, node: Tree) -> A.Seq:
    atoms: list[A.Atom] = []
    strategy: str | None = None
    for child in node.children:
        if isinstance(child, Token) and child.type == "SEQ_OP":
            strategy = str(child)
            continue
        atoms.append(_atom(ctx, child, strategy))
    return A.Seq(tuple(atoms))


def _atom(ctx: _Context, node: Tree, strategy: str | None) -> A.Atom:
    last = node.children[-1] if node.children else None
    mod = last if isinstance(last, Tree) and last.data == "atom_mod" else None
    written = ctx.span(mod) if mod is not None else ""
    if node.data == "gpm_atom":
        name_tok = node.children[0]
        operand: A.Operand = A.GpmRef(str(name_tok), ctx.loc(name_tok))
    else:
        operand = _operand(ctx, node.children[0])
        if mod is not None and str(mod.children[0]) in (A.OPTIONAL, A.NEGATION):
            raise QueryError(
                f"'{written}' applies to a GPM name, not to a parenthesised expression (only "
                "the iteration forms +, *, {n}, {m,n} and {m,} apply to a group)",
                ctx.loc(mod.children[0]),
            )
        if mod is not None and _may_take_none(mod) and _has_conjunction(operand):
            raise QueryError(
                f"'{written}' may take no iteration of a group holding a conjunction '&': its "
                "absence (no time where every operand matches) is not defined; give a lower "
                "bound of at least 1",
                ctx.loc(mod.children[0]),
            )
    if mod is None:
        return A.Atom(operand, A.PLAIN, strategy, ctx.loc(node))
    (child,) = mod.children
    if isinstance(child, Tree):  # X{n}, X{m,}, X{m,n}
        low, high = _quantifier(ctx, child, f"{_written_operand(node)}{written}")
    elif child == "*":
        low, high = 0, None
    elif child == A.KLEENE:
        low, high = 1, None
    else:  # '?' and '!'
        return A.Atom(operand, str(child), strategy, ctx.loc(node))
    return A.Atom(operand, A.KLEENE, strategy, ctx.loc(node), low, high)


def _written_operand(node: Tree) -> str:
    """An atom's operand for messages: its GPM name, or ``(...)`` for a group."""
    return str(node.children[0]) if node.data == "gpm_atom" else "(...)"


def _may_take_none(mod: Tree) -> bool:
    """Whether an atom modifier allows zero iterations (``*``, ``{0,n}``)."""
    (child,) = mod.children
    if isinstance(child, Tree):
        return child.data != "quant_exact" and int(_token(child.children[0])) == 0
    return str(child) == "*"


def _has_conjunction(op: A.Operand) -> bool:
    if isinstance(op, A.Conjunction):
        return True
    return isinstance(op, A.Disjunction) and any(_has_conjunction(o) for o in op.operands)


def _quantifier(ctx: _Context, node: Tree, written: str) -> tuple[int, int | None]:
    """The bounds ``{n}``, ``{m,}`` or ``{m,n}`` state (decision 61): every bound at most
    ``A.MAX_ITERATIONS``, the lower not above the upper, and at least one event taken;
    ``written`` is the atom as written, for the messages."""
    numbers = [_token(c) for c in node.children]
    for tok in numbers:
        if int(tok) > A.MAX_ITERATIONS:
            raise QueryError(
                f"{written}: {int(tok)} iterations is too many; a quantifier's bounds are at most "
                f"{A.MAX_ITERATIONS}", ctx.loc(tok),
            )
    low = int(numbers[0])
    high = None if node.data == "quant_at_least" else int(numbers[-1])
    if high is not None and low > high:
        raise QueryError(
            f"{written}: the lower bound {low} is above the upper bound {high}; write {{m,n}} with "
            "m <= n", ctx.loc(node),
        )
    if high == 0:
        raise QueryError(
            f"{written} takes no event at all; drop the atom, or give an upper bound of at least 1",
            ctx.loc(node),
        )
    return low, high


def _operand(ctx: _Context, node: Tree) -> A.Operand:
    if node.data == "bop_name":
        tok = node.children[0]
        return A.GpmRef(str(tok), ctx.loc(tok))
    operands = tuple(_operand(ctx, c) for c in node.children)
    return A.Conjunction(operands) if node.data == "conjunction" else A.Disjunction(operands)


# ---------------------------------------------------------------- terms


def _resolve(ctx: _Context, iri: str) -> str:
    """RFC 3986 reference resolution against BASE (urljoin, keeping an empty fragment or
    query, which urljoin drops)."""
    if ctx.base is None or re.match(r"^[A-Za-z][A-Za-z0-9+.\-]*:", iri):
        return iri
    from urllib.parse import urljoin

    resolved = urljoin(ctx.base, iri)
    for mark in ("#", "?"):
        if iri.endswith(mark) and not resolved.endswith(mark):
            resolved += mark
    return resolved


def _iri(ctx: _Context, node: Tree | Token) -> NamedNode:
    tok = _token(node.children[0]) if isinstance(node, Tree) else node
    if tok.type == "IRIREF":
        value = _resolve(ctx, str(tok)[1:-1])
    else:
        prefix, _, local = str(tok).partition(":")
        if prefix not in ctx.prefixes:
            raise QueryError(f"unknown prefix '{prefix}:' (no PREFIX declaration)", ctx.loc(tok))
        value = ctx.prefixes[prefix] + re.sub(r"\\(.)", r"\1", local)
    try:
        return NamedNode(value)
    except ValueError as exc:
        hint = " (a relative IRI needs a BASE declaration)" if ":" not in value else ""
        raise QueryError(f"invalid IRI <{value}>: {exc}{hint}", ctx.loc(tok)) from None


def _var_name(node: Tree | Token) -> str:
    tok = node.children[0] if isinstance(node, Tree) else node
    return str(tok)[1:]


def _var_or_iri(ctx: _Context, node: Tree) -> NamedNode | A.Var:
    """A var_or_iri (a GRAPH or SERVICE name), as ``_term`` reads it."""
    return A.Var(_var_name(node)) if node.data == "var" else _iri(ctx, node)


def _term(ctx: _Context, node: Tree | Token) -> A.PatternTerm:
    """A graph term or variable in a triple pattern or VALUES block."""
    if isinstance(node, Token):
        if node.type == "NIL":
            return RDF_NIL
        if node.type == "A":
            return RDF_TYPE
        raise QueryError(f"unexpected {node!s}", ctx.loc(node))
    kind = node.data
    if kind == "var":
        return A.Var(_var_name(node))
    if kind == "iri":
        return _iri(ctx, node)
    if kind == "blank_node":
        tok = _token(node.children[0])
        return ctx.fresh_blank() if tok.type == "ANON" else A.Var(str(tok))
    return _literal(ctx, node)


def _literal(ctx: _Context, node: Tree) -> Literal:
    kind = node.data
    if kind == "rdf_literal":
        value = unescape_string(str(node.children[0].children[0]))
        if len(node.children) == 1:
            return Literal(value)
        extra = node.children[1]
        if isinstance(extra, Token) and extra.type == "LANGTAG":
            return Literal(value, language=str(extra)[1:])
        return Literal(value, datatype=_iri(ctx, extra))
    if kind == "boolean_literal":
        return Literal(str(node.children[0]).lower(), datatype=XSD_BOOLEAN)
    return Literal(str(node.children[0]).removeprefix("+"), datatype=xsd(kind))


# ---------------------------------------------------------------- group patterns


def _group(ctx: _Context, node: Tree) -> A.GroupPattern:
    inner = node.children[0]
    text = ctx.span(node)
    loc = ctx.loc(node)
    if inner.data == "sub_select":
        return A.GroupPattern((_sub_select(ctx, inner),), text, loc)
    elements: list[A.Element] = []
    origin = node.meta.start_pos
    for child in inner.children:
        if child.data == "filter":
            span = (child.meta.start_pos - origin, child.meta.end_pos - origin)
            c = child.children[0]
            elements.append(A.Filter(_expr(ctx, c), ctx.span(c), span))
        elif child.data == "triples_block":
            triples: list[A.TriplePattern] = []
            for tss in child.children:
                _triples_same_subject(ctx, tss, triples)
            elements.append(A.BGP(tuple(triples)))
        else:
            elements.append(_not_triples(ctx, child))
    return A.GroupPattern(tuple(elements), text, loc)


def _not_triples(ctx: _Context, node: Tree) -> A.Element:
    kind = node.data
    if kind == "filter":
        return A.Filter(_expr(ctx, node.children[0]), ctx.span(node.children[0]))
    if kind == "optional_graph_pattern":
        return A.OptionalPattern(_group(ctx, node.children[0]))
    if kind == "minus_graph_pattern":
        return A.MinusPattern(_group(ctx, node.children[0]))
    if kind == "group_or_union_graph_pattern":
        return A.UnionPattern(tuple(_group(ctx, g) for g in node.children))
    if kind == "graph_graph_pattern":
        name = _var_or_iri(ctx, node.children[0])
        return A.GraphPattern(name, _group(ctx, node.children[1]))
    if kind == "service_graph_pattern":
        silent = isinstance(node.children[0], Token)
        rest = node.children[1:] if silent else node.children
        return A.ServicePattern(_var_or_iri(ctx, rest[0]), _group(ctx, rest[1]), silent)
    if kind == "bind":
        return A.Bind(_expr(ctx, node.children[0]), _var_name(node.children[1]), ctx.span(node.children[0]))
    if kind == "inline_data":
        return _values(ctx, node.children[0])
    raise QueryError(f"unsupported pattern {kind}", ctx.loc(node))  # pragma: no cover


def _values(ctx: _Context, node: Tree) -> A.Values:
    def value(v: Tree) -> NamedNode | Literal | None:
        """A data_block_value: an IRI, a literal or UNDEF."""
        if isinstance(v, Tree) and v.data == "undef":
            return None
        return _iri(ctx, v) if v.data == "iri" else _literal(ctx, v)

    if node.data == "inline_data_one_var":
        var, *vals = node.children
        return A.Values((_var_name(var),), tuple((value(v),) for v in vals))
    variables = tuple(
        _var_name(c) for c in node.children if isinstance(c, Tree) and c.data == "var"
    )
    rows = []
    for row in node.children:
        if isinstance(row, Tree) and row.data == "data_row":
            vals = [c for c in row.children if not (isinstance(c, Token) and c.type == "NIL")]
            if len(vals) != len(variables):
                raise QueryError(
                    f"VALUES row has {len(vals)} values for {len(variables)} variables", ctx.loc(row)
                )
            rows.append(tuple(value(v) for v in vals))
    return A.Values(variables, tuple(rows))


def _sub_select(ctx: _Context, node: Tree) -> A.SubSelect:
    clause, where = node.children[0], node.children[1]
    projected: list[str] = []
    star = False
    for item in clause.children:
        if isinstance(item, Token) and item.type == "STAR":
            star = True
        elif isinstance(item, Tree) and item.data == "var":
            projected.append(_var_name(item))
        elif isinstance(item, Tree) and item.data == "select_expression":
            _expr(ctx, item.children[0])
            projected.append(_var_name(item.children[1]))
    pattern = _group(ctx, where.children[0])
    if star:
        projected = sorted(A.in_scope_vars(pattern))
    for part in node.children[2:]:
        _check_prefixes(ctx, part)
    return A.SubSelect(tuple(projected), pattern, ctx.span(node))


def _check_prefixes(ctx: _Context, node: Tree) -> None:
    """Resolve every prefixed name under ``node`` (solution modifiers we do not model)."""
    for tok in node.scan_values(lambda t: isinstance(t, Token) and t.type in ("PNAME_LN", "PNAME_NS")):
        _iri(ctx, tok)


# ---------------------------------------------------------------- triples and paths


def _triples_same_subject(ctx: _Context, node: Tree, out: list[A.TriplePattern]) -> None:
    subject_node, *rest = node.children
    subject = _node(ctx, subject_node, out)
    for plist in rest:
        if plist.data == "property_list_path":
            plist = plist.children[0]
        _property_list(ctx, subject, plist, out)


def _property_list(
    ctx: _Context, subject: A.PatternTerm, node: Tree, out: list[A.TriplePattern]
) -> None:
    children = node.children
    for verb_node, objects in zip(children[::2], children[1::2], strict=True):
        verb = _verb(ctx, verb_node)
        for obj_node in objects.children:
            obj = _node(ctx, obj_node, out)
            out.append(A.TriplePattern(subject, verb, obj))


def _node(ctx: _Context, node: Tree | Token, out: list[A.TriplePattern]) -> A.PatternTerm:
    """A subject/object node; blank node property lists and collections add triples."""
    if isinstance(node, Tree) and node.data in ("blank_node_property_list_path", "blank_node_property_list"):
        bnode = ctx.fresh_blank()
        _property_list(ctx, bnode, node.children[0], out)
        return bnode
    if isinstance(node, Tree) and node.data in ("collection_path", "collection"):
        head: A.PatternTerm = RDF_NIL
        items = [_node(ctx, c, out) for c in node.children]
        cells = [ctx.fresh_blank() for _ in items]
        for i, (cell, item) in enumerate(zip(cells, items, strict=True)):
            out.append(A.TriplePattern(cell, RDF_FIRST, item))
            out.append(A.TriplePattern(cell, RDF_REST, cells[i + 1] if i + 1 < len(cells) else RDF_NIL))
        if cells:
            head = cells[0]
        return head
    return _term(ctx, node)


def _verb(ctx: _Context, node: Tree | Token) -> NamedNode | A.Var | A.Path:
    if isinstance(node, Tree) and node.data == "var":
        return A.Var(_var_name(node))
    path = _path(ctx, node)
    return path.args[0] if path.kind == "link" else path


def _path(ctx: _Context, node: Tree | Token) -> A.Path:
    if isinstance(node, Token):  # 'a'
        return A.Path("link", (RDF_TYPE,))
    kind = node.data
    if kind == "iri":
        return A.Path("link", (_iri(ctx, node),))
    if kind in ("path_alt", "path_seq"):
        parts = [_path(ctx, c) for c in node.children]
        if len(parts) == 1:
            return parts[0]
        return A.Path("alt" if kind == "path_alt" else "seq", tuple(parts))
    if kind == "path_elt":
        inner = _path(ctx, node.children[0])
        if len(node.children) == 1:
            return inner
        mod_tok = node.children[1].children[0]
        mod = {"?": "zero_or_one", "*": "zero_or_more", "+": "one_or_more"}[str(mod_tok)]
        return A.Path(mod, (inner,))
    if kind == "path_inverse":
        return A.Path("inv", (_path(ctx, node.children[0]),))
    if kind == "path_negated":
        negated = node.children[-1]
        items = negated.children if isinstance(negated, Tree) and negated.data == "path_negated_set" else [negated]
        iris, inverse = [], []
        for item in items:
            if isinstance(item, Tree) and item.data == "path_inverse_one":
                iris.append(_path(ctx, item.children[0]).args[0])
                inverse.append(True)
            else:
                iris.append(_path(ctx, item).args[0])
                inverse.append(False)
        return A.Path("nps", tuple(iris), tuple(inverse))
    raise QueryError(f"unsupported path {kind}", ctx.loc(node))  # pragma: no cover


# ---------------------------------------------------------------- expressions

_PASS_THROUGH = {"or_expr", "and_expr", "additive", "multiplicative"}


def _expr(ctx: _Context, node: Tree | Token) -> A.Expr:
    if isinstance(node, Token):
        raise QueryError(f"unexpected {node!s}", ctx.loc(node))  # pragma: no cover
    kind = node.data
    ch = node.children
    if kind in _PASS_THROUGH:
        if kind in ("or_expr", "and_expr"):
            operands = [_expr(ctx, c) for c in ch]
            if len(operands) == 1:
                return operands[0]
            op = "||" if kind == "or_expr" else "&&"
            result = operands[0]
            for a in operands[1:]:
                result = A.ECall(op, (result, a))
            return result
        result = _expr(ctx, ch[0])
        for op_node, operand in zip(ch[1::2], ch[2::2], strict=True):
            result = A.ECall(str(op_node.children[0]), (result, _expr(ctx, operand)))
        return result
    if kind == "compare":
        return A.ECall(str(ch[1]), (_expr(ctx, ch[0]), _expr(ctx, ch[2])))
    if kind in ("in_expr", "not_in_expr"):
        items = tuple(_expr(ctx, c) for c in ch[1].children if isinstance(c, Tree))
        return A.ECall("IN" if kind == "in_expr" else "NOT IN", (_expr(ctx, ch[0]), *items))
    if kind in ("not_expr", "pos_expr", "neg_expr"):
        op = {"not_expr": "!", "pos_expr": "pos", "neg_expr": "neg"}[kind]
        return A.ECall(op, (_expr(ctx, ch[-1]),))
    if kind == "var":
        return A.EVar(_var_name(node))
    if kind == "iri":
        return A.ETerm(_iri(ctx, node))
    if kind in ("rdf_literal", "boolean_literal", "integer", "decimal", "double"):
        return A.ETerm(_literal(ctx, node))
    if kind == "builtin":
        distinct, args = _args(ctx, ch[1])
        return A.ECall(str(ch[0]).upper(), args, distinct)
    if kind == "function_call":
        distinct, args = _args(ctx, ch[1])
        return A.ECall(f"<{_iri(ctx, ch[0]).value}>", args, distinct)
    if kind == "bound":
        return A.ECall("BOUND", (A.EVar(_var_name(ch[0])),))
    if kind in ("exists", "not_exists"):
        return A.EExists(_group(ctx, ch[0]), negated=kind == "not_exists")
    if kind == "aggregate":
        distinct = any(isinstance(c, Token) and c.type == "DISTINCT" for c in ch)
        last = ch[-1]
        args = () if isinstance(last, Token) and last.type == "STAR" else (_expr(ctx, last),)
        return A.ECall(str(ch[0]).upper(), args, distinct)
    if kind == "group_concat":
        distinct = any(isinstance(c, Token) and c.type == "DISTINCT" for c in ch)
        exprs = tuple(_expr(ctx, c) for c in ch if isinstance(c, Tree) and c.data != "string")
        return A.ECall("GROUP_CONCAT", exprs, distinct)
    raise QueryError(f"unsupported expression {kind}", ctx.loc(node))  # pragma: no cover


def _args(ctx: _Context, node: Tree) -> tuple[bool, tuple[A.Expr, ...]]:
    distinct = False
    args: list[A.Expr] = []
    for c in node.children:
        if isinstance(c, Token):
            distinct = distinct or c.type == "DISTINCT"
        else:
            args.append(_expr(ctx, c))
    return distinct, tuple(args)
