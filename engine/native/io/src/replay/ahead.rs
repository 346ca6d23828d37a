//! A scanned reading run on a thread of its own (`Graphs::scanned_ahead`): the N-Quads lines
//! or TriG statements read and checked there, most of a replay file's first pass, while the caller assembles
//! graphs and judges the file; what crosses between the two (`Scanned`).

use super::{error, Piece, Quads, ReplayError, Role, Sketch};
use oxrdf::{NamedNode, Quad, Term};
use std::io::BufRead;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::Arc;

/// A quad of a scanned reading as the reading thread hands it over (`Graphs::scanned_ahead`):
/// the whole quad while the assembler keeps triples, else what `Sketch` says of it, owned,
/// with a named graph's quad on the line after one of the same graph as `Same`.
pub(super) enum Scanned {
    Quad(Quad),
    Named(Term),
    Same,
    Stamp(Role, Term, Term),
    Other,
}

/// Quads handed over per message, and messages the reading thread may be ahead by.
const AHEAD_BATCH: usize = 1024;
const AHEAD_DEPTH: usize = 4;

enum AheadMessage<R> {
    Quads(Vec<Scanned>),
    /// The reading ended (with its error, if any): the reading itself, handed back.
    End(Option<ReplayError>, Box<Quads<R>>),
}

/// A scanned reading run on a thread of its own: the text read and checked there (most of a
/// first pass), the graphs assembled by the caller. Whether the assembler keeps triples is
/// shared (`keep`): once it stops, the thread hands over sketches instead of quads.
pub(super) struct Ahead<R> {
    receiver: Receiver<AheadMessage<R>>,
    batch: std::vec::IntoIter<Scanned>,
    pub(super) keep: Arc<AtomicBool>,
    end: Option<(Option<ReplayError>, Box<Quads<R>>)>,
}

impl<R: BufRead + Send + 'static> Ahead<R> {
    pub(super) fn spawn(mut quads: Quads<R>, time: NamedNode) -> Self {
        let (sender, receiver) = sync_channel(AHEAD_DEPTH);
        let keep = Arc::new(AtomicBool::new(true));
        let keeping = keep.clone();
        let spawned = std::thread::Builder::new()
            .name("spaseq-scan".to_owned())
            .spawn(move || {
                // the graph of the line before, if it named one (kind, name): a line of the
                // same graph is handed over as `Same`, its name not built again
                let mut last: Option<(bool, String)> = None;
                loop {
                    let mut items = Vec::with_capacity(AHEAD_BATCH);
                    let mut end = None;
                    while items.len() < AHEAD_BATCH {
                        let next = if keeping.load(Ordering::Relaxed) {
                            last = None;
                            quads
                                .scan_next()
                                .map(|r| r.map(|(quad, _)| Scanned::Quad(quad)))
                        } else {
                            quads
                                .next_sketch(&time)
                                .map(|r| r.map(|(sketch, _)| own(sketch, &mut last)))
                        };
                        match next {
                            Some(Ok(item)) => items.push(item),
                            Some(Err(e)) => {
                                end = Some(Some(e));
                                break;
                            }
                            None => {
                                end = Some(None);
                                break;
                            }
                        }
                    }
                    if !items.is_empty() && sender.send(AheadMessage::Quads(items)).is_err() {
                        return; // the caller is gone
                    }
                    if let Some(error) = end {
                        let _ = sender.send(AheadMessage::End(error, Box::new(quads)));
                        return;
                    }
                }
            });
        // without a thread (none could start) the sender is gone with it: the reading then
        // ends at once as the failure of a reader thread that stopped
        drop(spawned);
        Ahead {
            receiver,
            batch: Vec::new().into_iter(),
            keep,
            end: None,
        }
    }
}

impl<R> Ahead<R> {
    /// The next quad read ahead; None at the end (then `finish`).
    pub(super) fn next(&mut self) -> Option<Scanned> {
        loop {
            if let Some(item) = self.batch.next() {
                return Some(item);
            }
            if self.end.is_some() {
                return None;
            }
            match self.receiver.recv() {
                Ok(AheadMessage::Quads(items)) => self.batch = items.into_iter(),
                Ok(AheadMessage::End(error, quads)) => self.end = Some((error, quads)),
                Err(_) => return None, // the thread stopped without a word (it panicked)
            }
        }
    }

    /// The reading's error and the reading itself (None if the thread stopped early).
    pub(super) fn finish(self) -> (Option<ReplayError>, Option<Quads<R>>) {
        match self.end {
            Some((error, quads)) => (error, Some(*quads)),
            None => (Some(error("the reader thread stopped")), None),
        }
    }
}

/// A sketch owned (`Scanned`), `last` the graph of the line before.
fn own(sketch: Sketch<'_>, last: &mut Option<(bool, String)>) -> Scanned {
    match sketch {
        Sketch::Named(piece) => {
            let (blank, text) = match piece {
                Piece::Iri(iri) => (false, iri),
                Piece::Blank(label) => (true, label),
                Piece::Literal(..) => unreachable!("a graph name is never a literal"),
            };
            if last.as_ref().is_some_and(|(b, t)| *b == blank && t == text) {
                return Scanned::Same;
            }
            match last {
                Some((b, t)) => {
                    *b = blank;
                    t.clear();
                    t.push_str(text);
                }
                None => *last = Some((blank, text.to_owned())),
            }
            Scanned::Named(piece.term())
        }
        Sketch::Stamp(role, name, value) => {
            *last = None;
            Scanned::Stamp(role, name, value)
        }
        Sketch::Other => {
            *last = None;
            Scanned::Other
        }
    }
}
