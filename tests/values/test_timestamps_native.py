"""The native core reads timestamps as the Python reader did (docs/decisions.md 57): on
generated timestamp literals (dateTimes with and without zones, fractions, out-of-range
years and dates, numbers in decimal and scientific form, over-fine fractions, bad forms, every
numeric datatype, strings and others) ``values.timestamps`` (through ``_native``) and the
oracle (tests/values/timestamps_oracle.py) agree on the value, or refuse with the same
message; so do ``exact_seconds`` on Python numbers, and ``datetime_text`` on any time."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from pyoxigraph import BaseDirection, BlankNode, Literal, NamedNode

from spaseq.engine.native_core import _native
from spaseq.engine.values import timestamps
from spaseq.engine.values.numbers import INT_RANGES
from spaseq.engine.vocab import XSD_NS
from tests.values import timestamps_oracle as oracle

NUMERIC_TYPES = [*INT_RANGES, "decimal", "double", "float"]
DATATYPES = [*NUMERIC_TYPES, "string", "dateTime", "dateTimeStamp", "boolean", "date", "duration"]

#: what Python's str.strip() removes, some of which Rust's trim() keeps (U+001C..U+001F)
SPACE = st.one_of(st.just(""), st.text(st.sampled_from(" \t\n\r\x0b\x0c\x1c\x1f\x85\xa0\u2003\u2028\u3000"),
                                        max_size=2))
#: any character Python's unicodedata knows (an unassigned one is printed escaped by repr, which
#: the core does not tell apart: docs/decisions.md 57); no lone surrogates (not UTF-8)
ANY_TEXT = st.text(st.characters(exclude_categories=("Cn", "Cs")), max_size=12)

YEARS = st.one_of(
    st.integers(-9999, 9999).map(lambda y: f"{'-' if y < 0 else ''}{abs(y):04d}"),
    st.sampled_from(["0000", "-0000", "10000", "012345", "99999999999", "-99999999999",
                     "31688740476", "-31688738506", "1" + "0" * 20, "9" * 25, "-" + "9" * 25]),
    st.integers(0, 10**30).map(str),
)


def _two(low: int, high: int) -> st.SearchStrategy[str]:
    """Two digits, mostly from ``low`` to ``high``, sometimes any, or not two digits."""
    return st.one_of(st.integers(low, high).map(lambda n: f"{n:02d}"),
                     st.integers(low, high).map(lambda n: f"{n:02d}"),
                     st.integers(0, 99).map(lambda n: f"{n:02d}"), st.sampled_from(["1", "123", "ab"]))


FRACTIONS = st.one_of(
    st.just(""),
    st.text(st.sampled_from("0123456789"), min_size=1, max_size=30).map(lambda d: "." + d),
    st.sampled_from([".", ".5", ".000000001", ".0000000001", ".1230000000", ".999999999999"]),
)
ZONES = st.one_of(
    st.sampled_from(["", "Z", "+00:00", "-00:00", "+14:00", "-14:00", "+14:01", "+15:00", "-00:60",
                     "+5:00", "z", "+0100"]),
    st.builds(lambda s, h, m: f"{s}{h:02d}:{m:02d}", st.sampled_from("+-"), st.integers(0, 15),
              st.integers(0, 60)),
)
DATETIMES = st.builds(
    lambda sp1, y, mo, d, h, mi, s, frac, tz, sp2: f"{sp1}{y}-{mo}-{d}T{h}:{mi}:{s}{frac}{tz}{sp2}",
    SPACE, YEARS, _two(1, 12), _two(1, 31), _two(0, 24), _two(0, 59), _two(0, 59), FRACTIONS, ZONES, SPACE)

DIGITS = st.text(st.sampled_from("0123456789"), max_size=25)
EXPONENTS = st.one_of(
    st.just(""),
    st.builds(lambda e, s, n: f"{e}{s}{n}", st.sampled_from("eE"), st.sampled_from(["", "+", "-"]),
              st.one_of(st.integers(0, 40).map(str), st.integers(0, 10**25).map(str), st.just(""))),
)
NUMBERS = st.builds(
    lambda sp1, sign, whole, point, fraction, exp, sp2: f"{sp1}{sign}{whole}{point}{fraction}{exp}{sp2}",
    SPACE, st.sampled_from(["", "+", "-", "--", "+-"]), DIGITS, st.sampled_from(["", ".", ".."]), DIGITS,
    EXPONENTS, SPACE)
ODD = st.sampled_from(["", " ", "INF", "-INF", "+INF", "NaN", "+NaN", "-NaN", "inf", "nan", "1_000",
                       "0x10", "١٢", "1e", "e5", ".", "1.2.3", "1,5", "Infinity", "1e400", "-1e400",
                       "1e-400", "0e-99999999999999999999", "1e-1000000000000000000",
                       "1000000000000000000", "999999999999999999.999999999", "it's", 'say "x"',
                       "tab\there", "a'\"\\\n\x01é\xa0\u200b\U0001f600"])
TEXTS = st.one_of(DATETIMES, NUMBERS, ODD, ANY_TEXT)


def _outcome(read, *args: object, **kwargs: object) -> tuple[str, object]:
    """("ok", value) or ("error", message): what one reader made of its input."""
    try:
        return "ok", read(*args, **kwargs)
    except ValueError as err:
        return "error", str(err)


def _same(native: tuple[str, object], expected: tuple[str, object]) -> None:
    assert native == expected
    if native[0] == "ok":  # exact: equal Decimals are the same number
        assert isinstance(native[1], Decimal)


def _literal(text: str, datatype: str) -> Literal:
    return Literal(text, datatype=NamedNode(XSD_NS + datatype))


@given(TEXTS, st.sampled_from(DATATYPES))
@example("2024-01-01T00:00:00", "dateTimeStamp")
@example("1", "boolean")
@example(" 7 ", "long")
def test_timestamp_literals_are_read_as_the_oracle_reads_them(text: str, datatype: str) -> None:
    literal = _literal(text, datatype)
    _same(_outcome(timestamps.to_seconds, literal), _outcome(oracle.to_seconds, literal))


@given(st.one_of(DATETIMES, ANY_TEXT), st.booleans())
def test_datetimes_are_read_as_the_oracle_reads_them(text: str, require_timezone: bool) -> None:
    _same(_outcome(timestamps.datetime_to_seconds, text, require_timezone=require_timezone),
          _outcome(oracle.datetime_to_seconds, text, require_timezone=require_timezone))


@given(st.one_of(NUMBERS, ODD, ANY_TEXT))
def test_numbers_of_seconds_are_read_as_the_oracle_reads_them(text: str) -> None:
    _same(_outcome(timestamps.number_from_lexical, text), _outcome(oracle.number_from_lexical, text))
    _same(_outcome(timestamps.exact_seconds, text), _outcome(oracle.exact_seconds, text))


PY_NUMBERS = st.one_of(
    st.decimals(allow_nan=True, allow_infinity=True),
    st.decimals(min_value=-10**19, max_value=10**19, places=9),
    st.decimals(min_value=-10**19, max_value=10**19, places=12),
    st.integers(-10**20, 10**20),
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(min_value=-1e19, max_value=1e19),
    st.sampled_from([Decimal("-0"), Decimal("1E+999999999"), Decimal("0E-999999999"), Decimal("1E-9"),
                     Decimal("1E-10"), Decimal("sNaN"), Decimal("1.50"), 10**18, -(10**18), 10**18 - 1,
                     True, False, 1e-10, 5e-10, 1.5e-9, 1e18, 9.999999999999999e17, None, "1.5",
                     [1], complex(1, 0)]),
)


@given(PY_NUMBERS)
def test_python_numbers_are_checked_as_the_oracle_checks_them(value: object) -> None:
    """The core checks them through their decimal text, naming them as Python's repr does."""
    _same(_outcome(timestamps.exact_seconds, value), _outcome(oracle.exact_seconds, value))


NANOSECONDS = st.one_of(
    st.integers(-(10**27) + 1, 10**27 - 1),
    st.integers(-(10**20), 10**20),
    st.integers(-86_400 * 10**9 * 3, 86_400 * 10**9 * 3),
    st.builds(lambda s, ns: s * 1_000_000_000 + ns, st.integers(-(10**11), 10**11),
              st.sampled_from([0, 1, 100, 500_000_000, 999_999_999])),
)


@given(NANOSECONDS)
@example(0)
@example(-1)
@example(10**27 - 1)
@example(-(10**27) + 1)
def test_times_are_spelled_as_the_oracle_spells_them(ns: int) -> None:
    seconds = timestamps.from_nanoseconds(ns)
    assert _native.datetime_text(ns) == oracle.datetime_text(seconds)
    assert timestamps.datetime_text(seconds) == oracle.datetime_text(seconds)


@pytest.mark.parametrize("term", [
    NamedNode("http://ex.org/t"), BlankNode("b"), "1", 1,
    Literal("1", language="en"), Literal("1", language="en", direction=BaseDirection.RTL),
])
def test_terms_that_are_no_timestamp_literal(term: object) -> None:
    _same(_outcome(timestamps.to_seconds, term), _outcome(oracle.to_seconds, term))


def test_a_caller_s_number_is_named_as_python_writes_it() -> None:
    with pytest.raises(ValueError, match=r"^Decimal\('1E\+20'\) is too large to be a time in seconds$"):
        timestamps.exact_seconds(Decimal("1E+20"))
    with pytest.raises(ValueError, match="^1e-10 is finer than a nanosecond, the resolution of times$"):
        timestamps.checked_time(Decimal("1e-10"), 1e-10)
    with pytest.raises(ValueError, match="^'x' is not a number$"):
        _native.seconds_ns("x")
