"""A compiled matcher for the common shape of GPM bodies: top-level triple patterns and
top-level FILTERs, evaluated on an ``EventIndex`` in plain Python. The engine no longer runs
it (the native core evaluates GPMs; the bodies it calls back go to pyoxigraph, decision 37):
it remains the Python expression evaluator the value-semantics tests (``values``, both
dialects) check against pyoxigraph, until those tests read the dialect tables directly.

``compile_pattern(group)`` turns such a body into Python source (one join function with
nested loops in a join order fixed at compile time, and the FILTER expressions inlined as
straight-line code) and ``exec``s it once. Bodies with anything else (OPTIONAL, UNION,
MINUS, BIND, VALUES, sub-queries, property paths, EXISTS, unsupported functions, a REGEX
whose pattern is not a constant in the translated subset) give None: the engine then uses
pyoxigraph (``gpm``). With ``allow_graph=True`` top-level ``GRAPH`` elements are skipped and
reported in ``graph_elements`` so that the engine can join them against the knowledge base.

Semantics (SEMANTICS.md section 2): for this shape, ``eval(A, e, mu)`` is every
``mu ∪ nu`` with ``nu`` a solution of the BGP on the event compatible with ``mu`` for which
every FILTER is true on ``mu ∪ nu``. FILTERs that mention only BGP variables do not depend
on ``mu``: they run inside the join, once per event, and the filtered solutions are memoised
on the index; the others run per context. Expression semantics: ``values``
(``dialect="spec"`` by default; ``"oxigraph"`` to agree with the pyoxigraph fallback).

``compile_expression(expr)`` compiles one SPARQL expression on its own (the same code).
``CompiledPattern.source`` holds the generated Python, for debugging.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping

from pyoxigraph import Literal, NamedNode

from spaseq.engine.algebra import operators as A
from spaseq.engine.compile.event_index import EventIndex
from spaseq.engine.compile.gpm_shape import compiled_shape, join_order, term_vars
from spaseq.engine.functions.registry import call_values
from spaseq.engine.functions.run_functions import expr_calls_run
from spaseq.engine.values.casts import CASTS
from spaseq.engine.values.dialects import OPERATORS, OXIGRAPH, SPEC, dialect_named
from spaseq.engine.values.kinds import ERRORS, K_DBL, K_DEC, K_STR, ExprError
from spaseq.engine.values.literals import INFO_CACHE, info, info_slow
from spaseq.engine.values.xpath_regex import UnsupportedRegex, translate_regex
from spaseq.engine.vocab import SPASEQ_NS

# A pattern position at nesting depth >= 1 whose subject (or object) is already bound uses a
# hash lookup instead of a scan when its predicate has more pairs than this.
HASH_JOIN_THRESHOLD = 8


class _Unsupported(Exception):
    """The body (or an expression in it) is outside what this module compiles."""


# builtin name -> (helper, min args, max args (None: any), returns a Python bool)
_STRICT = {
    "STR": ("fn_str", 1, 1, False),
    "LANG": ("fn_lang", 1, 1, False),
    "DATATYPE": ("fn_datatype", 1, 1, False),
    "IRI": ("fn_iri", 1, 1, False),
    "URI": ("fn_iri", 1, 1, False),
    "ISIRI": ("fn_is_iri", 1, 1, True),
    "ISURI": ("fn_is_iri", 1, 1, True),
    "ISBLANK": ("fn_is_blank", 1, 1, True),
    "ISLITERAL": ("fn_is_literal", 1, 1, True),
    "ISNUMERIC": ("fn_is_numeric", 1, 1, True),
    "SAMETERM": ("same_term", 2, 2, True),
    "CONTAINS": ("fn_contains", 2, 2, True),
    "STRSTARTS": ("fn_strstarts", 2, 2, True),
    "STRENDS": ("fn_strends", 2, 2, True),
    "STRLEN": ("fn_strlen", 1, 1, False),
    "SUBSTR": ("fn_substr", 2, 3, False),
    "UCASE": ("fn_ucase", 1, 1, False),
    "LCASE": ("fn_lcase", 1, 1, False),
    "CONCAT": ("fn_concat", 0, None, False),
    "ABS": ("fn_abs", 1, 1, False),
    "CEIL": ("fn_ceil", 1, 1, False),
    "FLOOR": ("fn_floor", 1, 1, False),
    "ROUND": ("fn_round", 1, 1, False),
    "LANGMATCHES": ("fn_langmatches", 2, 2, True),
    "+": ("op_add", 2, 2, False),
    "-": ("op_sub", 2, 2, False),
    "*": ("op_mul", 2, 2, False),
    "/": ("op_div", 2, 2, False),
    "neg": ("op_neg", 1, 1, False),
    "pos": ("op_pos", 1, 1, False),
    "=": ("equal", 2, 2, True),
    "<": ("op_lt", 2, 2, True),
    ">": ("op_gt", 2, 2, True),
    "<=": ("op_le", 2, 2, True),
    ">=": ("op_ge", 2, 2, True),
}

_HELPERS = (
    "fn_str fn_lang fn_datatype fn_iri fn_is_iri fn_is_blank fn_is_literal fn_is_numeric "
    "same_term fn_contains fn_strstarts fn_strends fn_strlen fn_substr fn_ucase fn_lcase "
    "fn_concat fn_abs fn_ceil fn_floor fn_round fn_langmatches op_add op_sub op_mul op_div "
    "op_neg op_pos regex_match"
).split()


def _ordering_ops(compare, dialect: str) -> dict:
    """Fast paths for < > <= >= when both sides have the same numeric type."""
    cache = INFO_CACHE
    slow = info_slow
    top = K_DBL
    dec = K_DEC  # integer/decimal pairs compare exactly in Python, as promoted in SPARQL
    if dialect == SPEC.name:

        def op_lt(a, b):
            ka, x = cache.get(a) or slow(a)
            kb, y = cache.get(b) or slow(b)
            if ka == kb and ka <= top or ka <= dec and kb <= dec:
                return x < y
            return compare(a, b) == -1

        def op_gt(a, b):
            ka, x = cache.get(a) or slow(a)
            kb, y = cache.get(b) or slow(b)
            if ka == kb and ka <= top or ka <= dec and kb <= dec:
                return x > y
            return compare(a, b) == 1

        def op_le(a, b):
            ka, x = cache.get(a) or slow(a)
            kb, y = cache.get(b) or slow(b)
            if ka == kb and ka <= top or ka <= dec and kb <= dec:
                return x <= y
            return compare(a, b) < 1

        def op_ge(a, b):
            ka, x = cache.get(a) or slow(a)
            kb, y = cache.get(b) or slow(b)
            if ka == kb and ka <= top or ka <= dec and kb <= dec:
                return x >= y
            return 0 <= compare(a, b) <= 1

    else:  # pyoxigraph: NaN is unordered (an error), so only non-NaN pairs take the fast path

        def op_lt(a, b):
            ka, x = cache.get(a) or slow(a)
            kb, y = cache.get(b) or slow(b)
            if (ka == kb and ka <= top or ka <= dec and kb <= dec) and x == x and y == y:
                return x < y
            return compare(a, b) == -1

        def op_gt(a, b):
            ka, x = cache.get(a) or slow(a)
            kb, y = cache.get(b) or slow(b)
            if (ka == kb and ka <= top or ka <= dec and kb <= dec) and x == x and y == y:
                return x > y
            return compare(a, b) == 1

        def op_le(a, b):
            ka, x = cache.get(a) or slow(a)
            kb, y = cache.get(b) or slow(b)
            if (ka == kb and ka <= top or ka <= dec and kb <= dec) and x == x and y == y:
                return x <= y
            return compare(a, b) < 1

        def op_ge(a, b):
            ka, x = cache.get(a) or slow(a)
            kb, y = cache.get(b) or slow(b)
            if (ka == kb and ka <= top or ka <= dec and kb <= dec) and x == x and y == y:
                return x >= y
            return 0 <= compare(a, b) <= 1

    return {"op_lt": op_lt, "op_gt": op_gt, "op_le": op_le, "op_ge": op_ge}


_ORDERING = ("<", ">", "<=", ">=")


def _raise_unbound():
    raise ExprError("unbound variable")


def _raise_error():
    raise ExprError("expression error")


def _namespace(dialect: str) -> dict:
    ns = {name: OPERATORS.get(name) for name in _HELPERS}
    fns = dialect_named(dialect).functions()
    ns.update(fns)
    ns.update(_ordering_ops(fns["compare"], dialect))
    ns["ERRORS"] = ERRORS
    ns["_get"] = INFO_CACHE.get
    ns["info_slow"] = info_slow
    ns["ExprError"] = ExprError
    ns["_unbound"] = _raise_unbound
    ns["_fail"] = _raise_error
    ns["spaseq_call"] = call_values  # spaseq functions (extension_functions)
    ns["_run"] = None  # the run they see: a parameter of _solutions/_check, None elsewhere
    return ns


# ---------------------------------------------------------------- code generation


class _Source:
    """Lines of generated Python with an indentation level, plus the constants they use."""

    def __init__(self, consts: dict[str, object], const_ids: dict, dialect: str = SPEC.name) -> None:
        self.dialect = dialect
        self.lines: list[str] = []
        self.depth = 0
        self.consts = consts
        self._const_ids = const_ids
        self._tmp = itertools.count()

    def emit(self, line: str) -> None:
        self.lines.append("    " * self.depth + line)

    def indent(self) -> _Indent:
        return _Indent(self)

    def tmp(self) -> str:
        return f"t{next(self._tmp)}"

    def const(self, obj: object) -> str:
        key = (type(obj), obj)
        name = self._const_ids.get(key)
        if name is None:
            name = f"C{len(self.consts)}"
            self._const_ids[key] = name
            self.consts[name] = obj
        return name


class _Indent:
    def __init__(self, src: _Source) -> None:
        self.src = src

    def __enter__(self) -> None:
        self.src.depth += 1

    def __exit__(self, *exc) -> None:
        self.src.depth -= 1


class _Vars:
    """How an expression reads a variable: ``plain`` names are locals that are always bound,
    ``maybe`` names are locals holding the value or None."""

    def __init__(self, plain: dict[str, str], maybe: dict[str, str]) -> None:
        self.plain = plain
        self.maybe = maybe

    def ref(self, name: str) -> str:
        if name in self.plain:
            return self.plain[name]
        local = self.maybe.get(name)
        if local is None:  # never bound anywhere: reading it is an error
            return "_unbound()"
        return f"({local} if {local} is not None else _unbound())"

    def bound(self, name: str) -> str:
        if name in self.plain:
            return "True"
        local = self.maybe.get(name)
        return "False" if local is None else f"({local} is not None)"


class _ExprCompiler:
    def __init__(self, src: _Source, names: _Vars, base_iri: str | None) -> None:
        self.src = src
        self.names = names
        self.base_iri = base_iri

    # Each method returns (python expression, is_bool); statements it needs are emitted first.

    def expr(self, e: A.Expr) -> tuple[str, bool]:
        if isinstance(e, A.EVar):
            return self.names.ref(e.name), False
        if isinstance(e, A.ETerm):
            if not isinstance(e.term, NamedNode | Literal):
                raise _Unsupported(f"constant {e.term!r}")
            return self.src.const(e.term), False
        if isinstance(e, A.ECall):
            if e.distinct:
                raise _Unsupported("DISTINCT in a call")
            return self.call(e)
        raise _Unsupported(type(e).__name__)

    def ebv(self, e: A.Expr) -> str:
        code, is_bool = self.expr(e)
        return code if is_bool else f"ebv({code})"

    def call(self, e: A.ECall) -> tuple[str, bool]:
        op, args = e.op, e.args
        if op == "||" or op == "&&":
            return self.logical(op, args), True
        if op == "!":
            self._arity(args, 1, 1)
            return f"(not {self.ebv(args[0])})", True
        if op == "!=":
            self._arity(args, 2, 2)
            a, b = (self.expr(x)[0] for x in args)
            return f"(not equal({a}, {b}))", True
        if op == "IN" or op == "NOT IN":
            return self.in_list(op == "NOT IN", args), True
        if op == "BOUND":
            if len(args) != 1 or not isinstance(args[0], A.EVar):
                raise _Unsupported("BOUND needs one variable")
            return self.names.bound(args[0].name), True
        if op == "IF":
            return self.if_(args)
        if op == "COALESCE":
            return self.coalesce(args), False
        if op == "REGEX":
            return self.regex(args), True
        if op.startswith("<" + SPASEQ_NS) and op.endswith(">"):
            codes = "".join(self.expr(a)[0] + ", " for a in args)
            return f"spaseq_call({self.src.const(op[1:-1])}, _run, ({codes}))", False
        if op.startswith("<") and op.endswith(">"):
            helper = CASTS.get(op[1:-1])
            if helper is None:
                raise _Unsupported(f"function {op}")
            self._arity(args, 1, 1)
            return f"{helper}({self.expr(args[0])[0]})", helper == "cast_boolean"
        if op in _ORDERING and len(args) == 2:
            return self.ordering(op, args), True
        spec = _STRICT.get(op)
        if spec is None:
            raise _Unsupported(f"function {op}")
        helper, lo, hi, is_bool = spec
        if helper == "fn_iri" and self.base_iri is not None:
            raise _Unsupported("IRI() with a base IRI")
        self._arity(args, lo, hi)
        codes = [self.expr(a)[0] for a in args]
        return f"{helper}({', '.join(codes)})", is_bool

    def ordering(self, op: str, args: tuple) -> str:
        """< > <= >= with the common case inlined: both operands of the same numeric type
        (a constant operand is analysed at compile time)."""
        src = self.src
        helper = _STRICT[op][0]
        ox = src.dialect == OXIGRAPH.name
        codes = [self.expr(e)[0] for e in args]
        consts = [info(e.term) if isinstance(e, A.ETerm) else None for e in args]
        if all(c is not None for c in consts) or any(
            c is not None and (c[0] > K_DBL or (ox and c[1] != c[1])) for c in consts
        ):
            return f"{helper}({codes[0]}, {codes[1]})"
        sides = []
        for code, const in zip(codes, consts, strict=True):
            if const is not None:
                sides.append((code, str(const[0]), src.const(const[1]), True))
                continue
            if not code.isidentifier():
                t = src.tmp()
                src.emit(f"{t} = {code}")
                code = t
            k, x = src.tmp(), src.tmp()
            src.emit(f"{k}, {x} = _get({code}) or info_slow({code})")
            sides.append((code, k, x, False))
        (a, ka, xa, ca), (b, kb, xb, cb) = sides
        # integers and decimals compare exactly in Python, as SPARQL's promotion to decimal
        # does: a mixed integer/decimal pair needs no promotion either
        if ca or cb:
            k_const, k_var = (ka, kb) if ca else (kb, ka)
            cond = f"{k_var} <= {K_DEC}" if int(k_const) <= K_DEC else f"{k_var} == {k_const}"
        else:
            cond = f"({ka} == {kb} and {ka} <= {K_DBL} or {ka} <= {K_DEC} and {kb} <= {K_DEC})"
        if ox:
            cond += "".join(f" and {x} == {x}" for x, c in ((xa, ca), (xb, cb)) if not c)
        return f"({xa} {op} {xb} if {cond} else {helper}({a}, {b}))"

    @staticmethod
    def _arity(args: tuple, lo: int, hi: int | None) -> None:
        if len(args) < lo or (hi is not None and len(args) > hi):
            raise _Unsupported("wrong number of arguments")

    def _trapped(self, e: A.Expr, target: str, as_bool: bool) -> None:
        """``target = value`` of e, or ``target = None`` when it raises an error."""
        src = self.src
        src.emit("try:")
        with src.indent():
            code = self.ebv(e) if as_bool else self.expr(e)[0]
            src.emit(f"{target} = {code}")
        src.emit("except ERRORS:")
        with src.indent():
            src.emit(f"{target} = None")

    def logical(self, op: str, args: tuple) -> str:
        """SPARQL's three-valued || and && (17.2): an error only matters if no operand decides."""
        self._arity(args, 2, 2)
        src = self.src
        decisive = "True" if op == "||" else "False"
        left, right, out = src.tmp(), src.tmp(), src.tmp()
        self._trapped(args[0], left, True)
        src.emit(f"if {left} is {decisive}:")
        with src.indent():
            src.emit(f"{out} = {decisive}")
        src.emit("else:")
        with src.indent():
            self._trapped(args[1], right, True)
            src.emit(f"if {right} is {decisive}:")
            with src.indent():
                src.emit(f"{out} = {decisive}")
            src.emit(f"elif {left} is None or {right} is None:")
            with src.indent():
                src.emit("_fail()")
            src.emit("else:")
            with src.indent():
                src.emit(f"{out} = {'False' if op == '||' else 'True'}")
        return out

    def in_list(self, negated: bool, args: tuple) -> str:
        """``x IN (e1, ...)`` = ``(x = e1) || ...`` (NOT IN: its negation)."""
        if not args:
            raise _Unsupported("IN without a left operand")
        src = self.src
        lhs, found, err = src.tmp(), src.tmp(), src.tmp()
        src.emit(f"{lhs} = {self.expr(args[0])[0]}")
        src.emit(f"{found} = False")
        src.emit(f"{err} = False")
        depth = src.depth
        for item in args[1:]:
            src.emit("try:")
            with src.indent():
                code = self.expr(item)[0]
                src.emit(f"{found} = equal({lhs}, {code})")
            src.emit("except ERRORS:")
            with src.indent():
                src.emit(f"{err} = True")
            src.emit(f"if not {found}:")
            src.depth += 1
        src.emit("pass")
        src.depth = depth
        src.emit(f"if not {found} and {err}:")
        with src.indent():
            src.emit("_fail()")
        return f"(not {found})" if negated else found

    def if_(self, args: tuple) -> tuple[str, bool]:
        self._arity(args, 3, 3)
        src = self.src
        out = src.tmp()
        src.emit(f"if {self.ebv(args[0])}:")
        with src.indent():
            a, a_bool = self.expr(args[1])
            src.emit(f"{out} = {a}")
        src.emit("else:")
        with src.indent():
            b, b_bool = self.expr(args[2])
            src.emit(f"{out} = {b}")
        return out, a_bool and b_bool

    def coalesce(self, args: tuple) -> str:
        src = self.src
        out = src.tmp()
        if not args:
            src.emit("_fail()")
            return out
        depth = src.depth
        for i, item in enumerate(args):
            last = i == len(args) - 1
            if not last:
                src.emit("try:")
                src.depth += 1
            src.emit(f"{out} = {self.expr(item)[0]}")
            if not last:
                src.depth -= 1
                src.emit("except ERRORS:")
                src.depth += 1
        src.depth = depth
        return out

    def regex(self, args: tuple) -> str:
        self._arity(args, 2, 3)
        consts = args[1:]
        if not all(isinstance(c, A.ETerm) for c in consts):
            raise _Unsupported("REGEX with a non-constant pattern or flags")
        texts = []
        for c in consts:
            k, x = info(c.term)
            if k != K_STR:  # a pattern or flags that is not a simple literal: always an error
                return "_fail()"
            texts.append(x)
        try:
            compiled = translate_regex(texts[0], texts[1] if len(texts) > 1 else "")
        except ExprError:
            return "_fail()"
        except UnsupportedRegex as exc:
            raise _Unsupported(f"regex: {exc}") from None
        text = self.expr(args[0])[0]
        return f"regex_match({self.src.const(compiled)}, {text})"


def _emit_filter(
    src: _Source, names: _Vars, base_iri: str | None, expr: A.Expr, on_false: str
) -> None:
    ok = src.tmp()
    src.emit("try:")
    with src.indent():
        code = _ExprCompiler(src, names, base_iri).ebv(expr)
        src.emit(f"{ok} = {code}")
    src.emit("except ERRORS:")
    with src.indent():
        src.emit(f"{ok} = False")
    src.emit(f"if not {ok}:")
    with src.indent():
        src.emit(on_false)


# ---------------------------------------------------------------- the join


class _JoinWriter:
    """Writes ``def name(index)`` returning the BGP's rows (tuples in ``variables`` order),
    with the given FILTERs applied as soon as their variables are bound."""

    def __init__(self, src: _Source, triples, variables, blank_vars, base_iri, order=None) -> None:
        self.src = src
        self.triples = triples
        self.order = join_order(triples) if order is None else list(order)
        self.variables = variables
        self.blank_vars = blank_vars
        self.base_iri = base_iri

    def write(self, name: str, filters: list[tuple[A.Expr, set[str]]]) -> None:
        src = self.src
        src.emit(f"def {name}(index):")
        src.depth += 1
        order = self.order
        locals_: dict[str, str] = {}
        lists: dict[int, str] = {}
        src.emit("bp = index.by_pred")
        for i, tp in enumerate(order):
            if isinstance(tp.predicate, NamedNode):
                lists[i] = f"L{i}"
                src.emit(f"L{i} = bp.get({src.const(tp.predicate)})")
                src.emit(f"if not L{i}:")
                with src.indent():
                    src.emit("return []")
        pending = list(filters)
        pending = self._filters(pending, locals_, "return []")
        # hash lookups for inner patterns over long lists
        bound_after: set[str] = set()
        for i, tp in enumerate(order):
            if i > 0 and i in lists:
                key = self._lookup_side(tp, bound_after)
                if key is not None:
                    src.emit(
                        f"D{i} = index.by_{key}({src.const(tp.predicate)}) "
                        f"if len(L{i}) > {HASH_JOIN_THRESHOLD} else None"
                    )
            bound_after.update(term_vars(tp))
        src.emit("out = []")
        src.emit("append = out.append")
        base_depth = src.depth
        for i, tp in enumerate(order):
            self._loop(i, tp, lists, locals_)
            pending = self._filters(pending, locals_, "continue")
        row = ", ".join(locals_[v] for v in self.variables)
        src.emit(f"append(({row}{',' if len(self.variables) == 1 else ''}))")
        src.depth = base_depth
        if self.blank_vars:
            src.emit("return list(dict.fromkeys(out))")
        else:
            src.emit("return out")
        src.depth -= 1
        src.emit("")

    def _filters(self, pending, locals_, on_false):
        rest = []
        for expr, fvars in pending:
            if fvars <= locals_.keys():
                _emit_filter(self.src, _Vars(dict(locals_), {}), self.base_iri, expr, on_false)
            else:
                rest.append((expr, fvars))
        return rest

    @staticmethod
    def _lookup_side(tp, bound: set[str]) -> str | None:
        def is_bound(t):
            return not isinstance(t, A.Var) or t.name in bound

        if is_bound(tp.subject):
            return "subject"
        if is_bound(tp.object):
            return "object"
        return None

    def _position(self, term, locals_, checks: list[str], fresh: list[str], slot: str) -> str:
        """The loop target for one position and the checks it needs."""
        if isinstance(term, A.Var):
            if term.name in locals_:
                checks.append(f"{slot} != {locals_[term.name]}")
                return slot
            local = f"v{len(locals_)}"
            locals_[term.name] = local
            fresh.append(term.name)
            return local
        checks.append(f"{slot} != {self.src.const(term)}")
        return slot

    def _loop(self, i: int, tp: A.TriplePattern, lists, locals_) -> None:
        src = self.src
        checks: list[str] = []
        fresh: list[str] = []
        known = dict(locals_)
        if i in lists:
            seq = f"L{i}"
            if i > 0:
                key = self._lookup_side(tp, set(known))
                if key is not None:
                    term = tp.subject if key == "subject" else tp.object
                    probe = known[term.name] if isinstance(term, A.Var) else src.const(term)
                    seq = f"(L{i} if D{i} is None else D{i}.get({probe}, ()))"
            s = self._position(tp.subject, locals_, checks, fresh, f"s{i}")
            o = self._position(tp.object, locals_, checks, fresh, f"o{i}")
            src.emit(f"for {s}, {o} in {seq}:")
        else:  # variable predicate
            pname = tp.predicate.name
            if pname in locals_:  # bound by an earlier pattern, so we are inside its loop
                lst = f"P{i}"
                src.emit(f"{lst} = bp.get({locals_[pname]})")
                src.emit(f"if {lst} is not None:")
                src.depth += 1
                s = self._position(tp.subject, locals_, checks, fresh, f"s{i}")
                o = self._position(tp.object, locals_, checks, fresh, f"o{i}")
                src.emit(f"for {s}, {o} in {lst}:")
            else:
                p = self._position(tp.predicate, locals_, checks, fresh, f"p{i}")
                src.emit(f"for {p}, P{i} in bp.items():")
                src.depth += 1
                s = self._position(tp.subject, locals_, checks, fresh, f"s{i}")
                o = self._position(tp.object, locals_, checks, fresh, f"o{i}")
                src.emit(f"for {s}, {o} in P{i}:")
        src.depth += 1
        if checks:
            src.emit(f"if {' or '.join(checks)}:")
            with src.indent():
                src.emit("continue")


# ---------------------------------------------------------------- the compiled pattern


class CompiledPattern:
    """A compiled GPM body. Lists and dicts it returns from ``base``/``rows`` are shared
    (memoised on the index): do not mutate them.

    ``solutions(index, mu) -> list[dict]`` (an attribute holding the generated function, to
    save a call on the hot path): eval(A, e, mu) for this body, every ``mu ∪ nu`` as a fresh
    dict. It raises ValueError for a body compiled with GRAPH elements: the engine joins
    those itself (``base``, the KB join, then ``check``).
    """

    __slots__ = (
        "required_predicates", "variables", "filter_variables", "graph_elements", "source",
        "dialect", "filters", "solutions", "_join_raw", "_join_filtered", "_check",
        "_key_raw", "_key_filtered", "_key_dicts",
    )

    def __init__(self, **kw) -> None:
        for k, v in kw.items():
            setattr(self, k, v)
        self._key_raw = object()
        self._key_filtered = object()
        self._key_dicts = object()

    @property
    def mentioned(self) -> frozenset[str]:
        """Every variable the body reads or binds (a context's other variables pass through)."""
        return frozenset(self.variables) | frozenset(self.filter_variables)

    def may_match(self, index: EventIndex) -> bool:
        """False when the event lacks a predicate the BGP needs (no context can help)."""
        bp = index.by_pred
        return all(p in bp for p in self.required_predicates)

    def rows(self, index: EventIndex) -> list[tuple]:
        """``base`` as tuples in ``variables`` order."""
        memo = index.memo
        rows = memo.get(self._key_raw)
        if rows is None:
            rows = memo[self._key_raw] = self._join_raw(index)
        return rows

    def base(self, index: EventIndex) -> list[dict]:
        """The distinct solutions of the BGP on the event, without context or FILTERs."""
        memo = index.memo
        dicts = memo.get(self._key_dicts)
        if dicts is None:
            names = self.variables
            dicts = memo[self._key_dicts] = [dict(zip(names, r, strict=True)) for r in self.rows(index)]
        return dicts

    def base_bound(self, index: EventIndex, mu: Mapping) -> list[dict]:
        """The solutions of ``base`` compatible with ``mu`` (not merged with it)."""
        shared = [(i, mu[v]) for i, v in enumerate(self.variables) if v in mu]
        names = self.variables
        return [
            dict(zip(names, r, strict=True))
            for r in self.rows(index)
            if all(r[i] == t for i, t in shared)
        ]

    def check(self, mapping: Mapping, run=None) -> bool:
        """True iff every top-level FILTER is true on the complete mapping (errors: false);
        ``run``: the RunContext that spaseq run functions see (extension_functions)."""
        return self._check(mapping, run)

    def __repr__(self) -> str:
        return (
            f"CompiledPattern(variables={self.variables}, filters={len(self.filters)}, "
            f"required={sorted(p.value for p in self.required_predicates)})"
        )


def compile_pattern(
    pattern: A.GroupPattern,
    allow_graph: bool = False,
    *,
    dialect: str = SPEC.name,
    base_iri: str | None = None,
    order: tuple[A.TriplePattern, ...] | None = None,
) -> CompiledPattern | None:
    """Compile a GPM body of top-level triple patterns and FILTERs, or None.

    ``allow_graph``: skip top-level GRAPH elements and report them in ``graph_elements``
    (``solutions`` then refuses; the engine joins them and calls ``check``).
    ``dialect``: ``"spec"`` (default) or ``"oxigraph"`` (``values.dialects``).
    ``base_iri``: the query's BASE; bodies calling IRI()/URI() are then left to pyoxigraph.
    ``order``: the join order of the triple patterns (a plan's; default ``join_order``).
    """
    shape = compiled_shape(pattern)
    if shape is None or (shape.graph_elements and not allow_graph):
        return None
    triples, filters, graphs = list(shape.triples), list(shape.filters), list(shape.graph_elements)
    try:
        return _build(triples, filters, tuple(graphs), dialect, base_iri, order)
    except _Unsupported:
        return None


def _build(triples, filters, graphs, dialect, base_iri, order=None) -> CompiledPattern:
    variables: list[str] = []
    blank_vars: list[str] = []
    for tp in triples:
        for name in term_vars(tp):
            target = blank_vars if name.startswith("_:") else variables
            if name not in target:
                target.append(name)
    bgp_vars = set(variables) | set(blank_vars)
    fvars = [A.expr_vars(f) for f in filters]
    for f in filters:
        for sub in A._exprs(f):
            if isinstance(sub, A.EExists):
                raise _Unsupported("EXISTS")
    filter_variables: list[str] = []
    for vs in fvars:
        for v in sorted(vs):
            if v not in filter_variables:
                filter_variables.append(v)

    consts: dict[str, object] = {}
    src = _Source(consts, {}, dialect)
    join = _JoinWriter(src, triples, variables, blank_vars, base_iri, order)
    join.write("_join_raw", [])
    # a FILTER calling run functions depends on the run: never inside the shared join
    local = [(f, vs) for f, vs in zip(filters, fvars, strict=True) if vs <= bgp_vars and not expr_calls_run(f)]
    contextual = [f for f, vs in zip(filters, fvars, strict=True) if not vs <= bgp_vars or expr_calls_run(f)]
    if local:
        join.write("_join_filtered", local)
    else:  # the same rows: share them (and their memo entry) with base()
        src.emit("_join_filtered = _join_raw")
        src.emit("")
    _write_solutions(src, variables, contextual, base_iri)
    _write_check(src, filters, filter_variables, base_iri)

    source = "\n".join(src.lines) + "\n"
    ns = _namespace(dialect)
    ns.update(consts)
    code = compile(source, "<spaseq compiled GPM>", "exec")
    exec(code, ns)  # noqa: S102 - our own generated source
    compiled = CompiledPattern(
        required_predicates=frozenset(tp.predicate for tp in triples if isinstance(tp.predicate, NamedNode)),
        variables=tuple(variables),
        filter_variables=tuple(filter_variables),
        graph_elements=graphs,
        source=source,
        dialect=dialect,
        filters=tuple(filters),
        _join_raw=ns["_join_raw"],
        _join_filtered=ns["_join_filtered"],
        _check=ns["_check"],
    )
    # bodies with the same triple patterns up to variable names (the V-shape's A, B and C)
    # produce the same rows in the same order: they share one join per event
    compiled._key_raw = _shared_join_key(triples, variables, blank_vars)
    if not local:
        compiled._key_filtered = compiled._key_raw
    ns["_KEY"] = compiled._key_filtered
    if graphs:
        def solutions(index, mu):
            raise ValueError("a body with GRAPH elements is joined by the engine; use base/check")

        compiled.solutions = solutions
    else:
        compiled.solutions = ns["_solutions"]
    return compiled


_JOIN_KEYS: dict[tuple, object] = {}


def _shared_join_key(triples, variables, blank_vars) -> object:
    """The memo key of a BGP's raw join, one per shape: the triple patterns with each variable
    replaced by its position in the row (``variables``) or among the blank nodes."""
    slots = {v: ("v", i) for i, v in enumerate(variables)}
    slots.update({v: ("b", i) for i, v in enumerate(blank_vars)})
    shape = tuple(
        tuple(slots[t.name] if isinstance(t, A.Var) else ("c", t) for t in (tp.subject, tp.predicate, tp.object))
        for tp in triples
    )
    return _JOIN_KEYS.setdefault(shape, object())


def _write_solutions(src: _Source, variables: list[str], contextual: list[A.Expr], base_iri) -> None:
    """``_solutions(rows, mu)``: compatibility with mu, the context-dependent FILTERs, merge."""
    src.emit("def _solutions(index, mu, _run=None):")
    with src.indent():
        src.emit("memo = index.memo")
        src.emit("rows = memo.get(_KEY)")
        src.emit("if rows is None:")
        with src.indent():
            src.emit("rows = memo[_KEY] = _join_filtered(index)")
        src.emit("if not rows:")
        with src.indent():
            src.emit("return []")
        plain = {v: f"v{i}" for i, v in enumerate(variables)}
        maybe: dict[str, str] = {}
        for i, v in enumerate(variables):
            src.emit(f"k{i} = mu.get({v!r})")
        for f in contextual:
            for v in sorted(A.expr_vars(f)):
                if v not in plain and v not in maybe:
                    maybe[v] = f"u{len(maybe)}"
                    src.emit(f"{maybe[v]} = mu.get({v!r})")
        src.emit("out = []")
        if variables:
            target = ", ".join(plain[v] for v in variables) + ("," if len(variables) == 1 else "")
        else:
            target = "_row"
        src.emit(f"for {target} in rows:")
        with src.indent():
            if variables:
                conds = " or ".join(f"(k{i} is not None and v{i} != k{i})" for i in range(len(variables)))
                src.emit(f"if {conds}:")
                with src.indent():
                    src.emit("continue")
            names = _Vars(plain, maybe)
            for f in contextual:
                _emit_filter(src, names, base_iri, f, "continue")
            items = "".join(f", {v!r}: {plain[v]}" for v in variables)
            src.emit(f"out.append({{**mu{items}}})")
        src.emit("return out")
    src.emit("")


def _write_check(src: _Source, filters: list[A.Expr], filter_variables: list[str], base_iri) -> None:
    src.emit("def _check(m, _run=None):")
    with src.indent():
        maybe = {}
        for i, v in enumerate(filter_variables):
            maybe[v] = f"u{i}"
            src.emit(f"u{i} = m.get({v!r})")
        names = _Vars({}, maybe)
        for f in filters:
            _emit_filter(src, names, base_iri, f, "return False")
        src.emit("return True")
    src.emit("")


def compile_expression(
    expr: A.Expr, *, dialect: str = SPEC.name, base_iri: str | None = None
):
    """A SPARQL expression as a function ``f(mapping) -> value`` (see ``values`` for
    values; ``values.terms.to_term`` makes an RDF term of one). ``f`` raises one of
    ``values.kinds.ERRORS`` for an expression error. None when unsupported."""
    names = sorted(A.expr_vars(expr))
    src = _Source({}, {}, dialect)
    src.emit("def _expr(m):")
    with src.indent():
        maybe = {}
        for i, v in enumerate(names):
            maybe[v] = f"u{i}"
            src.emit(f"u{i} = m.get({v!r})")
        try:
            for sub in A._exprs(expr):
                if isinstance(sub, A.EExists):
                    raise _Unsupported("EXISTS")
            code, _ = _ExprCompiler(src, _Vars({}, maybe), base_iri).expr(expr)
        except _Unsupported:
            return None
        src.emit(f"return {code}")
    source = "\n".join(src.lines) + "\n"
    ns = _namespace(dialect)
    ns.update(src.consts)
    exec(compile(source, "<spaseq compiled expression>", "exec"), ns)  # noqa: S102
    fn = ns["_expr"]
    fn.source = source
    return fn
