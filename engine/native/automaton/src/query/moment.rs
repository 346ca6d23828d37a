//! A moment of many matches, generated in the match order as they are taken (docs/decisions.md
//! 49): once an event has completed a chunk of matches (`moment_chunk`), the runs it still
//! has to offer that can only complete a match with it (the last step, `:`, nothing pending)
//! are ordered by where their matches stand in the match order (`CompletionKey`), and the
//! matches made so far with them; the event is then offered to them a chunk of about
//! `moment_chunk` matches at a time, each chunk released before the next is made. Memory
//! then follows the runs (the state, one key each) and the event (a run's matches on it come
//! in one chunk), not the moment's matches: a moment of millions of matches is written as it
//! comes. A moment of fewer matches costs nothing more than before.
//!
//! It holds because a `:` run offered an event is unchanged by the offer (whether it takes
//! it into a complete match or not), so offering the event later, or in another order,
//! changes nothing but the order the matches are made in; every match of one run on the
//! event has the run's key, and the matches and runs of one key go into the same chunk,
//! whose batch `sort_batch` orders by the spelling tie-break (and, for matches it cannot
//! tell apart, by the order the runs were offered in, which the chunks keep). A key that does
//! not pack leaves the moment to be released whole, as before. Every other use of the
//! runtime (an event, the clock, a flush, the end, a reader of the query's output) finishes
//! the moment first (`finish_moment`), so it never sees the moment half made; and the plans
//! streamed call no host while a chunk is made, as a take could not report its failure.

use super::{QueryRuntime, RunKey};
use crate::event::EventRef;
use crate::gpms::GpmEval;
use crate::order::{CompletionKey, MatchRecord};
use spaseq_io::dictionary::Dictionary;
use std::collections::VecDeque;
use std::rc::Rc;

/// The matches a streamed moment releases per take: `QueryRuntime::moment_chunk`'s default.
pub const MOMENT_CHUNK: usize = 1 << 12;

/// Keyed runs kept for the next moment while there are at most this many (a buffer, not
/// state: a huge moment's is freed).
const SPARE_KEPT: usize = 1 << 14;

/// A run that can only complete a match with the event, keyed by where its matches stand in
/// the match order, and its place among the event's candidates (runs of equal keys keep that
/// order, as the whole moment's stable sort keeps the order they were offered in).
pub(super) type Final = (CompletionKey, u32, RunKey);

/// A moment being streamed: its event (with its prepared index and position), the matches
/// made before it was (keyed, in the match order but for ties) and the runs still to offer it,
/// in the match order (`next` onwards).
pub(super) struct Moment<I> {
    event: EventRef,
    index: Rc<I>,
    pos: i64,
    made: VecDeque<(CompletionKey, MatchRecord)>,
    finals: Vec<Final>,
    next: usize,
}

impl<G: GpmEval> QueryRuntime<G> {
    /// Whether a moment's matches wait to be generated (the engine takes them, `more`).
    pub fn moment_pending(&self) -> bool {
        self.moment.is_some()
    }

    /// The runs of the moment still to offer its event (0 when none is streamed).
    pub(super) fn moment_runs(&self) -> usize {
        self.moment.as_ref().map_or(0, |m| m.finals.len() - m.next)
    }

    /// The time of the streamed moment's matches still to come, if one is.
    pub(super) fn moment_time(&self) -> Option<i128> {
        self.moment.as_ref().map(|m| m.event.time)
    }

    /// The runs of `rest` (those the event is still to be offered to) that can only complete a
    /// match with it, taken out and keyed: the moment is then streamed (`stream_moment`).
    /// Empty, and `rest` untouched, when a key does not pack.
    pub(super) fn moment_finals(&mut self, event: &EventRef, rest: &mut Vec<RunKey>) -> Vec<Final> {
        let n = rest
            .iter()
            .filter(|run| self.completes_at_once(&self.runs[**run]))
            .count();
        if n == 0 {
            return Vec::new(); // nothing to stream; the kept buffer stays for the next moment
        }
        let mut finals = std::mem::take(&mut self.spare_finals);
        finals.reserve_exact(n); // what the moment holds besides the runs: one key each
        for (i, run) in rest.iter().enumerate() {
            let r = &self.runs[*run];
            let (true, Some(start)) = (self.completes_at_once(r), r.start) else {
                continue;
            };
            let Some(key) = Self::completion_key(r, start, event) else {
                self.keep_spare(finals);
                return Vec::new();
            };
            finals.push((key, i as u32, *run));
        }
        rest.retain(|run| !self.completes_at_once(&self.runs[*run]));
        finals
    }

    /// After the rest of the event's work: stream the moment of `finals` (from
    /// `moment_finals`) with the matches the event completed before them (the batch), its
    /// first chunk released now; or, when one of those matches' keys does not pack, offer the
    /// runs the event and leave the moment to be released whole.
    pub(super) fn stream_moment(
        &mut self,
        event: &EventRef,
        index: &Rc<G::Index>,
        pos: i64,
        dict: &Dictionary,
        mut finals: Vec<Final>,
    ) {
        let made: Option<Vec<(CompletionKey, MatchRecord)>> = self
            .batch
            .iter()
            .map(|m| Some((CompletionKey::of_match(m)?, m.clone())))
            .collect();
        let Some(mut made) = made else {
            for (_, _, run) in finals.drain(..) {
                if self.runs.contains_key(run) {
                    self.try_run(run, event, index, pos, dict);
                }
            }
            self.keep_spare(finals);
            return;
        };
        self.batch.clear();
        made.sort_by_key(|m| m.0); // stable: ties in the order they were made
                                   // in place, by key, then by place among the candidates
        finals.sort_unstable_by_key(|f| (f.0, f.1));
        self.work.moments_streamed += 1;
        self.moment = Some(Moment {
            event: event.clone(),
            index: index.clone(),
            pos,
            made: made.into(),
            finals,
            next: 0,
        });
        self.more(dict);
    }

    /// Release the streamed moment's next chunk: its matches made before and its runs offered
    /// the event, in the match order, until `moment_chunk` matches are made (those of one key
    /// all in the same chunk).
    pub fn more(&mut self, dict: &Dictionary) {
        let Some(mut m) = self.moment.take() else {
            return;
        };
        while self.batch.len() < self.moment_chunk {
            let made = m.made.front().map(|x| x.0);
            let runs = m.finals.get(m.next).map(|f| f.0);
            let Some(key) = made.into_iter().chain(runs).min() else {
                break;
            };
            while m.made.front().is_some_and(|x| x.0 == key) {
                let (_, record) = m.made.pop_front().expect("a match made before");
                self.batch.push(record);
            }
            while m.finals.get(m.next).is_some_and(|f| f.0 == key) {
                let run = m.finals[m.next].2;
                if self.runs.contains_key(run) {
                    self.try_run(run, &m.event, &m.index, m.pos, dict);
                }
                m.next += 1;
            }
        }
        if !self.batch.is_empty() {
            self.release(true, dict);
        }
        if m.made.is_empty() && m.next == m.finals.len() {
            self.keep_spare(m.finals);
        } else {
            self.moment = Some(m);
        }
    }

    /// Generate what is left of a streamed moment (before anything else uses the runtime).
    pub fn finish_moment(&mut self, dict: &Dictionary) {
        while self.moment.is_some() {
            self.more(dict);
        }
    }

    /// Forget a streamed moment's matches still to come (its query unregistered).
    pub fn drop_moment(&mut self) {
        if let Some(m) = self.moment.take() {
            self.keep_spare(m.finals);
        }
    }

    /// Keep `finals`' buffer for the next moment, emptied, unless it is large.
    fn keep_spare(&mut self, mut finals: Vec<Final>) {
        finals.clear();
        if finals.capacity() <= SPARE_KEPT {
            self.spare_finals = finals;
        }
    }
}
