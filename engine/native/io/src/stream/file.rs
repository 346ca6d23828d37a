//! One replay file as a source of events in the Python reader's order (time, then first
//! appearance of the graph): a first pass (`prepare`) reads it in bounded memory, applies
//! the reader's error rules and picks a `Mode`; `Prepared::events` then delivers.

use super::prefetch::{Prefetched, BATCH, DEPTH};
use super::spill::{Record, Sorted, Sorter};
use crate::replay::{self, Closed, Format, Graphs, Judge, Outcome, ReplayError, Stamp, When};
use oxrdf::{NamedNode, NamedOrBlankNode, Term, Triple};
use std::cmp::Ordering;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::Path;
use std::str::FromStr;
use std::sync::atomic::{AtomicU8, Ordering as AtomicOrdering};
use std::sync::Arc;

/// An event of one file: `rank` is its graph's rank by first appearance among the file's
/// delivered events (the Python reader's `seq - first_seq`); `time_ns` is its end and
/// `start_ns` its start (docs/decisions.md 71); `dated`: its end was written as an
/// `xsd:dateTime` (docs/decisions.md 43).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileEvent {
    pub time_ns: i128,
    pub start_ns: i128,
    pub rank: u64,
    pub dated: bool,
    pub graph: Term,
    pub triples: Vec<Triple>,
}

/// How a file's events are delivered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Few enough events to be kept from the first pass (sorted there).
    Memory,
    /// In time order: read again, incrementally, with the same window.
    Stream,
    /// Out of time order: read again into an external merge sort (spilled runs).
    Sorted,
    /// Its layout outruns the window (a graph's blocks or timestamps too far apart): read
    /// whole, as the Python reader does; memory grows with the file.
    Whole,
}

/// What the reading of every file shares.
pub struct Settings<'a> {
    pub predicate: &'a NamedNode,
    pub predicate_iri: &'a str,
    pub window: usize,
    pub spill_dir: &'a Path,
    /// The files' format, whatever their names say (None: from each name).
    pub format: Option<Format>,
}

/// A file after the first pass: what it delivers (`outcome`) and how.
pub struct Prepared {
    pub path: String,
    pub mode: Mode,
    pub outcome: Outcome,
    pub note: Option<String>,
    format: Format,
    kept: Vec<FileEvent>,
    /// The quads the first pass read, and the error that ended its reading, if any: the
    /// second pass reads as much again (`Reading::Again`), by bytes if the first did.
    quads: u64,
    read_error: Option<ReplayError>,
    scanned: bool,
}

type Reader = BufReader<Box<dyn Read + Send>>;
type FileGraphs = Graphs<Reader, Triple, fn(Triple) -> Triple>;

/// How a pass reads the file (`replay::Quads`).
#[derive(Clone)]
enum Reading {
    /// Strictly, each quad's line kept (to locate an error).
    Lines,
    /// Strictly, at full speed.
    Fast,
    /// At full speed, read by bytes by the reader itself, N-Quads line by line and TriG
    /// statement by statement (it may give up: then `Verified`).
    Scanned,
    /// At full speed, N-Quads checked by the reader (it may give up: then `Fast`); TriG
    /// strictly.
    Verified,
    /// Again, as the first pass read it: `quads` quads, then its error.
    Again(u64, Option<ReplayError>),
    /// Again, by bytes, as the first pass read it.
    ScannedAgain,
}

/// The file's closed graphs, read as `reading` says.
fn graphs(
    path: &str,
    format: Format,
    s: &Settings,
    window: usize,
    reading: Reading,
) -> Result<FileGraphs, ReplayError> {
    let reader = BufReader::with_capacity(1 << 16, replay::open(path)?);
    let keep: fn(Triple) -> Triple = |t| t;
    let graphs = Graphs::new(reader, format, s.predicate.clone(), window, keep);
    Ok(match reading {
        Reading::Lines => graphs,
        Reading::Fast => graphs.without_lines(),
        Reading::Scanned => {
            let placeholder: Box<dyn Read + Send> = Box::new(io::empty());
            graphs.scanned_ahead(BufReader::new(placeholder))
        }
        Reading::Verified => graphs.verified(),
        Reading::Again(quads, error) => graphs.trusted(quads, error),
        Reading::ScannedAgain => graphs.scanned_again(),
    })
}

/// Whether an outcome's error has a place that a read without lines may have got wrong.
fn to_locate(outcome: &Outcome) -> bool {
    outcome.error.as_ref().is_some_and(|e| e.line.is_some())
}

fn event(rank: u64, when: When, graph: Closed<Triple>) -> FileEvent {
    FileEvent {
        time_ns: when.time_ns,
        start_ns: when.start_ns,
        rank,
        dated: when.dated,
        graph: graph.name,
        triples: graph.triples,
    }
}

/// The format `path` is read in (`format`: every file's, whatever its name says; None: its
/// name's), or why it cannot be read at all: no such file, a directory, a name that tells
/// no format. Nothing of the file is read.
fn format_of(path: &str, format: Option<Format>) -> Result<Format, ReplayError> {
    match std::fs::metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(plain("no such file")),
        Ok(m) if m.is_dir() => return Err(plain("is a directory, not a replay file")),
        _ => {}
    }
    format.or_else(|| Format::of_path(path)).ok_or_else(|| {
        plain("cannot tell the replay file's format from its name: expected .trig, .nq or .nquads (optionally followed by .gz)")
    })
}

/// Why `path` cannot be read as a replay file (`format` as `format_of` takes it), found
/// without reading it: what `prepare` would report before its first line (no such file, a
/// directory, no format, a file that cannot be opened); None when it opens. So that a run
/// refuses a missing input before it writes anything.
pub fn unreadable(path: &str, format: Option<Format>) -> Option<ReplayError> {
    format_of(path, format)
        .and_then(|_| replay::open(path).map(drop))
        .err()
}

/// Keep the fingerprints of a closed graph's name (if any) and of the names the assembler
/// gave up on since, for `clash`.
fn note_names(
    names: &mut Sorter<u64>,
    closed: Option<&Term>,
    graphs: &mut FileGraphs,
) -> io::Result<()> {
    if let Some(name) = closed {
        names.push(fingerprint(name, GRAPH))?;
    }
    for name in graphs.assembler().take_unclosed() {
        names.push(fingerprint(&name, UNCLOSED))?;
    }
    Ok(())
}

/// A 64-bit fingerprint of a name, its lowest bit free for a tag.
fn fingerprint(name: &Term, tag: u64) -> u64 {
    let mut hasher = DefaultHasher::new();
    name.hash(&mut hasher);
    hasher.finish() & !1 | tag
}

const GRAPH: u64 = 0;
const UNCLOSED: u64 = 1;

/// Whether two closed graphs share a name (a graph written again after it was closed), or
/// an unclosed name is a closed graph's (an orphan timestamp: stamped outside the window;
/// a graph dropped after an error: written again after it was closed): the window did not
/// see the whole graph. A fingerprint collision only costs a whole read.
fn clash(names: impl Iterator<Item = io::Result<u64>>) -> io::Result<bool> {
    let mut previous: Option<u64> = None;
    for name in names {
        let name = name?;
        if previous.is_some_and(|p| p >> 1 == name >> 1 && p & 1 == GRAPH) {
            return Ok(true);
        }
        previous = Some(name);
    }
    Ok(false)
}

fn failed(path: &str, error: ReplayError) -> Prepared {
    Prepared {
        path: path.to_owned(),
        mode: Mode::Memory,
        outcome: Outcome {
            delivered: 0,
            max_time: None,
            in_order: true,
            error: Some(error),
        },
        note: None,
        format: Format::NQuads,
        kept: Vec::new(),
        quads: 0,
        read_error: None,
        scanned: false,
    }
}

fn plain(message: &str) -> ReplayError {
    ReplayError {
        line: None,
        column: None,
        message: message.to_owned(),
    }
}

/// The first pass over `path`: its outcome, and the mode its events are delivered in. It
/// reads at full speed, keeping triples only while the file may fit in memory, read by
/// bytes by the reader (`Reading::Scanned`: N-Quads line by line, TriG statement by
/// statement), or, if the text is not in the plain form it reads, N-Quads parsed leniently
/// and checked (`Reading::Verified`), strictly if that gives up too (at an error, or a term
/// it cannot vouch for) and TriG strictly; it reads again with lines only if the outcome has
/// an error to locate (as the Python reader does).
pub fn prepare(path: &str, s: &Settings) -> io::Result<Prepared> {
    let fast = match prepare_with(path, s, Reading::Scanned)? {
        Some(scanned) => scanned,
        None => match prepare_with(path, s, Reading::Verified)? {
            Some(verified) => verified,
            None => prepare_with(path, s, Reading::Fast)?.expect("a strict reading always ends"),
        },
    };
    if to_locate(&fast.outcome) {
        drop(fast);
        return Ok(prepare_with(path, s, Reading::Lines)?.expect("a strict reading always ends"));
    }
    Ok(fast)
}

/// The first pass read as `reading` says; None if a verified reading gave up.
fn prepare_with(path: &str, s: &Settings, reading: Reading) -> io::Result<Option<Prepared>> {
    let lines = matches!(reading, Reading::Lines);
    let format = match format_of(path, s.format) {
        Ok(format) => format,
        Err(e) => return Ok(Some(failed(path, e))),
    };
    let mut graphs = match graphs(path, format, s, s.window, reading) {
        Ok(g) => g,
        Err(e) => return Ok(Some(failed(path, e))),
    };
    let mut judge = Judge::new(s.predicate_iri);
    let mut names = Sorter::<u64>::new(s.spill_dir, s.window.saturating_mul(16).max(1 << 12));
    let mut kept = Some(Vec::new());
    while let Some(graph) = graphs.next() {
        note_names(&mut names, Some(&graph.name), &mut graphs)?;
        if let (Some(rank), Stamp::At(when)) = (judge.judge(&graph), graph.stamp.clone()) {
            match kept.as_mut() {
                Some(k) if k.len() < s.window => k.push(event(rank, when, graph)),
                Some(_) => {
                    kept = None;
                    graphs.assembler().keep_triples(false);
                }
                None => {}
            }
        }
    }
    if graphs.unverified() {
        return Ok(None);
    }
    note_names(&mut names, None, &mut graphs)?;
    let bounded = graphs.assembler().bounded;
    let quads = graphs.quads_read();
    let read_error = graphs.read_error().cloned();
    let scanned = graphs.is_scanned();
    let mut outcome = judge.finish(graphs.read_error());
    let mut note = None;
    let mode = if bounded && clash(names.finish()?)? {
        let (whole_outcome, events) = read_whole(path, format, s, lines);
        outcome = whole_outcome;
        kept = Some(events);
        note = Some(format!(
            "{path}: a graph's blocks or timestamp are more than {} graphs apart: read whole \
             (memory grows with the file)",
            s.window
        ));
        Mode::Whole
    } else if kept.is_some() {
        if !outcome.in_order {
            note = Some(format!(
                "{path}: events out of time order: sorted in memory"
            ));
        }
        Mode::Memory
    } else if outcome.in_order {
        Mode::Stream
    } else {
        Mode::Sorted
    };
    let mut kept = kept.unwrap_or_default();
    kept.retain(|e| e.rank < outcome.delivered);
    kept.sort_by_key(|e| (e.time_ns, e.rank));
    Ok(Some(Prepared {
        path: path.to_owned(),
        mode,
        outcome,
        note,
        format,
        kept,
        quads,
        read_error,
        scanned,
    }))
}

/// A speculative reading's state, shared with whoever feeds its events (decision 47).
pub const PENDING: u8 = 0;
pub const CONFIRMED: u8 = 1;
pub const REFUSED: u8 = 2;

/// One file's first pass handing its events over as it judges them (`ReplayStream::
/// speculative`): every closed graph with a time, in file order, for as long as they are in
/// time order. At the end, or at the first thing that would make the file's events other than
/// these (an event out of order, a graph without a timestamp, a syntax error, a line the
/// reader gives up on, a graph written twice), `verdict` becomes `CONFIRMED` or `REFUSED`;
/// once refused, it yields an error and stops. One reading of the file instead of a first
/// pass and a second: whoever fed the events keeps what it made of them only if confirmed.
pub struct Feeding {
    graphs: FileGraphs,
    judge: Judge,
    names: Sorter<u64>,
    verdict: Arc<AtomicU8>,
    ended: bool,
}

impl Feeding {
    fn refuse(&mut self, why: &str) -> Option<io::Result<FileEvent>> {
        self.ended = true;
        self.verdict.store(REFUSED, AtomicOrdering::Release);
        Some(Err(io::Error::other(format!("not read as written: {why}"))))
    }
}

impl Iterator for Feeding {
    type Item = io::Result<FileEvent>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.ended {
            return None;
        }
        if let Some(graph) = self.graphs.next() {
            if note_names(&mut self.names, Some(&graph.name), &mut self.graphs).is_err() {
                return self.refuse("cannot keep the graph names");
            }
            match (self.judge.judge(&graph), graph.stamp.clone()) {
                (Some(rank), Stamp::At(when)) if self.judge.in_order() => {
                    return Some(Ok(event(rank, when, graph)))
                }
                (Some(_), Stamp::At(..)) => return self.refuse("an event out of time order"),
                _ => return self.refuse("a graph without a usable timestamp"),
            }
        }
        if self.graphs.unverified() || self.graphs.read_error().is_some() {
            return self.refuse("a line the reader does not read as it is");
        }
        if note_names(&mut self.names, None, &mut self.graphs).is_err() {
            return self.refuse("cannot keep the graph names");
        }
        let names = std::mem::replace(&mut self.names, Sorter::new(Path::new("."), 1));
        let clashed =
            self.graphs.assembler().bounded && names.finish().and_then(clash).unwrap_or(true);
        if clashed {
            return self.refuse("a graph written again after it was closed");
        }
        self.ended = true;
        self.verdict.store(CONFIRMED, AtomicOrdering::Release);
        None
    }
}

/// `path`'s speculative first pass (`Feeding`) and its verdict.
pub fn feeding(path: &str, s: &Settings) -> Result<(Feeding, Arc<AtomicU8>), ReplayError> {
    let format = format_of(path, s.format)?;
    let verdict = Arc::new(AtomicU8::new(PENDING));
    let feeding = Feeding {
        graphs: graphs(path, format, s, s.window, Reading::Scanned)?,
        judge: Judge::new(s.predicate_iri),
        names: Sorter::new(s.spill_dir, s.window.saturating_mul(16).max(1 << 12)),
        verdict: verdict.clone(),
        ended: false,
    };
    Ok((feeding, verdict))
}

/// The file read as the Python reader reads it: every graph kept until the end.
fn read_whole(path: &str, format: Format, s: &Settings, lines: bool) -> (Outcome, Vec<FileEvent>) {
    let reading = if lines { Reading::Lines } else { Reading::Fast };
    let mut graphs = match graphs(path, format, s, usize::MAX, reading) {
        Ok(g) => g,
        Err(e) => return (failed(path, e).outcome, Vec::new()),
    };
    let mut judge = Judge::new(s.predicate_iri);
    let mut events = Vec::new();
    for graph in graphs.by_ref() {
        if let (Some(rank), Stamp::At(when)) = (judge.judge(&graph), graph.stamp.clone()) {
            events.push(event(rank, when, graph));
        }
    }
    (judge.finish(graphs.read_error()), events)
}

/// The events of a prepared file, in (time, rank) order.
pub enum FileEvents {
    Memory(std::vec::IntoIter<FileEvent>),
    Stream(Box<Delivery>),
    /// A streamed file read ahead on a thread of its own (when several files are merged).
    Ahead(Prefetched<io::Result<FileEvent>>),
    Sorted(Sorted<ByTime>),
}

impl FileEvents {
    /// A streamed file's second pass moved to a thread of its own (the others as they are).
    pub fn ahead(self) -> Self {
        match self {
            FileEvents::Stream(delivery) => {
                FileEvents::Ahead(Prefetched::spawn(delivery.map(Ok), BATCH, DEPTH))
            }
            other => other,
        }
    }
}

impl Iterator for FileEvents {
    type Item = io::Result<FileEvent>;

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            FileEvents::Memory(events) => events.next().map(Ok),
            FileEvents::Stream(delivery) => delivery.next().map(Ok),
            FileEvents::Ahead(events) => events.next(),
            FileEvents::Sorted(sorted) => sorted.next().map(|r| r.map(|ByTime(e)| e)),
        }
    }
}

/// The second pass: the file's delivered events in file order (closed graphs with a time,
/// up to the outcome's count; graphs the rules skip are skipped).
pub struct Delivery {
    graphs: FileGraphs,
    count: u64,
    rank: u64,
}

impl Iterator for Delivery {
    type Item = FileEvent;

    fn next(&mut self) -> Option<FileEvent> {
        while self.rank < self.count {
            let graph = self.graphs.next()?;
            if let Stamp::At(when) = graph.stamp {
                self.rank += 1;
                return Some(event(self.rank - 1, when, graph));
            }
        }
        None
    }
}

impl Prepared {
    /// Its events, and the number of runs spilled to sort them (0 unless `Mode::Sorted`).
    pub fn events(&mut self, s: &Settings) -> Result<(FileEvents, usize), ReplayError> {
        if matches!(self.mode, Mode::Memory | Mode::Whole) {
            let kept = std::mem::take(&mut self.kept);
            return Ok((FileEvents::Memory(kept.into_iter()), 0));
        }
        let again = if self.scanned {
            Reading::ScannedAgain
        } else {
            Reading::Again(self.quads, self.read_error.clone())
        };
        let delivery = Delivery {
            graphs: graphs(&self.path, self.format, s, s.window, again)?,
            count: self.outcome.delivered,
            rank: 0,
        };
        if self.mode == Mode::Stream {
            return Ok((FileEvents::Stream(Box::new(delivery)), 0));
        }
        let spill = |e: io::Error| {
            plain(&format!(
                "cannot sort on disk in {}: {e}",
                s.spill_dir.display()
            ))
        };
        let mut sorter = Sorter::new(s.spill_dir, s.window);
        for e in delivery {
            sorter.push(ByTime(e)).map_err(spill)?;
        }
        let runs = sorter.spilled;
        self.note = Some(format!(
            "{}: events out of time order: sorted with bounded memory ({runs} run(s) of at most \
             {} events spilled to {})",
            self.path,
            s.window,
            s.spill_dir.display()
        ));
        Ok((FileEvents::Sorted(sorter.finish().map_err(spill)?), runs))
    }
}

/// A file event ordered by (time, rank) and spilled compactly: the time, the start, the rank,
/// whether it is dated (a byte), then the graph and each triple's terms as length-prefixed
/// N-Triples.
#[derive(Debug)]
pub struct ByTime(FileEvent);

impl ByTime {
    fn key(&self) -> (i128, u64) {
        (self.0.time_ns, self.0.rank)
    }
}

impl PartialEq for ByTime {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl Eq for ByTime {}

impl PartialOrd for ByTime {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for ByTime {
    fn cmp(&self, other: &Self) -> Ordering {
        self.key().cmp(&other.key())
    }
}

fn write_text(out: &mut impl Write, text: &str) -> io::Result<()> {
    out.write_all(&u32::try_from(text.len()).unwrap_or(u32::MAX).to_le_bytes())?;
    out.write_all(text.as_bytes())
}

fn read_bytes<const N: usize>(input: &mut impl BufRead) -> io::Result<[u8; N]> {
    let mut bytes = [0; N];
    input.read_exact(&mut bytes)?;
    Ok(bytes)
}

fn read_term(input: &mut impl BufRead) -> io::Result<Term> {
    let len = u32::from_le_bytes(read_bytes(input)?) as usize;
    let mut text = vec![0; len];
    input.read_exact(&mut text)?;
    let text =
        String::from_utf8(text).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
    Term::from_str(&text).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))
}

fn invalid(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("spilled {what} is not valid"),
    )
}

impl Record for ByTime {
    fn write(&self, out: &mut impl Write) -> io::Result<()> {
        let e = &self.0;
        out.write_all(&e.time_ns.to_le_bytes())?;
        out.write_all(&e.start_ns.to_le_bytes())?;
        out.write_all(&e.rank.to_le_bytes())?;
        out.write_all(&[u8::from(e.dated)])?;
        write_text(out, &e.graph.to_string())?;
        out.write_all(&(e.triples.len() as u64).to_le_bytes())?;
        for t in &e.triples {
            write_text(out, &t.subject.to_string())?;
            write_text(out, &t.predicate.to_string())?;
            write_text(out, &t.object.to_string())?;
        }
        Ok(())
    }

    fn read(input: &mut impl BufRead) -> io::Result<Option<Self>> {
        if input.fill_buf()?.is_empty() {
            return Ok(None);
        }
        let time_ns = i128::from_le_bytes(read_bytes(input)?);
        let start_ns = i128::from_le_bytes(read_bytes(input)?);
        let rank = u64::from_le_bytes(read_bytes(input)?);
        let [dated] = read_bytes(input)?;
        let graph = read_term(input)?;
        let n = u64::from_le_bytes(read_bytes(input)?);
        let mut triples = Vec::with_capacity(n.min(1 << 16) as usize);
        for _ in 0..n {
            let subject = match read_term(input)? {
                Term::NamedNode(n) => NamedOrBlankNode::NamedNode(n),
                Term::BlankNode(b) => NamedOrBlankNode::BlankNode(b),
                _ => return Err(invalid("subject")),
            };
            let Term::NamedNode(predicate) = read_term(input)? else {
                return Err(invalid("predicate"));
            };
            triples.push(Triple::new(subject, predicate, read_term(input)?));
        }
        Ok(Some(ByTime(FileEvent {
            time_ns,
            start_ns,
            rank,
            dated: dated != 0,
            graph,
            triples,
        })))
    }
}
