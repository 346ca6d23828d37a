//! Replay files read natively: TriG or N-Quads, gzip or not, one named graph per event, its
//! timestamp the triple `g <time-predicate> "literal"` in the default graph (an event that
//! lasts also has `prov:startedAtTime` and maybe `prov:endedAtTime` there: `Stamps`,
//! docs/decisions.md 71), exactly as the
//! Python reader (now the tests' oracle, `tests/io/replay_oracle.py`) reads them: other default-graph triples ignored, a
//! graph's triples in file order without duplicates (a graph written in several blocks is
//! one event), events sorted by time with ties in order of first appearance, and its error
//! rules (`Judge`).
//!
//! One parser loop serves the whole-file reader (`read_events`) and the streaming one
//! (`crate::stream`): `Quads` (quads with the line they end on), `Assembler` (quads into
//! graphs, a graph closed once `window` newer graphs are open; the whole file is an unbounded
//! window) and `Graphs` (the two together: closed graphs in order of first appearance).
//!
//! Lines cost: they need the parser fed a line at a time. A reader that can read its input
//! again reads it at full speed without them (`Quads::without_lines`, every line 0) and, as
//! the Python reader does, again with them only when the file has an error to locate.
//!
//! Checking costs too: oxiri's validation of every IRI is half of parsing N-Quads, though
//! most IRIs of a replay file (predicates, datatypes, subjects, a graph's name on each of its
//! lines) repeat. `Quads::verified` parses N-Quads leniently and checks each quad's terms
//! itself, remembering the IRIs found valid: a quad that the strict parser might have
//! refused (an IRI not valid, a language tag, `rdf:langString` as a datatype, a line break or
//! a character beyond U+FFFF, which a lenient `\u` surrogate pair could have made), or any
//! error at all, stops it, `unverified`: the caller reads the file again strictly, so the
//! errors and their places are the strict parser's. `Quads::trusted` reads again a file
//! already read: leniently, no checks, up to the number of quads the first reading had, then
//! that reading's error if it had one.
//!
//! Reading by bytes costs least: `Quads::scanned` reads the plainest N-Quads a line at a
//! time (`scan_line`) and the common form of TriG a statement at a time (`trig`), without
//! oxttl, and stops, `unverified`, at anything it cannot vouch for, as a verified reading
//! does.

use crate::dictionary::{Dictionary, TermId};
use crate::hash::{Fast, FastHasher};
use crate::time::{is_datetime, py_repr, timestamp_nanos};
use crate::vocab::XSD;
use flate2::read::MultiGzDecoder;
use oxrdf::vocab::rdf;
use oxrdf::{GraphName, Literal, NamedNode, NamedOrBlankNode, Quad, Term, Triple};
use oxttl::nquads::LowLevelNQuadsParser;
use oxttl::trig::LowLevelTriGParser;
use oxttl::{NQuadsParser, TriGParser};
use std::collections::{HashMap, HashSet, VecDeque};
use std::fmt;
use std::fs::File;
use std::hash::{Hash, Hasher};
use std::io::{BufRead, BufReader, Read};
use std::sync::atomic::Ordering;

mod ahead;
mod trig;
use ahead::{Ahead, Scanned};

pub const GENERATED_AT_TIME: &str = "http://www.w3.org/ns/prov#generatedAtTime";
/// When an event that lasts began and ended (docs/decisions.md 71), beside the time predicate.
pub const STARTED_AT_TIME: &str = "http://www.w3.org/ns/prov#startedAtTime";
pub const ENDED_AT_TIME: &str = "http://www.w3.org/ns/prov#endedAtTime";

/// Which of an event's times a default-graph triple on its name gives: the time predicate's
/// (`Time`), `prov:startedAtTime` (`Start`) or `prov:endedAtTime` (`End`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Time,
    Start,
    End,
}

impl Role {
    /// The role of a default-graph triple's predicate (`time`: the time predicate, which
    /// wins if it is one of the two), or None for other data.
    pub fn of(predicate: &str, time: &str) -> Option<Role> {
        if predicate == time {
            Some(Role::Time)
        } else if predicate == STARTED_AT_TIME {
            Some(Role::Start)
        } else if predicate == ENDED_AT_TIME {
            Some(Role::End)
        } else {
            None
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    TriG,
    NQuads,
}

impl Format {
    /// From the file name (`.trig`, `.nq`, `.nquads`, each optionally `.gz`; any case, as
    /// the Python reader).
    pub fn of_path(path: &str) -> Option<Self> {
        let path = path.to_ascii_lowercase();
        let name = path.strip_suffix(".gz").unwrap_or(&path);
        if name.ends_with(".trig") {
            Some(Format::TriG)
        } else if name.ends_with(".nq") || name.ends_with(".nquads") {
            Some(Format::NQuads)
        } else {
            None
        }
    }
}

/// One event: its graph's name and triples (as term ids), its time (its end) in nanoseconds,
/// its start (`start_ns`, the time for a point event) and whether its end was written as an
/// `xsd:dateTime` (`dated`, docs/decisions.md 43).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    pub time_ns: i128,
    pub start_ns: i128,
    pub dated: bool,
    pub graph: TermId,
    pub triples: Vec<[TermId; 3]>,
}

/// Why a file could not be read, and where (1-based line and column when known).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayError {
    pub line: Option<u64>,
    pub column: Option<u64>,
    pub message: String,
}

impl fmt::Display for ReplayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.line, self.column) {
            (Some(l), Some(c)) => write!(f, "{l}:{c}: {}", self.message),
            (Some(l), None) => write!(f, "{l}: {}", self.message),
            _ => f.write_str(&self.message),
        }
    }
}

fn error(message: impl Into<String>) -> ReplayError {
    ReplayError {
        line: None,
        column: None,
        message: message.into(),
    }
}

fn error_at(line: u64, message: impl Into<String>) -> ReplayError {
    ReplayError {
        line: Some(line),
        column: None,
        message: message.into(),
    }
}

/// What the Python reader says when reading fails (`cannot read the file: ` and Python's
/// text of the error): an OS error as `[Errno N] description: 'path'`, a gzip stream cut
/// short as gzip's `EOFError`; other decompression errors in flate2's words.
fn read_failure(e: &std::io::Error, path: Option<&str>) -> ReplayError {
    let text = if e.raw_os_error().is_none() && e.kind() == std::io::ErrorKind::UnexpectedEof {
        "Compressed file ended before the end-of-stream marker was reached".to_owned()
    } else {
        os_error(e, path)
    };
    error(format!("cannot read the file: {text}"))
}

/// An I/O error as Python writes it: an OS error as `[Errno N] description` (then `: 'path'`
/// if given), any other in its own words.
pub fn os_error(e: &std::io::Error, path: Option<&str>) -> String {
    let Some(code) = e.raw_os_error() else {
        return e.to_string();
    };
    let full = e.to_string();
    let description = full
        .strip_suffix(&format!(" (os error {code})"))
        .unwrap_or(&full);
    match path {
        Some(path) => format!("[Errno {code}] {description}: {}", py_repr(path)),
        None => format!("[Errno {code}] {description}"),
    }
}

/// What a reading again by bytes says of a file it no longer reads as the first did.
fn changed() -> ReplayError {
    error("cannot read the file: it changed while it was read")
}

/// Open a replay file, transparently gunzipped (gzip content is recognised by its magic).
pub fn open(path: &str) -> Result<Box<dyn Read + Send>, ReplayError> {
    let file = File::open(path).map_err(|e| read_failure(&e, Some(path)))?;
    let mut reader = BufReader::with_capacity(1 << 16, file);
    let gzipped = reader
        .fill_buf()
        .map(|b| b.starts_with(&[0x1f, 0x8b]))
        .unwrap_or(false);
    Ok(if gzipped {
        Box::new(BufReader::new(MultiGzDecoder::new(reader)))
    } else {
        Box::new(reader)
    })
}

/// The time predicate as an IRI, or why it is not one.
pub fn time_predicate(iri: &str) -> Result<NamedNode, ReplayError> {
    NamedNode::new(iri).map_err(|e| error(format!("bad time predicate: {e}")))
}

fn fast_hash(value: &impl Hash) -> u64 {
    let mut hasher = FastHasher::default();
    value.hash(&mut hasher);
    hasher.finish()
}

/// The one parser loop. With lines (the default), oxttl is fed a line at a time (at most a
/// buffer's worth), so each quad comes with the line it ends on, as the Python reader's
/// `LineTrackingReader` gives it; without, it is fed whole buffers and every quad's line is
/// 0 (a syntax error still has its place). Reading stops at the first error.
pub struct Quads<R> {
    source: R,
    parser: Parser,
    lines: bool,
    line: u64,
    newlines: u64,
    done: bool,
    check: Check,
    /// Quads read so far.
    count: u64,
}

/// How far the parser's own checks are trusted.
enum Check {
    /// The parser checks (strict).
    Strict,
    /// Lenient, each quad checked here (N-Quads only); `failed` once one was not.
    Verified { valid: IriCache, failed: bool },
    /// Lenient, unchecked: an earlier strict or verified reading read `quads` quads, then
    /// ended with `error` if any.
    Trusted {
        quads: u64,
        error: Option<ReplayError>,
    },
    /// Read by bytes, not by oxttl: N-Quads a line at a time by `scan_line`, TriG a
    /// statement at a time (`trig`, `trig::TriG`); the terms checked (`valid`), or not
    /// (`None`: read again after a scanned first reading); `failed` once the text was not
    /// in a form it reads.
    Scanned {
        valid: Option<IriCache>,
        failed: bool,
        line: Vec<u8>,
        trig: Option<Box<trig::TriG>>,
    },
}

/// One line of N-Quads in the plainest form (`<iri>` and `_:label` terms, `"text"` and
/// `"text"^^<iri>` literals without escapes, one statement, spaces and tabs between terms):
/// Ok(None) for a blank line, Err(()) for anything else (the caller then reads the file with
/// oxttl). The quad is the one oxttl reads from that line; `valid` checks its IRIs as the
/// strict parser does (None: they are trusted).
#[allow(clippy::result_unit_err)]
pub fn scan_line(line: &[u8], valid: Option<&mut IriCache>) -> Result<Option<Quad>, ()> {
    Ok(scan_terms(line, valid)?.map(|terms| terms.quad()))
}

/// A term of a scanned line or TriG statement, still a piece of its text.
#[derive(Clone, Copy)]
enum Piece<'a> {
    Iri(&'a str),
    Blank(&'a str),
    /// The text and the datatype's IRI (None: a simple literal).
    Literal(&'a str, Option<&'a str>),
}

impl Piece<'_> {
    fn term(self) -> Term {
        match self {
            Piece::Iri(iri) => NamedNode::new_unchecked(iri).into(),
            Piece::Blank(label) => oxrdf::BlankNode::new_unchecked(label).into(),
            Piece::Literal(value, None) => Literal::new_simple_literal(value).into(),
            Piece::Literal(value, Some(datatype)) => {
                Literal::new_typed_literal(value, NamedNode::new_unchecked(datatype)).into()
            }
        }
    }

    fn subject(self) -> NamedOrBlankNode {
        match self {
            Piece::Iri(iri) => NamedNode::new_unchecked(iri).into(),
            Piece::Blank(label) => oxrdf::BlankNode::new_unchecked(label).into(),
            Piece::Literal(..) => unreachable!("a scanned subject is never a literal"),
        }
    }
}

/// The terms of a scanned quad (checked already).
struct Terms<'a> {
    subject: Piece<'a>,
    predicate: &'a str,
    object: Piece<'a>,
    graph: Option<Piece<'a>>,
}

impl Terms<'_> {
    fn quad(self) -> Quad {
        let graph: GraphName = match self.graph.map(Piece::subject) {
            None => GraphName::DefaultGraph,
            Some(NamedOrBlankNode::NamedNode(n)) => n.into(),
            Some(NamedOrBlankNode::BlankNode(b)) => b.into(),
        };
        Quad::new(
            self.subject.subject(),
            NamedNode::new_unchecked(self.predicate),
            self.object.term(),
            graph,
        )
    }

    /// What an assembler that keeps no triples needs of it (`time`: the time predicate).
    fn sketch<'a>(self, time: &NamedNode) -> Sketch<'a>
    where
        Self: 'a,
    {
        match self.graph {
            Some(graph) => Sketch::Named(graph),
            None => match Role::of(self.predicate, time.as_str()) {
                Some(role) => Sketch::Stamp(role, self.subject.term(), self.object.term()),
                None => Sketch::Other,
            },
        }
    }
}

/// A quad as an assembler that keeps no triples sees it: a named graph's name (still a piece
/// of the line: the reading thread builds it only for a graph other than the line before's,
/// `ahead::own`), a timestamp (its role, name and value), or another triple of the default
/// graph.
enum Sketch<'a> {
    Named(Piece<'a>),
    Stamp(Role, Term, Term),
    Other,
}

/// Whether `scan_terms` finds nothing on the line: spaces and tabs before its end (`\n`,
/// and `\r\n`).
fn blank(line: &[u8]) -> bool {
    let mut end = line.len();
    while end > 0 && line[end - 1] == b'\n' {
        end -= 1;
    }
    if end > 0 && line[end - 1] == b'\r' {
        end -= 1;
    }
    line[..end].iter().all(|&b| b == b' ' || b == b'\t')
}

fn scan_terms<'a>(line: &'a [u8], valid: Option<&mut IriCache>) -> Result<Option<Terms<'a>>, ()> {
    let text = std::str::from_utf8(line).map_err(|_| ())?;
    let text = text.trim_end_matches('\n');
    let text = text.strip_suffix('\r').unwrap_or(text);
    let mut scan = Scan {
        rest: text.as_bytes(),
        text,
        at: 0,
        valid,
    };
    scan.space();
    if scan.at == text.len() {
        return Ok(None);
    }
    let subject = match scan.peek() {
        Some(b'<') => scan.iri()?,
        Some(b'_') => scan.blank()?,
        _ => return Err(()),
    };
    scan.space();
    if scan.peek() != Some(b'<') {
        return Err(());
    }
    let Piece::Iri(predicate) = scan.iri()? else {
        return Err(());
    };
    scan.space();
    let object = match scan.peek() {
        Some(b'<') => scan.iri()?,
        Some(b'_') => scan.blank()?,
        Some(b'"') => scan.literal()?,
        _ => return Err(()),
    };
    scan.space();
    let graph = match scan.peek() {
        Some(b'<') => Some(scan.iri()?),
        Some(b'_') => Some(scan.blank()?),
        _ => None,
    };
    scan.space();
    if scan.peek() != Some(b'.') {
        return Err(());
    }
    scan.at += 1;
    scan.space();
    if scan.at != text.len() {
        return Err(());
    }
    Ok(Some(Terms {
        subject,
        predicate,
        object,
        graph,
    }))
}

struct Scan<'a, 'c> {
    text: &'a str,
    rest: &'a [u8],
    at: usize,
    valid: Option<&'c mut IriCache>,
}

impl<'a> Scan<'a, '_> {
    fn peek(&self) -> Option<u8> {
        self.rest.get(self.at).copied()
    }

    fn space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.at += 1;
        }
    }

    /// The text up to the next `end` (excluded, skipped), from `self.at`; Err at a backslash
    /// (an escape) or if there is none.
    fn until(&mut self, end: u8) -> Result<&'a str, ()> {
        let text: &'a str = self.text;
        let from = self.at;
        let len = memchr::memchr2(end, b'\\', &self.rest[from..]).ok_or(())?;
        if self.rest[from + len] != end {
            return Err(());
        }
        self.at = from + len + 1;
        Ok(&text[from..from + len])
    }

    fn iri_text(&mut self) -> Result<&'a str, ()> {
        self.at += 1; // '<'
        let iri = self.until(b'>')?;
        if let Some(valid) = self.valid.as_deref_mut() {
            if !valid.valid(iri) {
                return Err(());
            }
        }
        Ok(iri)
    }

    fn iri(&mut self) -> Result<Piece<'a>, ()> {
        self.iri_text().map(Piece::Iri)
    }

    fn blank(&mut self) -> Result<Piece<'a>, ()> {
        let text: &'a str = self.text;
        if self.rest.get(self.at + 1) != Some(&b':') {
            return Err(());
        }
        let from = self.at + 2;
        let len = self.rest[from..]
            .iter()
            .position(|b| !(b.is_ascii_alphanumeric() || *b == b'_' || *b == b'-'))
            .unwrap_or(self.rest.len() - from);
        if len == 0 || self.rest[from] == b'-' {
            return Err(());
        }
        self.at = from + len;
        if !matches!(self.peek(), None | Some(b' ' | b'\t' | b'<' | b'.')) {
            return Err(());
        }
        Ok(Piece::Blank(&text[from..from + len]))
    }

    fn literal(&mut self) -> Result<Piece<'a>, ()> {
        self.at += 1; // '"'
        let value = self.until(b'"')?;
        if value.contains('\r') {
            return Err(());
        }
        match self.peek() {
            Some(b'^') => {
                if self.rest.get(self.at + 1) != Some(&b'^')
                    || self.rest.get(self.at + 2) != Some(&b'<')
                {
                    return Err(());
                }
                self.at += 2;
                let datatype = self.iri_text()?;
                if tag_datatype(datatype) {
                    return Err(());
                }
                Ok(Piece::Literal(value, Some(datatype)))
            }
            Some(b'@') => Err(()),
            _ => Ok(Piece::Literal(value, None)),
        }
    }
}

/// Whether `datatype` is one only a language-tagged literal has (`rdf:langString`,
/// `rdf:dirLangString`): the strict parser refuses it written after `^^`, so the scanners
/// leave such a literal to it.
fn tag_datatype(datatype: &str) -> bool {
    datatype == rdf::LANG_STRING.as_str() || datatype == rdf::DIR_LANG_STRING.as_str()
}

/// IRIs found valid, at most `IRIS_KEPT` (then it starts again).
#[derive(Default)]
pub struct IriCache(HashSet<Box<str>, Fast>);

const IRIS_KEPT: usize = 1 << 14;

/// Whether a UTF-8 text has a character beyond U+FFFF (its first byte is 0xF0 or more).
fn astral(text: &str) -> bool {
    text.bytes().any(|b| b >= 0xF0)
}

/// Whether `iri` has the plainest form of an absolute IRI, `http(s)://host/path#fragment`
/// with a host of letters, digits, dots and hyphens and a path and fragment of unreserved
/// characters and slashes: every such text is a valid IRI (RFC 3987), so oxiri need not look
/// (tested against it). Anything else is left to oxiri.
fn plain_iri(iri: &str) -> bool {
    let Some(rest) = iri
        .strip_prefix("http://")
        .or_else(|| iri.strip_prefix("https://"))
    else {
        return false;
    };
    let rest = rest.as_bytes();
    let host = rest
        .iter()
        .position(|&b| b == b'/' || b == b'#')
        .unwrap_or(rest.len());
    if host == 0
        || !rest[..host]
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-')
    {
        return false;
    }
    let unreserved = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'~' | b'-');
    let rest = &rest[host..];
    let (path, fragment) = match rest.iter().position(|&b| b == b'#') {
        Some(i) => (&rest[..i], Some(&rest[i + 1..])),
        None => (rest, None),
    };
    path.iter().all(|&b| unreserved(b) || b == b'/')
        && fragment.is_none_or(|f| f.iter().all(|&b| unreserved(b) || b == b'/'))
}

impl IriCache {
    /// Whether the strict parser accepts `iri` as the IRI it read (no base: absolute).
    fn valid(&mut self, iri: &str) -> bool {
        if self.0.contains(iri) {
            return true;
        }
        if !plain_iri(iri) && (astral(iri) || NamedNode::new(iri).is_err()) {
            return false;
        }
        if self.0.len() >= IRIS_KEPT {
            self.0.clear();
        }
        self.0.insert(iri.into());
        true
    }

    fn literal(&mut self, literal: &Literal) -> bool {
        let value = literal.value();
        if value.contains(['\n', '\r']) || astral(value) {
            return false;
        }
        match literal.language() {
            // the strict parser validates the tag as written, oxrdf after lowercasing it:
            // the same when it is lowercase already
            Some(tag) => {
                !tag.bytes().any(|b| b.is_ascii_uppercase())
                    && Literal::new_language_tagged_literal("", tag).is_ok()
            }
            None => {
                let datatype = literal.datatype().as_str();
                !tag_datatype(datatype) && self.valid(datatype)
            }
        }
    }

    /// Whether the strict parser would have read `quad` as the lenient one did.
    fn quad(&mut self, quad: &Quad) -> bool {
        let subject = match &quad.subject {
            NamedOrBlankNode::NamedNode(n) => self.valid(n.as_str()),
            NamedOrBlankNode::BlankNode(_) => true,
        };
        #[allow(unreachable_patterns)]
        let object = match &quad.object {
            Term::NamedNode(n) => self.valid(n.as_str()),
            Term::BlankNode(_) => true,
            Term::Literal(l) => self.literal(l),
            _ => false,
        };
        let graph = match &quad.graph_name {
            GraphName::NamedNode(n) => self.valid(n.as_str()),
            _ => true,
        };
        subject && object && graph && self.valid(quad.predicate.as_str())
    }
}

enum Parser {
    TriG(LowLevelTriGParser),
    NQuads(LowLevelNQuadsParser),
}

impl<R: BufRead> Quads<R> {
    pub fn new(source: R, format: Format) -> Self {
        let parser = match format {
            Format::TriG => Parser::TriG(TriGParser::new().low_level()),
            Format::NQuads => Parser::NQuads(NQuadsParser::new().low_level()),
        };
        Quads {
            source,
            parser,
            lines: true,
            line: 0,
            newlines: 0,
            done: false,
            check: Check::Strict,
            count: 0,
        }
    }

    /// Read at full speed, every quad on line 0 (read again with lines to locate an error).
    pub fn without_lines(mut self) -> Self {
        self.lines = false;
        self
    }

    fn lenient(&mut self) {
        self.parser = match self.parser {
            Parser::TriG(_) => Parser::TriG(TriGParser::new().lenient().low_level()),
            Parser::NQuads(_) => Parser::NQuads(NQuadsParser::new().lenient().low_level()),
        };
    }

    /// N-Quads parsed leniently, each quad checked here (see the module's notes); stops,
    /// `unverified`, at the first quad it cannot vouch for or at any error. TriG is parsed
    /// strictly (a lenient TriG parser accepts prefixed names no check here can tell).
    pub fn verified(mut self) -> Self {
        if matches!(self.parser, Parser::NQuads(_)) {
            self.lenient();
            self.check = Check::Verified {
                valid: IriCache::default(),
                failed: false,
            };
        }
        self
    }

    /// The input read again, as a strict or verified reading read it: `quads` quads, then
    /// that reading's `error` if it had one; parsed leniently, unchecked.
    pub fn trusted(mut self, quads: u64, error: Option<ReplayError>) -> Self {
        self.lenient();
        self.check = Check::Trusted { quads, error };
        self
    }

    /// Read by bytes: N-Quads by `scan_line`, TriG by `trig::TriG`, each term's IRIs
    /// checked; stops, `unverified`, at the first line or statement it does not read (then
    /// read it with oxttl: `verified`, strictly for TriG).
    pub fn scanned(mut self) -> Self {
        self.check = self.scanning(Some(IriCache::default()));
        self
    }

    /// The input read again by bytes, unchecked, after a scanned reading read it whole
    /// (a line it cannot read now is an error: the file changed).
    pub fn scanned_again(mut self) -> Self {
        self.check = self.scanning(None);
        self
    }

    /// A scanned reading of this reading's format, its terms checked by `valid` if any.
    fn scanning(&self, valid: Option<IriCache>) -> Check {
        Check::Scanned {
            valid,
            failed: false,
            line: Vec::new(),
            trig: matches!(self.parser, Parser::TriG(_)).then(Box::default),
        }
    }

    /// Whether this reading is a scanned one (by bytes, not by oxttl).
    pub fn is_scanned(&self) -> bool {
        matches!(self.check, Check::Scanned { .. })
    }

    /// Whether a verified or scanned reading stopped at something it could not vouch for
    /// (its quads and error are then to be ignored: read the input another way).
    pub fn unverified(&self) -> bool {
        matches!(
            self.check,
            Check::Verified { failed: true, .. } | Check::Scanned { failed: true, .. }
        )
    }

    /// The next quad of a scanned reading.
    fn scan_next(&mut self) -> Option<Result<(Quad, u64), ReplayError>> {
        self.scan_with(|terms| terms.quad())
    }

    /// The next quad of a scanned reading as an assembler that keeps no triples needs it
    /// (`time`: the time predicate); None if the reading is not a scanned one.
    fn next_sketch(&mut self, time: &NamedNode) -> Option<Result<(Sketch<'_>, u64), ReplayError>> {
        if !self.is_scanned() {
            return None;
        }
        self.scan_with(|terms| terms.sketch(time))
    }

    fn scan_with<'s, T>(
        &'s mut self,
        make: impl FnOnce(Terms<'s>) -> T,
    ) -> Option<Result<(T, u64), ReplayError>> {
        let Check::Scanned {
            valid,
            failed,
            line,
            trig,
        } = &mut self.check
        else {
            return None;
        };
        if self.done {
            return None;
        }
        // the terms, None at the end of the input, Err where the text is not read by bytes
        let scanned = match trig {
            Some(trig) => trig.next(&mut self.source, valid.as_mut()).map_err(|_| ()),
            None => {
                let readable = loop {
                    line.clear();
                    match self.source.read_until(b'\n', line) {
                        Ok(0) => break Ok(false),
                        Ok(_) if blank(line) => {}
                        Ok(_) => break Ok(true),
                        Err(_) => break Err(()),
                    }
                };
                // the line is scanned once the loop is left: the terms borrow it
                let line: &'s Vec<u8> = line;
                match readable {
                    Ok(true) => match scan_terms(line, valid.as_mut()) {
                        Ok(Some(terms)) => Ok(Some(terms)),
                        _ => Err(()),
                    },
                    Ok(false) => Ok(None),
                    Err(()) => Err(()),
                }
            }
        };
        match scanned {
            Ok(Some(terms)) => {
                self.count += 1;
                Some(Ok((make(terms), 0)))
            }
            Ok(None) => {
                self.done = true;
                None
            }
            Err(()) => {
                self.done = true;
                if valid.is_some() {
                    *failed = true;
                    return None;
                }
                Some(Err(changed()))
            }
        }
    }

    /// Quads read so far.
    pub fn read(&self) -> u64 {
        self.count
    }

    fn parse_next(&mut self) -> Option<Result<Quad, oxttl::TurtleSyntaxError>> {
        match &mut self.parser {
            Parser::TriG(p) => p.parse_next(),
            Parser::NQuads(p) => p.parse_next(),
        }
    }

    /// Hand the parser the rest of the current line; false at the end of the input.
    fn feed(&mut self) -> std::io::Result<bool> {
        let buffer = self.source.fill_buf()?;
        if buffer.is_empty() {
            match &mut self.parser {
                Parser::TriG(p) => p.end(),
                Parser::NQuads(p) => p.end(),
            }
            return Ok(false);
        }
        if !self.lines {
            let n = buffer.len();
            match &mut self.parser {
                Parser::TriG(p) => p.extend_from_slice(buffer),
                Parser::NQuads(p) => p.extend_from_slice(buffer),
            }
            self.source.consume(n);
            return Ok(true);
        }
        let n = buffer
            .iter()
            .position(|&b| b == b'\n')
            .map_or(buffer.len(), |i| i + 1);
        self.line = self.newlines + 1;
        if buffer[n - 1] == b'\n' {
            self.newlines += 1;
        }
        match &mut self.parser {
            Parser::TriG(p) => p.extend_from_slice(&buffer[..n]),
            Parser::NQuads(p) => p.extend_from_slice(&buffer[..n]),
        }
        self.source.consume(n);
        Ok(true)
    }
}

impl<R: BufRead> Iterator for Quads<R> {
    /// A quad and the (1-based) line where it ends, or the error that stopped reading.
    type Item = Result<(Quad, u64), ReplayError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.is_scanned() {
            return self.scan_next();
        }
        if let Check::Trusted { quads, error } = &mut self.check {
            if self.count >= *quads {
                self.done = true;
                return error.take().map(Err);
            }
        }
        while !self.done {
            match self.parse_next() {
                Some(Ok(quad)) => {
                    if let Check::Verified { valid, failed } = &mut self.check {
                        if !valid.quad(&quad) {
                            *failed = true;
                            self.done = true;
                            return None;
                        }
                    }
                    self.count += 1;
                    return Some(Ok((quad, self.line)));
                }
                Some(Err(_)) if matches!(self.check, Check::Verified { .. }) => {
                    self.check = Check::Verified {
                        valid: IriCache::default(),
                        failed: true,
                    };
                    self.done = true;
                    return None;
                }
                Some(Err(e)) => {
                    self.done = true;
                    let at = e.location().start;
                    let format = match self.parser {
                        Parser::TriG(_) => "TriG",
                        Parser::NQuads(_) => "N-Quads",
                    };
                    return Some(Err(ReplayError {
                        line: Some(at.line + 1),
                        column: Some(at.column + 1),
                        message: format!("{format} syntax error: {}", e.message()),
                    }));
                }
                None => match self.feed() {
                    Ok(_) => self.done = self.done || self.parser_is_end(),
                    Err(_) if matches!(self.check, Check::Verified { .. }) => {
                        self.check = Check::Verified {
                            valid: IriCache::default(),
                            failed: true,
                        };
                        self.done = true;
                        return None;
                    }
                    Err(e) => {
                        self.done = true;
                        return Some(Err(read_failure(&e, None)));
                    }
                },
            }
        }
        None
    }
}

impl<R> Quads<R> {
    fn parser_is_end(&self) -> bool {
        match &self.parser {
            Parser::TriG(p) => p.is_end(),
            Parser::NQuads(p) => p.is_end(),
        }
    }
}

/// The time of the usual timestamp, `"YYYY-MM-DDThh:mm:ss(.s{1,9})?Z"^^xsd:dateTime` (or
/// `xsd:dateTimeStamp`) with a valid date and time, read directly; None for anything else,
/// which `timestamp_nanos` reads (and which agrees on these: tested).
fn usual_timestamp_nanos(term: &Term) -> Option<i128> {
    let Term::Literal(literal) = term else {
        return None;
    };
    let kind = literal.datatype().as_str().strip_prefix(XSD)?;
    if kind != "dateTime" && kind != "dateTimeStamp" {
        return None;
    }
    let b = literal.value().as_bytes();
    if b.len() < 20 || b[b.len() - 1] != b'Z' {
        return None;
    }
    let digits = |from: usize, to: usize| -> Option<i64> {
        b[from..to].iter().try_fold(0i64, |n, &c| {
            c.is_ascii_digit().then(|| n * 10 + i64::from(c - b'0'))
        })
    };
    if [b[4], b[7], b[10], b[13], b[16]] != [b'-', b'-', b'T', b':', b':'] {
        return None;
    }
    let (year, month, day) = (digits(0, 4)?, digits(5, 7)?, digits(8, 10)?);
    let (hour, minute, second) = (digits(11, 13)?, digits(14, 16)?, digits(17, 19)?);
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let month_days = match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        1..=12 => 31,
        _ => return None,
    };
    if year == 0 || day == 0 || day > month_days || hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    let fraction = &b[19..b.len() - 1];
    let nanos = match fraction {
        [] => 0,
        [b'.', rest @ ..] if (1..=9).contains(&rest.len()) => {
            digits(20, 20 + rest.len())? * 10i64.pow(9 - rest.len() as u32)
        }
        _ => return None,
    };
    // days since 1970-01-01 (Howard Hinnant's days_from_civil), years 1 to 9999
    let y = if month <= 2 { year - 1 } else { year };
    let (era, yoe) = (y / 400, y % 400);
    let doy = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    let days = era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468;
    let seconds = days * 86_400 + hour * 3_600 + minute * 60 + second;
    Some(i128::from(seconds) * 1_000_000_000 + i128::from(nanos))
}

/// A time as written for an event: its value, spelling and line.
#[derive(Debug, Clone)]
struct Given {
    ns: i128,
    term: Term,
    line: u64,
}

/// The timestamps read for one name, folded as the Python reader checks them (in file order:
/// the first that is not a time, or that differs in value from the first, is the problem),
/// with the interval's start and end (docs/decisions.md 71), each checked against the others
/// as soon as both are read: the first of these problems in file order is the one reported.
#[derive(Debug, Default)]
pub struct Stamps {
    time: Option<Given>,
    start: Option<Given>,
    end: Option<Given>,
    problem: Option<ReplayError>,
}

/// A role's predicate as messages name it (`time`: the time predicate).
fn role_name(role: Role, time: &NamedNode) -> String {
    match role {
        Role::Time => time.to_string(),
        Role::Start => "prov:startedAtTime".to_owned(),
        Role::End => "prov:endedAtTime".to_owned(),
    }
}

impl Stamps {
    /// Take in the time `value` of `name` in `role`, read on `line` (`time`: the time
    /// predicate, for messages).
    pub fn add(
        &mut self,
        name: &impl fmt::Display,
        role: Role,
        value: Term,
        line: u64,
        time: &NamedNode,
    ) {
        if self.problem.is_some() {
            return;
        }
        let ns = match usual_timestamp_nanos(&value).map_or_else(|| timestamp_nanos(&value), Ok) {
            Ok(ns) => ns,
            Err(m) => {
                let what = match role {
                    Role::Time => "a timestamp".to_owned(),
                    _ => format!("a {}", role_name(role, time)),
                };
                let message = format!("event {name} has {what} that is not a time: {m}");
                self.problem = Some(error_at(line, message));
                return;
            }
        };
        let slot = match role {
            Role::Time => &mut self.time,
            Role::Start => &mut self.start,
            Role::End => &mut self.end,
        };
        match slot {
            None => {
                *slot = Some(Given {
                    ns,
                    term: value,
                    line,
                })
            }
            Some(first) if first.ns != ns => {
                let what = match role {
                    Role::Time => "timestamps".to_owned(),
                    _ => format!("{} values", role_name(role, time)),
                };
                let message = format!(
                    "event {name} has two different {what}: {} (line {}) and {value}",
                    first.term, first.line
                );
                self.problem = Some(error_at(line, message));
                return;
            }
            Some(_) => return, // the same time again: nothing new to check
        }
        if self.start.is_none() && self.end.is_none() {
            return; // a point event's timestamp: the usual case, nothing more to check
        }
        self.problem = self
            .disagreement(name, role, time)
            .map(|m| error_at(line, m));
    }

    /// Whether the times read so far contradict each other, the one just read in `role`
    /// being the last.
    fn disagreement(
        &self,
        name: &impl fmt::Display,
        role: Role,
        time: &NamedNode,
    ) -> Option<String> {
        // "prov:endedAtTime "5" (line 7)", and without parentheses inside parentheses
        let spelled = |role: Role, given: &Given| {
            let name = role_name(role, time);
            format!("{name} {} (line {})", given.term, given.line)
        };
        let bare = |role: Role, given: &Given| {
            let name = role_name(role, time);
            format!("{name} {}, line {}", given.term, given.line)
        };
        if let (Some(end), Some(stamp)) = (&self.end, &self.time) {
            if end.ns != stamp.ns {
                let (first, second) = match role {
                    Role::Time => ((Role::End, end), (Role::Time, stamp)),
                    _ => ((Role::Time, stamp), (Role::End, end)),
                };
                return Some(format!(
                    "event {name} has two different ends: {} and {}",
                    spelled(first.0, first.1),
                    spelled(second.0, second.1)
                ));
            }
        }
        // the end is `prov:endedAtTime` if read, else the time predicate's: a timestamp read
        // after an end changes nothing more
        if role == Role::Time && self.end.is_some() {
            return None;
        }
        let (start, (end_role, end)) = match (&self.start, &self.end, &self.time) {
            (Some(start), Some(end), _) => (start, (Role::End, end)),
            (Some(start), None, Some(stamp)) => (start, (Role::Time, stamp)),
            _ => return None,
        };
        if is_datetime(&start.term) != is_datetime(&end.term) {
            return Some(format!(
                "event {name} has a start and an end of different kinds: {} and {} (both are \
                 xsd:dateTime, or both numbers of seconds)",
                spelled(Role::Start, start),
                spelled(end_role, end)
            ));
        }
        (start.ns > end.ns).then(|| {
            format!(
                "event {name} starts ({}) after it ends ({})",
                bare(Role::Start, start),
                bare(end_role, end)
            )
        })
    }

    /// Whether an end was read (`prov:endedAtTime` or the time predicate's), or a problem.
    pub fn settled(&self) -> bool {
        self.problem.is_some() || self.end.is_some() || self.time.is_some()
    }

    /// The problem with these timestamps, if one was found.
    pub fn problem(&self) -> Option<&ReplayError> {
        self.problem.as_ref()
    }

    /// Whether a start was read.
    pub fn started(&self) -> bool {
        self.start.is_some()
    }

    /// The interval read, once it has an end (the problem aside).
    pub fn when(&self) -> Option<When> {
        let end = self.end.as_ref().or(self.time.as_ref())?;
        Some(When {
            start_ns: self.start.as_ref().map_or(end.ns, |s| s.ns),
            time_ns: end.ns,
            dated: is_datetime(&end.term),
        })
    }

    /// What was read, as the stamp of a closed graph.
    pub fn stamp(self) -> Stamp {
        let when = self.when();
        match (self.problem, when) {
            (Some(problem), _) => Stamp::Bad(problem),
            (None, Some(when)) => Stamp::At(when),
            (None, None) if self.start.is_some() => Stamp::Unended,
            (None, None) => Stamp::Missing,
        }
    }
}

/// When an event occurred: over `[start_ns, time_ns]` (a point when they are equal), its end
/// written as an `xsd:dateTime` or not (`dated`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct When {
    pub start_ns: i128,
    pub time_ns: i128,
    pub dated: bool,
}

impl When {
    /// A point event at `time_ns`.
    pub fn point(time_ns: i128, dated: bool) -> Self {
        When {
            start_ns: time_ns,
            time_ns,
            dated,
        }
    }
}

/// A closed graph's time: none was read, a start without an end, its interval, or the
/// problem with its timestamps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stamp {
    Missing,
    /// `prov:startedAtTime` without `prov:endedAtTime` or the time predicate: judged as a
    /// missing timestamp (the end may have been past a syntax error).
    Unended,
    At(When),
    Bad(ReplayError),
}

/// A graph whose blocks and timestamps the assembler no longer waits for: `index` is its
/// rank by first appearance among the file's graphs, `line` where its first triple ends.
#[derive(Debug)]
pub struct Closed<T> {
    pub index: u64,
    pub name: Term,
    pub line: u64,
    pub triples: Vec<T>,
    pub stamp: Stamp,
}

/// Triples a graph has before its repeats are found by hash rather than by comparison.
const FEW_TRIPLES: usize = 8;

/// A graph still open: its triples in file order, their hashes once it has more than a few
/// (a graph is a set: a repeat is dropped; a hash seen before is checked against the
/// triples), its timestamps.
struct Open<T> {
    name: Term,
    line: u64,
    triples: Vec<T>,
    hashes: Option<HashSet<u64, Fast>>,
    stamps: Stamps,
}

impl<T: Hash + Eq> Open<T> {
    fn insert(&mut self, triple: T) {
        if self.hashes.is_none() {
            if self.triples.len() < FEW_TRIPLES {
                if !self.triples.contains(&triple) {
                    self.triples.push(triple);
                }
                return;
            }
            self.hashes = Some(self.triples.iter().map(fast_hash).collect());
        }
        let fresh = self
            .hashes
            .as_mut()
            .is_some_and(|h| h.insert(fast_hash(&triple)));
        if fresh || !self.triples.contains(&triple) {
            self.triples.push(triple);
        }
    }
}

/// Quads into graphs. At most `window` graphs are open (newest by first appearance); when
/// one more opens, the oldest is closed with what was read of it. Timestamps of names that
/// are not open wait as orphans, at most `window` of them; the oldest beyond that is
/// evicted. With an unbounded window nothing closes before `finish`: the whole file.
/// Triples are kept unless `keep_triples(false)`: then only names, lines and timestamps.
pub struct Assembler<T> {
    predicate: NamedNode,
    window: usize,
    keep: bool,
    open: VecDeque<Open<T>>,
    slots: HashMap<Term, u64, Fast>,
    first: u64,
    orphans: HashMap<Term, (u64, Stamps), Fast>,
    orphan_order: VecDeque<(u64, Term)>,
    orphan_count: u64,
    last_graph: Option<u64>,
    closed: VecDeque<Closed<T>>,
    unclosed: Vec<Term>,
    /// Whether the window ever closed a graph or evicted an orphan before the end.
    pub bounded: bool,
}

impl<T: Hash + Eq> Assembler<T> {
    pub fn new(predicate: NamedNode, window: usize) -> Self {
        Assembler {
            predicate,
            window: window.max(1),
            keep: true,
            open: VecDeque::new(),
            slots: HashMap::default(),
            first: 0,
            orphans: HashMap::default(),
            orphan_order: VecDeque::new(),
            orphan_count: 0,
            last_graph: None,
            closed: VecDeque::new(),
            unclosed: Vec::new(),
            bounded: false,
        }
    }

    /// Whether graphs keep their triples from now on (a graph open already keeps what it
    /// has): a reader that only judges the file needs none.
    pub fn keep_triples(&mut self, keep: bool) {
        self.keep = keep;
    }

    /// Take in one quad (read on `line`); `convert` makes an event triple of its triple.
    pub fn add(&mut self, quad: Quad, line: u64, convert: &mut impl FnMut(Triple) -> T) {
        let name: Term = match quad.graph_name {
            GraphName::DefaultGraph => {
                self.last_graph = None;
                if let Some(role) = Role::of(quad.predicate.as_str(), self.predicate.as_str()) {
                    self.stamp(role, quad.subject.into(), quad.object, line);
                }
                return;
            }
            GraphName::NamedNode(n) => n.into(),
            GraphName::BlankNode(b) => b.into(),
        };
        let index = self.named(name, line);
        if self.keep {
            let triple = convert(Triple::new(quad.subject, quad.predicate, quad.object));
            self.open[(index - self.first) as usize].insert(triple);
        }
    }

    /// Take in a quad read ahead (`Scanned`): as `add`, from the whole quad or from what an
    /// assembler that keeps no triples needs of it (a graph of the line before: nothing).
    fn add_scanned(&mut self, item: Scanned, convert: &mut impl FnMut(Triple) -> T) {
        match item {
            Scanned::Quad(quad) => self.add(quad, 0, convert),
            Scanned::Named(name) => {
                self.named(name, 0);
            }
            Scanned::Same => {}
            Scanned::Stamp(role, name, value) => {
                self.last_graph = None;
                self.stamp(role, name, value, 0);
            }
            Scanned::Other => self.last_graph = None,
        }
    }

    /// A triple of graph `name` was read on `line`: the graph's index (opened if need be).
    fn named(&mut self, name: Term, line: u64) -> u64 {
        let index = match self.slots.get(&name) {
            Some(&i) => i,
            None => self.open_graph(name, line),
        };
        self.last_graph = Some(index);
        index
    }

    fn open_graph(&mut self, name: Term, line: u64) -> u64 {
        let index = self.first + self.open.len() as u64;
        let stamps = match self.orphans.remove(&name) {
            Some((_, s)) => {
                self.drop_stale_orphans();
                s
            }
            None => Stamps::default(),
        };
        self.slots.insert(name.clone(), index);
        self.open.push_back(Open {
            name,
            line,
            triples: Vec::new(),
            hashes: None,
            stamps,
        });
        if self.open.len() > self.window {
            self.bounded = true;
            self.close_front();
        }
        index
    }

    fn close_front(&mut self) {
        let Some(graph) = self.open.pop_front() else {
            return;
        };
        self.slots.remove(&graph.name);
        let index = self.first;
        self.first += 1;
        self.closed.push_back(Closed {
            index,
            name: graph.name,
            line: graph.line,
            triples: graph.triples,
            stamp: graph.stamps.stamp(),
        });
    }

    fn stamp(&mut self, role: Role, name: Term, value: Term, line: u64) {
        let time = &self.predicate;
        if let Some(&i) = self.slots.get(&name) {
            let graph = &mut self.open[(i - self.first) as usize];
            graph.stamps.add(&name, role, value, line, time);
            return;
        }
        if let Some((_, stamps)) = self.orphans.get_mut(&name) {
            stamps.add(&name, role, value, line, time);
            return;
        }
        let mut stamps = Stamps::default();
        stamps.add(&name, role, value, line, time);
        self.orphan_count += 1;
        self.orphan_order
            .push_back((self.orphan_count, name.clone()));
        self.orphans.insert(name, (self.orphan_count, stamps));
        while self.orphans.len() > self.window {
            self.bounded = true;
            if let Some((id, name)) = self.orphan_order.pop_front() {
                if self.orphans.get(&name).is_some_and(|(i, _)| *i == id) {
                    self.orphans.remove(&name);
                    self.unclosed.push(name);
                }
            }
        }
    }

    /// Forget queue entries of orphans a graph took, so the queue stays near the map's size.
    fn drop_stale_orphans(&mut self) {
        let live = |orphans: &HashMap<Term, (u64, Stamps), Fast>, (id, name): &(u64, Term)| {
            orphans.get(name).is_some_and(|(i, _)| i == id)
        };
        while let Some(front) = self.orphan_order.front() {
            if live(&self.orphans, front) {
                break;
            }
            self.orphan_order.pop_front();
        }
        if self.orphan_order.len() > 2 * self.orphans.len() + 16 {
            let orphans = &self.orphans;
            self.orphan_order.retain(|entry| live(orphans, entry));
        }
    }

    /// The next closed graph, in order of first appearance.
    pub fn pop(&mut self) -> Option<Closed<T>> {
        self.closed.pop_front()
    }

    /// Names read but not closed as a graph, taken by the caller: orphan timestamps evicted
    /// (or left at the end), graphs dropped after an error. If one names a closed graph, the
    /// window did not see that graph whole.
    pub fn take_unclosed(&mut self) -> Vec<Term> {
        std::mem::take(&mut self.unclosed)
    }

    /// The input ended (after an error if `failed`): close every open graph, except, after an
    /// error, the one being read and those that appeared after it (maybe incomplete). Their
    /// names join the unclosed ones: one of them may be a graph closed earlier and written
    /// again (the Python reader then cuts at that graph's first appearance, which a window
    /// cannot see).
    pub fn finish(&mut self, failed: bool) {
        if let (true, Some(bad)) = (failed, self.last_graph) {
            let keep = bad.saturating_sub(self.first) as usize;
            let dropped = self.open.split_off(keep.min(self.open.len()));
            for graph in dropped {
                self.slots.remove(&graph.name);
                self.unclosed.push(graph.name);
            }
        }
        while !self.open.is_empty() {
            self.close_front();
        }
        self.unclosed
            .extend(self.orphans.drain().map(|(name, _)| name));
        self.orphan_order.clear();
    }
}

/// Closed graphs of a file in order of first appearance: `Quads` into an `Assembler`.
pub struct Graphs<R, T, F> {
    quads: Quads<R>,
    assembler: Assembler<T>,
    convert: F,
    read_error: Option<ReplayError>,
    finished: bool,
    /// A scanned reading's lines read and checked on a thread of their own (`scanned_ahead`):
    /// `quads` is then a placeholder until that thread ends and hands its reading back.
    ahead: Option<Ahead<R>>,
}

impl<R: BufRead, T: Hash + Eq, F: FnMut(Triple) -> T> Graphs<R, T, F> {
    pub fn new(source: R, format: Format, predicate: NamedNode, window: usize, convert: F) -> Self {
        Graphs {
            quads: Quads::new(source, format),
            assembler: Assembler::new(predicate, window),
            convert,
            read_error: None,
            finished: false,
            ahead: None,
        }
    }

    /// The input ended, with its error if it broke: the assembler closes what is open.
    fn end(&mut self, error: Option<ReplayError>) {
        let failed = error.is_some();
        self.read_error = error;
        self.finished = true;
        self.assembler.finish(failed);
    }

    /// The syntax or read error that ended the input early, once it did.
    pub fn read_error(&self) -> Option<&ReplayError> {
        self.read_error.as_ref()
    }

    pub fn assembler(&mut self) -> &mut Assembler<T> {
        &mut self.assembler
    }

    /// Read at full speed, every line 0 (`Quads::without_lines`).
    pub fn without_lines(mut self) -> Self {
        self.quads = self.quads.without_lines();
        self
    }

    /// Read at full speed, N-Quads checked here (`Quads::verified`).
    pub fn verified(mut self) -> Self {
        self.quads = self.quads.without_lines().verified();
        self
    }

    /// Read again at full speed as an earlier reading read it (`Quads::trusted`).
    pub fn trusted(mut self, quads: u64, error: Option<ReplayError>) -> Self {
        self.quads = self.quads.without_lines().trusted(quads, error);
        self
    }
}

impl<R: BufRead + Send + 'static, T: Hash + Eq, F: FnMut(Triple) -> T> Graphs<R, T, F> {
    /// Read at full speed by bytes (`Quads::scanned`: N-Quads by `scan_line`, TriG by
    /// `trig::TriG`), the text read and checked on a thread of their own while this one
    /// assembles graphs (`placeholder`: a source standing in for the one the thread takes).
    pub fn scanned_ahead(mut self, placeholder: R) -> Self {
        self.quads = self.quads.without_lines().scanned();
        if self.quads.is_scanned() {
            let quads = std::mem::replace(&mut self.quads, Quads::new(placeholder, Format::NQuads));
            self.ahead = Some(Ahead::spawn(quads, self.assembler.predicate.clone()));
        }
        self
    }

    /// Read again by bytes, unchecked (`Quads::scanned_again`).
    pub fn scanned_again(mut self) -> Self {
        self.quads = self.quads.without_lines().scanned_again();
        self
    }

    /// Whether this reading is a scanned one.
    pub fn is_scanned(&self) -> bool {
        self.quads.is_scanned()
    }

    /// Whether a verified or scanned reading stopped short: read the input another way.
    pub fn unverified(&self) -> bool {
        self.quads.unverified()
    }

    /// Quads read so far.
    pub fn quads_read(&self) -> u64 {
        self.quads.read()
    }
}

impl<R: BufRead, T: Hash + Eq, F: FnMut(Triple) -> T> Iterator for Graphs<R, T, F> {
    type Item = Closed<T>;

    fn next(&mut self) -> Option<Closed<T>> {
        loop {
            if let Some(graph) = self.assembler.pop() {
                return Some(graph);
            }
            if self.finished {
                return None;
            }
            if let Some(ahead) = self.ahead.as_mut() {
                if !self.assembler.keep {
                    ahead.keep.store(false, Ordering::Relaxed);
                }
                match ahead.next() {
                    Some(item) => self.assembler.add_scanned(item, &mut self.convert),
                    None => {
                        let (error, quads) = self.ahead.take().map_or_else(
                            || (Some(error("the reader thread stopped")), None),
                            Ahead::finish,
                        );
                        if let Some(quads) = quads {
                            self.quads = quads;
                        }
                        self.end(error);
                    }
                }
                continue;
            }
            match self.quads.next() {
                Some(Ok((quad, line))) => self.assembler.add(quad, line, &mut self.convert),
                Some(Err(e)) => self.end(Some(e)),
                None => self.end(None),
            }
        }
    }
}

/// What the judge concluded about a file: how many events it delivers (the first ones by
/// first appearance), the latest of their times, whether they are in time order, and the
/// error that ends them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub delivered: u64,
    pub max_time: Option<i128>,
    pub in_order: bool,
    pub error: Option<ReplayError>,
}

/// The Python reader's error rules, applied to closed graphs in order of first appearance:
/// a graph with a bad timestamp ends the events; one with none (or a start and no end) ends
/// them too unless the file has a syntax error (its timestamp may have been after it: the
/// graph is skipped).
/// Events are delivered provisionally until the end of the input decides.
#[derive(Debug)]
pub struct Judge {
    time_predicate: String,
    running: Outcome,
    missing: Option<Outcome>,
    problem: Option<Outcome>,
    last_time: Option<i128>,
}

impl Judge {
    pub fn new(time_predicate: &str) -> Self {
        Judge {
            time_predicate: time_predicate.to_owned(),
            running: Outcome {
                delivered: 0,
                max_time: None,
                in_order: true,
                error: None,
            },
            missing: None,
            problem: None,
            last_time: None,
        }
    }

    /// The graph's rank among delivered events if it is (provisionally) one, else None.
    pub fn judge<T>(&mut self, graph: &Closed<T>) -> Option<u64> {
        if self.problem.is_some() {
            return None;
        }
        let at_cut = |error: ReplayError, running: &Outcome| Outcome {
            error: Some(error),
            ..running.clone()
        };
        match &graph.stamp {
            Stamp::At(When { time_ns: t, .. }) => {
                let rank = self.running.delivered;
                self.running.delivered += 1;
                self.running.max_time = self.running.max_time.max(Some(*t));
                if self.last_time.is_some_and(|last| *t < last) {
                    self.running.in_order = false;
                }
                self.last_time = Some(*t);
                Some(rank)
            }
            Stamp::Bad(e) => {
                self.problem = Some(at_cut(e.clone(), &self.running));
                None
            }
            Stamp::Missing | Stamp::Unended => {
                if self.missing.is_none() {
                    let message = if graph.stamp == Stamp::Missing {
                        format!(
                            "event {} has no timestamp (expected a <{}> triple on the graph \
                             name in the default graph)",
                            graph.name, self.time_predicate
                        )
                    } else {
                        unended(&graph.name, &self.time_predicate)
                    };
                    let e = error_at(graph.line, message);
                    self.missing = Some(at_cut(e, &self.running));
                }
                None
            }
        }
    }

    /// Whether the events delivered so far are in time order.
    pub fn in_order(&self) -> bool {
        self.running.in_order
    }

    /// The verdict once the input ended (`read_error`: the syntax or read error, if any).
    pub fn finish(self, read_error: Option<&ReplayError>) -> Outcome {
        let cut = match read_error {
            Some(_) => self.problem,
            None => self.missing.or(self.problem),
        };
        cut.unwrap_or(Outcome {
            error: read_error.cloned(),
            ..self.running
        })
    }
}

/// What is said of an event with a start but no end (`time`: the time predicate's IRI).
pub fn unended(name: &impl fmt::Display, time: &str) -> String {
    format!("event {name} has prov:startedAtTime but no end (prov:endedAtTime or <{time}>)")
}

/// Every event of a replay file, sorted by time, its end (ties in order of first
/// appearance); the error the Python reader reports, if any.
pub fn read_events(
    reader: impl Read,
    format: Format,
    time_predicate_iri: &str,
    dictionary: &mut Dictionary,
) -> Result<Vec<Event>, ReplayError> {
    let intern = |t: Triple| {
        [
            dictionary.intern(t.subject.into()),
            dictionary.intern(t.predicate.into()),
            dictionary.intern(t.object),
        ]
    };
    let events = read_graphs(reader, format, time_predicate_iri, intern)?;
    let mut out: Vec<Event> = events
        .into_iter()
        .map(|(when, name, triples)| Event {
            time_ns: when.time_ns,
            start_ns: when.start_ns,
            dated: when.dated,
            graph: dictionary.intern(name),
            triples,
        })
        .collect();
    out.sort_by_key(|e| e.time_ns); // stable: ties keep their order of first appearance
    Ok(out)
}

/// Every event of a replay file held whole, in order of first appearance: its time, its
/// graph's name and its triples as `convert` makes them (`read_events` interns them; a live
/// message keeps them as they are, `stream::inlet`); the error the Python reader reports,
/// if any, and then no event.
pub fn read_graphs<T: Hash + Eq>(
    reader: impl Read,
    format: Format,
    time_predicate_iri: &str,
    convert: impl FnMut(Triple) -> T,
) -> Result<Vec<(When, Term, Vec<T>)>, ReplayError> {
    let predicate = time_predicate(time_predicate_iri)?;
    let mut judge = Judge::new(time_predicate_iri);
    let mut events = Vec::new();
    let mut graphs = Graphs::new(
        BufReader::new(reader),
        format,
        predicate,
        usize::MAX,
        convert,
    );
    for graph in graphs.by_ref() {
        if let (Some(_), Stamp::At(when)) = (judge.judge(&graph), &graph.stamp) {
            events.push((*when, graph.name, graph.triples));
        }
    }
    let read_error = graphs.read_error().cloned();
    drop(graphs);
    match judge.finish(read_error.as_ref()).error {
        Some(e) => Err(e),
        None => Ok(events),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TRIG: &str = r#"@prefix : <http://ex.org/> .
@prefix prov: <http://www.w3.org/ns/prov#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
:g2 { :b :v 2 . :b :v 2 . }
:g2 prov:generatedAtTime "2024-01-01T10:00:20.3Z"^^xsd:dateTime .
:g1 prov:generatedAtTime "2024-01-01T10:00:20.1Z"^^xsd:dateTime .
:g1 { :a :v 1 . :a :w "x" . }
:other :p :q .
"#;

    #[test]
    fn events_are_sorted_exact_and_deduplicated() {
        let mut dict = Dictionary::new();
        let events =
            read_events(TRIG.as_bytes(), Format::TriG, GENERATED_AT_TIME, &mut dict).unwrap();
        assert_eq!(events.len(), 2);
        assert_eq!(dict.get(events[0].graph).to_string(), "<http://ex.org/g1>");
        assert_eq!(events[0].time_ns, 1_704_103_220_100_000_000);
        assert_eq!(events[1].time_ns - events[0].time_ns, 200_000_000);
        assert_eq!(events[0].triples.len(), 2);
        assert_eq!(events[1].triples.len(), 1);
    }

    #[test]
    fn usual_timestamps_are_read_as_the_general_reader_reads_them() {
        let xsd = |kind: &str| format!("http://www.w3.org/2001/XMLSchema#{kind}");
        let mut usual = 0;
        for year in [
            "0000", "0001", "0004", "0100", "1582", "1899", "1900", "1969", "1970",
        ]
        .into_iter()
        .chain([
            "1999", "2000", "2024", "2026", "2100", "2400", "9999", "20x4",
        ]) {
            for month in ["00", "01", "02", "03", "04", "06", "09", "11", "12", "13"] {
                for day in ["00", "01", "09", "28", "29", "30", "31", "32"] {
                    for time in ["00:00:00", "23:59:59", "12:34:56", "24:00:00", "23:60:00"]
                        .into_iter()
                        .chain(["23:59:60", "1:00:00"])
                    {
                        for fraction in ["", ".", ".1", ".05", ".123456789", ".1234567891"] {
                            for (zone, kind) in [("Z", "dateTime"), ("Z", "dateTimeStamp")]
                                .into_iter()
                                .chain([("", "dateTime"), ("+01:00", "dateTime")])
                                .chain([("Z", "date"), ("Z ", "dateTime")])
                            {
                                let text = format!("{year}-{month}-{day}T{time}{fraction}{zone}");
                                let term: Term = oxrdf::Literal::new_typed_literal(
                                    &text,
                                    NamedNode::new(xsd(kind)).unwrap(),
                                )
                                .into();
                                if let Some(t) = usual_timestamp_nanos(&term) {
                                    usual += 1;
                                    assert_eq!(timestamp_nanos(&term), Ok(t), "{text}");
                                }
                            }
                        }
                    }
                }
            }
        }
        assert!(usual > 10_000, "{usual}");
    }

    /// Every line `scan_line` reads, oxttl's strict N-Quads parser reads as the same quad
    /// (and a blank line as none); the lines it refuses are left to oxttl.
    #[test]
    fn scanned_lines_are_read_as_the_strict_parser_reads_them() {
        let iris = [
            "<http://ex.org/a>",
            "<http://ex.org/a b>",
            "<rel>",
            "<http://ex.org/%zz>",
            "<http://ex.org/\\u0041>",
            "<http://[::1]:8080/x?q=1#f>",
            "<urn:x>",
            "<http://ex.org/é>",
            "<http://ex.org/\u{1F600}>",
            "<>",
            "<http://ex.org/a{b}>",
            "<http://ex.org/a",
        ];
        let blanks = ["_:b1", "_:b.c", "_:-b", "_:b-", "_:", "_:é", "_:b_c9"];
        let literals = [
            "\"x\"",
            "\"\"",
            "\"a\\nb\"",
            "\"a\rb\"",
            "\"caf\u{e9} \u{1F600}\"",
            "\"x\"^^<http://www.w3.org/2001/XMLSchema#integer>",
            "\"x\"^^<http://www.w3.org/2001/XMLSchema#string>",
            "\"x\"^^<http://www.w3.org/1999/02/22-rdf-syntax-ns#langString>",
            "\"x\"^^<bad iri>",
            "\"x\"^ ^<http://ex.org/d>",
            "\"x\" ^^<http://ex.org/d>",
            "\"x\"@en",
            "\"x",
            "\"x\"\"y\"",
        ];
        let ends = [
            " .",
            ".",
            " . ",
            "\t.\t",
            " . # c",
            " .\r",
            " . <http://ex.org/z> .",
            "",
        ];
        let terms: Vec<&str> = iris.iter().chain(&blanks).copied().collect();
        let objects: Vec<&str> = terms.iter().chain(&literals).copied().collect();
        let graphs: Vec<&str> = std::iter::once("").chain(terms.iter().copied()).collect();
        let mut lines: Vec<String> = vec![String::new(), "  ".into(), "# c".into(), "\r".into()];
        for (i, s) in terms.iter().enumerate() {
            for (j, o) in objects.iter().enumerate() {
                let p = iris[(i + j) % iris.len()];
                let g = graphs[(i * 7 + j) % graphs.len()];
                let end = ends[(i + j * 3) % ends.len()];
                lines.push(format!("{s} {p} {o} {g}{end}"));
                lines.push(format!("{s} <http://ex.org/p> {o}{end}"));
                lines.push(format!("{s}\t<http://ex.org/p>  {o} <http://ex.org/g> ."));
                lines.push(format!("{s}<http://ex.org/p>{o}{g}."));
            }
        }
        let mut scanned = 0;
        for line in &lines {
            let text = format!("{line}\n");
            let mut valid = IriCache::default();
            let Ok(quad) = scan_line(text.as_bytes(), Some(&mut valid)) else {
                continue;
            };
            scanned += 1;
            let strict: Vec<Result<Quad, String>> = NQuadsParser::new()
                .for_slice(text.as_bytes())
                .map(|r| r.map_err(|e| e.to_string()))
                .collect();
            assert_eq!(
                strict,
                quad.clone().into_iter().map(Ok).collect::<Vec<_>>(),
                "{line:?}"
            );
            // a sketch says what the quad says to an assembler that keeps no triples
            if let Some(quad) = &quad {
                let time = NamedNode::new_unchecked("http://ex.org/p");
                let terms = scan_terms(text.as_bytes(), None).unwrap().unwrap();
                match (terms.sketch(&time), &quad.graph_name) {
                    (Sketch::Named(name), GraphName::NamedNode(n)) => {
                        assert_eq!(name.term(), Term::from(n.clone()))
                    }
                    (Sketch::Named(name), GraphName::BlankNode(b)) => {
                        assert_eq!(name.term(), Term::from(b.clone()))
                    }
                    (Sketch::Stamp(role, name, value), GraphName::DefaultGraph) => {
                        assert_eq!(role, Role::Time);
                        assert_eq!(quad.predicate, time);
                        assert_eq!(name, Term::from(quad.subject.clone()));
                        assert_eq!(value, quad.object);
                    }
                    (Sketch::Other, GraphName::DefaultGraph) => assert_ne!(quad.predicate, time),
                    _ => panic!("{line:?}: the sketch is not the quad's"),
                }
            }
            // and unchecked, the same quad
            let again = scan_line(text.as_bytes(), None).map_err(|()| line.clone());
            assert_eq!(
                again,
                scan_line(text.as_bytes(), Some(&mut valid)).map_err(|()| line.clone())
            );
        }
        assert!(scanned > 100, "{scanned} of {}", lines.len());
    }

    /// Every text `plain_iri` vouches for, oxiri accepts; texts drawn from its alphabet and
    /// a few others (a small deterministic generator: no dependency).
    #[test]
    fn plain_iris_are_valid_iris() {
        let alphabet = b"aZ09.-_~/#:?%@[]! ";
        let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut plain = 0;
        for i in 0..200_000 {
            let len = (next() % 12) as usize;
            let tail: String = (0..len)
                .map(|_| char::from(alphabet[(next() % alphabet.len() as u64) as usize]))
                .collect();
            let head = ["http://", "https://", "http:/", "ftp://", "http://a"][i % 5];
            let iri = format!("{head}{tail}");
            if plain_iri(&iri) {
                plain += 1;
                assert!(NamedNode::new(iri.as_str()).is_ok(), "{iri:?}");
            }
        }
        assert!(plain > 1000, "{plain}");
        for iri in [
            "http://stockmarket.org/event/12",
            "http://www.w3.org/2001/XMLSchema#integer",
            "https://a-b.c/d_e~f/#g",
        ] {
            assert!(plain_iri(iri), "{iri}");
        }
        for iri in [
            "http://",
            "http:///x",
            "http://a b",
            "http://[::1]/",
            "http://a/%zz",
            "http://a#b#c",
        ] {
            assert!(!plain_iri(iri), "{iri}");
        }
    }

    #[test]
    fn formats_are_told_by_name_in_any_case() {
        assert_eq!(Format::of_path("a/b.TriG.GZ"), Some(Format::TriG));
        assert_eq!(Format::of_path("b.nquads"), Some(Format::NQuads));
        assert_eq!(Format::of_path("b.ttl"), None);
    }

    #[test]
    fn errors_say_where() {
        let mut dict = Dictionary::new();
        let bad = "<http://ex.org/g> { <http://ex.org/a> <http://ex.org/b> . }";
        let err =
            read_events(bad.as_bytes(), Format::TriG, GENERATED_AT_TIME, &mut dict).unwrap_err();
        assert_eq!(err.line, Some(1), "{err}");
        let missing = "<http://ex.org/g> { <http://ex.org/a> <http://ex.org/b> 1 . }";
        let err = read_events(
            missing.as_bytes(),
            Format::TriG,
            GENERATED_AT_TIME,
            &mut dict,
        )
        .unwrap_err();
        assert!(err.message.contains("has no timestamp"), "{err}");
    }

    const SECOND: i128 = 1_000_000_000;

    /// (graph's local name, start and end in seconds, dated) of each event read whole.
    fn spans(text: &str, format: Format) -> Result<Vec<(String, i128, i128, bool)>, ReplayError> {
        let mut dict = Dictionary::new();
        let events = read_events(text.as_bytes(), format, GENERATED_AT_TIME, &mut dict)?;
        Ok(events
            .iter()
            .map(|e| {
                let name = dict.get(e.graph).to_string();
                let name = name
                    .trim_start_matches("<http://ex.org/")
                    .trim_end_matches('>');
                (
                    name.to_owned(),
                    e.start_ns / SECOND,
                    e.time_ns / SECOND,
                    e.dated,
                )
            })
            .collect())
    }

    /// Events that last, each way of writing one, and point events among them.
    const INTERVALS_TRIG: &str = r#"@prefix : <http://ex.org/> .
@prefix prov: <http://www.w3.org/ns/prov#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
:g1 { :a :v 1 }
:g1 prov:startedAtTime 2 ; prov:endedAtTime 10 .
:g2 prov:startedAtTime 3 ; prov:generatedAtTime 5 .
:g2 { :b :v 2 . :b prov:startedAtTime 0 }
:g3 { :c :v 3 }
:g3 prov:endedAtTime 5 .
:g4 { :d :v 4 }
:g4 prov:generatedAtTime 1 .
:g5 { :e :v 5 }
:g5 prov:startedAtTime "1970-01-01T00:00:20Z"^^xsd:dateTime .
:g5 prov:endedAtTime "1970-01-01T00:00:30Z"^^xsd:dateTime ;
    prov:generatedAtTime "1970-01-01T00:00:30.0Z"^^xsd:dateTime .
"#;

    /// The same events in N-Quads.
    const INTERVALS_NQUADS: &str = r#"<http://ex.org/a> <http://ex.org/v> "1"^^<http://www.w3.org/2001/XMLSchema#integer> <http://ex.org/g1> .
<http://ex.org/g1> <http://www.w3.org/ns/prov#startedAtTime> "2"^^<http://www.w3.org/2001/XMLSchema#integer> .
<http://ex.org/g1> <http://www.w3.org/ns/prov#endedAtTime> "10"^^<http://www.w3.org/2001/XMLSchema#integer> .
<http://ex.org/g2> <http://www.w3.org/ns/prov#startedAtTime> "3"^^<http://www.w3.org/2001/XMLSchema#integer> .
<http://ex.org/g2> <http://www.w3.org/ns/prov#generatedAtTime> "5"^^<http://www.w3.org/2001/XMLSchema#integer> .
<http://ex.org/b> <http://ex.org/v> "2"^^<http://www.w3.org/2001/XMLSchema#integer> <http://ex.org/g2> .
<http://ex.org/b> <http://www.w3.org/ns/prov#startedAtTime> "0"^^<http://www.w3.org/2001/XMLSchema#integer> <http://ex.org/g2> .
<http://ex.org/c> <http://ex.org/v> "3"^^<http://www.w3.org/2001/XMLSchema#integer> <http://ex.org/g3> .
<http://ex.org/g3> <http://www.w3.org/ns/prov#endedAtTime> "5"^^<http://www.w3.org/2001/XMLSchema#integer> .
<http://ex.org/d> <http://ex.org/v> "4"^^<http://www.w3.org/2001/XMLSchema#integer> <http://ex.org/g4> .
<http://ex.org/g4> <http://www.w3.org/ns/prov#generatedAtTime> "1"^^<http://www.w3.org/2001/XMLSchema#integer> .
<http://ex.org/e> <http://ex.org/v> "5"^^<http://www.w3.org/2001/XMLSchema#integer> <http://ex.org/g5> .
<http://ex.org/g5> <http://www.w3.org/ns/prov#startedAtTime> "1970-01-01T00:00:20Z"^^<http://www.w3.org/2001/XMLSchema#dateTime> .
<http://ex.org/g5> <http://www.w3.org/ns/prov#endedAtTime> "1970-01-01T00:00:30Z"^^<http://www.w3.org/2001/XMLSchema#dateTime> .
<http://ex.org/g5> <http://www.w3.org/ns/prov#generatedAtTime> "1970-01-01T00:00:30.0Z"^^<http://www.w3.org/2001/XMLSchema#dateTime> .
"#;

    /// Ordered by their ends, ties in order of first appearance (g2 before g3, both ending at
    /// 5, though g3 starts later); a start or end triple inside a graph is its data.
    #[test]
    fn events_that_last_are_read_with_their_start_and_ordered_by_their_end() {
        let expected = vec![
            ("g4".to_owned(), 1, 1, false),
            ("g2".to_owned(), 3, 5, false),
            ("g3".to_owned(), 5, 5, false),
            ("g1".to_owned(), 2, 10, false),
            ("g5".to_owned(), 20, 30, true),
        ];
        assert_eq!(spans(INTERVALS_TRIG, Format::TriG).unwrap(), expected);
        assert_eq!(spans(INTERVALS_NQUADS, Format::NQuads).unwrap(), expected);
        let mut dict = Dictionary::new();
        let events = read_events(
            INTERVALS_NQUADS.as_bytes(),
            Format::NQuads,
            GENERATED_AT_TIME,
            &mut dict,
        )
        .unwrap();
        assert_eq!(
            events[1].triples.len(),
            2,
            "g2's own prov:startedAtTime triple"
        );
        // the scanner sketches the two predicates' lines as timestamps
        let time = NamedNode::new_unchecked(GENERATED_AT_TIME);
        let roles: Vec<Option<Role>> = INTERVALS_NQUADS
            .lines()
            .map(|line| {
                match scan_terms(line.as_bytes(), None)
                    .unwrap()
                    .unwrap()
                    .sketch(&time)
                {
                    Sketch::Stamp(role, ..) => Some(role),
                    _ => None,
                }
            })
            .collect();
        assert_eq!(
            &roles[..5],
            [
                None,
                Some(Role::Start),
                Some(Role::End),
                Some(Role::Start),
                Some(Role::Time)
            ]
        );
        assert_eq!(roles[6], None, "a graph's triple is data");
    }

    /// Files of point events read as before: each event's start is its time.
    #[test]
    fn point_events_start_when_they_end() {
        let mut dict = Dictionary::new();
        let events =
            read_events(TRIG.as_bytes(), Format::TriG, GENERATED_AT_TIME, &mut dict).unwrap();
        let g = |name: &str| dict.intern(NamedNode::new_unchecked(name).into());
        let ids = |s: &str, p: &str, o: Term| [g(s), g(p), dict.intern(o)];
        let int = |v: i64| Term::from(Literal::from(v));
        let expected = vec![
            Event {
                time_ns: 1_704_103_220_100_000_000,
                start_ns: 1_704_103_220_100_000_000,
                dated: true,
                graph: g("http://ex.org/g1"),
                triples: vec![
                    ids("http://ex.org/a", "http://ex.org/v", int(1)),
                    ids(
                        "http://ex.org/a",
                        "http://ex.org/w",
                        Literal::new_simple_literal("x").into(),
                    ),
                ],
            },
            Event {
                time_ns: 1_704_103_220_300_000_000,
                start_ns: 1_704_103_220_300_000_000,
                dated: true,
                graph: g("http://ex.org/g2"),
                triples: vec![ids("http://ex.org/b", "http://ex.org/v", int(2))],
            },
        ];
        assert_eq!(events, expected);
    }

    /// The error reading `lines` (after the TriG prefixes, so counted from line 4).
    fn interval_error(lines: &str) -> ReplayError {
        let text = format!(
            "@prefix : <http://ex.org/> .\n@prefix prov: <http://www.w3.org/ns/prov#> .\n\
             @prefix xsd: <http://www.w3.org/2001/XMLSchema#> .\n{lines}"
        );
        spans(&text, Format::TriG).unwrap_err()
    }

    #[test]
    fn an_interval_s_problems_are_located() {
        let e =
            interval_error(":g { :a :v 1 }\n:g prov:startedAtTime 5 .\n:g prov:endedAtTime 4 .\n");
        assert_eq!(e.line, Some(6), "{e}");
        assert_eq!(
            e.message,
            "event <http://ex.org/g> starts (prov:startedAtTime \
             \"5\"^^<http://www.w3.org/2001/XMLSchema#integer>, line 5) after it ends \
             (prov:endedAtTime \"4\"^^<http://www.w3.org/2001/XMLSchema#integer>, line 6)"
        );
        let e = interval_error(":g { :a :v 1 }\n:g prov:startedAtTime 5 .\n");
        assert_eq!(e.line, Some(4), "at the graph, as a missing timestamp: {e}");
        assert_eq!(
            e.message,
            "event <http://ex.org/g> has prov:startedAtTime but no end (prov:endedAtTime or \
             <http://www.w3.org/ns/prov#generatedAtTime>)"
        );
        let e = interval_error(
            ":g { :a :v 1 }\n:g prov:endedAtTime 5 .\n:g prov:startedAtTime 1 .\n\
             :g prov:generatedAtTime 6 .\n",
        );
        assert_eq!(e.line, Some(7), "{e}");
        assert!(
            e.message
                .starts_with("event <http://ex.org/g> has two different ends: prov:endedAtTime"),
            "{e}"
        );
        assert!(
            e.message
                .contains("line 5) and <http://www.w3.org/ns/prov#generatedAtTime> \"6\""),
            "{e}"
        );
        // (the lines, the line the problem is told at, what its message says); the first
        // has its end first, by the time predicate
        let located = [
            (
                ":g prov:generatedAtTime 4 .\n:g { :a :v 1 }\n:g prov:startedAtTime 5 .\n",
                6,
                "starts (prov:startedAtTime",
            ),
            (
                ":g { :a :v 1 }\n:g prov:startedAtTime \"1970-01-01T00:00:01Z\"^^xsd:dateTime .\n\
                 :g prov:endedAtTime 5 .\n",
                6,
                "has a start and an end of different kinds",
            ),
            (
                ":g { :a :v 1 }\n:g prov:startedAtTime 1 .\n:g prov:startedAtTime 2 .\n\
                 :g prov:endedAtTime 5 .\n",
                6,
                "has two different prov:startedAtTime values: \"1\"",
            ),
            (
                ":g { :a :v 1 }\n:g prov:endedAtTime 5, 6 .\n",
                5,
                "has two different prov:endedAtTime values",
            ),
            (
                ":g { :a :v 1 }\n:g prov:startedAtTime \"soon\" ; prov:endedAtTime 5 .\n",
                5,
                "has a prov:startedAtTime that is not a time",
            ),
        ];
        for (lines, line, says) in located {
            let e = interval_error(lines);
            assert_eq!(e.line, Some(line), "{e}");
            assert!(e.message.contains(says), "{e}");
        }
        // the same time twice, or the same end by both predicates, is no problem
        let ok = ":g { :a :v 1 }\n:g prov:startedAtTime 1, 1.0 ; prov:endedAtTime 5 ; \
                  prov:generatedAtTime 5.0 .\n";
        let text = format!(
            "@prefix : <http://ex.org/> .\n@prefix prov: <http://www.w3.org/ns/prov#> .\n{ok}"
        );
        assert_eq!(
            spans(&text, Format::TriG).unwrap(),
            [("g".to_owned(), 1, 5, false)]
        );
    }

    /// A start without an end is judged as a missing timestamp: the file's error, unless
    /// the file has a syntax error (its end may have been past it: the graph is skipped).
    #[test]
    fn interval_problems_follow_the_timestamps_rules() {
        let text = "<http://ex.org/a> <http://ex.org/v> \"1\" <http://ex.org/g1> .\n\
                    <http://ex.org/g1> <http://www.w3.org/ns/prov#startedAtTime> \"1\"^^<http://www.w3.org/2001/XMLSchema#integer> .\n\
                    <http://ex.org/a> <http://ex.org/v> \"1\" <http://ex.org/g2> .\n\
                    <http://ex.org/g2> <http://www.w3.org/ns/prov#generatedAtTime> \"2\"^^<http://www.w3.org/2001/XMLSchema#integer> .\n\
                    oops\n";
        let e = spans(text, Format::NQuads).unwrap_err();
        assert!(
            e.message.contains("syntax error"),
            "the syntax error, not g1's end: {e}"
        );
        let e = spans(text.trim_end_matches("oops\n"), Format::NQuads).unwrap_err();
        assert_eq!(e.line, Some(1), "{e}");
        assert!(e.message.contains("no end"), "{e}");
    }
}
