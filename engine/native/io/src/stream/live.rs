//! Live input (issue 12): N-Quads lines or TriG chunks read incrementally from stdin or a
//! named pipe, one event per named graph, each delivered the moment it is complete.
//!
//! Each named graph `g` is one event. Its timestamp is the triple `g <time-predicate> t` in
//! the default graph, which may come before or after the graph's quads; an event that lasts
//! (docs/decisions.md 71) has its start in `g prov:startedAtTime b` and its end in the
//! timestamp or `g prov:endedAtTime e`, checked as in replay files (`replay::Stamps`).
//!
//! When an event is complete (the rule; an event is delivered as soon as it holds, never
//! later):
//!
//! * its end (its timestamp triple, or `prov:endedAtTime`) has been read (before or after its
//!   graph; its start, if it has one, before its end or its block's end, whichever is
//!   later: a start read after the event was delivered is another event's), and
//! * its graph block has ended:
//!
//!   - TriG: when the chunk holding `g { ... }` ends. The input is cut into chunks of whole
//!     lines: a chunk ends at a line after which every brace is closed and whose last
//!     character outside comments, IRIs and strings is `}` or `.`; `@prefix`/`@base`/
//!     `PREFIX`/`BASE` lines between chunks are kept and put before every later chunk.
//!   - N-Quads: at the next line holding a quad of another graph, at a blank line, at g's
//!     own timestamp line when it follows g's quads, or at the end of input. (A timestamp
//!     line of another graph does not end g's block.) So for the lowest latency write each
//!     event's timestamp after its quads, or end each event with a blank line; with the
//!     timestamp first, an event completes when the next event's first quad (or a blank
//!     line) arrives.
//!
//! * Complete events are delivered in the order their graphs first appeared; a complete
//!   event waits for an earlier incomplete one. An event whose timestamp never comes
//!   therefore holds back the events after it until the end of input, where it is reported
//!   as an error (no timestamp, or a start without an end) at `FILE:LINE:COLUMN` of where
//!   its graph started (N-Quads: its first quad;
//!   TriG: the chunk holding its first block, with a column only when that chunk holds
//!   nothing else), after every earlier event has been delivered; the held-back events are
//!   dropped.
//!
//! Other decisions, as in replay files (`crate::replay`) where liveness allows:
//!
//! * Every other default-graph triple is ignored, and so is a time triple whose subject
//!   never names a graph (it is kept, unused, until the end of input: an empty graph cannot
//!   be told apart from one still to come). A time-predicate triple inside a named graph is
//!   event data.
//! * An event's triples are its graph's triples in arrival order, duplicates dropped; a
//!   graph written in several blocks is one event as long as it has not been delivered yet.
//!   Once delivered, the same graph name starts a new event (which needs its own timestamp).
//! * A timestamp that is not a time, or that differs from an earlier one for the same graph
//!   not yet delivered, is an error at its line (TriG: the line its chunk starts on); so is
//!   a start after the end, two different ends, or a start and an end of different kinds.
//! * A syntax error is `FORMAT syntax error: MESSAGE` at the parser's line and column (an
//!   N-Quads line, or a TriG chunk after the prefix lines read so far, is parsed alone); an
//!   input that cannot be read (or is not UTF-8) is an error at the line it stopped on.
//! * Lines end at `\n`, `\r\n` or `\r` (as Python reads text); a line's blanks are Python's.
//! * A source of no given format (`LiveReader::new(None, ..)`: stdin or a pipe whose name
//!   says none) is TriG if its first line that is not blank or a comment is shaped as only
//!   TriG's are (`trig_shaped`: a prefix line, a `{` outside IRIs and strings, or a prefixed
//!   name first), N-Quads otherwise. An N-Quads syntax error on a line shaped so says that
//!   it looks like TriG (TriG whose first lines are plain N-Quads lines is read as N-Quads
//!   until its first `{`).
//! * An event's `line` is where its graph started (its origin is `FILE:LINE`).
//!
//! Bookkeeping is constant work per quad: pending graphs in arrival order (only the oldest
//! is looked at), timestamps by subject. N-Quads lines in the plainest form are read by the
//! replay reader's scanner (`replay::scan_line`), the others by oxttl.
//!
//! - `LiveReader`: the rules, fed one line at a time;
//! - `LiveStream`: several sources (stdin, named pipes, any file) read on threads of their
//!   own, their events merged in arrival order and numbered so.

use super::inlet::Inlet;
use super::{StreamError, StreamEvent};
use crate::replay::{self, os_error, scan_line, Format, IriCache, ReplayError, Role, Stamps};
use oxrdf::{GraphName, NamedNode, NamedOrBlankNode, Quad, Term, Triple};
use oxttl::{NQuadsParser, TriGParser};
use std::collections::{HashMap, HashSet, VecDeque};
use std::io::{self, BufRead, BufReader};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError, SyncSender, TryRecvError};
use std::sync::Arc;
use std::time::Duration;

/// One complete event of one source: its graph, triples, time (its end), start and where its
/// graph started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveEvent {
    pub graph: Term,
    pub triples: Vec<Triple>,
    pub time_ns: i128,
    pub start_ns: i128,
    pub dated: bool,
    pub line: u64,
}

/// A graph read but not yet delivered.
struct Pending {
    line: u64,
    column: Option<u64>,
    triples: Vec<Triple>,
    seen: HashSet<Triple>,
    /// Its block has ended (it is complete once it has its timestamp).
    closed: bool,
}

/// A TriG chunk being read: its lines, where it started, its brace depth and the last
/// character outside comments, IRIs and strings.
#[derive(Default)]
struct Chunk {
    text: String,
    start: u64,
    column: u64,
    depth: i64,
    last: Option<char>,
}

/// The live rules for one source, fed one line at a time (`line`, then `finish` at the end
/// of input). Events complete after a line are appended to the caller's vector; an error
/// ends the reading (events before it, and only they, are in the vector).
pub struct LiveReader {
    format: Format,
    /// The format is still to be told from the first line that is not blank or a comment.
    detect: bool,
    predicate: NamedNode,
    pending: HashMap<NamedOrBlankNode, Pending>,
    order: VecDeque<NamedOrBlankNode>,
    /// The timestamps read for graphs not yet delivered.
    times: HashMap<NamedOrBlankNode, Stamps>,
    /// Lines read so far.
    lines: u64,
    /// N-Quads: the graph whose block is being read.
    current: Option<NamedOrBlankNode>,
    /// TriG: the prefix lines read so far, their number, and the chunk being read.
    header: String,
    header_lines: u64,
    chunk: Chunk,
    valid: IriCache,
}

/// Python's `str.isspace` (Rust's whitespace and the four separators \x1c..\x1f).
fn py_space(c: char) -> bool {
    c.is_whitespace() || ('\x1c'..='\x1f').contains(&c)
}

/// Characters of `line` before its first non-blank one (Python's `lstrip`).
fn indent(line: &str) -> u64 {
    line.chars().take_while(|&c| py_space(c)).count() as u64
}

/// Whether `line` is a prefix line: `^\s*(@prefix|@base|PREFIX|BASE)\b`, any case.
fn prefix_line(line: &str) -> bool {
    let text = line.trim_start_matches(py_space);
    ["@prefix", "@base", "prefix", "base"].iter().any(|key| {
        text.get(..key.len())
            .is_some_and(|head| head.eq_ignore_ascii_case(key))
            && !text[key.len()..]
                .chars()
                .next()
                .is_some_and(|c| c.is_alphanumeric() || c == '_')
    })
}

/// Net `{` minus `}` outside IRIs, strings and comments, and the last character there that
/// is not blank (None if none); good enough for chunking (`engine/io/live.py`'s `_scan`).
fn scan(line: &str) -> (i64, Option<char>) {
    let (depth, last, _) = scan_braces(line);
    (depth, last)
}

/// `scan`, and whether the line has a brace there at all.
fn scan_braces(line: &str) -> (i64, Option<char>, bool) {
    let mut depth = 0;
    let mut brace = false;
    let mut last = None;
    let mut in_iri = false;
    let mut quote: Option<char> = None;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if let Some(q) = quote {
            if c == '\\' {
                chars.next();
                continue;
            }
            if c == q {
                quote = None;
            }
        } else if in_iri {
            if c == '>' {
                in_iri = false;
            }
        } else if c == '#' {
            break;
        } else if c == '<' {
            in_iri = true;
        } else if c == '"' || c == '\'' {
            quote = Some(c);
        } else if c == '{' {
            depth += 1;
            brace = true;
        } else if c == '}' {
            depth -= 1;
            brace = true;
        }
        if quote.is_none() && !in_iri && !py_space(c) {
            last = Some(c); // a character outside, or the end of an IRI or string
        }
    }
    (depth, last, brace)
}

/// Whether `line` is shaped as TriG's lines are and N-Quads lines never are: a prefix line,
/// a brace outside IRIs, strings and comments, or a prefixed name first (`:g`, `ex:g`; an
/// N-Quads line starts with `<` or `_:`).
pub fn trig_shaped(line: &str) -> bool {
    let text = line.trim_start_matches(py_space);
    let prefixed = text
        .split(|c: char| py_space(c) || c == '{')
        .next()
        .and_then(|word| word.split_once(':'))
        .is_some_and(|(prefix, _)| {
            prefix != "_"
                && !prefix.starts_with('<')
                && prefix
                    .chars()
                    .all(|c| c.is_alphanumeric() || "_-.".contains(c))
        });
    prefix_line(line) || prefixed || scan_braces(line).2
}

fn at(line: u64, column: Option<u64>, message: String) -> ReplayError {
    ReplayError {
        line: Some(line),
        column,
        message,
    }
}

impl LiveReader {
    /// A reader of `format` (None: told from the first line, `trig_shaped`) with the time
    /// predicate `predicate`.
    pub fn new(format: Option<Format>, predicate: NamedNode) -> Self {
        LiveReader {
            format: format.unwrap_or(Format::NQuads),
            detect: format.is_none(),
            predicate,
            pending: HashMap::new(),
            order: VecDeque::new(),
            times: HashMap::new(),
            lines: 0,
            current: None,
            header: String::new(),
            header_lines: 0,
            chunk: Chunk::default(),
            valid: IriCache::default(),
        }
    }

    /// Read the next line (with its `\n`, except maybe the last line of the input).
    pub fn line(&mut self, line: &str, out: &mut Vec<LiveEvent>) -> Result<(), ReplayError> {
        self.lines += 1;
        if self.detect {
            let text = line.trim_start_matches(py_space);
            if !text.is_empty() && !text.starts_with('#') {
                self.detect = false;
                if trig_shaped(line) {
                    self.format = Format::TriG;
                }
            }
        }
        match self.format {
            Format::NQuads => self.nquads_line(line, out),
            Format::TriG => self.trig_line(line, out),
        }
    }

    /// The end of input: the last chunk, then every event left, up to one without timestamp
    /// (the error).
    pub fn finish(&mut self, out: &mut Vec<LiveEvent>) -> Result<(), ReplayError> {
        match self.format {
            Format::NQuads => {
                let current = self.current.take();
                self.close(current.as_ref());
            }
            Format::TriG => {
                if !self.chunk.text.is_empty() {
                    let chunk = std::mem::take(&mut self.chunk);
                    self.trig_chunk(&chunk, out)?;
                }
            }
        }
        while let Some(g) = self.order.front() {
            let stamps = self.times.get(g);
            if !stamps.is_some_and(Stamps::settled) {
                let entry = &self.pending[g];
                let message = if stamps.is_some_and(Stamps::started) {
                    replay::unended(g, self.predicate.as_str())
                } else {
                    format!(
                        "event {g} has no timestamp (expected a <{}> triple on the graph name \
                         in the default graph)",
                        self.predicate.as_str()
                    )
                };
                return Err(at(entry.line, entry.column, message));
            }
            out.push(self.deliver());
        }
        Ok(())
    }

    /// A cannot-read error at the line after the last one read (where reading stopped).
    pub fn read_error(&self, message: &str) -> ReplayError {
        at(
            self.lines + 1,
            None,
            format!("cannot read the input: {message}"),
        )
    }

    fn nquads_line(&mut self, line: &str, out: &mut Vec<LiveEvent>) -> Result<(), ReplayError> {
        let text = line.trim_matches(py_space);
        if text.is_empty() {
            let current = self.current.take();
            self.close(current.as_ref());
            self.ready(out);
            return Ok(());
        }
        if text.starts_with('#') {
            return Ok(());
        }
        let lineno = self.lines;
        let quads = match scan_line(line.as_bytes(), Some(&mut self.valid)) {
            Ok(Some(quad)) => vec![quad],
            _ => self.parse(line, lineno, 0)?,
        };
        let column = indent(line) + 1;
        for q in quads {
            let graph = match &q.graph_name {
                GraphName::NamedNode(n) => NamedOrBlankNode::from(n.clone()),
                GraphName::BlankNode(b) => NamedOrBlankNode::from(b.clone()),
                GraphName::DefaultGraph => {
                    let subject = q.subject.clone();
                    if self.timestamp(q, lineno)? && self.current.as_ref() == Some(&subject) {
                        self.close(Some(&subject));
                        self.current = None;
                    }
                    continue;
                }
            };
            if self.current.as_ref() != Some(&graph) {
                let current = self.current.replace(graph.clone());
                self.close(current.as_ref());
            }
            self.add(graph, Triple::from(q), lineno, Some(column));
        }
        self.ready(out);
        Ok(())
    }

    fn trig_line(&mut self, line: &str, out: &mut Vec<LiveEvent>) -> Result<(), ReplayError> {
        if self.chunk.text.is_empty() {
            if prefix_line(line) {
                self.header.push_str(line);
                if !line.ends_with('\n') {
                    self.header.push('\n');
                }
                self.header_lines = self.header.matches('\n').count() as u64;
                return Ok(());
            }
            let text = line.trim_start_matches(py_space);
            if text.is_empty() || text.starts_with('#') {
                return Ok(());
            }
            self.chunk.start = self.lines;
            self.chunk.column = indent(line) + 1;
        }
        self.chunk.text.push_str(line);
        let (delta, tail) = scan(line);
        self.chunk.depth += delta;
        self.chunk.last = tail.or(self.chunk.last);
        let c = &self.chunk;
        if c.depth < 0 || (c.depth == 0 && matches!(c.last, Some('}' | '.'))) {
            let chunk = std::mem::take(&mut self.chunk);
            self.trig_chunk(&chunk, out)?;
        }
        Ok(())
    }

    fn trig_chunk(&mut self, chunk: &Chunk, out: &mut Vec<LiveEvent>) -> Result<(), ReplayError> {
        let text = format!("{}{}", self.header, chunk.text);
        let quads = self.parse(&text, chunk.start, self.header_lines)?;
        let mut graphs: Vec<NamedOrBlankNode> = Vec::new();
        let mut only_graph = true; // the chunk holds one named graph and nothing else
        let mut named = Vec::with_capacity(quads.len());
        for q in quads {
            match &q.graph_name {
                GraphName::DefaultGraph => {
                    only_graph = false;
                    self.timestamp(q, chunk.start)?;
                }
                GraphName::NamedNode(n) => {
                    let g = NamedOrBlankNode::from(n.clone());
                    if !graphs.contains(&g) {
                        graphs.push(g);
                    }
                    named.push(q);
                }
                GraphName::BlankNode(b) => {
                    let g = NamedOrBlankNode::from(b.clone());
                    if !graphs.contains(&g) {
                        graphs.push(g);
                    }
                    named.push(q);
                }
            }
        }
        let column = (only_graph && graphs.len() == 1).then_some(chunk.column);
        for q in named {
            let g = match &q.graph_name {
                GraphName::NamedNode(n) => NamedOrBlankNode::from(n.clone()),
                GraphName::BlankNode(b) => NamedOrBlankNode::from(b.clone()),
                GraphName::DefaultGraph => continue,
            };
            self.add(g, Triple::from(q), chunk.start, column);
        }
        for g in &graphs {
            self.close(Some(g));
        }
        self.ready(out);
        Ok(())
    }

    /// Every quad of `text` (one N-Quads line, or a TriG chunk after `header_lines` prefix
    /// lines), which starts at line `lineno`; the first syntax error, located in the input.
    fn parse(&self, text: &str, lineno: u64, header_lines: u64) -> Result<Vec<Quad>, ReplayError> {
        let (parsed, name): (Result<Vec<Quad>, _>, _) = match self.format {
            Format::NQuads => (NQuadsParser::new().for_slice(text).collect(), "N-Quads"),
            Format::TriG => (TriGParser::new().for_slice(text).collect(), "TriG"),
        };
        parsed.map_err(|e| {
            let start = e.location().start;
            let hint = if self.format == Format::NQuads && trig_shaped(text) {
                " (this line looks like TriG: read the input as TriG, --input-format trig)"
            } else {
                ""
            };
            at(
                lineno + start.line.saturating_sub(header_lines),
                Some(start.column + 1),
                format!("{name} syntax error: {}{hint}", e.message()),
            )
        })
    }

    /// Record a timestamp triple (the time predicate's, `prov:startedAtTime` or
    /// `prov:endedAtTime`); false if `q` is not one (other default-graph data).
    fn timestamp(&mut self, q: Quad, lineno: u64) -> Result<bool, ReplayError> {
        let Some(role) = Role::of(q.predicate.as_str(), self.predicate.as_str()) else {
            return Ok(false);
        };
        let stamps = self.times.entry(q.subject.clone()).or_default();
        stamps.add(&q.subject, role, q.object, lineno, &self.predicate);
        match stamps.problem() {
            Some(problem) => Err(problem.clone()),
            None => Ok(true),
        }
    }

    fn add(&mut self, graph: NamedOrBlankNode, triple: Triple, line: u64, column: Option<u64>) {
        let entry = match self.pending.entry(graph) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => {
                self.order.push_back(e.key().clone());
                e.insert(Pending {
                    line,
                    column,
                    triples: Vec::new(),
                    seen: HashSet::new(),
                    closed: false,
                })
            }
        };
        entry.closed = false; // its block is being read (again)
        if entry.seen.insert(triple.clone()) {
            entry.triples.push(triple);
        }
    }

    /// The block of `graph` (if any and not yet delivered) has ended.
    fn close(&mut self, graph: Option<&NamedOrBlankNode>) {
        if let Some(entry) = graph.and_then(|g| self.pending.get_mut(g)) {
            entry.closed = true;
        }
    }

    /// Complete events, in arrival order (a complete event waits for earlier ones).
    fn ready(&mut self, out: &mut Vec<LiveEvent>) {
        while let Some(g) = self.order.front() {
            if !self.pending[g].closed || !self.times.get(g).is_some_and(Stamps::settled) {
                return;
            }
            out.push(self.deliver());
        }
    }

    /// The oldest pending graph, which has its timestamp, as an event.
    fn deliver(&mut self) -> LiveEvent {
        let g = self.order.pop_front().expect("a pending graph");
        let entry = self.pending.remove(&g).expect("a pending graph's entry");
        let stamps = self.times.remove(&g).expect("a timestamp");
        let when = stamps.when().expect("an end");
        LiveEvent {
            graph: g.into(),
            triples: entry.triples,
            time_ns: when.time_ns,
            start_ns: when.start_ns,
            dated: when.dated,
            line: entry.line,
        }
    }
}

/// The next line of `source` with its end as `\n` (lines end at `\n`, `\r\n` or `\r`; the
/// last may have none); None at the end of input. A `\r` at the end of what was read waits
/// for the next byte, as Python's reading of text does.
fn next_line(source: &mut impl BufRead, line: &mut Vec<u8>) -> io::Result<bool> {
    line.clear();
    loop {
        let buffer = source.fill_buf()?;
        if buffer.is_empty() {
            return Ok(!line.is_empty());
        }
        match memchr::memchr2(b'\n', b'\r', buffer) {
            Some(i) => {
                let cr = buffer[i] == b'\r';
                line.extend_from_slice(&buffer[..i]);
                line.push(b'\n');
                source.consume(i + 1);
                if cr && source.fill_buf()?.first() == Some(&b'\n') {
                    source.consume(1);
                }
                return Ok(true);
            }
            None => {
                let n = buffer.len();
                line.extend_from_slice(buffer);
                source.consume(n);
            }
        }
    }
}

/// Why bytes are not UTF-8, as Python's decoder says it (`position` within the line).
fn not_utf8(bytes: &[u8], e: std::str::Utf8Error) -> String {
    let at = e.valid_up_to();
    match e.error_len() {
        None if at + 1 == bytes.len() => format!(
            "'utf-8' codec can't decode byte 0x{:02x} in position {at}: unexpected end of data",
            bytes[at]
        ),
        None => format!(
            "'utf-8' codec can't decode bytes in position {at}-{}: unexpected end of data",
            bytes.len() - 1
        ),
        Some(_) => {
            let b = bytes[at];
            let reason = if (0x80..0xc2).contains(&b) || b > 0xf4 {
                "invalid start byte"
            } else {
                "invalid continuation byte"
            };
            format!("'utf-8' codec can't decode byte 0x{b:02x} in position {at}: {reason}")
        }
    }
}

/// Read `source` to its end (or its first error) through `reader`, handing each complete
/// event to `deliver` (false: nobody listens any more; stop).
pub fn read_source(
    source: &mut impl BufRead,
    reader: &mut LiveReader,
    mut deliver: impl FnMut(LiveEvent) -> bool,
) -> Result<(), ReplayError> {
    let mut bytes = Vec::new();
    let mut events = Vec::new();
    loop {
        let more =
            next_line(source, &mut bytes).map_err(|e| reader.read_error(&os_error(&e, None)));
        let ended = matches!(more, Ok(false));
        let result = match more {
            Err(e) => Err(e),
            Ok(false) => reader.finish(&mut events),
            Ok(true) => match std::str::from_utf8(&bytes) {
                Ok(line) => reader.line(line, &mut events),
                Err(e) => Err(reader.read_error(&not_utf8(&bytes, e))),
            },
        };
        for event in events.drain(..) {
            if !deliver(event) {
                return Ok(());
            }
        }
        match result {
            Err(e) => return Err(e),
            Ok(()) if ended => return Ok(()),
            Ok(()) => {}
        }
    }
}

/// One live source: a path, `-` for standard input, and its format (None: told from its
/// first line, `LiveReader::new`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveInput {
    pub path: String,
    pub format: Option<Format>,
}

impl LiveInput {
    /// How errors name it: `<stdin>` or its path.
    pub fn label(&self) -> &str {
        if self.path == "-" {
            "<stdin>"
        } else {
            &self.path
        }
    }
}

pub(super) enum Message {
    Event(usize, LiveEvent),
    Failed(usize, ReplayError),
    Ended,
}

/// Events held by the channel from the readers at most (they wait when it is full).
const CHANNEL: usize = 1024;

/// How often a stream waiting as long as it takes looks whether its inlets have closed.
const INLETS: Duration = Duration::from_millis(100);

/// What `LiveStream::next` found.
#[derive(Debug)]
pub enum Next {
    /// An event, numbered in arrival order, and the line its graph started on.
    Event(StreamEvent, u64),
    /// None arrived within the time given.
    Idle,
    /// Every source has ended; the first error of any, if one had one.
    End(Option<StreamError>),
}

/// Several live sources read on threads of their own, their events merged in the order
/// they complete (a source's error is kept, the others read on, and it comes at the end);
/// and sources fed whole messages by their owner (`Inlet`s, `super::inlet`).
pub struct LiveStream {
    receiver: Receiver<Message>,
    open: usize,
    seq: u64,
    labels: Vec<String>,
    error: Option<StreamError>,
    /// The inlets, and how many of them are closed (they say so here, not through the
    /// channel, which may be full when they close).
    inlets: usize,
    closed: Arc<AtomicUsize>,
}

impl LiveStream {
    /// Start a reader thread per source. Err for a bad time predicate.
    pub fn open(inputs: &[LiveInput], time_predicate: &str) -> Result<Self, StreamError> {
        Self::with_inlets(inputs, &[], time_predicate).map(|(stream, _)| stream)
    }

    /// `open`, with a source fed whole messages per label of `inlets` (its name in errors
    /// and origins), numbered after `inputs`: the stream ends once every reader has ended
    /// and every inlet is closed.
    pub fn with_inlets(
        inputs: &[LiveInput],
        inlets: &[String],
        time_predicate: &str,
    ) -> Result<(Self, Vec<Inlet>), StreamError> {
        let predicate = replay::time_predicate(time_predicate)
            .map_err(|error| StreamError { path: None, error })?;
        let (sender, receiver) = sync_channel(CHANNEL);
        let mut stream = LiveStream {
            receiver,
            open: 0,
            seq: 0,
            labels: inputs.iter().map(|i| i.label().to_owned()).collect(),
            error: None,
            inlets: inlets.len(),
            closed: Arc::new(AtomicUsize::new(0)),
        };
        for (index, input) in inputs.iter().enumerate() {
            let sender = sender.clone();
            let reader = LiveReader::new(input.format, predicate.clone());
            let input = input.clone();
            let spawned = std::thread::Builder::new()
                .name("spaseq-live".to_owned())
                .spawn(move || read_input(index, &input, reader, &sender));
            match spawned {
                Ok(_) => stream.open += 1,
                Err(e) => stream.keep_error(
                    index,
                    ReplayError {
                        line: None,
                        column: None,
                        message: format!("cannot start its reader: {e}"),
                    },
                ),
            }
        }
        let made = inlets
            .iter()
            .map(|label| {
                stream.labels.push(label.clone());
                Inlet::new(
                    stream.labels.len() - 1,
                    sender.clone(),
                    stream.closed.clone(),
                    time_predicate,
                )
            })
            .collect();
        Ok((stream, made))
    }

    fn keep_error(&mut self, index: usize, error: ReplayError) {
        self.error.get_or_insert(StreamError {
            path: Some(self.labels[index].clone()),
            error,
        });
    }

    /// The next event, waiting at most `wait` for it (None: as long as it takes);
    /// `Duration::ZERO` takes only what has arrived.
    pub fn next(&mut self, wait: Option<Duration>) -> Next {
        loop {
            if self.open == 0 && self.closed.load(Ordering::Acquire) >= self.inlets {
                // every source has ended: what the inlets sent before closing is still taken
                match self.receiver.try_recv() {
                    Ok(m) => match self.take(m) {
                        Some(next) => return next,
                        None => continue,
                    },
                    Err(_) => return Next::End(self.error.take()),
                }
            }
            let message = match wait {
                // an inlet closes without a message: looked at again every `INLETS`
                None if self.inlets > 0 => match self.receiver.recv_timeout(INLETS) {
                    Ok(m) => Ok(m),
                    Err(RecvTimeoutError::Timeout) => continue,
                    Err(RecvTimeoutError::Disconnected) => Err(()),
                },
                None => self.receiver.recv().map_err(|_| ()),
                Some(d) if d.is_zero() => match self.receiver.try_recv() {
                    Ok(m) => Ok(m),
                    Err(TryRecvError::Empty) => return Next::Idle,
                    Err(TryRecvError::Disconnected) => Err(()),
                },
                Some(d) => match self.receiver.recv_timeout(d) {
                    Ok(m) => Ok(m),
                    Err(RecvTimeoutError::Timeout) => return Next::Idle,
                    Err(RecvTimeoutError::Disconnected) => Err(()),
                },
            };
            match message {
                Ok(m) => {
                    if let Some(next) = self.take(m) {
                        return next;
                    }
                }
                Err(()) => self.open = 0, // a reader stopped without saying so
            }
        }
    }

    /// What a message from a source is: an event (numbered here), or None (an error kept, a
    /// reader ended).
    fn take(&mut self, message: Message) -> Option<Next> {
        match message {
            Message::Event(index, e) => {
                self.seq += 1;
                let event = StreamEvent {
                    stream: index,
                    seq: self.seq,
                    time_ns: e.time_ns,
                    start_ns: e.start_ns,
                    dated: e.dated,
                    graph: e.graph,
                    triples: e.triples,
                };
                Some(Next::Event(event, e.line))
            }
            Message::Failed(index, error) => {
                self.keep_error(index, error);
                None
            }
            Message::Ended => {
                self.open -= 1;
                None
            }
        }
    }

    /// How errors name source `index`: `<stdin>` or its path.
    pub fn label(&self, index: usize) -> &str {
        &self.labels[index]
    }
}

/// A reader thread: the source opened (stdin for `-`), read to its end, each event sent.
fn read_input(
    index: usize,
    input: &LiveInput,
    mut reader: LiveReader,
    sender: &SyncSender<Message>,
) {
    let deliver = |e| sender.send(Message::Event(index, e)).is_ok();
    let result = if input.path == "-" {
        read_source(&mut io::stdin().lock(), &mut reader, deliver)
    } else {
        match std::fs::File::open(&input.path) {
            Ok(file) => read_source(
                &mut BufReader::with_capacity(1 << 16, file),
                &mut reader,
                deliver,
            ),
            Err(e) => Err(ReplayError {
                line: None,
                column: None,
                message: format!("cannot read the input: {}", os_error(&e, Some(&input.path))),
            }),
        }
    };
    if let Err(e) = result {
        let _ = sender.send(Message::Failed(index, e));
    }
    let _ = sender.send(Message::Ended);
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROV: &str = "<http://www.w3.org/ns/prov#generatedAtTime>";

    /// (graph, time, triples, line) per event, and the error.
    type Read = (Vec<(String, i128, usize, u64)>, Option<String>);

    fn read(format: Format, text: &str) -> Read {
        let mut reader = LiveReader::new(
            Some(format),
            NamedNode::new(replay::GENERATED_AT_TIME).unwrap(),
        );
        let mut events = Vec::new();
        let result = read_source(&mut text.as_bytes(), &mut reader, |e| {
            events.push((e.graph.to_string(), e.time_ns, e.triples.len(), e.line));
            true
        });
        (events, result.err().map(|e| e.to_string()))
    }

    #[test]
    fn nquads_events_complete_in_order() {
        let text = format!(
            "<http://x/g1> {PROV} \"1\"^^<http://www.w3.org/2001/XMLSchema#integer> .\n\
             <http://x/a> <http://x/p> \"1\" <http://x/g1> .\n\
             <http://x/a> <http://x/p> \"1\" <http://x/g1> .\n\
             \r\n\
             <http://x/a> <http://x/p> \"2\" <http://x/g2> .\r\
             <http://x/g2> {PROV} \"2\"^^<http://www.w3.org/2001/XMLSchema#integer> .\n"
        );
        let (events, error) = read(Format::NQuads, &text);
        assert_eq!(error, None);
        assert_eq!(
            events,
            vec![
                ("<http://x/g1>".to_owned(), 1_000_000_000, 1, 2),
                ("<http://x/g2>".to_owned(), 2_000_000_000, 1, 5),
            ]
        );
    }

    #[test]
    fn missing_timestamp_and_syntax_errors_are_located() {
        let text = "  <http://x/a> <http://x/p> \"1\" <http://x/g1> .\n";
        let (events, error) = read(Format::NQuads, text);
        assert!(events.is_empty());
        assert_eq!(
            error.as_deref(),
            Some(
                "1:3: event <http://x/g1> has no timestamp (expected a \
                 <http://www.w3.org/ns/prov#generatedAtTime> triple on the graph name in the \
                 default graph)"
            )
        );
        let (_, error) = read(Format::NQuads, "\n<http://x/a> oops .\n");
        assert_eq!(
            error.as_deref(),
            Some("2:14: N-Quads syntax error: The predicate of a triple must be an IRI")
        );
    }

    #[test]
    fn trig_chunks_keep_prefixes() {
        let text = "@prefix : <http://x/> .\n@prefix prov: <http://www.w3.org/ns/prov#> .\n\
                    :g1 { :a :p 1 }\n:g1 prov:generatedAtTime 10 .\n\
                    :g2 {\n  :a :p 2 .\n}\n:g2 prov:generatedAtTime 11 .\n";
        let (events, error) = read(Format::TriG, text);
        assert_eq!(error, None);
        assert_eq!(
            events,
            vec![
                ("<http://x/g1>".to_owned(), 10_000_000_000, 1, 3),
                ("<http://x/g2>".to_owned(), 11_000_000_000, 1, 5),
            ]
        );
    }

    /// Live events that last: complete once their end is read (and their block has ended),
    /// their start from before; a start without an end is the error at the end of input,
    /// and a start after the end an error at its line.
    #[test]
    fn live_events_that_last() {
        let int = |v: i64| format!("\"{v}\"^^<http://www.w3.org/2001/XMLSchema#integer>");
        let started = "<http://www.w3.org/ns/prov#startedAtTime>";
        let ended = "<http://www.w3.org/ns/prov#endedAtTime>";
        let text = format!(
            "<http://x/g1> {started} {} .\n\
             <http://x/a> <http://x/p> \"1\" <http://x/g1> .\n\
             <http://x/g1> {ended} {} .\n\
             <http://x/a> <http://x/p> \"2\" <http://x/g2> .\n\
             <http://x/g2> {PROV} {} .\n",
            int(1),
            int(4),
            int(5)
        );
        let mut reader = LiveReader::new(
            Some(Format::NQuads),
            NamedNode::new(replay::GENERATED_AT_TIME).unwrap(),
        );
        let mut events = Vec::new();
        read_source(&mut text.as_bytes(), &mut reader, |e| {
            events.push((e.graph.to_string(), e.start_ns, e.time_ns, e.line));
            true
        })
        .unwrap();
        let s = 1_000_000_000;
        assert_eq!(
            events,
            vec![
                ("<http://x/g1>".to_owned(), s, 4 * s, 2),
                ("<http://x/g2>".to_owned(), 5 * s, 5 * s, 4),
            ]
        );
        let unended = format!(
            "<http://x/a> <http://x/p> \"1\" <http://x/g1> .\n<http://x/g1> {started} {} .\n",
            int(1)
        );
        let (events, error) = read(Format::NQuads, &unended);
        assert!(events.is_empty());
        assert_eq!(
            error.as_deref(),
            Some(
                "1:1: event <http://x/g1> has prov:startedAtTime but no end (prov:endedAtTime \
                 or <http://www.w3.org/ns/prov#generatedAtTime>)"
            )
        );
        let backwards = format!(
            "<http://x/g1> {ended} {} .\n<http://x/g1> {started} {} .\n\
             <http://x/a> <http://x/p> \"1\" <http://x/g1> .\n",
            int(1),
            int(2)
        );
        let (_, error) = read(Format::NQuads, &backwards);
        let error = error.expect("an error");
        assert!(
            error.starts_with("2: event <http://x/g1> starts ("),
            "{error}"
        );
    }

    /// A source of no given format is TriG when its first line can only be TriG's; an
    /// N-Quads syntax error on a TriG line says so.
    #[test]
    fn format_told_from_the_first_line_or_hinted() {
        let detect = |text: &str| {
            let mut reader =
                LiveReader::new(None, NamedNode::new(replay::GENERATED_AT_TIME).unwrap());
            let mut events = Vec::new();
            let result = read_source(&mut text.as_bytes(), &mut reader, |e| {
                events.push((e.graph.to_string(), e.line));
                true
            });
            (events, result.err().map(|e| e.to_string()))
        };
        const THREE: &str = "\"3\"^^<http://www.w3.org/2001/XMLSchema#integer>";
        let trig = "# a comment\n\n@prefix : <http://x/> .\n:g1 { :a :p 1 }\n\
                    :g1 <http://www.w3.org/ns/prov#generatedAtTime> 10 .\n";
        assert_eq!(detect(trig), (vec![("<http://x/g1>".to_owned(), 4)], None));
        let braces =
            format!("<http://x/g1> {{ <http://x/a> <http://x/p> 1 }}\n<http://x/g1> {PROV} 3 .\n");
        assert_eq!(
            detect(&braces),
            (vec![("<http://x/g1>".to_owned(), 1)], None)
        );
        let nquads = format!(
            "<http://x/a> <http://x/p> \"1\" <http://x/g1> .\n<http://x/g1> {PROV} {THREE} .\n"
        );
        assert_eq!(
            detect(&nquads),
            (vec![("<http://x/g1>".to_owned(), 1)], None)
        );
        // TriG whose first line is an N-Quads line too: read as N-Quads, hinted at its `{`
        let late = format!(
            "<http://x/g1> {PROV} {THREE} .\n<http://x/g1> {{ <http://x/a> <http://x/p> 1 }}\n"
        );
        let (_, error) = detect(&late);
        assert_eq!(
            error.as_deref(),
            Some(
                "2:15: N-Quads syntax error: The predicate of a triple must be an IRI (this line \
                 looks like TriG: read the input as TriG, --input-format trig)"
            )
        );
        // a plain N-Quads mistake gets no hint
        let (_, error) = detect("<http://x/a> oops .\n");
        assert!(!error.expect("an error").contains("TriG"));
        assert!(trig_shaped("  ex:g1 { ex:a ex:p 1 }"));
        assert!(trig_shaped(":g1 prov:generatedAtTime 10 ."));
        assert!(trig_shaped("PREFIX ex: <http://x/>"));
        assert!(!trig_shaped("<http://x/a> <http://x/p> \"{\" ."));
        assert!(!trig_shaped("_:b <http://x/p> <http://x/o> ."));
        assert!(!trig_shaped("oops"));
    }

    #[test]
    fn chunk_scanner() {
        assert_eq!(scan(":g { :a :b \"}\" } # }"), (0, Some('}')));
        assert_eq!(scan("<http://x/{> { 'a\\'}'"), (1, Some('\'')));
        assert!(prefix_line("  @PREFIX : <x> ."));
        assert!(prefix_line("BASE <x>"));
        assert!(!prefix_line("@prefixes"));
        assert!(!prefix_line(":base :p 1 ."));
    }

    #[test]
    fn universal_newlines() {
        let mut source = "a\r\nb\rc\nd".as_bytes();
        let mut line = Vec::new();
        let mut lines = Vec::new();
        while next_line(&mut source, &mut line).unwrap() {
            lines.push(String::from_utf8(line.clone()).unwrap());
        }
        assert_eq!(lines, ["a\n", "b\n", "c\n", "d"]);
    }
}
