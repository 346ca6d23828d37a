//! A moment of many matches, generated in the match order as they are taken (docs/decisions.md
//! 49): when an event is offered to at least `MOMENT_RUNS` runs that can only complete a
//! match with it (the last step, `:`, nothing pending), those runs are ordered by where their
//! matches stand in the match order (`CompletionKey`) and offered the event a chunk of about
//! `moment_chunk` matches at a time, each chunk released before the next is made. Memory then
//! follows the runs (the state, one key each) and the event (a run's matches on it come in
//! one chunk), not the moment's matches: a moment of millions of matches is written as it
//! comes.
//!
//! It holds because a `:` run offered an event is unchanged by the offer (whether it takes
//! it into a complete match or not), so offering the event later, or in another order,
//! changes nothing but the order the matches are made in; every match of one run on the
//! event has the run's key, and runs of equal keys are offered in the same chunk, whose
//! batch `sort_batch` orders by the spelling tie-break. Anything else that completes a match
//! at the event (the start run, a run of another step) falls back to ordering the moment
//! whole, as does a key that does not pack. Every other use of the runtime finishes the
//! moment first (`finish_moment`), so it never sees the moment half made.

use super::{QueryRuntime, RunRef};
use crate::event::EventRef;
use crate::gpms::GpmEval;
use crate::order::CompletionKey;
use spaseq_io::dictionary::Dictionary;
use std::rc::Rc;

/// The matches a streamed moment releases per take: `QueryRuntime::moment_chunk`'s default.
pub const MOMENT_CHUNK: usize = 1 << 12;

/// The fewest runs completing at one event for its moment to be streamed (fewer with a
/// smaller chunk): a moment of fewer is released whole, as ordering its runs first would cost
/// more than it could save (each of them is offered the event anyway, and a run of many
/// matches on one event is one chunk).
const MOMENT_RUNS: usize = 64;

/// A moment being streamed: its event (with its prepared index and position) and the runs
/// still to offer it, in the match order (`next` onwards).
pub(super) struct Moment<I> {
    event: EventRef,
    index: Rc<I>,
    pos: i64,
    finals: Vec<(CompletionKey, RunRef)>,
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

    /// Take out of `runs` those that can only complete a match with the event, keyed by
    /// where their matches stand in the match order, into `finals` (empty on entry): true
    /// when there are at least `MOMENT_RUNS` of them and every key packs (the moment is
    /// then streamed, `stream_moment`), false (and `runs`, `finals` untouched) otherwise.
    pub(super) fn moment_finals(
        &self,
        event: &EventRef,
        runs: &mut Vec<RunRef>,
        finals: &mut Vec<(CompletionKey, RunRef)>,
    ) -> bool {
        let fewest = MOMENT_RUNS.min(self.moment_chunk);
        if !self.streams_moments || runs.len() < fewest {
            return false;
        }
        let n = runs
            .iter()
            .filter(|run| self.completes_at_once(&run.borrow()))
            .count();
        if n < fewest {
            return false;
        }
        finals.reserve_exact(n); // what the moment holds besides the runs: one key each
        for run in runs.iter() {
            let r = run.borrow();
            let (true, Some(start)) = (self.completes_at_once(&r), r.start) else {
                continue;
            };
            let Some(key) = CompletionKey::of(start.min(event.start), &r.node, event.order())
            else {
                finals.clear();
                return false;
            };
            finals.push((key, run.clone()));
        }
        runs.retain(|run| !self.completes_at_once(&run.borrow()));
        true
    }

    /// After the rest of the event's work: stream the moment of `finals` (from
    /// `moment_finals`) when nothing else completed a match at it, its first chunk released
    /// now; otherwise offer them all, for the moment to be released whole.
    pub(super) fn stream_moment(
        &mut self,
        event: &EventRef,
        index: &Rc<G::Index>,
        pos: i64,
        dict: &Dictionary,
        mut finals: Vec<(CompletionKey, RunRef)>,
    ) {
        if !self.batch.is_empty() {
            for (_, run) in finals {
                if !run.borrow().dead {
                    self.try_run(&run, event, index, pos, dict);
                }
            }
            return;
        }
        // in place: runs of equal keys complete matches told apart by their spelling alone,
        // which `sort_batch` orders within the chunk
        finals.sort_unstable_by_key(|a| a.0);
        self.work.moments_streamed += 1;
        self.moment = Some(Moment {
            event: event.clone(),
            index: index.clone(),
            pos,
            finals,
            next: 0,
        });
        self.more(dict);
    }

    /// Release the streamed moment's next chunk: its runs offered the event in the match
    /// order until `moment_chunk` matches are made (runs of one key all in the same chunk).
    pub fn more(&mut self, dict: &Dictionary) {
        let Some(mut m) = self.moment.take() else {
            return;
        };
        while m.next < m.finals.len() && self.batch.len() < self.moment_chunk {
            let key = m.finals[m.next].0;
            while m.next < m.finals.len() && m.finals[m.next].0 == key {
                let run = m.finals[m.next].1.clone();
                if !run.borrow().dead {
                    self.try_run(&run, &m.event, &m.index, m.pos, dict);
                }
                m.next += 1;
            }
        }
        if !self.batch.is_empty() {
            self.release(true, dict);
        }
        if m.next < m.finals.len() {
            self.moment = Some(m);
        }
    }

    /// Generate what is left of a streamed moment (before anything else uses the runtime).
    pub fn finish_moment(&mut self, dict: &Dictionary) {
        while self.moment.is_some() {
            self.more(dict);
        }
    }
}
