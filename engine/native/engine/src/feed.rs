//! The loops that feed a stream to every query without a host object per event: a replay
//! stream's events in its order, a live stream's as they arrive (late ones judged against
//! the clocks of the queries reading their stream). Both return early once
//! `PENDING_MATCHES` released matches wait, so that they are written and dropped.

use crate::{Engine, Host, HostFailed};
use spaseq_io::stream::live::Next;
use spaseq_io::stream::{StreamError, StreamEvent};

/// What a feed call did.
#[derive(Debug, Default)]
pub struct Fed {
    /// Events fed to the queries.
    pub fed: usize,
    /// The last one's time (ns).
    pub last: Option<i128>,
    /// Whether the stream ended (with its error, if it had one).
    pub ended: bool,
    pub error: Option<StreamError>,
    /// Late events dropped (live streams with `drop_late`).
    pub dropped: usize,
    /// The late event that stopped feeding (live streams without `drop_late`).
    pub late: Option<Late>,
}

/// An event earlier than the clock of a query reading its stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Late {
    pub stream: String,
    pub time: i128,
    pub clock: i128,
}

impl<H: Host> Engine<H> {
    /// Feed up to `max` events of a replay stream (`next` gives each with its stream's
    /// IRI) to the queries: each query reading the event's stream processes it, the others
    /// move their clock. Fewer once `PENDING_MATCHES` matches wait.
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
            let time = e.time_ns;
            self.feed_event(iri, e)?;
            done.fed += 1;
            done.last = Some(time);
            if self.matches_pending() {
                break;
            }
        }
        Ok(done)
    }

    /// Feed a live stream's events as they arrive: `first` (what waiting for one gave),
    /// then those `next` has already, at most `max`: an event never waits for others. An
    /// event earlier than the clock of a query reading its stream is late: dropped and
    /// counted when `drop_late`, else feeding stops before it (`Fed::late`).
    pub fn feed_live<'a>(
        &self,
        first: Next,
        mut next: impl FnMut() -> Next,
        iri: impl Fn(usize) -> &'a str,
        max: usize,
        drop_late: bool,
    ) -> Result<Fed, HostFailed> {
        let mut done = Fed::default();
        let mut arrived = first;
        loop {
            let e = match arrived {
                Next::Idle => break,
                Next::End(error) => {
                    return Ok(Fed {
                        ended: true,
                        error,
                        ..done
                    })
                }
                Next::Event(e, _) => e,
            };
            let stream = iri(e.stream);
            if let Some(clock) = self.late(stream, e.time_ns) {
                if !drop_late {
                    let late = Late {
                        stream: stream.to_owned(),
                        time: e.time_ns,
                        clock,
                    };
                    return Ok(Fed {
                        late: Some(late),
                        ..done
                    });
                }
                done.dropped += 1;
            } else {
                let time = e.time_ns;
                self.feed_event(stream, e)?;
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
