"""Two readers of xsd:dateTime, one instant: event timestamps, read by the native core
(``values.timestamps``, spaseq-io time.rs), and FILTER values, read by ``values.xsd_datetime``,
agree on every text, and refuse the same ones."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pyoxigraph import Literal

from spaseq.engine.values import timestamps
from spaseq.engine.values.kinds import K_BAD, K_DT
from spaseq.engine.values.literals import info
from spaseq.engine.values.timestamps import datetime_to_seconds, to_seconds
from spaseq.engine.values.xsd_datetime import parse_datetime
from spaseq.engine.vocab import XSD_DATETIME
from tests.values.timestamps_oracle import read_datetime, unix_seconds


def parser_seconds(text: str) -> Decimal:
    """What the FILTER values' parser says, as seconds since the epoch (exactly)."""
    parsed = parse_datetime(text)
    assert parsed is not None, text
    return unix_seconds(parsed)


VALID = [
    "1970-01-01T00:00:00Z",
    "1970-01-01T00:00:00",
    "1969-12-31T23:59:59Z",
    "2024-01-01T00:00:10.5Z",
    "2024-01-01T00:00:00.125",
    "2024-01-01T00:00:00.000000001Z",
    "2024-01-01T23:59:59.999999Z",
    "2024-01-01T01:00:00+01:00",
    "2023-12-31T19:00:00-05:00",
    "2024-06-30T12:34:56.789+05:45",
    "2024-01-01T00:00:00+14:00",
    "2024-01-01T00:00:00-14:00",
    "2024-01-01T24:00:00Z",
    "2024-12-31T24:00:00.000-03:00",
    "2000-02-29T00:00:00Z",
    "0000-01-01T00:00:00Z",
    "-0001-12-31T23:59:59Z",
    "12345-01-01T00:00:00Z",
    "9999-12-31T23:59:59Z",
]

INVALID = [
    "2023-02-29T00:00:00Z",
    "2024-13-01T00:00:00Z",
    "2024-00-01T00:00:00Z",
    "2024-01-32T00:00:00Z",
    "2024-01-01T25:00:00Z",
    "2024-01-01T24:00:01Z",
    "2024-01-01T24:00:00.5Z",
    "2024-01-01T23:60:00Z",
    "2024-01-01T23:00:60Z",
    "2024-01-01T00:00:00+15:00",
    "2024-01-01T00:00:00+14:01",
    "2024-01-01T00:00:00+01:60",
    "2024-01-01T00:00:00.Z",
    "2024-01-01 00:00:00",
    "2024-1-01T00:00:00Z",
    "01234-01-01T00:00:00Z",
    "2024-01-01T00:00Z",
    "",
]


@pytest.mark.parametrize("text", VALID)
def test_timestamps_agree_with_the_parser(text):
    expected = parser_seconds(text)
    assert datetime_to_seconds(text) == expected
    assert to_seconds(Literal(text, datatype=XSD_DATETIME)) == expected


@pytest.mark.parametrize("text", VALID)
def test_filter_values_read_the_same_instant(text):
    kind, value = info(Literal(text, datatype=XSD_DATETIME))
    assert kind == K_DT
    assert unix_seconds(value) == parser_seconds(text)


@pytest.mark.parametrize("text", INVALID)
def test_both_reject_the_same_texts(text):
    assert parse_datetime(text) is None
    with pytest.raises(ValueError, match="is not an xsd:dateTime") as refused:
        read_datetime(text)
    with pytest.raises(ValueError, match="is not an xsd:dateTime") as native:
        datetime_to_seconds(text)
    assert str(native.value) == str(refused.value)
    assert info(Literal(text, datatype=XSD_DATETIME))[0] == K_BAD


def test_fractions_are_exact():
    parsed = parse_datetime("1970-01-01T00:00:00.1234567890123456789Z")
    assert parsed is not None
    assert unix_seconds(parsed) == Decimal("0.1234567890123456789")


def test_surrounding_whitespace_is_allowed_in_timestamps_only():
    assert datetime_to_seconds(" 1970-01-01T00:00:01Z\n") == 1.0
    assert parse_datetime(" 1970-01-01T00:00:01Z") is None  # as pyoxigraph: ill-typed


_MOMENTS = st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30))
_OFFSETS = st.integers(min_value=-14 * 60, max_value=14 * 60)


def _spell(moment: datetime, fraction: str, offset: int | None) -> str:
    text = moment.replace(microsecond=0).isoformat() + fraction
    if offset is None:
        return text
    if offset == 0:
        return text + "Z"
    hours, minutes = divmod(abs(offset), 60)
    return f"{text}{'-' if offset < 0 else '+'}{hours:02d}:{minutes:02d}"


@given(_MOMENTS, st.sampled_from(["", ".0", ".5", ".25", ".000001", ".999999999", ".100000000000"]),
       st.one_of(st.none(), _OFFSETS))
def test_timestamps_agree_with_the_parser_everywhere(moment, fraction, offset):
    text = _spell(moment, fraction, offset)
    assert datetime_to_seconds(text) == parser_seconds(text)


@given(_MOMENTS, _OFFSETS)
def test_the_parser_agrees_with_python(moment, offset):
    text = _spell(moment, f".{moment.microsecond:06d}", offset)
    aware = moment.replace(tzinfo=timezone(timedelta(minutes=offset)))
    expected = (aware - datetime(1970, 1, 1, tzinfo=timezone.utc)) // timedelta(microseconds=1)
    assert unix_seconds(read_datetime(text)) * 1_000_000 == expected


def test_a_timestamp_finer_than_a_nanosecond_is_an_error():
    """Times are kept exactly to the nanosecond (decision 34): finer is refused, not rounded."""
    with pytest.raises(ValueError, match="finer than a nanosecond"):
        datetime_to_seconds("2000-01-01T00:00:00.9999999999Z")
    assert datetime_to_seconds("2000-01-01T00:00:00.1230000000Z") == Decimal("946684800.123")


def test_exponents_beyond_decimal_range_are_read_or_refused_not_crashed():
    """A zero with any exponent is time 0; a number far below a nanosecond is refused; neither
    may escape as decimal.InvalidOperation."""
    assert timestamps.number_from_lexical("0e1000000000000000000") == 0
    assert timestamps.number_from_lexical("-0.0E9999999999999999999") == 0
    with pytest.raises(ValueError, match="finer than a nanosecond"):
        timestamps.number_from_lexical("1e-1000000000000000000")
