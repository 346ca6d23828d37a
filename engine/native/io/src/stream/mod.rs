//! Streaming replay (issue 12): several replay files, one per stream, merged into one
//! sequence of events in bounded memory, equal to what `spaseq run` reads today (the Python
//! reader on each file, `first_seq` as the CLI numbers them, events sorted by (time, seq),
//! cut at the first failing file's last time and then its error).
//!
//! **When an event is complete.** The reader cannot know that a graph will not be written
//! again further on, nor that its timestamp (before or after it, anywhere in the default
//! graph) is not still to come; so it keeps a window: at most `memory_events` graphs open
//! (by first appearance) and as many timestamps of names not open. A graph is closed, and
//! is an event if it has its time, when `memory_events` newer graphs have opened (or at the
//! end). A graph written again, or stamped, after it was closed is detected: every closed
//! name, every timestamp left over and every graph dropped after a syntax error (the one
//! being read may be an earlier graph written again: the Python reader then cuts at its
//! first appearance) has a 64-bit fingerprint, sorted on disk and checked for clashes at
//! the end of the first pass; such a file is read whole instead (as Python does, memory
//! growing with it), with a note.
//!
//! **Two passes.** An event cannot be released before the file is known to be in order
//! (an early event may be the last line), nor numbered before the earlier files are counted
//! (`seq = first_seq + rank`, `first_seq` the sum of the earlier files' counts plus one
//! each). So a first pass reads every file in bounded memory: the reader's error rules
//! (`replay::Judge`), the count, the latest time, whether it is in time order, the window
//! check. Then, per file (`file::Mode`): a file of at most `memory_events` events is kept
//! from the first pass; one in time order is read again incrementally; one out of time
//! order is read again into an external merge sort (`spill`: sorted runs of at most
//! `memory_events` events in temporary files), with a note. Ties in time are broken by the
//! file's place in the list, then by first appearance in the file, as the CLI's `seq` does.
//!
//! **Threads.** The first passes of several files run side by side (one thread per core at
//! most), and `Prefetched` reads the merged stream on a thread of its own, handing events
//! over in batches through a bounded channel: the second pass runs while the caller works
//! on the events before. Neither changes what is delivered, nor the bound on memory (a few
//! batches more).
//!
//! - `spill`: the external merge sort;
//! - `file`: one file's first pass and its events;
//! - `live`: live input (stdin, named pipes), read as it comes: another reader, the same
//!   events;
//! - `inlet`: a live source fed whole messages (MQTT), each read as a replay batch;
//! - `prefetch`: the merged stream read ahead on a thread.

pub mod file;
pub mod inlet;
pub mod live;
pub mod prefetch;
pub mod spill;

use crate::replay::{self, ReplayError};
use file::{FileEvent, FileEvents, Mode, Prepared, Settings};
use oxrdf::{NamedNode, Term, Triple};
use prefetch::{Prefetched, BATCH, DEPTH};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Events held per file at most, by default (the window, and the sorter's run length).
pub const MEMORY_EVENTS: usize = 10_000;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    pub time_predicate: String,
    /// Where out-of-order files are sorted (default: the system's temporary directory).
    pub spill_dir: Option<PathBuf>,
    pub memory_events: usize,
    /// Every file's format, whatever its name says (None: from each name).
    pub format: Option<replay::Format>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            time_predicate: replay::GENERATED_AT_TIME.to_owned(),
            spill_dir: None,
            memory_events: MEMORY_EVENTS,
            format: None,
        }
    }
}

/// One event of the merged stream: `stream` is the index of its file in the list; `time_ns`
/// is its end (what events are ordered by) and `start_ns` its start, equal for a point event
/// (docs/decisions.md 71); `dated`: its end was written as an `xsd:dateTime`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamEvent {
    pub stream: usize,
    pub seq: u64,
    pub time_ns: i128,
    pub start_ns: i128,
    pub dated: bool,
    pub graph: Term,
    pub triples: Vec<Triple>,
}

/// An error of one file (`PATH:LINE:COLUMN: message`), or of the stream's setup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamError {
    pub path: Option<String>,
    pub error: ReplayError,
}

impl fmt::Display for StreamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.path, self.error.line) {
            (Some(path), Some(_)) => write!(f, "{path}:{}", self.error),
            (Some(path), None) => write!(f, "{path}: {}", self.error),
            (None, _) => write!(f, "{}", self.error),
        }
    }
}

impl std::error::Error for StreamError {}

fn setup_error(path: Option<&str>, error: ReplayError) -> StreamError {
    StreamError {
        path: path.map(str::to_owned),
        error,
    }
}

/// The merge of several replay files by (time, file, rank), as an iterator of events; after
/// the last usable event, the first failing file's error (once).
pub struct ReplayStream {
    sources: Vec<FileEvents>,
    heads: BinaryHeap<Reverse<(i128, usize, u64)>>,
    pending: Vec<Option<FileEvent>>,
    first_seq: Vec<u64>,
    /// After an error: events later than this are not delivered (`None`: none are).
    cutoff: Option<Option<i128>>,
    error: Option<StreamError>,
    paths: Vec<String>,
    /// What the caller should tell the user (files sorted on disk, read whole).
    pub notes: Vec<String>,
    /// How each file is read.
    pub modes: Vec<Mode>,
    /// Runs spilled to disk to sort out-of-order files.
    pub spilled_runs: usize,
    /// Files whose first event is still to be read (streamed files: their second pass
    /// starts at the first `next`, on the thread that reads).
    unprimed: Vec<usize>,
}

/// The time predicate and the spill directory `options` name (Err for a bad predicate).
fn predicate_and_spill_dir(options: &Options) -> Result<(NamedNode, PathBuf), StreamError> {
    let predicate =
        replay::time_predicate(&options.time_predicate).map_err(|e| setup_error(None, e))?;
    let spill_dir = options.spill_dir.clone().unwrap_or_else(std::env::temp_dir);
    Ok((predicate, spill_dir))
}

fn settings<'a>(
    options: &'a Options,
    predicate: &'a NamedNode,
    spill_dir: &'a Path,
) -> Settings<'a> {
    Settings {
        predicate,
        predicate_iri: &options.time_predicate,
        window: options.memory_events.max(1),
        spill_dir,
        format: options.format,
    }
}

/// The first pass of every file, several at a time (at most one thread per core), in the
/// files' order.
fn prepare_all(paths: &[String], settings: &Settings) -> Vec<io::Result<Prepared>> {
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(paths.len());
    if workers <= 1 {
        return paths.iter().map(|p| file::prepare(p, settings)).collect();
    }
    let next = AtomicUsize::new(0);
    let results: Vec<Mutex<Option<io::Result<Prepared>>>> =
        paths.iter().map(|_| Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(path) = paths.get(i) else { break };
                let prepared = file::prepare(path, settings);
                *results[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(prepared);
            });
        }
    });
    results
        .into_iter()
        .map(|r| {
            r.into_inner()
                .unwrap_or_else(|e| e.into_inner())
                .unwrap_or_else(|| Err(io::Error::other("the first pass stopped unexpectedly")))
        })
        .collect()
}

impl ReplayStream {
    /// Read the files' first pass (bounded memory) and set up the merge. Err only for a bad
    /// time predicate or a spill directory that cannot be written; a file's own problems
    /// come, as the Python reader's, after its usable events.
    pub fn open(paths: &[String], options: &Options) -> Result<Self, StreamError> {
        let (predicate, spill_dir) = predicate_and_spill_dir(options)?;
        let settings = settings(options, &predicate, &spill_dir);
        let mut prepared: Vec<Prepared> = Vec::with_capacity(paths.len());
        for (path, p) in paths.iter().zip(prepare_all(paths, &settings)) {
            let p = p.map_err(|e| {
                let message = format!("cannot spill to {}: {e}", spill_dir.display());
                setup_error(Some(path), spill_error(message))
            })?;
            prepared.push(p);
        }
        let mut first_seq = Vec::with_capacity(paths.len());
        let mut seq = 0;
        let mut cutoff: Option<Option<i128>> = None;
        let mut error = None;
        for p in &prepared {
            first_seq.push(seq);
            seq += p.outcome.delivered + 1;
            if let Some(e) = &p.outcome.error {
                let limit = p.outcome.max_time;
                cutoff = Some(cutoff.map_or(limit, |c| c.min(limit)));
                error.get_or_insert_with(|| setup_error(Some(&p.path), e.clone()));
            }
        }
        let mut stream = ReplayStream {
            sources: Vec::with_capacity(paths.len()),
            heads: BinaryHeap::new(),
            pending: Vec::with_capacity(paths.len()),
            first_seq,
            cutoff,
            error,
            paths: paths.to_vec(),
            notes: Vec::new(),
            modes: prepared.iter().map(|p| p.mode).collect(),
            spilled_runs: 0,
            unprimed: Vec::new(),
        };
        for (i, mut p) in prepared.into_iter().enumerate() {
            let (events, runs) = p
                .events(&settings)
                .map_err(|e| setup_error(Some(&p.path), e))?;
            stream.spilled_runs += runs;
            stream.notes.extend(p.note.take());
            stream.sources.push(events);
            stream.pending.push(None);
            if matches!(stream.sources[i], FileEvents::Stream(_)) {
                stream.unprimed.push(i);
            } else {
                stream.advance(i)?;
            }
        }
        Ok(stream)
    }

    /// One file read once: its first pass hands its events over as it judges them
    /// (`file::Feeding`, on a thread of its own), in file order, for a caller that keeps
    /// what it made of them only if the verdict ends `file::CONFIRMED` (decision 47).
    pub fn speculative(
        path: &str,
        options: &Options,
    ) -> Result<(Self, Arc<AtomicU8>), StreamError> {
        let (predicate, spill_dir) = predicate_and_spill_dir(options)?;
        let settings = settings(options, &predicate, &spill_dir);
        let (feeding, verdict) =
            file::feeding(path, &settings).map_err(|e| setup_error(Some(path), e))?;
        let stream = ReplayStream {
            sources: vec![FileEvents::Ahead(Prefetched::spawn(feeding, BATCH, DEPTH))],
            heads: BinaryHeap::new(),
            pending: vec![None],
            first_seq: vec![0],
            cutoff: None,
            error: None,
            paths: vec![path.to_owned()],
            notes: Vec::new(),
            modes: vec![Mode::Stream],
            spilled_runs: 0,
            unprimed: vec![0],
        };
        Ok((stream, verdict))
    }

    /// Read the first event of each streamed file; when several are, each is read ahead on
    /// a thread of its own. (A streamed file's second pass fails only if its reader thread
    /// does: that error then ends the stream.)
    fn prime(&mut self) -> Result<(), StreamError> {
        let unprimed = std::mem::take(&mut self.unprimed);
        if unprimed.len() > 1 {
            for &i in &unprimed {
                let events = std::mem::replace(
                    &mut self.sources[i],
                    FileEvents::Memory(Vec::new().into_iter()),
                );
                self.sources[i] = events.ahead();
            }
        }
        for i in unprimed {
            self.advance(i)?;
        }
        Ok(())
    }

    /// Take the next event of file `i` into the heads.
    fn advance(&mut self, i: usize) -> Result<(), StreamError> {
        match self.sources[i].next() {
            Some(Ok(e)) => {
                self.heads.push(Reverse((e.time_ns, i, e.rank)));
                self.pending[i] = Some(e);
                Ok(())
            }
            Some(Err(e)) if matches!(self.sources[i], FileEvents::Ahead(_)) => Err(setup_error(
                Some(&self.paths[i]),
                spill_error(e.to_string()),
            )),
            Some(Err(e)) => Err(setup_error(
                Some(&self.paths[i]),
                spill_error(format!("cannot read back its sorted events: {e}")),
            )),
            None => Ok(()),
        }
    }
}

fn spill_error(message: String) -> ReplayError {
    ReplayError {
        line: None,
        column: None,
        message,
    }
}

impl Iterator for ReplayStream {
    type Item = Result<StreamEvent, StreamError>;

    fn next(&mut self) -> Option<Self::Item> {
        if !self.unprimed.is_empty() {
            if let Err(err) = self.prime() {
                self.heads.clear();
                self.cutoff = Some(None);
                self.error = Some(err);
            }
        }
        let usable = |time: i128, cutoff: Option<Option<i128>>| match cutoff {
            None => true,
            Some(limit) => limit.is_some_and(|l| time <= l),
        };
        let head = self.heads.peek().map(|Reverse((t, i, _))| (*t, *i));
        match head {
            Some((time, i)) if usable(time, self.cutoff) => {
                self.heads.pop();
                let e = self.pending[i].take()?;
                if let Err(err) = self.advance(i) {
                    self.heads.clear();
                    self.cutoff = Some(None);
                    self.error = Some(err);
                }
                Some(Ok(StreamEvent {
                    stream: i,
                    seq: self.first_seq[i] + e.rank,
                    time_ns: e.time_ns,
                    start_ns: e.start_ns,
                    dated: e.dated,
                    graph: e.graph,
                    triples: e.triples,
                }))
            }
            _ => {
                self.heads.clear();
                self.error.take().map(Err)
            }
        }
    }
}
