"""The embeddable Engine's life cycle and its refusals: ``with Engine()`` ends the input,
``unregister``, events on streams no query reads, and event text that does not parse."""

from __future__ import annotations

from pathlib import Path

import pyoxigraph
import pytest

from spaseq.engine.api import Engine, EventSyntaxError, LateEventError, UnreadStreamError
from spaseq.engine.errors import SpaseqError, StreamError, UsageError
from tests.util import EX, query_text

# A reading above 50 not followed by one under 20 within 10 s: only the input's end (or a
# later reading) tells that the trailing negation holds.
NO_RECOVERY = query_text("A; N!", "DEFINE GPM A ON U1 { ?s :value ?v FILTER(?v > 50) } "
                         "DEFINE GPM N ON U1 { ?s :value ?w FILTER(?w < 20) }",
                         within="10 SECONDS", streams=("u1",))
PAIR = query_text("A; B", "DEFINE GPM A ON U2 { ?s :a ?x } DEFINE GPM B ON U2 { ?s :b ?y }",
                  streams=("u2",))
PAIR_OUT = PAIR.replace("SELECT *", "CONSTRUCT { ?s :paired ?y }")  # an output others can read


def reading(engine: Engine, t: int, value: int, stream: str = "u1") -> None:
    engine.push(EX + stream, t, f"<{EX}h1> <{EX}value> {value} .", format="turtle")


def test_leaving_the_with_block_ends_the_input() -> None:
    with Engine() as engine:
        alarms = engine.register(NO_RECOVERY)
        reading(engine, 1, 60)
        assert alarms.rows() == []  # the negation's window is still open
    assert engine.closed
    assert [(r.time, r.bindings["v"].value) for r in alarms.rows()] == [(1, "60")]
    with pytest.raises(UsageError, match="closed"):
        reading(engine, 2, 70)
    with pytest.raises(UsageError, match="closed"):
        engine.register(PAIR)
    with pytest.raises(UsageError, match="closed"):
        engine.snapshot()
    engine.close()  # a second close does nothing


def test_an_exception_in_the_with_block_cuts_the_input_short() -> None:
    """Matches found are released, windows stay open (what would have followed is unknown)."""
    pairs = None
    with pytest.raises(RuntimeError, match="producer failed"), Engine() as engine:
        alarms = engine.register(NO_RECOVERY)
        pairs = engine.register(PAIR)
        engine.push(EX + "u2", 1, f"<{EX}s> <{EX}a> 1 .", format="turtle")
        engine.push(EX + "u2", 2, f"<{EX}s> <{EX}b> 2 .", format="turtle")
        reading(engine, 3, 60)
        raise RuntimeError("producer failed")
    assert engine.closed
    assert [r.time for r in pairs.rows()] == [2]
    assert alarms.rows() == []  # its window never closed


def test_closing_lets_go_of_the_materialisation_store(tmp_path) -> None:
    """The on-disk store is flushed and unlocked: another Store opens it and finds the match."""
    store_dir = tmp_path / "matches"
    with Engine(materialize=str(store_dir)) as engine:
        engine.register(NO_RECOVERY, output=EX + "alarms")
        reading(engine, 1, 60)
    reopened = pyoxigraph.Store(str(store_dir))
    assert [q.subject.value for q in reopened.quads_for_pattern(None, pyoxigraph.NamedNode(
        "https://w3id.org/spaseq#query"), pyoxigraph.NamedNode(EX + "alarms"))] == [EX + "alarms#match-1"]


def test_unregister_stops_a_query_and_frees_its_output_iri() -> None:
    engine = Engine()
    first = engine.register(PAIR, output=EX + "pairs")
    other = engine.register(NO_RECOVERY)
    engine.push(EX + "u2", 1, f"<{EX}s> <{EX}a> 1 .", format="turtle")
    engine.unregister(first)
    with pytest.raises(UnreadStreamError):  # nobody reads u2 any more
        engine.push(EX + "u2", 2, f"<{EX}s> <{EX}b> 2 .", format="turtle")
    assert first.rows() == []
    with pytest.raises(UsageError, match="not registered"):
        engine.unregister(first)
    again = engine.register(PAIR, output=EX + "pairs")  # the IRI is free again
    engine.push(EX + "u2", 3, f"<{EX}s> <{EX}a> 3 .", format="turtle")
    engine.push(EX + "u2", 4, f"<{EX}s> <{EX}b> 4 .", format="turtle")
    reading(engine, 5, 60)
    engine.close()
    assert [r.time for r in again.rows()] == [4]
    assert [r.time for r in other.rows()] == [5]
    assert engine.handles == [other, again]


def test_a_composed_query_cannot_be_unregistered_alone() -> None:
    engine = Engine()
    upstream = engine.register(PAIR, output=EX + "pairs")
    engine.register(query_text("X", "DEFINE GPM X ON PAIRS { ?s :b ?y }", streams=("pairs",)))
    with pytest.raises(UsageError, match="composed"):
        engine.unregister(upstream)


def test_an_event_no_query_reads_is_refused_naming_the_streams_read() -> None:
    engine = Engine()
    engine.register(NO_RECOVERY)
    engine.register(PAIR)
    with pytest.raises(UnreadStreamError) as caught:
        reading(engine, 1, 60, stream="u3")
    assert isinstance(caught.value, StreamError)
    assert str(caught.value) == (f"no registered query reads the stream <{EX}u3> "
                                 f"(the streams read are <{EX}u1>, <{EX}u2>)")
    with pytest.raises(UnreadStreamError, match="no query is registered"):
        reading(Engine(), 1, 60)


def test_drop_unread_counts_them_and_a_snapshot_keeps_the_count() -> None:
    engine = Engine(drop_unread=True)
    alarms = engine.register(NO_RECOVERY)
    reading(engine, 1, 60, stream="u3")
    reading(engine, 2, 70)
    reading(engine, 30, 10, stream="u3")  # ignored: it does not move the query's clock
    assert engine.dropped_unread == 2
    restored = Engine.restore(engine.snapshot())
    assert restored.drop_unread and restored.dropped_unread == 2
    assert alarms.rows() == []
    engine.close()
    assert [r.time for r in alarms.rows()] == [2]


def test_streams_read_through_composition() -> None:
    """A stream read only by a query that also reads another's output is read; pushing on a
    query's output stream is refused as such, read or not."""
    engine = Engine()
    engine.register(PAIR_OUT, output=EX + "pairs")
    after = engine.register(query_text("X; R", "DEFINE GPM X ON PAIRS { ?s :paired ?y } "
                                       "DEFINE GPM R ON U1 { ?s :value ?v }", streams=("pairs", "u1")))
    engine.push(EX + "u2", 1, f"<{EX}h1> <{EX}a> 1 .", format="turtle")
    engine.push(EX + "u2", 2, f"<{EX}h1> <{EX}b> 2 .", format="turtle")
    reading(engine, 3, 40)  # u1 is read by the gated query only
    with pytest.raises(UsageError, match="output stream"):
        engine.push(EX + "pairs", 4, f"<{EX}h1> <{EX}b> 4 .", format="turtle")
    engine.close()
    assert [r.time for r in after.rows()] == [3]
    lone = Engine()
    lone.register(PAIR, output=EX + "pairs")
    with pytest.raises(UsageError, match="output stream"):
        lone.push(EX + "pairs", 1, f"<{EX}h1> <{EX}b> 1 .", format="turtle")


@pytest.mark.parametrize(("text", "fmt", "line", "column"), [
    (f"<{EX}h1> <{EX}value> 1 .\n<{EX}h1> <{EX}value> \"open .\n", "turtle", 2, 42),
    (f"<{EX}g> {{ <{EX}h1> <{EX}value> 1 .\n  <{EX}h1> <{EX}value> }}", "trig", 2, 44),
    (f"<{EX}h1> <{EX}value> \"1\" .\n<{EX}h1> value \"2\" .\n", "nquads", 2, 20),
    (f"<{EX}h1> <{EX}value> \"\xff\" .".encode("latin-1"), "ntriples", 1, None),
])
def test_malformed_event_text_is_located(text, fmt, line, column) -> None:
    engine = Engine()
    pairs = engine.register(NO_RECOVERY)
    with pytest.raises(EventSyntaxError) as caught:
        engine.push(EX + "u1", 1, text, format=fmt)
    err = caught.value
    assert isinstance(err, SpaseqError) and not isinstance(err, SyntaxError)
    assert (err.location.file, err.location.line) == ("<event>", line)
    if column is not None:
        assert err.location.column == column
    assert str(err).startswith(f"<event>:{line}:") and "syntax error" in str(err)
    reading(engine, 1, 60)  # nothing of the bad event was taken; the engine goes on
    engine.close()
    assert [r.time for r in pairs.rows()] == [1]


def test_an_unknown_event_format_is_a_usage_error() -> None:
    engine = Engine()
    engine.register(NO_RECOVERY)
    with pytest.raises(UsageError, match="unknown event format 'rdfxml'"):
        engine.push(EX + "u1", 1, "<a> <b> <c> .", format="rdfxml")


def test_run_replay_refuses_a_file_of_a_stream_the_query_does_not_read() -> None:
    power = str(Path(__file__).resolve().parents[2] / "fixtures" / "smartgrid" / "power.trig")
    engine = Engine()
    engine.register(NO_RECOVERY)
    with pytest.raises(UnreadStreamError, match=f"<{EX}u3> of .*power.trig"):
        engine.run_replay([(EX + "u3", power)])
    skipping = Engine(drop_unread=True)
    alarms = skipping.register(NO_RECOVERY)
    assert skipping.run_replay([(EX + "u3", power)]) is None
    assert alarms.rows() == [] and skipping.closed


DISTINCT_KEYS = query_text("A", "DEFINE GPM A ON U1 { ?s :value ?v }", select="DISTINCT ?s", streams=("u1",))


def test_rows_keeps_one_distinct_across_calls_and_snapshots() -> None:
    """Issue 24 E: DISTINCT holds over the whole run, not per ``rows()`` call."""
    engine = Engine()
    keys = engine.register(DISTINCT_KEYS)
    reading(engine, 1, 10)
    assert [r.bindings["s"].value for r in keys.rows()] == [EX + "h1"]
    reading(engine, 2, 11)  # the same ?s: not a new distinct row
    assert keys.rows() == []
    restored = Engine.restore(engine.snapshot())
    again = restored.query(keys.output.iri)
    assert again is not None
    reading(restored, 3, 12)
    restored.push(EX + "u1", 4, f"<{EX}h2> <{EX}value> 1 .", format="turtle")
    assert [r.bindings["s"].value for r in again.rows()] == [EX + "h2"]


TRAILING_ABSENCE = query_text("A; B!", "DEFINE GPM A ON U1 { ?s :a ?x } DEFINE GPM B ON U1 { ?s :b ?y }",
                              within="5 SECONDS", streams=("u1",))


@pytest.mark.parametrize("query_clocks", [False, True])
def test_an_event_earlier_than_a_heartbeat_is_late(query_clocks: bool) -> None:
    """Issue 24 D: after ``advance_to(10)`` released (a1), a b1@3 cannot be taken as input
    (no input order gives that output): refused under ``late="error"``, or, by default,
    dropped and counted."""
    engine = Engine(query_clocks=query_clocks, late="error")
    absent = engine.register(TRAILING_ABSENCE)
    engine.push(EX + "u1", 1, f"<{EX}s> <{EX}a> 1 .", format="turtle")
    engine.advance_to(10)
    assert [r.time for r in absent.rows()] == [1]
    with pytest.raises(LateEventError, match=r"earlier than 10, which a heartbeat \(advance_to\)"):
        engine.push(EX + "u1", 3, f"<{EX}s> <{EX}b> 1 .", format="turtle")
    assert engine.late(EX + "u1", 9) is not None and engine.late(EX + "u1", 10) is None
    engine.push(EX + "u1", 10, f"<{EX}s> <{EX}a> 2 .", format="turtle")  # at the heartbeat: on time
    restored = Engine.restore(engine.snapshot())  # the promise survives a snapshot
    with pytest.raises(LateEventError):
        restored.push(EX + "u1", 4, f"<{EX}s> <{EX}b> 1 .", format="turtle")
    dropping = Engine(query_clocks=query_clocks)
    late = dropping.register(TRAILING_ABSENCE)
    dropping.advance_to(10)
    pushed = dropping.push(EX + "u1", 3, f"<{EX}s> <{EX}b> 1 .", format="turtle")
    assert not pushed.fed and pushed.late_for == (late,)
    assert dropping.dropped_late == 1 and late.late == 1


CONJUNCTION = query_text("(A & B)", "DEFINE GPM A ON U1 { ?s :a ?x } DEFINE GPM B ON U1 { ?s :b ?y }",
                         streams=("u1",))


def test_an_event_at_a_flushed_timestamp_is_late_under_lazy_conjunction() -> None:
    """Issue 24 D: ``flush()`` closes the current timestamp; an event at it pushed after
    would lose the partners the eager engine finds, so it is late."""
    from spaseq.engine.compile.plan import EngineOptions

    engine = Engine(options=EngineOptions(lazy_conjunction=True), late="error")
    pairs = engine.register(CONJUNCTION)
    engine.push(EX + "u1", 2, f"<{EX}s> <{EX}a> 1 .", format="turtle")
    engine.flush()
    with pytest.raises(LateEventError, match="after flush"):
        engine.push(EX + "u1", 2, f"<{EX}s> <{EX}b> 1 .", format="turtle")
    engine.push(EX + "u1", 3, f"<{EX}s> <{EX}b> 1 .", format="turtle")  # a later instant: on time
    engine.close()
    assert pairs.rows() == []  # no pair is split across instants


def test_an_event_count_window_closes_at_the_first_event_past_it() -> None:
    """Decision 24: under ``WITHIN 3 EVENTS`` the trailing negation of (a1) completes when
    the fourth event arrives, not the third."""
    query = query_text("A ; B!", "DEFINE GPM A ON U1 { ?s :a ?x } DEFINE GPM B ON U1 { ?s :b ?y }",
                       within="3 EVENTS", streams=("u1",))
    engine = Engine()
    absent = engine.register(query)
    released = []
    for t, p in enumerate(["a", "x", "x", "x"], start=1):
        engine.push(EX + "u1", t, f"<{EX}s> <{EX}{p}> 1 .", format="turtle")
        released.append(len(absent.rows()))
    assert released == [0, 0, 0, 1]


@pytest.mark.parametrize("query_clocks", [False, True])
def test_an_unregistered_query_makes_no_event_late(query_clocks: bool) -> None:
    """A query that was unregistered no longer judges events: the same query registered
    again (as the server's delete and create do) takes an earlier event."""
    engine = Engine(query_clocks=query_clocks)
    first = engine.register(PAIR)
    engine.push(EX + "u2", 100, f"<{EX}s> <{EX}a> 1 .", format="turtle")
    assert engine.late(EX + "u2", 50) is not None
    engine.unregister(first)
    again = engine.register(PAIR)
    assert engine.late(EX + "u2", 50) is None
    engine.push(EX + "u2", 50, f"<{EX}s> <{EX}a> 1 .", format="turtle")
    engine.push(EX + "u2", 60, f"<{EX}s> <{EX}b> 2 .", format="turtle")
    assert [(r.time, r.bindings["y"].value) for r in again.rows()] == [(60, "2")]


def test_a_late_event_is_judged_before_its_terms_are_kept_and_told_in_the_input_s_form() -> None:
    """A dropped late event adds nothing to the dictionary; a refused one is told with its
    times as the input wrote them (decision 56). ``drop_late`` still spells the policy."""
    dropping = Engine(drop_late=True)
    dropping.register(PAIR)
    dropping.push(EX + "u2", 100, f"<{EX}s> <{EX}a> 1 .", format="turtle")
    terms = dropping._native.engine.terms()
    for i in range(50):
        dropping.push(EX + "u2", 10, f"<{EX}late{i}> <{EX}a> {i} .", format="turtle")
    assert dropping.dropped_late == 50 and dropping._native.engine.terms() == terms
    refusing = Engine(drop_late=False)
    assert refusing.late_policy == "error"
    refusing.register(PAIR)
    stamp = pyoxigraph.Literal("2024-01-01T00:00:10Z", datatype=pyoxigraph.NamedNode(
        "http://www.w3.org/2001/XMLSchema#dateTime"))
    refusing.push(EX + "u2", stamp, f"<{EX}s> <{EX}a> 1 .", format="turtle")
    early = pyoxigraph.Literal("2024-01-01T00:00:05.5Z", datatype=stamp.datatype)
    with pytest.raises(LateEventError, match=r"^event at 2024-01-01T00:00:05\.5Z on <.*> is earlier "
                                             r"than 2024-01-01T00:00:10Z, already processed"):
        refusing.push(EX + "u2", early, f"<{EX}s> <{EX}b> 1 .", format="turtle")
    refusing.drop_late = True  # a setting changed later reaches the core
    refusing.push(EX + "u2", early, f"<{EX}s> <{EX}b> 1 .", format="turtle")
    assert refusing.dropped_late == 1


def test_an_event_whose_object_is_a_triple_term_matches_and_gives_it_back() -> None:
    """RDF 1.2: an event's object may be a triple term; pushed through the API it is
    interned as one, joined on, and a match's binding is that triple again."""
    engine = Engine()
    pairs = engine.register(PAIR)
    said = pyoxigraph.Triple(pyoxigraph.NamedNode(EX + "a"), pyoxigraph.NamedNode(EX + "b"),
                             pyoxigraph.Literal("01"))
    s, a, b = (pyoxigraph.NamedNode(EX + n) for n in ("s", "a", "b"))
    engine.push(EX + "u2", 1, [pyoxigraph.Triple(s, a, said)])
    engine.push(EX + "u2", 2, f"<{EX}s> <{EX}b> <<( <{EX}a> <{EX}b> \"01\" )>> .", format="ntriples")
    [row] = pairs.rows()
    assert row.bindings["x"] == said and row.bindings["y"] == said


def test_an_rdflib_graph_is_pushed_with_its_terms_as_written() -> None:
    """rdflib triples reach the engine through the one rdflib conversion
    (``io.rdflib_terms``, the plugin's): IRIs, a blank node whose rdflib label is no valid
    N-Triples label, language tags and a typed literal's lexical form kept as written."""
    from rdflib import BNode, Graph, Literal, Namespace
    from rdflib.namespace import XSD

    ns = Namespace(EX)
    first, second = Graph(), Graph()
    first.add((BNode("a node"), ns.a, Literal("14.0", datatype=XSD.double)))
    second.add((BNode("a node"), ns.b, Literal("chat", lang="fr")))
    engine = Engine()
    handle = engine.register(PAIR)
    engine.push(EX + "u2", 1, first)
    engine.push(EX + "u2", 2, second)  # the same rdflib blank node: the same term
    engine.close()
    (row,) = handle.rows()
    assert (str(row.bindings["x"]), str(row.bindings["y"])) == (
        '"14.0"^^<http://www.w3.org/2001/XMLSchema#double>', '"chat"@fr')
    assert isinstance(row.bindings["s"], pyoxigraph.BlankNode)
    bad = Graph()
    bad.add((Literal("x"), ns.a, ns.b))
    with pytest.raises(SpaseqError, match="not an RDF triple"):
        Engine().push(EX + "u2", 1, bad)


def test_an_output_that_is_no_iri_is_refused_and_nothing_stays_registered() -> None:
    engine = Engine()
    with pytest.raises(UsageError, match=r"^output <not an iri>: Invalid IRI"):
        engine.register(PAIR, output="not an iri")
    handle = engine.register(PAIR, output="urn:ok")
    reading(engine, 1, 1, stream="u2")
    engine.close()
    assert engine.handles == [handle] and list(handle.matches()) == []
