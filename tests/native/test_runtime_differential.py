"""The native runtime (engine/native/core/src/runtime, EngineOptions.native) against the
reference evaluator on generated queries and events: the same matches in the same order,
under every combination of the engine's switches (the differential suite of
tests/properties/test_differential.py, on the native core)."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from spaseq.engine import api, reference
from spaseq.engine.compile.plan import EngineOptions
from spaseq.engine.language.query import parse_query
from tests.properties.test_differential import BODIES, EXAMPLES, _identity, events, kb, options, queries

#: bodies the native evaluator runs itself (GRAPH and OPTIONAL ones are called back to Python)
NATIVE_BODIES = [b for b in BODIES if "GRAPH" not in b and "OPTIONAL" not in b]

native_options = options.map(lambda o: replace(o, native=True))


def _check(text: str, evs, opts: EngineOptions, end_of_input: bool) -> None:
    q = parse_query(text)
    store = kb()
    expected = reference.evaluate(q, evs, store, end_of_input=end_of_input)
    got = api.evaluate(q, evs, store, opts, end_of_input=end_of_input)
    assert [_identity(m) for m in got] == [_identity(m) for m in expected], text


@settings(max_examples=EXAMPLES, deadline=None)
@given(queries(bodies=NATIVE_BODIES), events(), native_options, st.booleans())
def test_native_runtime_equals_reference(text, evs, opts, end_of_input) -> None:
    _check(text, evs, opts, end_of_input)


@settings(max_examples=EXAMPLES, deadline=None)
@given(queries(), events(), native_options, st.booleans())
def test_native_runtime_with_python_gpms_equals_reference(text, evs, opts, end_of_input) -> None:
    """Every body, GRAPH and OPTIONAL ones evaluated by the Python matchers, called back."""
    _check(text, evs, opts, end_of_input)


@settings(max_examples=EXAMPLES, deadline=None)
@given(queries(lazy_prefix=True, bodies=NATIVE_BODIES), events(), st.booleans(), st.booleans())
def test_native_lazy_chain_equals_reference(text, evs, partition_runs, end_of_input) -> None:
    opts = EngineOptions(lazy_chain=True, partition_runs=partition_runs, native=True)
    _check(text, evs, opts, end_of_input)
