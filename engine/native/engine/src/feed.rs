//! The loops that feed a stream to every query without a host object per event: a replay
//! stream's events in its order, a live stream's as they arrive (each judged against the
//! promises about time of the queries reading its stream, `clocks.rs`, and fed to those it
//! is on time for). Both return early once `PENDING_MATCHES` released matches wait, so that
//! they are written and dropped.

use crate::{Engine, EngineError, Host, HostFailed, Judged, LastingEvent, Late, LatePolicy};
use spaseq_automaton::event::StreamId;
use spaseq_io::replay::ReplayError;
use spaseq_io::stream::live::Next;
use spaseq_io::stream::{StreamError, StreamEvent};

/// Why `Engine::feed_event` did not feed an event: a query's host failed while it processed
/// it, or the engine does not take it (`Refused`, fed to no query).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FeedError {
    Host(HostFailed),
    Refused(EngineError),
}

impl From<HostFailed> for FeedError {
    fn from(failed: HostFailed) -> Self {
        FeedError::Host(failed)
    }
}

impl std::fmt::Display for FeedError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FeedError::Host(failed) => write!(f, "the host of query {} failed", failed.query),
            FeedError::Refused(why) => why.fmt(f),
        }
    }
}

impl std::error::Error for FeedError {}

impl<H: Host> Engine<H> {
    /// Why the engine does not take event `e` of stream `iri`, if it does not: it lasts and
    /// a query reading its stream takes point events only (`Engine::point_reader`).
    pub(crate) fn lasting(&self, iri: &str, e: &StreamEvent) -> Option<EngineError> {
        self.lasting_refusal(
            iri,
            || e.graph.to_string(),
            (e.start_ns, e.time_ns, e.dated),
        )
    }

    /// Why the engine would not take an event of stream `iri` over `(start, time, dated)`,
    /// if it would not (`lasting`; asked before a batch is applied); `graph` names the event
    /// in the message, spelled only for a refusal.
    pub fn lasting_refusal(
        &self,
        iri: &str,
        graph: impl FnOnce() -> String,
        when: (i128, i128, bool),
    ) -> Option<EngineError> {
        if when.0 == when.1 {
            return None; // a point: no stream looked up, no name spelled
        }
        let stream = self.streams.borrow().get(iri)?;
        self.lasting_at(stream, graph, when)
    }

    /// `lasting_refusal` for an event that lasts, its stream known by id.
    pub(crate) fn lasting_at(
        &self,
        stream: StreamId,
        graph: impl FnOnce() -> String,
        (start_ns, time_ns, dated): (i128, i128, bool),
    ) -> Option<EngineError> {
        let query = self.point_reader(stream)?;
        Some(EngineError::Lasting(Box::new(LastingEvent {
            query,
            label: self.query_label(query),
            stream: self.streams.borrow().iri(stream).to_owned(),
            graph: graph(),
            start_ns,
            time_ns,
            dated,
        })))
    }

    /// The first registered query reading `stream` that was planned for point events only
    /// (`EngineOptions.intervals` off): fed an event that lasts, it would answer wrongly
    /// (docs/decisions.md 71).
    pub(crate) fn point_reader(&self, stream: StreamId) -> Option<usize> {
        let retired = self.retired.borrow();
        self.queries
            .borrow()
            .iter()
            .enumerate()
            .position(|(q, rt)| !retired[q] && rt.reads(stream) && !rt.takes_lasting())
    }
}

/// A feed stopped by an event the engine refused: the stream's error, so that the caller
/// reports it as it reports a file's (`Fed::error`), at the event's source (`Fed::source`,
/// which the caller names) and, for live input, the line its graph started on.
fn refused(done: Fed, why: EngineError, source: usize, line: Option<u64>) -> Fed {
    let error = ReplayError {
        line,
        column: None,
        message: why.to_string(),
    };
    Fed {
        ended: true,
        error: Some(StreamError { path: None, error }),
        source: Some(source),
        ..done
    }
}

/// What a feed call did.
#[derive(Debug, Default)]
pub struct Fed {
    /// Events fed to the queries (to some of them, when late for others).
    pub fed: usize,
    /// The last one's time (ns).
    pub last: Option<i128>,
    /// Whether the stream ended (with its error, if it had one).
    pub ended: bool,
    pub error: Option<StreamError>,
    /// The source (the stream's index: a replay file, a live input) of the event the
    /// engine refused, when `error` is that refusal: its `path` is left for the caller.
    pub source: Option<usize>,
    /// Late events fed to no query (late for every reader, `LatePolicy::Drop`).
    pub dropped: usize,
    /// The late event that stopped feeding (live streams, `LatePolicy::Error`), with its
    /// source (the live stream's index) and the line its graph started on there.
    pub refused: Option<(Late, usize, u64)>,
}

/// A live event late for some queries reading its stream (`late_for`, by number), which
/// skipped it: its stream's IRI and the event as read, told to the host as it is dropped
/// (`feed_live`'s `on_late`: what a late-event output writes).
#[derive(Debug, Clone, Copy)]
pub struct Dropped<'e> {
    pub stream: &'e str,
    pub event: &'e StreamEvent,
    pub late_for: &'e [usize],
}

impl<H: Host> Engine<H> {
    /// Feed up to `max` events of a replay stream (`next` gives each with its stream's
    /// IRI) to the queries: each query reading the event's stream processes it, the others
    /// move their clock. Fewer once `PENDING_MATCHES` matches wait. An event that lasts ends
    /// the feed, fed to none, with its refusal as the stream's error.
    pub fn feed<'a>(
        &self,
        mut next: impl FnMut() -> Option<Result<(&'a str, StreamEvent), StreamError>>,
        max: usize,
    ) -> Result<Fed, HostFailed> {
        let mut done = Fed::default();
        while done.fed < max {
            let (iri, e) = match next() {
                None => {
                    return Ok(Fed {
                        ended: true,
                        ..done
                    })
                }
                Some(Err(e)) => {
                    return Ok(Fed {
                        ended: true,
                        error: Some(e),
                        ..done
                    })
                }
                Some(Ok(event)) => event,
            };
            let (time, source) = (e.time_ns, e.stream);
            match self.feed_event(iri, e) {
                Ok(()) => {}
                Err(FeedError::Host(failed)) => return Err(failed),
                Err(FeedError::Refused(why)) => return Ok(refused(done, why, source, None)),
            }
            done.fed += 1;
            done.last = Some(time);
            if self.matches_pending() {
                break;
            }
        }
        Ok(done)
    }

    /// Feed a live stream's events as they arrive: `first` (what waiting for one gave),
    /// then those `next` has already, at most `max`: an event never waits for others. Each is
    /// judged (`clocks`): under `LatePolicy::Error` feeding stops before a late one
    /// (`Fed::refused`); under `LatePolicy::Drop` it is fed to the queries it is on time for
    /// and counted by the others, and `on_late` hears of it first (so that the host writes
    /// it even when a query's host fails later in the batch). An event that lasts ends the
    /// feed before it is judged, as in `feed`.
    pub fn feed_live<'a>(
        &self,
        first: Next,
        mut next: impl FnMut() -> Next,
        iri: impl Fn(usize) -> &'a str,
        max: usize,
        mut on_late: impl FnMut(Dropped<'_>),
    ) -> Result<Fed, HostFailed> {
        let mut done = Fed::default();
        let mut arrived = first;
        loop {
            let (e, line) = match arrived {
                Next::Idle => break,
                Next::End(error) => {
                    return Ok(Fed {
                        ended: true,
                        error,
                        ..done
                    })
                }
                Next::Event(e, line) => (e, line),
            };
            let stream = iri(e.stream);
            if let Some(why) = self.lasting(stream, &e) {
                return Ok(refused(done, why, e.stream, Some(line)));
            }
            let judged = if e.time_ns <= self.clocks.get().clock {
                self.judge_time(stream, e.time_ns, e.dated)
            } else {
                Judged::default() // only an event at or before the engine clock can be late
            };
            if let Some(late) = &judged.first {
                if self.settings.get().late == LatePolicy::Error {
                    return Ok(Fed {
                        refused: Some((late.clone(), e.stream, line)),
                        ..done
                    });
                }
                self.count_late(&judged);
                on_late(Dropped {
                    stream,
                    event: &e,
                    late_for: &judged.late_for,
                });
            }
            if judged.all {
                done.dropped += 1;
            } else {
                let (time, source) = (e.time_ns, e.stream);
                match self.feed_event_but(stream, e, &judged.late_for) {
                    Ok(()) => {}
                    Err(FeedError::Host(failed)) => return Err(failed),
                    Err(FeedError::Refused(why)) => {
                        return Ok(refused(done, why, source, Some(line)))
                    }
                }
                done.fed += 1;
                done.last = Some(time);
            }
            if done.fed + done.dropped >= max || self.matches_pending() {
                break;
            }
            arrived = next();
        }
        Ok(done)
    }
}
