"""Type stubs of ``spaseq.engine._native``, the native core's PyO3 binding (engine/native).
Its test hooks are the submodule ``_testing`` (``_testing.pyi``)."""

from collections.abc import Callable
from typing import final

from spaseq.engine._native import _testing as _testing

__all__ = ["PLAN_VERSION", "__version__", "_testing", "LateEvent", "UnreadStream", "OutputStream", "LastingEvent", "LocatedError", "gpm_evaluators", "LiveStream", "LiveInlet", "LiveReader",
           "NativeWriter", "jsonl_line", "derived_graph", "result_name", "json_time", "json_seconds", "table_time",
           "NativeEngine", "NativeEvent", "NativeMatch", "LateOutput", "ReplayReading", "ReplayStream", "read_batch", "check_replay_file",
           "timestamp_ns", "read_columns", "EventRows", "Router", "seconds_ns", "datetime_ns", "datetime_text"]

PLAN_VERSION: int
__version__: str

class LateEvent(ValueError):
    """An event that comes after a promise it breaks (``str()`` is the core's message, its
    times written as the event's were): ``promise`` is ``processed`` (a query reading its
    stream processed a later time), ``heartbeat``, ``flushed``, ``composed`` (a query
    reading another query's output and this stream was run to a later time) or ``watermark``
    (a query with a LATENESS was run to its watermark, later than the event); ``time`` and ``at`` (the
    promise's time) in ns. One that stopped a live feed also has ``path`` (its source's
    label, ``<stdin>`` or a path) and ``line`` (where its graph started there)."""

    stream: str
    time: int
    at: int
    promise: str
    path: str
    line: int

@final
class LateOutput:
    """A TriG file of the events queries dropped as late (decision 64, docs/vocabulary.md),
    created (or emptied) with its prefixes; OSError when it cannot be. ``NativeEngine.push``
    and ``feed_live`` write to it as they drop events, flushing after each."""

    def __new__(cls, path: str) -> LateOutput: ...
    @property
    def path(self) -> str: ...
    @property
    def written(self) -> int:
        """The late events written so far."""
    def close(self) -> None:
        """Flush and close the file; a second call does nothing."""

class UnreadStream(ValueError):
    """An event on a stream no registered query reads (the message names the streams read)."""

class LastingEvent(ValueError):
    """An event that lasts pushed to a stream a query planned for point events reads
    (``EngineOptions.intervals`` off, docs/decisions.md 71)."""

class OutputStream(ValueError):
    """An event pushed on a registered query's output stream, whose events come from that query."""

class LocatedError(ValueError):
    """An error of input located in a file (a stream's file, ``<stdin>``, a batch's label):
    ``str()`` is ``PATH:LINE:COLUMN: message`` (``PATH:LINE: message``, ``PATH: message`` as
    far as the place is known); ``path``, ``line`` and ``column`` (1-based) are None when
    unknown, ``message`` is the text without them. Raised by the readers, returned by
    ``NativeEngine.feed``/``feed_live`` and ``LiveReader``."""

    path: str | None
    line: int | None
    column: int | None
    message: str

@final
class ReplayReading:
    """The first pass of a ``ReplayStream`` over ``paths`` (same arguments), started on a
    thread of its own: give it to ``ReplayStream(..., reading=)`` with the same paths and
    options, which then waits for it instead of reading the files itself. ``speculate`` (one
    file): the first pass hands its events over as it judges them, and the stream's
    ``speculation`` says at its end whether the file was read as it is written."""

    def __new__(
        cls,
        paths: list[str],
        time_predicate: str = ...,
        spill_dir: str | None = None,
        memory_events: int = ...,
        format: str | None = None,
        speculate: bool = False,
    ) -> ReplayReading: ...
    @property
    def speculative(self) -> bool:
        """Whether its one file is read speculatively (``speculate=True``: read once, its
        first pass handing events over as it judges them; decision 47) and not taken yet."""

@final
class ReplayStream:
    """Replay files, one per stream, merged by time in bounded memory (native core
    ``stream``): what ``spaseq run`` reads (the Python reader per file, ``seq`` numbered as
    the CLI does, ties by file order then first appearance). Iterating yields batches of
    events ``(stream_iri, seq, time_ns, graph, [(s, p, o)], dated, start_ns)``, terms in
    N-Triples (``dated``: the time was written as an ``xsd:dateTime``; ``start_ns``: when an
    event that lasts began, the time for a point event); after the
    usable events, a file's error as ``LocatedError`` ``PATH:LINE:COLUMN: message``. The first
    pass over every file runs in the constructor (ValueError for a bad time predicate), or
    was started ahead by ``reading`` (used only if it has the same paths and options).
    ``format`` (``"trig"`` or ``"nquads"``) is every file's format whatever its name says
    (None: each name's extension)."""

    def __new__(
        cls,
        files: list[tuple[str, str]],
        time_predicate: str = ...,
        spill_dir: str | None = None,
        memory_events: int = ...,
        batch: int = ...,
        format: str | None = None,
        reading: ReplayReading | None = None,
    ) -> ReplayStream: ...
    def __iter__(self) -> ReplayStream: ...
    def __next__(self) -> list[tuple[str, int, int, str, list[tuple[str, str, str]], bool, int]]: ...
    @property
    def notes(self) -> list[str]:
        """For the user (stderr): files sorted on disk, files read whole."""
    @property
    def modes(self) -> list[str]:
        """How each file is read: ``memory``, ``stream``, ``sorted`` or ``whole``."""
    @property
    def spilled_runs(self) -> int:
        """Sorted runs written to disk for out-of-order files."""
    @property
    def speculation(self) -> str:
        """``off`` (the files were judged before their first event), or for a speculative
        ``reading``: ``pending``, ``confirmed`` or ``failed`` (the stream then ended early
        with an error, and what was made of its events is to be thrown away)."""

def check_replay_file(path: str, format: str | None = None) -> None:
    """Check that ``path`` can be read as a replay file (``format``: ``"trig"`` or
    ``"nquads"``, whatever its name says; None: its name's) without reading it:
    ``LocatedError`` ``PATH: message`` for what the reader would stop at before its first
    line (no such file, a directory, a name that tells no format, a file that cannot be
    opened)."""

def read_batch(
    data: bytes, format: str, label: str, time_predicate: str = ...
) -> list[tuple[str, int, list[tuple[str, str, str]], bool, int]]:
    """The events of a replay batch held in memory (``format`` ``"trig"`` or ``"nquads"``; a
    request body), read whole by the replay reader's rules, sorted by time (ties in order of
    first appearance): ``(graph, time_ns, [(s, p, o)], dated)``, terms in N-Triples. For any
    problem, no events but ``LocatedError`` ``LABEL:LINE:COLUMN: message`` (``LABEL: message``
    without a place), ``label`` naming the batch as a path names a file."""

def read_columns(
    data: bytes, format: str, label: str, time_predicate: str = ...
) -> tuple[tuple[bytes, bytes], list[int], tuple[bytes, bytes], list[bool], list[int]]:
    """``read_batch``'s events as columns (what Spark's readers hand to Arrow without a
    Python object per event): graph names and each event's triples as N-Triples text (one
    triple a line) as Arrow string buffers (32-bit offsets, data), times (ns), whether each
    time was an xsd:dateTime. Errors as ``read_batch``'s."""

#: An Arrow string column as its buffers: (offsets, data, offset, length), the offsets 32-bit.
_StrColumn = tuple[bytes, bytes, int, int]

@final
class EventRows:
    """Events given as columns (what a Spark part holds), parsed once here and fed by
    ``NativeEngine.feed`` in the order given, numbered as given (``Engine.run_rows``)."""

    def __new__(cls, streams: _StrColumn, seqs: list[int], times: list[int], dated: list[bool],
                graphs: _StrColumn, triples: _StrColumn) -> EventRows:
        """Stream IRIs, seqs, times (ns), dated, graph names and triples in N-Triples, one
        per event. ValueError (naming the row, from 0) for text that is not N-Triples or
        columns of unequal lengths."""
    def __len__(self) -> int: ...

@final
class Router:
    """The keys events give a query split by key (core ``spaseq_gpm::routing``, decision
    67): its GPMs' routing patterns, matched against each event's triples."""

    def __new__(cls, gpms: list[tuple[str, list[tuple[str, str, str]]]], keys: list[str]) -> Router:
        """``gpms``: (stream IRI, patterns), each position ``?name`` (a variable) or a term in
        N-Triples; ``keys``: the key variables. ValueError for text that is no term."""
    def keys(self, streams: _StrColumn, triples: _StrColumn) -> list[list[str]]:
        """Per event (stream IRI, triples in N-Triples): its keys, the key variables' terms
        in N-Triples joined by a space, sorted. ValueError for text that is not N-Triples."""

_LiveEvent = tuple[str, int, int, str, list[tuple[str, str, str]], bool, str, int]

@final
class LiveStream:
    """Live sources (spaseq-io ``stream/live.rs``), each read on a thread of its own, their
    events merged in the order they complete and numbered so (``seq`` from 1). ``sources``:
    ``(stream_iri, path or "-" for stdin, "trig", "nquads" or "auto")`` (``auto``: TriG when
    the first line that is not blank or a comment is shaped as only TriG's are, else
    N-Quads). Iterating yields batches of
    the events that have arrived ``(stream_iri, seq, time_ns, graph, [(s, p, o)], dated,
    origin, start_ns)``, terms in N-Triples, waiting (the GIL released) for the first only; after every
    source ended, the first source error as ``LocatedError`` ``FILE:LINE:COLUMN: message``.
    ValueError at once for a bad time predicate or format."""

    def __new__(cls, sources: list[tuple[str, str, str]], time_predicate: str = ..., batch: int = ...,
                inlets: list[tuple[str, str]] = ...) -> LiveStream:
        """``inlets``: (stream IRI, label), a source fed whole messages from Python for each
        (``LiveInlet``), named ``label`` in errors and origins; the stream ends once every
        source has, an inlet when it is closed."""
    @property
    def inlets(self) -> list[LiveInlet]:
        """The sources fed whole messages, in the order ``inlets`` gave them."""
    def __iter__(self) -> LiveStream: ...
    def __next__(self) -> list[_LiveEvent]: ...

@final
class LiveInlet:
    """A source of a ``LiveStream`` fed whole messages (MQTT, spaseq-io ``stream/inlet.rs``):
    each one replay batch, TriG or N-Quads, read by the replay reader's rules, its events sent
    in time order; a message that cannot be read is refused whole and the source goes on."""

    def send(self, message: bytes, format: str, line: int) -> int:
        """Read ``message`` (``"trig"`` or ``"nquads"``) and send its events, ``line`` given as
        the line each started on (the message's number), waiting (the GIL released) while the
        stream is full: how many it held. One that cannot be read sends nothing:
        ``LocatedError`` ``LABEL:LINE:COLUMN: message``, the place in the message."""
    def close(self) -> None:
        """The end of this source (a message being sent meanwhile is cut short); a second
        call does nothing."""

@final
class LiveReader:
    """The live rules for one source, fed a line at a time: ``read(line)`` and ``finish()`` (the
    end of input) each return the events complete after it and the error that ended the
    reading (a ``LocatedError``, ``LABEL:LINE:COLUMN: message``) or None."""

    def __new__(cls, stream: str, label: str, format: str, time_predicate: str = ...) -> LiveReader: ...
    def read(self, line: str) -> tuple[list[_LiveEvent], LocatedError | None]: ...
    def finish(self) -> tuple[list[_LiveEvent], LocatedError | None]: ...

_Pairs = list[tuple[str, int]]

@final
class NativeMatch:
    """A released match; bindings and taken events are converted when asked for."""

    @property
    def start(self) -> int: ...
    @property
    def time(self) -> int: ...
    @property
    def span(self) -> tuple[int, int]:
        """(start, time) in ns."""
    def bindings(self) -> _Pairs: ...
    def taken(self) -> list[tuple[str, int, _Pairs]]:
        """(GPM, event uid, local bindings) per event taken, first to last."""
    @property
    def number(self) -> int | None:
        """k for the query's k-th result (``<output#match-k>``); None when DISTINCT drops it."""

@final
class NativeEvent:
    """An event prepared once for every query of a ``NativeEngine``."""

    @property
    def uid(self) -> int:
        """The event's number in its engine (what taken events and callbacks name)."""

@final
class NativeEngine:
    """The native runtime (engine/native/automaton): term dictionary, streams, and one
    NFA_scep runtime per registered plan; events in and matches out as term ids. Used by
    ``engine.runtime.native``."""

    def __new__(cls) -> NativeEngine: ...
    def register(self, plan_json: str, callback: object | None = None, kb: object | None = None) -> int:
        """Add a query from its plan JSON; its number. Each GPM runs on the evaluator the plan
        records (ValueError when this core cannot follow it); "callback" GPMs are evaluated
        by ``callback(name, uid, mu, base, start_ns, taken) -> [pairs]``; GRAPH blocks (their
        variables in the plan's ``graph_vars``) ask ``kb(name, block, bound pairs) ->
        [pairs]`` once per binding and KB version."""
    def kb_changed(self) -> None:
        """A new KB version: forget the cached KB rows."""
    def python_gpms(self, query: int) -> list[str]: ...
    def intern(self, ntriples: str) -> int: ...
    def term(self, id: int) -> str: ...
    def term_parts(self, id: int) -> tuple[str, str, str | None, str | None]: ...
    def event(self, stream: str, time: int, seq: int, graph: str | None, triples: list[int],
              dated: bool = False, start: int | None = None) -> NativeEvent:
        """Prepare an event: graph name in N-Triples, triples as a flat list of term ids,
        ``dated``: its timestamp was written as an xsd:dateTime; ``start``: when an event that
        lasts began (ns; None: a point event)."""
    def feed(self, stream: ReplayStream | EventRows, max: int) -> tuple[int, int | None, bool, LocatedError | None]:
        """Feed up to ``max`` events of a replay stream to the queries (fewer once 2^14 released
        matches wait to be taken): (events fed, last time ns, ended, the stream's error)."""
    def feed_live(self, stream: LiveStream, max: int, wait: float,
                  late_output: LateOutput | None = None) -> tuple[
            int, int | None, bool, LocatedError | None, int, LateEvent | None]:
        """Feed the events of a live stream as they arrive: waits up to ``wait`` s for the first,
        then takes those already there (at most ``max``, fewer once 2^14 released matches wait
        to be taken), each judged per query (``configure``'s ``late``; those late for some
        query written to ``late_output``): (events fed to some query, last time ns, ended, the
        first source error, late events fed to no query, the late event that stopped it under
        "error", located by its ``path`` and ``line``)."""
    def event_parts(self, uid: int) -> tuple[str, int, bool, int, tuple[str, str, str | None, str | None] | None, list[int], int] | None:
        """(stream, time ns, dated, seq, graph name's parts, triples as ids, start ns), or None."""
    def forget(self) -> list[int]:
        """uids of the oldest events nothing native holds any more."""
    def configure(self, own_clocks: bool, late: str, compact_min_terms: int | None = None,
                  drop_unread: bool = False, idle_timeout: int | None = None,
                  moment_chunk: int | None = None) -> None:
        """How the engine treats time and memory: each query's clock moves with its own streams
        only (``own_clocks``); what is done with a late event (``late``: "drop", skipped and
        counted by the queries it is late for, or "error", refused whole; ValueError for
        another value); the fewest
        terms at which the dictionary is compacted (None: the core's default); an event on a
        stream no registered query reads is dropped and counted (``drop_unread``); a stream
        silent for ``idle_timeout`` ns of processing time stops holding LATENESS watermarks
        back (None: each query's lateness); once one event has completed ``moment_chunk``
        matches, the rest of its moment is streamed, about that many per take (None: the
        core's default)."""
    def set_now(self, now: int) -> None:
        """The processing time is ``now`` ns (a monotonic clock): stream idleness."""
    def idle_tick(self) -> None:
        """No event for a while: queries with a LATENESS run as far as their watermarks allow."""
    def reads(self, stream: str) -> bool:
        """Whether a registered query reads ``stream``."""
    def read_streams(self) -> list[str]:
        """The streams registered queries read, sorted."""
    def set_output(self, query: int, iri: str, label: str) -> None:
        """``iri`` is query ``query``'s output stream (``label`` names it): never input, and
        a query reading it is fed its results (ValueError for a cycle)."""
    def gates_floor(self) -> int | None:
        """The earliest time (ns) of an event a held query still holds back, or None."""
    def forget_arrivals(self) -> None:
        """Forget when each stream last sent (a snapshot from another process)."""
    def unregister_output(self, iri: str) -> None: ...
    def dropped_unread(self) -> int: ...
    def compaction_due(self) -> bool:
        """Whether the dictionary should be compacted now (decision 38)."""
    def push(self, event: NativeEvent, on_instant: Callable[[int], object] | None = None,
             late_output: LateOutput | None = None) -> tuple[bool, bool, list[int]]:
        """The event to the queries, judged per query: ``LateEvent`` if it is late for one
        under "error"; under "drop" the queries it is late for skip it and count it (and it is
        written to ``late_output``); ``on_instant(time ns)`` at a new instant; those reading
        its stream process it, the others move their clocks to its time unless
        ``own_clocks``, and the queries reading other queries' output run as far as that
        allows. (Whether some query took it, whether it started a new instant, the queries it
        was late for.)"""
    def judge(self, stream: str, time: int, dated: bool, keep_late: bool = False) -> list[int] | None:
        """Before an event at ``time`` ns on ``stream`` is prepared: None to push it, or the
        queries it was late for when it was dropped and counted (late for every reader under
        "drop"; an empty list: unread, under ``drop_unread``); with ``keep_late`` a late event
        is left to ``push`` (it is written to the late output there). ``LateEvent``,
        ``UnreadStream`` or ``OutputStream`` when it is refused."""
    def late_count(self, query: int) -> int:
        """The late events query ``query`` dropped (late for it, under "drop")."""
    def unregister(self, query: int) -> None:
        """Query ``query`` takes no more events and makes none late."""
    def late(self, stream: str, time: int, dated: bool, start: int | None = None) -> str | None:
        """Why an event at ``time`` ns on ``stream`` would be late (``LateEvent``'s message);
        ``OutputStream`` for a query's output stream, ``LastingEvent`` for one lasting from
        ``start`` ns that a query reading the stream takes only as a point."""
    def check_input(self, stream: str) -> None:
        """``OutputStream`` when ``stream`` is a query's output stream (never input)."""
    def release_order(self) -> list[int]:
        """The queries in the order their results are released: those read directly, then
        those reading other queries' output, producers first."""
    def heartbeat(self, time: int) -> bool:
        """No event earlier than ``time`` ns will come: every query moves its clock to it.
        Whether it started a new instant."""
    def engine_clock(self) -> int | None: ...
    def dropped_late(self) -> int:
        """The late events fed to no query (late for every reader, under "drop")."""
    def flushed(self, query: int) -> int | None:
        """Where ``flush`` said no more events come for query ``query`` (ns), or None."""
    def flush(self) -> None:
        """No more events at the current timestamp: every query runs its deferred work."""
    def close(self) -> None:
        """End of input: every query's windows close."""
    def clock(self, query: int) -> int | None: ...
    def moment_pending(self, query: int) -> bool:
        """Whether ``take_matches`` gives query ``query``'s moment a chunk at a time, more to come."""
    def footprint(self, query: int) -> list[tuple[str, int]]: ...
    def runs_created(self, query: int) -> int: ...
    def work(self, query: int) -> list[tuple[str, int]]: ...
    def snapshot(self, queries: list[int]) -> bytes:
        """The dictionary, streams, held events and the states of runtimes ``queries``, in a
        versioned binary format (their released matches must have been taken)."""
    @staticmethod
    def from_snapshot(data: bytes) -> NativeEngine:
        """A fresh engine with a snapshot's dictionary, streams and events; register the same
        plans in the same order, then ``resume``. ValueError for bytes that are not one."""
    def restoring(self) -> int:
        """How many query states the snapshot being restored holds."""
    def resume(self, queries: list[int]) -> None:
        """Load the snapshot's query states into the runtimes ``queries``, in its order."""
    def release(self) -> None:
        """Let go of every query's callbacks: the engine is replaced and only read from (the
        garbage collector also sees them). ValueError from within a callback."""
    def terms(self) -> int:
        """The number of terms in the dictionary."""
    def held(self) -> list[int]:
        """The uids of the events something native still holds, oldest first."""
    def take_matches(self, query: int) -> list[NativeMatch]:
        """The matches released since the last call, in order."""

def gpm_evaluators(plan_json: str) -> list[tuple[str, str, str | None]]:
    """Per GPM of a plan: (name, evaluator, why): "native" (the compiled path's programs),
    "spareval" (the SPARQL path natively; why it is not compiled) or "callback" (the Python
    matcher; why neither). The planner records the answer in the plan (``GpmPlan.evaluator``)
    and the runtime follows it."""

@final
class NativeWriter:
    """One query's results written natively (``spaseq_output``), the one implementation of
    every output format: ``jsonl``, ``json``, ``csv``, ``tsv``, ``table`` or ``trig``, to the
    text file ``out`` (``write(str)``, ``flush()``); or ``arrow``: built as Arrow record
    batches handed to ``out``, a sink (``write_batch(buffers)``, ``finish()``:
    ``spaseq.engine.output.arrow.ArrowSink``; ``thread`` does not apply). The runtime's
    matches without a Python object per match (``write_matches``), or rows given as values
    (``write_row``), not both."""

    def __new__(cls, format: str, out: object, select: list[str] | None,
                 columns: list[str], with_time: bool, binary: bool = False,
                 time_format: str = "input", thread: bool = False,
                 prefixes: list[tuple[str, str]] | None = None, output: str | None = None,
                 template: list[tuple[tuple[str, str], ...]] | None = None,
                 events: str = "full", solutions: bool = False) -> NativeWriter:
        """Rows of ``select`` (None: every bound variable, by name; a match the engine's
        DISTINCT dropped, with no ``number``, is not written);
        ``columns`` the header's variables; ``with_time`` adds ``_time`` and ``_start`` (a
        variable of either name then holds the time); ``binary``: ``out`` takes UTF-8 bytes
        instead of text; ``time_format``: ``input``, ``dateTime`` or ``epoch``
        (docs/decisions.md 43); ``thread`` with a binary ``out`` that has a descriptor: the
        rows are spelled and written on a thread of their own, to a duplicate of the
        descriptor (``out`` is flushed first and must not be written through until
        ``finish`` or ``close``); ``prefixes`` (prefix, namespace), in declaration order,
        shorten the table's IRIs and are TriG's declarations; TriG also takes the query's
        ``output`` stream IRI and, for a CONSTRUCT query, its ``template``: triples of
        ``("var", name)`` (a variable of ``select``), ``("fresh", label)`` (a blank node,
        fresh per result) or ``("term", N-Triples)``; ``solutions``: the table holds SPARQL
        solutions (``spaseq kb query``), with no time or start columns, counted in rows."""
    @property
    def threaded(self) -> bool:
        """Whether the rows are written on a thread of their own."""
    @property
    def rows(self) -> int:
        """Rows written so far (after DISTINCT)."""
    def forget_terms(self) -> None:
        """Forget what is cached by term id (the engine's dictionary was compacted)."""
    def start(self) -> None: ...
    def write_matches(self, engine: NativeEngine, query: int) -> int:
        """Write the rows of the matches ``query`` released since the last call (flushing
        ``out`` when any was written; handed to the writing thread when there is one; an
        ``arrow`` writer hands its sink a record batch only once one is full); the number
        of matches taken (before DISTINCT). OSError when the writing failed."""
    def write_row(self, time: int, start: int, bindings: list[tuple[str, str]],
                  taken: list[tuple[str, str, int, bool, str | None]]) -> None:
        """Write one row given as values (a result found in Python, projected and past
        DISTINCT), flushing ``out`` when anything was written: its match's ``time`` and
        ``start`` (nanoseconds), its ``bindings`` (variable, term in N-Triples) and the
        events it took, first to last (atom, stream IRI, time in ns, stamped with an
        xsd:dateTime, graph name in N-Triples or None). ValueError for a term that is not
        N-Triples; OSError when the writing failed."""
    def finish(self, stopped: bool = False) -> None:
        """Write what follows the rows, flush, and wait for the writing thread to be done;
        ``stopped``: the run was stopped by an error, whose message follows (the table is
        then written only when it has rows, counted as found before the error)."""
    def close(self) -> None:
        """Wait for the writing thread to write the rows handed to it, and stop it (nothing
        written after them); the writing's OSError, if any. An ``arrow`` writer hands over
        the rows it holds and finishes the file (readable only then)."""

def timestamp_ns(value: str, datatype: str, language: str | None = None, direction: str | None = None) -> int:
    """The time a timestamp literal denotes, in nanoseconds (since the epoch for an
    ``xsd:dateTime``/``xsd:dateTimeStamp``, since the stream's origin for a number): its
    lexical form ``value``, ``datatype`` IRI, and ``language`` and ``direction`` (``"ltr"``,
    ``"rtl"``) when it has them. ValueError with the core's message (``values.timestamps``
    raises it as its own) when it is no timestamp."""

def seconds_ns(text: str, shown: object | None = None) -> int:
    """A decimal or scientific number of seconds written as text (around whitespace), exactly,
    in nanoseconds. ValueError when it is no number (INF and NaN are none), 10^18 seconds or
    more, or finer than a nanosecond; the message quotes ``text`` as ``repr`` does, or names
    ``shown`` by its ``repr`` (a caller's number checked through its decimal text)."""

def datetime_ns(text: str, require_timezone: bool = False) -> int:
    """Nanoseconds since the Unix epoch of an ``xsd:dateTime`` lexical form, around whitespace
    (UTC when it has no time zone); ``require_timezone``: an ``xsd:dateTimeStamp``. ValueError
    with the core's message when it is not one, or not a time."""

def datetime_text(ns: int) -> str:
    """A time since the Unix epoch (``ns`` nanoseconds) as an ``xsd:dateTime`` in UTC:
    ``YYYY-MM-DDThh:mm:ss``, the fraction only when nonzero (exact, trailing zeros trimmed),
    ``Z``; the proleptic Gregorian calendar, years of at least four digits, negative ones with
    ``-`` (XSD 1.1: year 0 is 1 BCE)."""

def jsonl_line(time: int, start: int, bindings: list[tuple[str, str]],
               taken: list[tuple[str, str, int, bool, str | None]],
               time_format: str = "input") -> str:
    """The jsonl object of one row given as ``NativeWriter.write_row`` takes it (its bindings
    in the order given), without its line end, times as ``time_format`` says."""

def derived_graph(output: str, k: int, time: int, start: int, dated: bool,
                  bindings: list[tuple[str, str]], taken: list[tuple[str, str, int, bool, str | None]],
                  template: list[tuple[tuple[str, str], ...]] | None = None) -> tuple[str, str]:
    """The ``k``-th result of the query whose output stream is ``output`` as that stream's
    event: its graph name and its graph in N-Triples, a triple per line: ``template`` (as
    ``NativeWriter`` takes it) instantiated with ``bindings``, or with None the match
    described (times ``dated`` or not, the events ``taken`` as ``write_row`` takes them)."""

def result_name(output: str, k: int) -> str:
    """The graph name of the ``k``-th result of the query whose output stream is ``output``."""

def json_time(ns: int, dated: bool) -> str:
    """A time as the SPARQL 1.1 JSON results term of ``_time``/``_start``: an xsd:dateTime
    literal when ``dated``, else xsd:decimal seconds."""

def json_seconds(ns: int) -> str:
    """A time as the JSON number jsonl writes (exact seconds)."""

def table_time(ns: int) -> str:
    """A time as the table writes it: seconds to the millisecond for small (relative) times,
    ISO 8601 UTC for wall-clock ones."""
