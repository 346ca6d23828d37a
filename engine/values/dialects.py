"""The two dialects of expression semantics, each one table: ``SPEC`` and ``OXIGRAPH``.

``SPEC`` (the default) follows the SPARQL 1.1 text. ``OXIGRAPH`` reproduces the places where
pyoxigraph 0.5 extends or departs from it:

- ``=``/``!=`` between literals of different known types ("a" = 1, "a"@en = "b"@en,
  "a"@en = "a", 1 = true) is false/true instead of an error (SPARQL 1.1 17.4.1.7:
  RDFterm-equal raises a type error for two non-identical literals it cannot compare);
- ordering: lang strings with the same tag are ordered, booleans and NaN are not (an error;
  SPARQL: op:boolean-less-than, and false for NaN), identical terms of any kind compare
  equal (``<http://a> <= <http://a>`` is true; SPARQL: an error);
- EBV of a lang string and of an ill-typed numeric/boolean literal is an error (SPARQL 1.1
  17.2.2: the length test for a plain literal, false for an ill-typed one);
- casts from strings do not collapse whitespace (``xsd:integer(" 12 ")`` is an error;
  XPath casting applies the target type's whitespace facet first);
- ``0 / 1.5`` (a zero decimal divided by a non-integral one) is an error (a pyoxigraph bug).

It exists so that the engine can agree with its pyoxigraph fallback when asked to, and so
that the differential tests can check every other rule against pyoxigraph. Both dialects
share everything else, the literal analysis included (``literals``).

Not reproduced by ``OXIGRAPH`` either (the differential tests keep them out): pyoxigraph's
``<iri> IN ()`` is an error (false here: an empty list is legal), it subtracts dateTimes into
xsd:dayTimeDuration (an extension; an error here), its Rust regexes let "." match "\\r" and
read "#" as a comment in x mode (not XPath's syntax), and it compares xsd:date, xsd:time,
durations etc. by value (K_OTHER here: RDFterm-equal only).

Implementation-defined choices (XPath leaves them open) follow pyoxigraph: decimal results
are truncated to 18 fractional digits (xsd:decimal(double) scales by 10^18 and truncates),
doubles print without exponent ("10000000"), decimals print without a trailing ".0", a
dateTime without timezone is equal to no dateTime with a timezone and is ordered against one
by the XSD 1.1 partial order (+-14h), SUBSTR takes xsd:integer positions only, and
``x IN (...)`` evaluates ``x`` first (so ``?unbound IN ()`` is an error).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from types import MappingProxyType

from spaseq.engine.values import arithmetic, casts, compare, strings, terms, xpath_regex

#: The operators both dialects share, by the names compiled code calls them.
OPERATORS: Mapping[str, Callable] = MappingProxyType({
    "fn_str": terms.fn_str, "fn_lang": terms.fn_lang, "fn_datatype": terms.fn_datatype,
    "fn_iri": terms.fn_iri, "fn_is_iri": terms.fn_is_iri, "fn_is_blank": terms.fn_is_blank,
    "fn_is_literal": terms.fn_is_literal, "fn_is_numeric": terms.fn_is_numeric,
    "same_term": terms.same_term,
    "fn_contains": strings.fn_contains, "fn_strstarts": strings.fn_strstarts,
    "fn_strends": strings.fn_strends, "fn_strlen": strings.fn_strlen, "fn_substr": strings.fn_substr,
    "fn_ucase": strings.fn_ucase, "fn_lcase": strings.fn_lcase, "fn_concat": strings.fn_concat,
    "fn_langmatches": strings.fn_langmatches,
    "fn_abs": arithmetic.fn_abs, "fn_ceil": arithmetic.fn_ceil, "fn_floor": arithmetic.fn_floor,
    "fn_round": arithmetic.fn_round,
    "op_add": arithmetic.op_add, "op_sub": arithmetic.op_sub, "op_mul": arithmetic.op_mul,
    "op_neg": arithmetic.op_neg, "op_pos": arithmetic.op_pos,
    "regex_match": xpath_regex.regex_match,
})


@dataclass(frozen=True, eq=False)
class Dialect:
    """Everything that differs between the dialects; pick one table and use its fields."""

    name: str
    #: ordering for < > <= >=: -1/0/1, 2 when unordered; ExprError without an order
    compare: Callable[[object, object], int]
    #: ``=``
    equal: Callable[[object, object], bool]
    #: effective boolean value
    ebv: Callable[[object], bool]
    #: ``/``
    divide: Callable[[object, object], object]
    #: the casts, by the datatype IRI a query calls them with (``casts.CASTS``' keys)
    casts: Mapping[str, Callable[[object], object]]

    def functions(self) -> dict[str, Callable]:
        """Every operator implementation compiled code calls, by its name there."""
        out = dict(OPERATORS)
        out.update(compare=self.compare, equal=self.equal, ebv=self.ebv, op_div=self.divide)
        out.update((casts.CASTS[iri], fn) for iri, fn in self.casts.items())
        return out


def _casts(trim: bool) -> Mapping[str, Callable[[object], object]]:
    fns = {
        "cast_string": casts.cast_string,
        "cast_integer": partial(casts.cast_integer, trim=trim),
        "cast_decimal": partial(casts.cast_decimal, trim=trim),
        "cast_double": partial(casts.cast_double, trim=trim),
        "cast_float": partial(casts.cast_float, trim=trim),
        "cast_boolean": partial(casts.cast_boolean, trim=trim),
    }
    return MappingProxyType({iri: fns[name] for iri, name in casts.CASTS.items()})


SPEC = Dialect(
    name="spec",
    compare=compare.compare_spec,
    equal=compare.equal_spec,
    ebv=compare.ebv_spec,
    divide=arithmetic.op_div,
    casts=_casts(trim=True),
)

OXIGRAPH = Dialect(
    name="oxigraph",
    compare=compare.compare_oxigraph,
    equal=compare.equal_oxigraph,
    ebv=compare.ebv_oxigraph,
    divide=arithmetic.op_div_oxigraph,
    casts=_casts(trim=False),
)

#: The dialects by name (the ``dialect=`` argument of the compiler).
DIALECTS: Mapping[str, Dialect] = MappingProxyType({d.name: d for d in (SPEC, OXIGRAPH)})


def dialect_named(name: str) -> Dialect:
    """The dialect table called ``name``; ValueError for an unknown name."""
    try:
        return DIALECTS[name]
    except KeyError:
        raise ValueError(f"unknown dialect {name!r} (expected one of {tuple(DIALECTS)})") from None
