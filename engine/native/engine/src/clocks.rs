//! The engine's clocks and the promises made about time: the engine clock (the latest time
//! an event or a heartbeat brought), the heartbeat's promise (no event earlier than it
//! comes), each query's clock (its own streams' latest time) and flushed instant (no event
//! comes at or before it), and a held query's watermark or limit (`composition`). An event
//! that breaks one of the promises of a query reading its stream is late *for that query*
//! (`Late`): under `LatePolicy::Drop` that query skips it and counts it, the others take it,
//! and an event late for every reader is not fed at all; under `LatePolicy::Error` it is
//! refused whole (decision 64). Every way in (pushed events, live streams) is judged here,
//! and an event starting a new instant is announced to the host here (the knowledge base may
//! switch version then, decision 22).

use crate::{Engine, EngineError, Host, HostFailed, Programs, Stop};
use spaseq_automaton::event::StreamId;
use spaseq_automaton::snapshot::ClockState;
use spaseq_automaton::{QueryRuntime, MOMENT_CHUNK};
use spaseq_output::spell::time_value;
use std::fmt;

/// The dictionary is compacted (`Engine::compaction_due`) when it holds at least this many
/// terms (by default) and twice as many as when it was last rebuilt. 2^18 (issue 29): with
/// 2^20 a stream bringing a new value per event (a sensor's readings) grew the dictionary to
/// a million terms before its first compaction (fire: 144 MB peak at 10^5 events, 258 MB at
/// 10^6); at 2^18, 162 MB and no slower; at 2^16 134 MB but the compactions cost 15% more
/// time.
pub const COMPACT_MIN_TERMS: usize = 1 << 18;

/// How the engine treats time and memory, set by its host once (`Engine::configure`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    /// Each query's clock moves only with its own streams' events and heartbeats, so streams
    /// may be pushed by independent producers (decision 40); otherwise an event moves every
    /// query's clock.
    pub own_clocks: bool,
    /// What is done with a late event (decision 64).
    pub late: LatePolicy,
    /// An event on a stream no registered query reads is dropped and counted rather than
    /// refused (decision 44).
    pub drop_unread: bool,
    /// The fewest terms at which the dictionary is compacted (`COMPACT_MIN_TERMS`).
    pub compact_min_terms: usize,
    /// How long (processing time, ns) a stream may send nothing before it stops holding a
    /// LATENESS watermark back; None: each query's lateness (decision 63).
    pub idle_timeout: Option<i128>,
    /// Once one event has completed this many matches, the rest of its moment is streamed,
    /// about this many matches per take (`MOMENT_CHUNK`; docs/decisions.md 49).
    pub moment_chunk: usize,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            own_clocks: false,
            late: LatePolicy::Drop,
            drop_unread: false,
            compact_min_terms: COMPACT_MIN_TERMS,
            idle_timeout: None,
            moment_chunk: MOMENT_CHUNK,
        }
    }
}

/// What is done with an event late for some query reading its stream (decision 64).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LatePolicy {
    /// Each query it is late for skips it and counts it (`Engine::late_count`); the others
    /// take it. An event late for every reader is fed to none and counted engine-wide
    /// (`ClockState::dropped_late`).
    #[default]
    Drop,
    /// It is refused whole (`Refused::Late`, `Stop::Late`) when it is late for any reader:
    /// nothing of it is applied.
    Error,
}

/// How an event stands against the promises of the queries reading its stream.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Judged {
    /// The queries reading its stream it is late for (by number, ascending).
    pub late_for: Vec<usize>,
    /// The first promise it breaks, in the order the message names one (a held query's,
    /// the heartbeat's, then each other reader's in registration order); None: on time.
    pub first: Option<Late>,
    /// Whether no query reading its stream takes it (late for all of them, or none reads it
    /// and it breaks the heartbeat's promise).
    pub all: bool,
}

/// What to do with an event before it is prepared (`Engine::judge`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Prepare and push it.
    Feed,
    /// Dropped and counted: no registered query reads its stream (`drop_unread`).
    Unread,
    /// Dropped and counted: late for every query reading its stream (these, by number).
    Late(Vec<usize>),
}

/// Which promise a late event breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Promise {
    /// A query reading its stream has processed a later time.
    Processed,
    /// A heartbeat (`advance_to`) said no event earlier than this would come.
    Heartbeat,
    /// `flush()` said no more events would come at this time.
    Flushed,
    /// A query reading another query's output and this stream was run (or flushed) to a
    /// later time (`composition`).
    Composed,
    /// A query with a LATENESS reading this stream was run to its watermark, later than the
    /// event (the event is later than the lateness allows).
    Watermark,
}

/// An event that comes after a promise it breaks: at `time` on `stream` (written as an
/// `xsd:dateTime` when `dated`), against the promise's time `at`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Late {
    pub stream: String,
    pub time: i128,
    pub dated: bool,
    pub promise: Promise,
    pub at: i128,
}

impl fmt::Display for Late {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let spell = |ns: i128| {
            let mut out = String::new();
            time_value(ns, self.dated, &mut out);
            out
        };
        let (time, at, stream) = (spell(self.time), spell(self.at), &self.stream);
        match self.promise {
            Promise::Processed => write!(
                f,
                "event at {time} on <{stream}> is earlier than {at}, already processed on this \
                 query's streams (late event)"
            ),
            Promise::Heartbeat => write!(
                f,
                "event at {time} on <{stream}> is earlier than {at}, which a heartbeat \
                 (advance_to) said no event would precede (late event)"
            ),
            Promise::Flushed => write!(
                f,
                "event at {time} on <{stream}> comes after flush() said no more events would \
                 come at {at} (late event)"
            ),
            Promise::Composed => write!(
                f,
                "event at {time} on <{stream}> comes after a composed query processed (or \
                 flushed) {at} (late event)"
            ),
            Promise::Watermark => write!(
                f,
                "event at {time} on <{stream}> is earlier than {at}, the watermark a query \
                 reading it reached (the latest time seen on its streams minus its LATENESS): \
                 later than its lateness allows (late event)"
            ),
        }
    }
}

impl std::error::Error for Late {}

/// Why an event is not taken as input: it is late, no registered query reads its stream
/// (`read`: the streams they read), or its stream is a query's output (`label` names it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    Late(Late),
    Unread { stream: String, read: Vec<String> },
    Output { stream: String, label: String },
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refused::Late(late) => late.fmt(f),
            Refused::Unread { stream, read } => {
                write!(
                    f,
                    "no registered query reads the stream <{stream}> (the streams read are "
                )?;
                if read.is_empty() {
                    f.write_str("none: no query is registered")?;
                }
                for (i, s) in read.iter().enumerate() {
                    write!(f, "{}<{s}>", if i > 0 { ", " } else { "" })?;
                }
                f.write_str(")")
            }
            Refused::Output { stream, label } => write!(
                f,
                "<{stream}> is the output stream of {label}: its events come from that query, \
                 not from input"
            ),
        }
    }
}

impl std::error::Error for Refused {}

impl<H: Host> Engine<H> {
    /// Set how the engine treats time (before any event; kept by snapshots' hosts).
    pub fn configure(&self, settings: Settings) {
        let settings = Settings {
            moment_chunk: settings.moment_chunk.max(1), // a chunk of 0 would never end
            ..settings
        };
        self.settings.set(settings);
        for rt in self.queries.borrow_mut().iter_mut() {
            rt.moment_chunk = settings.moment_chunk;
        }
    }

    pub fn settings(&self) -> Settings {
        self.settings.get()
    }

    /// The engine's clocks.
    pub fn clocks(&self) -> ClockState {
        self.clocks.get()
    }

    /// The engine clock (ns), None before any event or heartbeat.
    pub fn engine_clock(&self) -> Option<i128> {
        let clock = self.clocks.get().clock;
        (clock != i128::MIN).then_some(clock)
    }

    /// Why an event at `time` on `stream` would be refused as late under
    /// `LatePolicy::Error`, or None: the first promise it breaks (`Judged::first`).
    pub fn late(&self, stream: &str, time: i128, dated: bool) -> Option<Late> {
        self.judge_time(stream, time, dated).first
    }

    /// How an event at `time` on `stream` stands against the promises of the queries reading
    /// it (`Judged`). A stream no query has read is judged by the heartbeat's promise only.
    pub fn judge_time(&self, stream: &str, time: i128, dated: bool) -> Judged {
        let id = self.streams.borrow().get(stream);
        match id {
            Some(id) => self.judged(id, time, dated),
            None => {
                let first = self.broken_heartbeat(time).map(|at| Late {
                    stream: stream.to_owned(),
                    time,
                    dated,
                    promise: Promise::Heartbeat,
                    at,
                });
                Judged {
                    late_for: Vec::new(),
                    all: first.is_some(),
                    first,
                }
            }
        }
    }

    /// The heartbeat's time if an event at `time` breaks its promise.
    fn broken_heartbeat(&self, time: i128) -> Option<i128> {
        let heartbeat = self.clocks.get().heartbeat;
        (time < heartbeat).then_some(heartbeat)
    }

    /// What to do with an event at `time` on `stream` before it is prepared (`Verdict`), or
    /// Err why it is refused. A query's output stream is never input; an event on a stream no
    /// registered query reads is dropped and counted under `drop_unread`; one late for every
    /// reader is dropped and counted under `LatePolicy::Drop` unless `keep_late` (the host
    /// writes late events: it is fed to `push` then, which drops it once prepared), and
    /// refused under `LatePolicy::Error` when late for any. Only an event at or before the
    /// engine clock can be late (every promise is at or before it).
    pub fn judge(
        &self,
        stream: &str,
        time: i128,
        dated: bool,
        keep_late: bool,
    ) -> Result<Verdict, Refused> {
        if let Some(refused) = self.output_refusal(stream) {
            return Err(refused);
        }
        let id = self.streams.borrow().get(stream);
        let Some(id) = id.filter(|&id| self.is_read(id)) else {
            if self.settings.get().drop_unread {
                self.count(|c| &mut c.dropped_unread);
                return Ok(Verdict::Unread);
            }
            return Err(Refused::Unread {
                stream: stream.to_owned(),
                read: self.read_streams(),
            });
        };
        if time > self.clocks.get().clock {
            return Ok(Verdict::Feed);
        }
        let judged = self.judged(id, time, dated);
        match self.settings.get().late {
            LatePolicy::Error => match judged.first {
                Some(late) => Err(Refused::Late(late)),
                None => Ok(Verdict::Feed),
            },
            LatePolicy::Drop if judged.all && !keep_late => {
                self.count_late(&judged);
                Ok(Verdict::Late(judged.late_for))
            }
            LatePolicy::Drop => Ok(Verdict::Feed),
        }
    }

    /// `Refused::Output` when `stream` is a registered query's output stream: its events come
    /// from that query, never from input (every way in asks: pushes, `late`, a run's inputs).
    pub fn output_refusal(&self, stream: &str) -> Option<Refused> {
        let outputs = self.outputs.borrow();
        let label = outputs.get(stream)?;
        Some(Refused::Output {
            stream: stream.to_owned(),
            label: label.clone(),
        })
    }

    /// `f` over the registered (not retired) queries reading stream `id`, with their numbers.
    fn readers<T>(
        &self,
        id: StreamId,
        f: impl FnOnce(&mut dyn Iterator<Item = (usize, &QueryRuntime<Programs<H>>)>) -> T,
    ) -> T {
        let runtimes = self.queries.borrow();
        let retired = self.retired.borrow();
        let mut readers = runtimes
            .iter()
            .enumerate()
            .zip(retired.iter())
            .filter(|((_, rt), retired)| !**retired && rt.reads(id))
            .map(|(rt, _)| rt);
        f(&mut readers)
    }

    /// Whether a registered query reads stream `id`.
    fn is_read(&self, id: StreamId) -> bool {
        self.readers(id, |readers| readers.next().is_some())
    }

    /// Whether a registered query reads the stream `stream`.
    pub fn reads(&self, stream: &str) -> bool {
        let id = self.streams.borrow().get(stream);
        id.is_some_and(|id| self.is_read(id))
    }

    /// The streams registered queries read, sorted.
    pub fn read_streams(&self) -> Vec<String> {
        let streams = self.streams.borrow();
        let mut read: Vec<String> = (0..streams.len() as StreamId)
            .filter(|&id| self.is_read(id))
            .map(|id| streams.iri(id).to_owned())
            .collect();
        read.sort();
        read
    }

    /// An event at `time` on stream `stream` judged by each query reading it: a held query
    /// (`composition`) by the time it was run or flushed to, every reader by the
    /// heartbeat's promise, each other one by its clock and flushed instant.
    pub(crate) fn judged(&self, stream: StreamId, time: i128, dated: bool) -> Judged {
        let broken = |promise, at| Late {
            stream: self.streams.borrow().iri(stream).to_owned(),
            time,
            dated,
            promise,
            at,
        };
        let held = self.composed_late(stream, time);
        let heartbeat = self.broken_heartbeat(time);
        let composition = self.composition.borrow();
        let mut late_for = Vec::new();
        let mut first_own: Option<(Promise, i128)> = None;
        let readers = self.readers(stream, |readers| {
            let mut count = 0;
            for (query, rt) in readers {
                count += 1;
                if composition.gated(query) {
                    if heartbeat.is_some() || held.iter().any(|h| h.0 == query) {
                        late_for.push(query);
                    }
                    continue;
                }
                let own = if rt.clock != i128::MIN && time < rt.clock {
                    Some((Promise::Processed, rt.clock))
                } else if rt.flushed != i128::MIN && time <= rt.flushed {
                    Some((Promise::Flushed, rt.flushed))
                } else {
                    None
                };
                if heartbeat.is_some() || own.is_some() {
                    late_for.push(query);
                }
                first_own = first_own.or(own);
            }
            count
        });
        let first = match (held.first(), heartbeat) {
            (Some(&(_, at, composed)), _) => {
                let promise = if composed {
                    Promise::Composed
                } else {
                    Promise::Watermark
                };
                Some(broken(promise, at))
            }
            (None, Some(at)) => Some(broken(Promise::Heartbeat, at)),
            (None, None) => first_own.map(|(promise, at)| broken(promise, at)),
        };
        Judged {
            all: first.is_some() && late_for.len() == readers,
            late_for,
            first,
        }
    }

    /// A late event dropped under `LatePolicy::Drop`: each query it is late for counts it,
    /// and the engine too when it is fed to none.
    pub(crate) fn count_late(&self, judged: &Judged) {
        let mut late = self.late.borrow_mut();
        for &q in &judged.late_for {
            late[q] += 1;
        }
        if judged.all {
            self.count(|c| &mut c.dropped_late);
        }
    }

    /// The late events query `query` dropped (it was late for them, under
    /// `LatePolicy::Drop`).
    pub fn late_count(&self, query: usize) -> Result<u64, EngineError> {
        self.late
            .borrow()
            .get(query)
            .copied()
            .ok_or(EngineError::NoQuery(query))
    }

    /// One more of the events `counter` counts.
    fn count(&self, counter: impl FnOnce(&mut ClockState) -> &mut u64) {
        let mut clocks = self.clocks.get();
        *counter(&mut clocks) += 1;
        self.clocks.set(clocks);
    }

    /// Move the engine clock to `time` (an event's or a heartbeat's); whether it moved.
    pub(crate) fn tick(&self, time: i128) -> bool {
        let mut clocks = self.clocks.get();
        let moved = time > clocks.clock;
        if moved {
            clocks.clock = time;
            self.clocks.set(clocks);
        }
        moved
    }

    /// Before the first event of a new instant at `time` is fed to `queries`: the queries
    /// holding instants (lazy conjunction) complete theirs on the knowledge base version
    /// their events arrived under, then the host hears of the instant (`on_instant`: the
    /// KB may switch version, decision 22).
    pub(crate) fn new_instant<E>(
        &self,
        stream: StreamId,
        time: i128,
        queries: &[usize],
        on_instant: impl FnOnce(i128) -> Result<(), E>,
    ) -> Result<(), Stop<E>> {
        let own_clocks = self.settings.get().own_clocks;
        {
            let mut runtimes = self.queries.borrow_mut();
            if queries.iter().any(|&q| runtimes[q].defers_instants()) {
                for &query in queries {
                    let rt = &mut runtimes[query];
                    if (!own_clocks || rt.reads(stream)) && time > rt.clock {
                        rt.advance_time(time, None, &self.dict);
                        if rt.gpms().host.failed() {
                            return Err(Stop::Host(HostFailed { query }));
                        }
                    }
                }
            }
        }
        on_instant(time).map_err(Stop::Instant)
    }

    /// A heartbeat: no event earlier than `time` will come. Every query moves its clock to
    /// it (windows may close), the gated ones as far as what they read allows; whether it
    /// started a new instant.
    pub fn heartbeat(&self, time: i128) -> Result<bool, HostFailed> {
        let mut clocks = self.clocks.get();
        clocks.heartbeat = clocks.heartbeat.max(time);
        self.clocks.set(clocks);
        let moved = self.tick(time);
        self.every_query(|rt, dict| rt.advance_time(time, None, dict))?;
        self.pump(self.clocks.get().clock, false)?;
        Ok(moved)
    }

    /// Whether the dictionary should be compacted now (decision 38): it holds at least
    /// `compact_min_terms` terms and twice as many as when this engine was made from a
    /// snapshot (which holds only the terms its state refers to), so that on an endless
    /// stream of fresh terms memory follows what the windows hold. The host compacts by
    /// restoring a snapshot of the engine into a new one.
    pub fn compaction_due(&self) -> bool {
        self.dict.len()
            >= self
                .compact_at
                .get()
                .max(self.settings.get().compact_min_terms)
    }

    /// Query `query`'s flushed instant (ns), None if it was never flushed.
    pub fn flushed(&self, query: usize) -> Result<Option<i128>, EngineError> {
        self.query(query, |rt| (rt.flushed != i128::MIN).then_some(rt.flushed))
    }
}
