"""The native streaming replay (engine/native/io/src/stream) against what ``spaseq run``
read before it: the Python reader, now the oracle (tests/io/replay_oracle.py), on each file (``first_seq`` as the CLI numbers them), the
events sorted by (time, seq), cut as ``Input.usable`` cuts them after an error, and the
first failing file's error. On every replay fixture, on generated files (graphs in several
blocks, timestamps before, after, missing or twice, out of order, syntax errors) with tiny
memory budgets, and on an out-of-order file that must be sorted on disk in runs."""

from __future__ import annotations

import gzip
import itertools
import os
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from spaseq.engine import _native
from spaseq.engine.cli.run import Input
from spaseq.engine.events import Event
from tests.io.replay_oracle import PROV_GENERATED_AT, read_replay

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = sorted(p for pattern in ("*.trig", "*.nq", "*.nq.gz", "*.trig.gz")
                  for p in ROOT.glob(f"fixtures/**/{pattern}"))
EX = "http://ex.org/"
# hypothesis' default count; SPASEQ_DIFF_EXAMPLES=5000 runs more locally
EXAMPLES = int(os.environ.get("SPASEQ_DIFF_EXAMPLES", "100"))
XSD = "http://www.w3.org/2001/XMLSchema#"

View = tuple[str, int, int, str, list[tuple[str, str, str]], bool]


def python_merge(files: list[tuple[str, str]], time_predicate: str = PROV_GENERATED_AT,
                 ) -> tuple[list[View], str | None]:
    """What the CLI reads (cli/run.py ``_read_input`` and ``Input.usable``): events and the
    first error, in full (``PATH:LINE:COLUMN: message``)."""
    inp = Input()
    seq = 0
    for iri, path in files:
        res = read_replay(path, iri, time_predicate=time_predicate, first_seq=seq)
        seq += len(res.events) + 1
        inp.events.extend(res.events)
        if res.error is not None:
            inp.errors.append((res.error, max((e.time for e in res.events), default=float("-inf"))))
    events, _ = inp.usable()
    view = [(e.stream, e.seq, int(e.time * Decimal(10**9)), str(e.name),
             [(str(t.subject), str(t.predicate), str(t.object)) for t in e.triples], e.dated,
             int(e.start * Decimal(10**9)))
            for e in sorted(events, key=Event.sort_key)]
    return view, (str(inp.errors[0][0]) if inp.errors else None)


def native_merge(files: list[tuple[str, str]], **options) -> tuple[list[View], str | None, object]:
    """The native stream's events and error text, and the stream (for its notes)."""
    stream = _native.ReplayStream(files, **options)
    events: list[View] = []
    error = None
    try:
        for batch in stream:
            events.extend(batch)
    except ValueError as err:
        error = str(err)
    return events, error, stream


def assert_agree(files: list[tuple[str, str]], tmp_path: Path, memory_events: int,
                 time_predicate: str = PROV_GENERATED_AT) -> object:
    expected, expected_error = python_merge(files, time_predicate)
    got, error, stream = native_merge(files, time_predicate=time_predicate, spill_dir=str(tmp_path),
                                      memory_events=memory_events, batch=3)
    assert got == expected
    assert error == expected_error
    assert list(tmp_path.iterdir()) == [], "spilled runs are removed"
    return stream


@pytest.mark.parametrize("memory_events", [1, 2, 10_000])
@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_fixture_streams_as_the_python_reader_reads_it(path: Path, memory_events: int,
                                                              tmp_path: Path) -> None:
    assert_agree([(EX + "s", str(path))], tmp_path, memory_events)


@pytest.mark.parametrize("memory_events", [1, 3, 10_000])
def test_fixture_streams_merge_as_the_cli_merges_them(memory_events: int, tmp_path: Path) -> None:
    sg = ROOT / "fixtures/smartgrid"
    files = [(EX + name, str(sg / f"{name}.trig")) for name in ("power", "weather", "storage")]
    assert_agree(files, tmp_path, memory_events)
    bad = ROOT / "fixtures/io/replay"  # a failing file cuts every stream at its last time
    assert_agree([*files, (EX + "bad", str(bad / "syntax_error.trig"))], tmp_path, memory_events)
    assert_agree([(EX + "x", str(bad / "basic.nq")), (EX + "y", str(bad / "basic.trig"))],
                 tmp_path, memory_events)


def test_a_custom_time_predicate_and_gzip(tmp_path: Path) -> None:
    src = ROOT / "fixtures/io/replay/custom_predicate.trig"
    packed = tmp_path / "custom.trig.gz"
    packed.write_bytes(gzip.compress(src.read_bytes()))
    spill = tmp_path / "spill"
    spill.mkdir()
    assert_agree([(EX + "s", str(packed))], spill, 1, time_predicate="http://example.org/at")


# Generated files: items are blocks of a graph's triples or timestamps of a name, in any
# order, so graphs come in several blocks, stamped before, after, twice or never.
BLOCK = st.tuples(st.just("block"), st.integers(0, 5), st.lists(st.integers(0, 3), min_size=1, max_size=3))
STAMP = st.tuples(st.just("stamp"), st.integers(0, 6), st.sampled_from(["0", "1", "1.0", "2", "3", "x"]))
ITEMS = st.lists(st.one_of(BLOCK, BLOCK, STAMP), max_size=14)


def valid_items(events: list[tuple[list[int], int, bool, bool]]) -> list:
    """A valid file: each graph stamped once, before or after its first block; a split
    graph's other block comes after the next graph's."""
    out: list = []
    deferred: list = []
    for g, (values, time, before, split) in enumerate(events):
        first, rest = (values[:1], values[1:]) if split else (values, [])
        out.extend([("stamp", g, str(time)), ("block", g, first)] if before
                   else [("block", g, first), ("stamp", g, str(time))])
        out.extend(deferred)
        deferred = [("block", g, rest)] if rest else []
    return out + deferred


def write_items(path: Path, items: list, trig: bool, broken: bool) -> None:
    lines = []
    for kind, g, x in items:
        graph = f"<{EX}g{g}>"
        if kind == "stamp":
            literal = f'"{x}"' if x == "x" else x if trig else f'"{x}"^^<{XSD}decimal>'
            lines.append(f"{graph} <{PROV_GENERATED_AT}> {literal} .")
        elif trig:
            lines.append(f"{graph} {{ " + " ".join(f"<{EX}s> <{EX}v> {v} ." for v in x) + " }")
        else:
            lines.extend(f'<{EX}s> <{EX}v> "{v}" {graph} .' for v in x)
    if broken:
        lines.append(f"<{EX}s> <{EX}v> oops")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


# graph 2 written again after the window (2) closed it, then a syntax error while reading it:
# the Python reader cuts at graph 2's first appearance, before g0 (bad or good timestamp)
AGAIN_THEN_BROKEN = [("block", 2, [0]), ("block", 0, [0]), ("block", 1, [0]), ("stamp", 0, "x"),
                     ("block", 2, [0])]


@settings(max_examples=EXAMPLES)
@given(files=st.lists(st.tuples(ITEMS, st.booleans(), st.booleans()), min_size=1, max_size=3),
       memory_events=st.integers(1, 4))
@example(files=[([], False, False), (AGAIN_THEN_BROKEN, False, True)], memory_events=2)
@example(files=[([], False, False), ([*AGAIN_THEN_BROKEN[:3], ("stamp", 0, "0"), AGAIN_THEN_BROKEN[4]],
                                     False, True)], memory_events=2)
def test_generated_files_stream_as_the_python_reader_reads_them(tmp_path_factory, files, memory_events) -> None:
    directory = tmp_path_factory.mktemp("gen")
    spill = directory / "spill"
    spill.mkdir()
    specs = []
    for i, (items, trig, broken) in enumerate(files):
        path = directory / f"f{i}.{'trig' if trig else 'nq'}"
        write_items(path, items, trig, broken and i % 2 == 1)
        specs.append((f"{EX}stream{i}", str(path)))
    assert_agree(specs, spill, memory_events)


EVENT = st.tuples(st.lists(st.integers(0, 3), min_size=1, max_size=3), st.integers(0, 6),
                 st.booleans(), st.booleans())


@settings(max_examples=EXAMPLES)
@given(events=st.lists(EVENT, min_size=1, max_size=12), memory_events=st.integers(1, 3),
       trig=st.booleans(), ordered=st.booleans())
def test_generated_valid_files_stream(tmp_path_factory, events, memory_events, trig, ordered) -> None:
    if ordered:
        events = sorted(events, key=lambda e: e[1])
    directory = tmp_path_factory.mktemp("valid")
    spill = directory / "spill"
    spill.mkdir()
    path = directory / f"f.{'trig' if trig else 'nq'}"
    write_items(path, valid_items(events), trig, False)
    stream = assert_agree([(EX + "s", str(path))], spill, memory_events)
    times = [e[1] for e in events]
    if len(events) <= memory_events:
        assert stream.modes == ["memory"]
    elif stream.modes != ["whole"]:  # a split graph outran a window of 1
        assert stream.modes == ["stream" if times == sorted(times) else "sorted"]
        assert (stream.spilled_runs > 0) == (stream.modes == ["sorted"])


def test_an_out_of_order_file_is_sorted_on_disk_with_bounded_memory(tmp_path: Path) -> None:
    n, budget = 2000, 50
    path = tmp_path / "shuffled.nq"
    lines = []
    for i in range(n):
        t = (i * 7919) % n // 3  # a permutation of 0..n-1, /3: ties too
        lines.append(f'<{EX}e{i}> <{PROV_GENERATED_AT}> "{t}"^^<http://www.w3.org/2001/XMLSchema#integer> .')
        lines.append(f'<{EX}s> <{EX}v> "{i}" <{EX}e{i}> .')
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    spill = tmp_path / "spill"
    spill.mkdir()
    stream = assert_agree([(EX + "s", str(path))], spill, budget)
    assert stream.modes == ["sorted"]
    assert stream.spilled_runs == n // budget  # each run holds at most `budget` events
    assert len(stream.notes) == 1 and "out of time order" in stream.notes[0]
    # the same events in time order stream without spilling
    ordered = tmp_path / "ordered.nq"
    ordered.write_text("\n".join(itertools.chain.from_iterable(
        (f'<{EX}e{i}> <{PROV_GENERATED_AT}> "{i}"^^<http://www.w3.org/2001/XMLSchema#integer> .',
         f'<{EX}s> <{EX}v> "{i}" <{EX}e{i}> .') for i in range(n))) + "\n", encoding="utf-8")
    stream = assert_agree([(EX + "s", str(ordered))], spill, budget)
    assert (stream.modes, stream.spilled_runs, stream.notes) == (["stream"], 0, [])
    # a file small enough to be kept is sorted in memory, and says so too
    stream = assert_agree([(EX + "s", str(path))], spill, 10 * n)
    assert (stream.modes, stream.spilled_runs) == (["memory"], 0)
    assert stream.notes == [f"{path}: events out of time order: sorted in memory"]
    assert assert_agree([(EX + "s", str(ordered))], spill, 10 * n).notes == []


def test_a_bad_time_predicate_is_refused_at_once() -> None:
    with pytest.raises(ValueError, match="bad time predicate"):
        _native.ReplayStream([], time_predicate="not an iri")


# Terms the strict parser accepts or refuses in ways a lenient parse does not show: the
# native first pass parses N-Quads leniently and checks each quad itself, reading the file
# strictly again when it cannot vouch for one (replay.rs, `Quads::verified`).
OBJECTS = [
    f"<{EX}o>", "_:b1", '"plain"', '"x"@en', '"x"@en-US', '"x"@EN', '"x"@en-', '"x"@1234567890',
    f'"x"^^<{XSD}string>', '"x"^^<http://www.w3.org/1999/02/22-rdf-syntax-ns#langString>',
    '"a\\nb"', '"a\\rb"', '"\\uD83D\\uDE00"', '"\\U0001F600"', '"\U0001F600"', '"caf\\u00E9"',
    '"x"^^<not an iri>', '"x"^^<rel>', "<rel>", f"<{EX}a b>", f"<{EX}\\u0020>", f"<{EX}%zz>",
    f"<{EX}\\u00E9>", f"<{EX}\U0001F600>", "<http://[::1]/x>", "<http://ex.org:80/x?q#f>",
    "<urn:x:y>", "<http://ex.org/a|b>", '"x" oops',
]
GRAPHS = [f"<{EX}g{{}}>", "_:g{}", f"<{EX}g{{}}%zz>", "<g{}>"]


@settings(max_examples=EXAMPLES)
@given(lines=st.lists(st.tuples(st.integers(0, 4), st.sampled_from(OBJECTS),
                                st.sampled_from(GRAPHS), st.booleans()), min_size=1, max_size=8),
       memory_events=st.sampled_from([1, 2, 100]))
@example(lines=[(0, "<rel>", GRAPHS[0], True), (1, f"<{EX}o>", GRAPHS[0], True)], memory_events=1)
def test_terms_a_lenient_parse_would_let_through(tmp_path_factory, lines, memory_events) -> None:
    directory = tmp_path_factory.mktemp("terms")
    spill = directory / "spill"
    spill.mkdir()
    text = []
    for g, obj, graph, stamped in lines:
        name = graph.format(g)
        if stamped:
            text.append(f'{name} <{PROV_GENERATED_AT}> "{g}"^^<{XSD}integer> .')
        text.append(f"<{EX}s> <{EX}p> {obj} {name} .")
    path = directory / "f.nq"
    path.write_text("\n".join(text) + "\n", encoding="utf-8")
    assert_agree([(EX + "s", str(path))], spill, memory_events)


# TriG in the forms the native reader reads by bytes (replay/trig.rs): prefixes redefined on
# the way, ``a``, ``;`` and ``,`` lists, number and boolean shorthands, comments, a graph in
# two blocks, ``GRAPH`` and default-graph blocks.
TRIG_EVENTS = """@prefix ex: <http://ex.org/> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
PREFIX prov: <http://www.w3.org/ns/prov#>
# the first events
ex:g0 { ex:s a ex:Stock ; ex:price 4393, 124.92 ; ex:ratio 1.2e3, -.5E-1 ; ex:up true . }
ex:g0 prov:generatedAtTime "2024-01-01T00:00:01Z"^^xsd:dateTime .
GRAPH ex:g1 { ex:s ex:price -7 ; ex:label "a # not a comment" ; ex:up false } # done
ex:g1 prov:generatedAtTime "2024-01-01T00:00:00.5Z"^^xsd:dateTime ; ex:other _:b1 .
@prefix ex: <http://ex.org/again/> .
ex:g2 { _:b1 ex:v +5 , "x"^^xsd:string ;; ex:w "" }
{ ex:ignored ex:p ex:o }
ex:g2 prov:generatedAtTime "2024-01-01T00:00:03Z"^^xsd:dateTime .
PREFIX ex: <http://ex.org/>
ex:g0 {
  ex:s ex:price 4393 ; ex:more .5 .
}
"""


def test_a_trig_file_streams_as_its_n_quads(tmp_path: Path) -> None:
    from pyoxigraph import RdfFormat, parse, serialize

    trig = tmp_path / "events.trig"
    nq = tmp_path / "events.nq"
    spill = tmp_path / "spill"
    spill.mkdir()
    late = 'ex:g3 prov:generatedAtTime "2024-01-01T00:00:02Z"^^xsd:dateTime .\n'
    # read by bytes throughout; left to oxttl at quotes it does not read; a syntax error on
    # line 17: its place and message are oxttl's
    for tail, error_line in [("", None), ("ex:g3 { ex:s ex:p 'single', \"x\"@en }\n" + late, None),
                             ("ex:g3 { ex:s ex:p 1 ex:oops }\n" + late, 17)]:
        trig.write_text(TRIG_EVENTS + tail, encoding="utf-8")
        if error_line is None:
            quads = parse(trig.read_bytes(), format=RdfFormat.TRIG)
            nq.write_bytes(serialize(quads, format=RdfFormat.N_QUADS))
        for memory_events in (1, 10_000):
            assert_agree([(EX + "s", str(trig))], spill, memory_events)
            got, error, _ = native_merge([(EX + "s", str(trig))], spill_dir=str(spill),
                                         memory_events=memory_events)
            if error_line is None:
                assert error is None
                assert got == native_merge([(EX + "s", str(nq))], spill_dir=str(spill),
                                           memory_events=memory_events)[0]
                assert len(got) == 3 + bool(tail)
            else:
                assert error is not None and f"events.trig:{error_line}:" in error, error


def test_a_given_format_wins_over_the_names_as_in_python(tmp_path: Path) -> None:
    """``format=`` (``spaseq run --input-format``) reads every file in that format whatever
    its name: the same events as the Python reader told the same; a directory is named as
    one before its (missing) extension is judged."""
    from pyoxigraph import RdfFormat

    odd = tmp_path / "events.log"
    odd.write_text("".join(f'<{EX}g{i}> <{PROV_GENERATED_AT}> "{i}"^^<{XSD}integer> .\n'
                           f'<{EX}s> <{EX}v> "{i}" <{EX}g{i}> .\n' for i in range(5)))
    files = [(EX + "s", str(odd))]
    assert "cannot tell the replay file's format" in native_merge(files)[1]
    events, error, _ = native_merge(files, format="nquads")
    python = read_replay(str(odd), EX + "s", data_format=RdfFormat.N_QUADS)
    assert error is None and python.error is None
    assert [(e[2], e[3]) for e in events] == [(int(e.time) * 10**9, str(e.name)) for e in python.events]
    assert len(events) == 5
    with pytest.raises(ValueError, match='unknown replay format "xml"'):
        _native.ReplayStream(files, format="xml")
    (tmp_path / "recording").mkdir()
    error = native_merge([(EX + "s", str(tmp_path / "recording"))])[1]
    assert error == f"{tmp_path / 'recording'}: is a directory, not a replay file"


def test_a_first_pass_started_ahead_gives_the_same_stream(tmp_path: Path) -> None:
    """``ReplayReading`` (the CLI starts it before loading the engine) hands its first pass
    to the ``ReplayStream`` of the same paths and options: same events, error and notes as
    a stream reading alone; of other paths or options, or taken already, it is not used."""
    files = [(f"{EX}s{i}", str(p)) for i, p in enumerate(FIXTURES) if p.suffix == ".nq"][:3]
    assert len(files) >= 2
    paths = [p for _, p in files]
    alone = native_merge(files, spill_dir=str(tmp_path), memory_events=2)
    reading = _native.ReplayReading(paths, spill_dir=str(tmp_path), memory_events=2)
    ahead = native_merge(files, spill_dir=str(tmp_path), memory_events=2, reading=reading)
    assert ahead[:2] == alone[:2] and ahead[2].notes == alone[2].notes
    again = native_merge(files, spill_dir=str(tmp_path), memory_events=2, reading=reading)
    assert again[:2] == alone[:2], "a reading taken already: the stream reads for itself"
    other = _native.ReplayReading(paths[:1], spill_dir=str(tmp_path), memory_events=2)
    assert native_merge(files, spill_dir=str(tmp_path), memory_events=2, reading=other)[:2] == alone[:2]
    # errors wait for the stream, as if it had read the files itself
    bad = _native.ReplayReading(paths, time_predicate="not an iri")
    with pytest.raises(ValueError, match="bad time predicate"):
        _native.ReplayStream(files, time_predicate="not an iri", reading=bad)
    gone = [*files, (EX + "gone", str(tmp_path / "none.nq"))]
    missing = _native.ReplayReading([p for _, p in gone])
    told = native_merge(gone, reading=missing)
    assert told[:2] == native_merge(gone)[:2] and told[1] is not None
