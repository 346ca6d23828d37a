//! The loops that feed a stream to every query without a host object per event: a replay
//! stream's events in its order, a live stream's as they arrive (each judged against the
//! promises about time, `clocks.rs`: the clocks of the queries reading its stream, the
//! heartbeat, their flushed instants). Both return early once
//! `PENDING_MATCHES` released matches wait, so that they are written and dropped.

use crate::{Engine, Host, HostFailed, Late};
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
    /// Late events dropped (live streams under `drop_late`).
    pub dropped: usize,
    /// The late event that stopped feeding (live streams, unless `drop_late`).
    pub late: Option<Late>,
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
    /// then those `next` has already, at most `max`: an event never waits for others. A
    /// late event (`late`) is dropped and counted under `drop_late`, else feeding stops
    /// before it (`Fed::late`).
    pub fn feed_live<'a>(
        &self,
        first: Next,
        mut next: impl FnMut() -> Next,
        iri: impl Fn(usize) -> &'a str,
        max: usize,
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
            if let Some(late) = self.late(stream, e.time_ns, e.dated) {
                if let Err(late) = self.refuse(late) {
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
