//! A live source fed whole messages by its owner (MQTT, issue 30; docs/decisions.md 74): an
//! `Inlet` of a `LiveStream`, whose events are merged with the other sources' in arrival order
//! and fed by the same loop.
//!
//! Each message is one replay batch, TriG or N-Quads, read whole by the replay reader's rules
//! (`replay::read_graphs`: one event per named graph, timestamped in the default graph, as a
//! replay file or a `POST /events` body is): its events are sent at once, in time order, each
//! with the line its owner gives (the message's number). A message that cannot be read is
//! refused whole, its error returned to the sender, and the source goes on: a bad message
//! never ends the stream. The source ends when it is closed (or dropped).

use super::live::{LiveEvent, Message};
use crate::replay::{self, Format, ReplayError};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{SyncSender, TrySendError};
use std::sync::Arc;
use std::time::Duration;

/// How long a message waits before it tries again when the stream's channel is full.
const FULL: Duration = Duration::from_micros(200);

/// One source of a `LiveStream` fed messages (`send`) until it is closed (`close`, or
/// dropped); made by `LiveStream::with_inlets`. Both take `&self`: a message may be being
/// sent on one thread while another closes the source (the message's rest is then dropped).
pub struct Inlet {
    index: usize,
    sender: SyncSender<Message>,
    predicate: String,
    closed: AtomicBool,
    /// The stream's count of closed inlets (closing never waits on a full channel).
    stream_closed: Arc<AtomicUsize>,
}

impl Inlet {
    pub(super) fn new(
        index: usize,
        sender: SyncSender<Message>,
        stream_closed: Arc<AtomicUsize>,
        predicate: &str,
    ) -> Self {
        Inlet {
            index,
            sender,
            predicate: predicate.to_owned(),
            closed: AtomicBool::new(false),
            stream_closed,
        }
    }

    /// Read one message and send its events (waiting while the stream's channel is full),
    /// each with `line` as the line its graph started on (the owner's number for the
    /// message): how many it held. A message that cannot be read sends nothing and is its
    /// error (`LINE:COLUMN` in the message); after `close`, an error too.
    pub fn send(&self, message: &[u8], format: Format, line: u64) -> Result<usize, ReplayError> {
        if self.is_closed() {
            return Err(ReplayError {
                line: None,
                column: None,
                message: "the source is closed".to_owned(),
            });
        }
        let mut order = replay::read_graphs(message, format, &self.predicate, |t| t)?;
        order.sort_by_key(|(when, ..)| when.time_ns); // stable: ties as they appeared
        let count = order.len();
        for (when, graph, triples) in order {
            let mut event = Message::Event(
                self.index,
                LiveEvent {
                    graph,
                    triples,
                    time_ns: when.time_ns,
                    start_ns: when.start_ns,
                    dated: when.dated,
                    line,
                },
            );
            loop {
                match self.sender.try_send(event) {
                    Ok(()) => break,
                    Err(TrySendError::Full(back)) if !self.is_closed() => {
                        event = back;
                        std::thread::sleep(FULL);
                    }
                    // closed meanwhile, or the stream is gone: the rest is not read any more
                    Err(_) => return Ok(count),
                }
            }
        }
        Ok(count)
    }

    /// The end of this source (nothing more is sent); a second call does nothing.
    pub fn close(&self) {
        if !self.closed.swap(true, Ordering::AcqRel) {
            self.stream_closed.fetch_add(1, Ordering::AcqRel);
        }
    }

    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }
}

impl Drop for Inlet {
    fn drop(&mut self) {
        self.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stream::live::{LiveInput, LiveStream, Next};
    use std::time::Duration;

    const PROV: &str = "http://www.w3.org/ns/prov#generatedAtTime";

    fn next(stream: &mut LiveStream) -> Next {
        stream.next(Some(Duration::from_secs(5)))
    }

    /// Messages become events in arrival order, each message's in time order, numbered by
    /// the line given; a bad message is refused whole and the source reads on; the stream
    /// ends when its inlets are closed.
    #[test]
    fn messages_are_events_and_bad_ones_are_refused() {
        let labels = ["sensors/trig".to_owned(), "sensors/nq".to_owned()];
        let (mut stream, mut inlets) =
            LiveStream::with_inlets(&[] as &[LiveInput], &labels, PROV).unwrap();
        let nquads = inlets.pop().unwrap();
        let trig = inlets.pop().unwrap();
        let message = b"@prefix : <http://x/> .\n@prefix prov: <http://www.w3.org/ns/prov#> .\n\
                        :g2 { :a :p 2 } :g2 prov:generatedAtTime 2 .\n\
                        :g1 { :a :p 1 } :g1 prov:generatedAtTime 1 .\n";
        assert_eq!(trig.send(message, Format::TriG, 1), Ok(2));
        let bad = nquads.send(
            b"<http://x/a> <http://x/p> \"1\" <http://x/g3> .\n",
            Format::NQuads,
            1,
        );
        assert!(bad.unwrap_err().message.contains("has no timestamp"));
        let quad = format!(
            "<http://x/a> <http://x/p> \"3\" <http://x/g3> .\n<http://x/g3> <{PROV}> \"3\"^^<http://www.w3.org/2001/XMLSchema#decimal> .\n"
        );
        assert_eq!(nquads.send(quad.as_bytes(), Format::NQuads, 2), Ok(1));
        let mut seen = Vec::new();
        for _ in 0..3 {
            match next(&mut stream) {
                Next::Event(e, line) => seen.push((e.stream, e.seq, e.graph.to_string(), line)),
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(
            seen,
            vec![
                (0, 1, "<http://x/g1>".to_owned(), 1),
                (0, 2, "<http://x/g2>".to_owned(), 1),
                (1, 3, "<http://x/g3>".to_owned(), 2),
            ]
        );
        assert_eq!(stream.label(1), "sensors/nq");
        trig.close();
        assert!(trig.send(message, Format::TriG, 2).is_err());
        assert!(matches!(stream.next(Some(Duration::ZERO)), Next::Idle));
        let late = format!(
            "<http://x/a> <http://x/p> \"4\" <http://x/g4> .\n<http://x/g4> <{PROV}> \"4\"^^<http://www.w3.org/2001/XMLSchema#decimal> .\n"
        );
        assert_eq!(nquads.send(late.as_bytes(), Format::NQuads, 3), Ok(1));
        drop(nquads); // closed: what it sent before is still taken, then the end
        assert!(matches!(stream.next(None), Next::Event(_, 3)));
        assert!(matches!(next(&mut stream), Next::End(None)));
    }
}
