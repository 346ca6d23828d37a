"""The SPARQL 1.1 text's expression semantics as one table, ``SPEC``: ordering, ``=``,
effective boolean value, ``/``, the casts, and the operators (``OPERATORS``), by name.

The run functions (``spaseq:min``/``max``/``avg``) order and divide with it, in the engine
and in the reference evaluator alike. GPM FILTERs do not: the native core evaluates them with
pyoxigraph's semantics (docs/decisions.md 23), which departs from the text in places:

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
- ``0 / 1.5`` (a zero decimal divided by a non-integral one) is an error (a pyoxigraph bug);
- literals are read by value (STR("01"^^xsd:integer) is "1", "1200"^^xsd:byte an integer),
  integers are 64-bit, ``<iri> IN ()`` is an error, dateTimes subtract into durations, its
  Rust regexes let "." match "\\r" and read "#" as a comment in x mode, and xsd:date,
  xsd:time, durations etc. compare by value (K_OTHER here: RDFterm-equal only).

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
from types import MappingProxyType

from spaseq.engine.values import arithmetic, casts, compare, strings, terms, xpath_regex

#: The operators, by name.
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
    """The operations whose SPARQL 1.1 meaning pyoxigraph changes, in one table."""

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
        """Every operator implementation, by name (``OPERATORS`` and this table's)."""
        out = dict(OPERATORS)
        out.update(compare=self.compare, equal=self.equal, ebv=self.ebv, op_div=self.divide)
        out.update((casts.CASTS[iri], fn) for iri, fn in self.casts.items())
        return out


SPEC = Dialect(
    compare=compare.compare_spec,
    equal=compare.equal_spec,
    ebv=compare.ebv_spec,
    divide=arithmetic.op_div,
    casts=MappingProxyType({iri: getattr(casts, name) for iri, name in casts.CASTS.items()}),
)
