//! TriG read by bytes for a scanned reading (`Quads::scanned` on a TriG file): statements in
//! the common form of a replay file read without oxttl, their quads exactly those of oxttl's
//! strict TriG parser; at anything else it stops (`Bail`) and the caller reads the file again
//! with oxttl, so errors and their places are always oxttl's.
//!
//! The form read: `@prefix`/`PREFIX` declarations; `<iri>` (no escapes), prefixed names with
//! a plain local part (letters, digits, `_`, `-`, inner `.`), `a`; `_:label`; `"text"` without
//! escapes, with `^^<iri>`/`^^pfx:name` or without; the number and boolean shorthands; `;` and
//! `,` lists; graph blocks (`g { }`, `GRAPH g { }`, `{ }`); default-graph triples; comments.
//! Not read: `@base`/`BASE`, `[ ]`, `( )`, escapes, long or single quotes, language tags,
//! RDF 1.2's reifiers and triple terms: they stop it.

use super::{tag_datatype, IriCache, Piece, Terms};
use crate::hash::Fast;
use crate::vocab::XSD;
use oxrdf::vocab::rdf;
use std::collections::HashMap;
use std::io::BufRead;

/// The scanner gave up: the text is not in the form it reads (or could not be read).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Bail;

/// Why a statement was not read: the buffer ends inside it (`More`: read on and try again),
/// or it is not in the form read (`Bail`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    More,
    Bail,
}

/// A piece of text in the statement's arena.
type Range = (usize, usize);

/// A term read, its text in the arena.
#[derive(Clone, Copy)]
enum Span {
    Iri(Range),
    Blank(Range),
    Literal(Range, Option<Range>),
}

/// A quad read: its graph is the block being read (`Block`).
#[derive(Clone, Copy)]
struct Found {
    subject: Span,
    predicate: Range,
    object: Span,
}

/// Where the reading stands: outside graph blocks, in a `{ }` of the default graph, or in a
/// named graph's block (its name, a blank node's label if `blank`, in `TriG::graph`).
#[derive(Clone, Copy, PartialEq, Eq, Default)]
enum Block {
    #[default]
    Out,
    Default,
    Named {
        blank: bool,
    },
}

/// What one statement was: triples (in `TriG::found`), a prefix declared, a block opened or
/// closed, or the end of the input.
enum Unit {
    Triples,
    Prefix(Range, Range),
    Open(Option<(bool, Range)>),
    Close,
    End,
}

/// The state of a TriG file read by bytes: the text not read yet, the prefixes declared, the
/// block being read, and the quads of the last statement (their terms' text in `arena`).
#[derive(Default)]
pub(super) struct TriG {
    buffer: Vec<u8>,
    at: usize,
    ended: bool,
    prefixes: HashMap<Box<str>, Box<str>, Fast>,
    block: Block,
    graph: String,
    arena: String,
    found: Vec<Found>,
    next: usize,
    /// Statements begun again after more input was read (what the tests bound).
    #[cfg(test)]
    retries: usize,
}

/// What a buffer read from (`TriG::buffer` from `TriG::at`) is to the statement scanner.
struct Cursor<'b> {
    data: &'b [u8],
    at: usize,
    ended: bool,
}

impl<'b> Cursor<'b> {
    /// The byte at `i` (None at the end of the input), or `More` past the buffer's end.
    fn byte(&self, i: usize) -> Result<Option<u8>, Stop> {
        match self.data.get(i) {
            Some(&b) => Ok(Some(b)),
            None if self.ended => Ok(None),
            None => Err(Stop::More),
        }
    }

    /// The byte at the cursor (`byte`).
    fn peek(&self) -> Result<Option<u8>, Stop> {
        self.byte(self.at)
    }

    /// Skip spaces, line breaks and comments.
    fn space(&mut self) -> Result<(), Stop> {
        loop {
            match self.peek()? {
                Some(b' ' | b'\t' | b'\n' | b'\r') => self.at += 1,
                Some(b'#') => match memchr::memchr2(b'\n', b'\r', &self.data[self.at..]) {
                    Some(n) => self.at += n,
                    None if self.ended => self.at = self.data.len(),
                    None => return Err(Stop::More),
                },
                _ => return Ok(()),
            }
        }
    }

    /// The end of a run of name characters from `from` (`[A-Za-z0-9_.-]`, trailing dots not
    /// included, as oxttl ends a name); `Bail` if the run stops at a character that oxttl
    /// would read on (a non-ASCII letter, `:`, `%`, `\`).
    fn name_end(&self, from: usize) -> Result<usize, Stop> {
        let mut i = from;
        loop {
            match self.byte(i)? {
                Some(b) if b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.') => i += 1,
                Some(b) if b >= 0x80 || matches!(b, b':' | b'%' | b'\\') => return Err(Stop::Bail),
                _ => break,
            }
        }
        while i > from && self.data[i - 1] == b'.' {
            i -= 1;
        }
        Ok(i)
    }

    /// The end of a run of letters, digits, `_` and `-` from `from`.
    fn word_end(&self, from: usize) -> Result<usize, Stop> {
        let mut i = from;
        while self
            .byte(i)?
            .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        {
            i += 1;
        }
        Ok(i)
    }

    /// The prefix of the prefixed name at the cursor (`pfx:`, maybe empty, without dots:
    /// else `Bail`) and where what follows its `:` begins.
    fn prefix(&self) -> Result<(&'b str, usize), Stop> {
        let end = self.word_end(self.at)?;
        if self.byte(end)? != Some(b':') || (end > self.at && !name_start(self.data[self.at])) {
            return Err(Stop::Bail);
        }
        Ok((self.text(self.at, end)?, end + 1))
    }

    /// The bytes `from..to` as text: Bail if they are not UTF-8 (oxttl refuses them).
    fn text(&self, from: usize, to: usize) -> Result<&'b str, Stop> {
        std::str::from_utf8(&self.data[from..to]).map_err(|_| Stop::Bail)
    }
}

/// Whether a byte may begin a name (a prefix, a keyword).
fn name_start(b: u8) -> bool {
    b.is_ascii_alphabetic()
}

/// A statement being read: the cursor, the arena its terms' text goes to and what is checked
/// against (`valid`: the IRIs, None when trusted; `prefixes`).
struct Statement<'t, 'b, 'c> {
    c: Cursor<'b>,
    arena: &'t mut String,
    found: &'t mut Vec<Found>,
    prefixes: &'t HashMap<Box<str>, Box<str>, Fast>,
    valid: Option<&'c mut IriCache>,
}

impl<'b> Statement<'_, 'b, '_> {
    /// `text` into the arena, trusted.
    fn push(&mut self, text: &str) -> Range {
        let from = self.arena.len();
        self.arena.push_str(text);
        (from, self.arena.len())
    }

    /// The arena's text in `range`, checked as an IRI the strict parser accepts.
    fn check_iri(&mut self, range: Range) -> Result<Range, Stop> {
        if let Some(valid) = self.valid.as_deref_mut() {
            if !valid.valid(&self.arena[range.0..range.1]) {
                return Err(Stop::Bail);
            }
        }
        Ok(range)
    }

    /// `<iri>`, without escapes (`<<` is RDF 1.2's: not read).
    fn iri_ref(&mut self) -> Result<Range, Stop> {
        let c = &self.c;
        if c.byte(c.at + 1)? == Some(b'<') {
            return Err(Stop::Bail);
        }
        let from = c.at + 1;
        let Some(len) = memchr::memchr2(b'>', b'\\', &c.data[from..]) else {
            return Err(if c.ended { Stop::Bail } else { Stop::More });
        };
        if c.data[from + len] != b'>' {
            return Err(Stop::Bail);
        }
        let text = c.text(from, from + len)?;
        self.c.at = from + len + 1;
        self.push_checked(text)
    }

    /// `text` into the arena, checked as an IRI (unless trusted).
    fn push_checked(&mut self, text: &str) -> Result<Range, Stop> {
        let range = self.push(text);
        self.check_iri(range)
    }

    /// A prefixed name (`pfx:local`, either part maybe empty) resolved against the
    /// prefixes declared; the cursor is on its first byte.
    fn prefixed(&mut self) -> Result<Range, Stop> {
        let c = &self.c;
        let (prefix, local_from) = c.prefix()?;
        let local_to = match c.byte(local_from)? {
            Some(b) if b.is_ascii_alphanumeric() || b == b'_' => c.name_end(local_from)?,
            Some(b) if b >= 0x80 || matches!(b, b':' | b'%' | b'\\') => return Err(Stop::Bail),
            _ => local_from,
        };
        let local = c.text(local_from, local_to)?;
        let start = self.prefixes.get(prefix).ok_or(Stop::Bail)?;
        let from = self.arena.len();
        self.arena.push_str(start);
        self.arena.push_str(local);
        self.c.at = local_to;
        self.check_iri((from, self.arena.len()))
    }

    /// An IRI: `<iri>` or a prefixed name.
    fn iri(&mut self) -> Result<Range, Stop> {
        match self.c.peek()? {
            Some(b'<') => self.iri_ref(),
            Some(b) if name_start(b) || b == b':' => self.prefixed(),
            _ => Err(Stop::Bail),
        }
    }

    /// `_:label`, the label of letters, digits, `_`, `-` and inner dots.
    fn blank(&mut self) -> Result<Range, Stop> {
        let c = &self.c;
        if c.byte(c.at + 1)? != Some(b':') {
            return Err(Stop::Bail);
        }
        let from = c.at + 2;
        match c.byte(from)? {
            Some(b) if b.is_ascii_alphanumeric() || b == b'_' => {}
            _ => return Err(Stop::Bail),
        }
        let to = c.name_end(from)?;
        let label = c.text(from, to)?;
        let range = self.push(label);
        self.c.at = to;
        Ok(range)
    }

    /// A subject or a graph's name: an IRI or a blank node.
    fn node(&mut self) -> Result<Span, Stop> {
        match self.c.peek()? {
            Some(b'_') => self.blank().map(Span::Blank),
            _ => self.iri().map(Span::Iri),
        }
    }

    /// The word at the cursor (letters, digits, `_`, `-`, inner dots), if it is not the
    /// prefix of a prefixed name; the cursor is left on it.
    fn keyword(&self) -> Result<Option<&'b str>, Stop> {
        let c = &self.c;
        let i = c.word_end(c.at)?;
        match c.byte(i)? {
            Some(b':') => Ok(None),
            Some(b) if b >= 0x80 || matches!(b, b'%' | b'\\') => Err(Stop::Bail),
            Some(b'.') if c.name_end(c.at)? != i => Err(Stop::Bail),
            _ => Ok(Some(c.text(c.at, i)?)),
        }
    }

    /// `"text"` (no escapes, not `"""`), then `^^` and an IRI or nothing (a language tag
    /// stops the reading).
    fn literal(&mut self) -> Result<Span, Stop> {
        let c = &self.c;
        let from = c.at + 1;
        if c.byte(from)? == Some(b'"') && c.byte(from + 1)? == Some(b'"') {
            return Err(Stop::Bail);
        }
        let Some(len) = memchr::memchr3(b'"', b'\\', b'\n', &c.data[from..]) else {
            return Err(if c.ended { Stop::Bail } else { Stop::More });
        };
        if c.data[from + len] != b'"' {
            return Err(Stop::Bail);
        }
        let text = c.text(from, from + len)?;
        if text.contains('\r') {
            return Err(Stop::Bail);
        }
        let after = from + len + 1;
        let suffix = c.byte(after)?;
        let value = self.push(text);
        self.c.at = after;
        match suffix {
            Some(b'^') => {
                if self.c.byte(after + 1)? != Some(b'^') {
                    return Err(Stop::Bail);
                }
                self.c.at = after + 2;
                let datatype = self.iri()?;
                let iri = &self.arena[datatype.0..datatype.1];
                if tag_datatype(iri) {
                    return Err(Stop::Bail);
                }
                Ok(Span::Literal(value, Some(datatype)))
            }
            Some(b'@' | b'\'' | b'"') => Err(Stop::Bail),
            _ => Ok(Span::Literal(value, None)),
        }
    }

    /// A number (`[+-]?` digits, with `.` digits and an exponent as oxttl's lexer reads
    /// them: INTEGER, DECIMAL, DOUBLE), its text as written and its datatype.
    fn number(&mut self) -> Result<Span, Stop> {
        let c = &self.c;
        let from = c.at;
        let mut i = from;
        let digits = |mut i: usize| -> Result<usize, Stop> {
            while c.byte(i)?.is_some_and(|b| b.is_ascii_digit()) {
                i += 1;
            }
            Ok(i)
        };
        if matches!(c.byte(i)?, Some(b'+' | b'-')) {
            i += 1;
        }
        let before = digits(i)? - i;
        i += before;
        let mut after = None;
        if c.byte(i)? == Some(b'.') {
            let end = digits(i + 1)?;
            after = Some(end - i - 1);
            i = end;
        }
        let kind = if matches!(c.byte(i)?, Some(b'e' | b'E')) {
            i += 1;
            if matches!(c.byte(i)?, Some(b'+' | b'-')) {
                i += 1;
            }
            let exponent = digits(i)? - i;
            i += exponent;
            if exponent == 0 || (before == 0 && after.unwrap_or(0) == 0) {
                return Err(Stop::Bail);
            }
            "double"
        } else if after.is_some_and(|n| n > 0) {
            "decimal"
        } else {
            if after == Some(0) {
                i -= 1; // the dot ends the statement
            }
            if before == 0 {
                return Err(Stop::Bail);
            }
            "integer"
        };
        match c.byte(i)? {
            Some(b) if b.is_ascii_alphanumeric() || b >= 0x80 => return Err(Stop::Bail),
            Some(b'_' | b'-' | b'+' | b':' | b'%' | b'\\') => return Err(Stop::Bail),
            _ => {}
        }
        let text = c.text(from, i)?;
        let value = self.push(text);
        let datatype = self.push(XSD);
        self.arena.push_str(kind);
        self.c.at = i;
        Ok(Span::Literal(value, Some((datatype.0, self.arena.len()))))
    }

    /// An object: an IRI, a blank node, a literal, a number or a boolean.
    fn object(&mut self) -> Result<Span, Stop> {
        match self.c.peek()? {
            Some(b'"') => self.literal(),
            Some(b'_') => self.blank().map(Span::Blank),
            Some(b'0'..=b'9' | b'+' | b'-' | b'.') => self.number(),
            Some(b't' | b'f') => match self.keyword()? {
                Some(word @ ("true" | "false")) => {
                    let n = word.len();
                    let value = self.push(if n == 4 { "true" } else { "false" });
                    let datatype = self.push(XSD);
                    self.arena.push_str("boolean");
                    self.c.at += n;
                    Ok(Span::Literal(value, Some((datatype.0, self.arena.len()))))
                }
                Some(_) => Err(Stop::Bail),
                None => self.iri().map(Span::Iri),
            },
            _ => self.iri().map(Span::Iri),
        }
    }

    /// A predicate: an IRI or `a`.
    fn verb(&mut self) -> Result<Range, Stop> {
        if self.c.peek()? == Some(b'a') {
            match self.keyword()? {
                Some("a") => {
                    self.c.at += 1;
                    return Ok(self.push(rdf::TYPE.as_str()));
                }
                Some(_) => return Err(Stop::Bail),
                None => {}
            }
        }
        self.iri()
    }

    /// `verb objects (; verb objects)*` after `subject`, with the `;` that may end it; the
    /// cursor is left on what follows (`.` or `}` are for the caller).
    fn predicate_objects(&mut self, subject: Span) -> Result<(), Stop> {
        loop {
            let predicate = self.verb()?;
            loop {
                self.c.space()?;
                let object = self.object()?;
                self.found.push(Found {
                    subject,
                    predicate,
                    object,
                });
                self.c.space()?;
                if self.c.peek()? != Some(b',') {
                    break;
                }
                self.c.at += 1;
            }
            if self.c.peek()? != Some(b';') {
                return Ok(());
            }
            while self.c.peek()? == Some(b';') {
                self.c.at += 1;
                self.c.space()?;
            }
            if matches!(self.c.peek()?, Some(b'.' | b'}')) {
                return Ok(());
            }
        }
    }

    /// A declared prefix: `pfx:` and its IRI; the cursor is after the keyword.
    fn prefix(&mut self) -> Result<Unit, Stop> {
        self.c.space()?;
        let (name, after) = self.c.prefix()?;
        if !matches!(self.c.byte(after)?, Some(b' ' | b'\t')) {
            return Err(Stop::Bail);
        }
        let name = self.push(name);
        self.c.at = after;
        self.c.space()?;
        if self.c.peek()? != Some(b'<') {
            return Err(Stop::Bail);
        }
        let iri = self.iri_ref()?;
        Ok(Unit::Prefix(name, iri))
    }

    /// The next statement outside blocks.
    fn outside(&mut self) -> Result<Unit, Stop> {
        self.c.space()?;
        let Some(first) = self.c.peek()? else {
            return Ok(Unit::End);
        };
        match first {
            b'@' => {
                let c = &self.c;
                for (i, &b) in b"prefix".iter().enumerate() {
                    if c.byte(c.at + 1 + i)? != Some(b) {
                        return Err(Stop::Bail);
                    }
                }
                if !matches!(c.byte(c.at + 7)?, Some(b' ' | b'\t')) {
                    return Err(Stop::Bail);
                }
                self.c.at += 7;
                let unit = self.prefix()?;
                self.c.space()?;
                if self.c.peek()? != Some(b'.') {
                    return Err(Stop::Bail);
                }
                self.c.at += 1;
                Ok(unit)
            }
            b'{' => {
                self.c.at += 1;
                Ok(Unit::Open(None))
            }
            b if name_start(b) => match self.keyword()? {
                Some(word) if word.eq_ignore_ascii_case("prefix") => {
                    self.c.at += word.len();
                    self.prefix()
                }
                Some(word) if word.eq_ignore_ascii_case("graph") => {
                    self.c.at += word.len();
                    self.c.space()?;
                    let name = self.node()?;
                    self.c.space()?;
                    self.open(name)
                }
                Some(_) => Err(Stop::Bail),
                None => self.subject_first(),
            },
            _ => self.subject_first(),
        }
    }

    /// A graph block opened with the name `name`: `{` must follow.
    fn open(&mut self, name: Span) -> Result<Unit, Stop> {
        if self.c.peek()? != Some(b'{') {
            return Err(Stop::Bail);
        }
        self.c.at += 1;
        Ok(match name {
            Span::Iri(r) => Unit::Open(Some((false, r))),
            Span::Blank(r) => Unit::Open(Some((true, r))),
            Span::Literal(..) => return Err(Stop::Bail),
        })
    }

    /// Outside blocks, a statement that begins with a term: a graph block's name or the
    /// subject of default-graph triples.
    fn subject_first(&mut self) -> Result<Unit, Stop> {
        let subject = self.node()?;
        self.c.space()?;
        if self.c.peek()? == Some(b'{') {
            return self.open(subject);
        }
        self.predicate_objects(subject)?;
        self.c.space()?;
        if self.c.peek()? != Some(b'.') {
            return Err(Stop::Bail);
        }
        self.c.at += 1;
        Ok(Unit::Triples)
    }

    /// The next statement inside a block: triples (ended by `.`, or left before `}`) or `}`.
    fn inside(&mut self) -> Result<Unit, Stop> {
        self.c.space()?;
        match self.c.peek()? {
            None => Err(Stop::Bail),
            Some(b'}') => {
                self.c.at += 1;
                Ok(Unit::Close)
            }
            Some(_) => {
                let subject = self.node()?;
                self.c.space()?;
                self.predicate_objects(subject)?;
                self.c.space()?;
                match self.c.peek()? {
                    Some(b'.') => self.c.at += 1,
                    Some(b'}') => {}
                    _ => return Err(Stop::Bail),
                }
                Ok(Unit::Triples)
            }
        }
    }
}

impl TriG {
    /// The next quad's terms; None at the end of the input, `Bail` at anything not read
    /// (`valid`: the IRIs' checks, None when they are trusted).
    pub(super) fn next<'s>(
        &'s mut self,
        source: &mut impl BufRead,
        mut valid: Option<&mut IriCache>,
    ) -> Result<Option<Terms<'s>>, Bail> {
        while self.next == self.found.len() {
            self.found.clear();
            self.next = 0;
            self.arena.clear();
            match self.statement(valid.as_deref_mut()) {
                Ok(true) => {}
                Ok(false) => return Ok(None),
                Err(Stop::More) if !self.ended => {
                    // at least twice what the statement had: a statement longer than a
                    // buffer is read again from its start a logarithmic number of times
                    let want = 2 * (self.buffer.len() - self.at).max(1);
                    #[cfg(test)]
                    {
                        self.retries += 1;
                    }
                    while !self.ended && self.buffer.len() - self.at < want {
                        self.refill(source)?;
                    }
                }
                Err(_) => return Err(Bail),
            }
        }
        let found = self.found[self.next];
        self.next += 1;
        Ok(Some(self.terms(found)))
    }

    /// Read one statement and take in what it declares; false at the end of the input.
    fn statement(&mut self, valid: Option<&mut IriCache>) -> Result<bool, Stop> {
        let block = self.block;
        let mut statement = Statement {
            c: Cursor {
                data: &self.buffer[self.at..],
                at: 0,
                ended: self.ended,
            },
            arena: &mut self.arena,
            found: &mut self.found,
            prefixes: &self.prefixes,
            valid,
        };
        let unit = if block == Block::Out {
            statement.outside()
        } else {
            statement.inside()
        };
        let unit = match unit {
            Ok(unit) => unit,
            Err(stop) => {
                self.found.clear();
                self.arena.clear();
                return Err(stop);
            }
        };
        self.at += statement.c.at;
        let text = |r: Range| &self.arena[r.0..r.1];
        match unit {
            Unit::Triples => {}
            Unit::Prefix(name, iri) => {
                self.prefixes.insert(text(name).into(), text(iri).into());
                self.arena.clear();
            }
            Unit::Open(None) => self.block = Block::Default,
            Unit::Open(Some((blank, name))) => {
                self.graph.clear();
                self.graph.push_str(&self.arena[name.0..name.1]);
                self.block = Block::Named { blank };
                self.arena.clear();
            }
            Unit::Close => self.block = Block::Out,
            Unit::End => return Ok(false),
        }
        Ok(true)
    }

    /// More of the input into the buffer (what was read dropped); at its end, `ended`.
    fn refill(&mut self, source: &mut impl BufRead) -> Result<(), Bail> {
        if self.at > 0 {
            self.buffer.drain(..self.at);
            self.at = 0;
        }
        let chunk = source.fill_buf().map_err(|_| Bail)?;
        if chunk.is_empty() {
            self.ended = true;
        } else {
            let n = chunk.len();
            self.buffer.extend_from_slice(chunk);
            source.consume(n);
        }
        Ok(())
    }

    /// A quad read, as the N-Quads scanner's terms: its text in the arena, its graph the block's.
    fn terms(&self, found: Found) -> Terms<'_> {
        let text = |r: Range| &self.arena[r.0..r.1];
        let piece = |span: Span| match span {
            Span::Iri(r) => Piece::Iri(text(r)),
            Span::Blank(r) => Piece::Blank(text(r)),
            Span::Literal(value, datatype) => Piece::Literal(text(value), datatype.map(text)),
        };
        let graph = match self.block {
            Block::Named { blank: false } => Some(Piece::Iri(&self.graph)),
            Block::Named { blank: true } => Some(Piece::Blank(&self.graph)),
            _ => None,
        };
        Terms {
            subject: piece(found.subject),
            predicate: text(found.predicate),
            object: piece(found.object),
            graph,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Format, Quads};
    use oxrdf::Quad;
    use oxttl::TriGParser;
    use std::io::BufReader;

    /// A document's quads as oxttl's strict TriG parser reads it (Err at its first error).
    fn strict(doc: &str) -> Result<Vec<Quad>, String> {
        TriGParser::new()
            .for_slice(doc.as_bytes())
            .collect::<Result<_, _>>()
            .map_err(|e| e.to_string())
    }

    /// A document's quads as the scanner reads it, fed `chunk` bytes at a time (None if it
    /// gave up); read again unchecked, it reads the same.
    fn scanned(doc: &str, chunk: usize) -> Option<Vec<Quad>> {
        let read = |again: bool| {
            let source = BufReader::with_capacity(chunk, doc.as_bytes());
            let quads = Quads::new(source, Format::TriG).without_lines();
            let mut quads = if again {
                quads.scanned_again()
            } else {
                quads.scanned()
            };
            assert!(quads.is_scanned());
            let read: Result<Vec<Quad>, _> = quads.by_ref().map(|r| r.map(|(q, _)| q)).collect();
            (!quads.unverified()).then(|| read.expect("a scanned reading has no errors"))
        };
        let first = read(false);
        if let Some(quads) = &first {
            assert_eq!(read(true).as_ref(), Some(quads), "read again: {doc}");
        }
        first
    }

    /// The scanner reads `doc` (whatever the chunks it is fed in) as oxttl does, or gives
    /// up; true if it read it.
    fn agrees(doc: &str) -> bool {
        let expected = strict(doc);
        let mut read = None;
        for chunk in [1, 3, 17, 1 << 16] {
            let got = scanned(doc, chunk);
            if let Some(quads) = &got {
                assert_eq!(Ok(quads), expected.as_ref(), "{doc}");
            }
            match read {
                None => read = Some(got.is_some()),
                Some(r) => assert_eq!(r, got.is_some(), "chunks of {chunk}: {doc}"),
            }
        }
        read.unwrap_or(false)
    }

    const PREFIXES: &str = "@prefix ex: <http://ex.org/> .\n\
        @prefix xsd: <http://www.w3.org/2001/XMLSchema#> .\n\
        PREFIX prov: <http://www.w3.org/ns/prov#>\n";

    fn reads(body: &str) -> Vec<Quad> {
        let doc = format!("{PREFIXES}{body}");
        assert!(agrees(&doc), "not read: {doc}");
        strict(&doc).unwrap()
    }

    fn refuses(body: &str) {
        let doc = format!("{PREFIXES}{body}");
        assert!(!agrees(&doc), "read: {doc}");
    }

    fn objects(body: &str) -> Vec<String> {
        reads(body).iter().map(|q| q.object.to_string()).collect()
    }

    /// The project's own TriG replay files (the smart grid's streams, the RSEP-QL and CERA
    /// fixtures) are in the form read: read by bytes as oxttl reads them, not given up on.
    #[test]
    fn the_fixtures_are_read_by_bytes() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../fixtures");
        let mut read = 0;
        for dir in ["smartgrid", "rsep_ql", "cera", "composition"] {
            for entry in std::fs::read_dir(format!("{root}/{dir}")).expect("fixtures") {
                let path = entry.expect("a fixture").path();
                if path.extension().is_some_and(|e| e == "trig") {
                    let doc = std::fs::read_to_string(&path).expect("a fixture");
                    assert!(agrees(&doc), "given up: {}", path.display());
                    read += 1;
                }
            }
        }
        assert!(read >= 6, "{read} fixtures");
    }

    /// Bytes that are not UTF-8 in a term make it give up (oxttl refuses them); in a comment
    /// neither side looks at them.
    #[test]
    fn invalid_utf8_in_a_term_is_left_to_oxttl() {
        for doc in [
            &b"@prefix ex: <http://ex.org/> .\nex:g { ex:s ex:p \"\xff\" . }\n"[..],
            b"@prefix ex: <http://ex.org/> .\nex:g { ex:s <http://ex.org/\xff> 1 . }\n",
        ] {
            let source = BufReader::new(doc);
            let mut quads = Quads::new(source, Format::TriG).without_lines().scanned();
            assert!(quads.by_ref().all(|r| r.is_ok()));
            assert!(quads.unverified(), "{doc:?}");
        }
        let doc = "@prefix ex: <http://ex.org/> .\n# \u{e9}t\u{e9}\nex:g { ex:s ex:p 1 . }\n";
        assert!(agrees(doc));
    }

    /// A statement far longer than the reader's buffer is begun again a logarithmic number
    /// of times (each read at least doubles what it has), not once per buffer.
    #[test]
    fn a_long_statement_is_read_again_few_times() {
        let text = "x".repeat(1 << 20);
        let doc =
            format!("<http://ex.org/g> {{ <http://ex.org/s> <http://ex.org/p> \"{text}\" . }}\n");
        let mut trig = super::TriG::default();
        let mut source = BufReader::with_capacity(17, doc.as_bytes());
        let terms = trig.next(&mut source, None).expect("read").expect("a quad");
        assert!(matches!(terms.object, super::Piece::Literal(t, None) if t.len() == 1 << 20));
        assert!(trig.retries <= 20, "{} retries", trig.retries);
    }

    #[test]
    fn number_and_boolean_shorthands_are_oxttl_s_literals() {
        let xsd = |v: &str, t: &str| format!("\"{v}\"^^<http://www.w3.org/2001/XMLSchema#{t}>");
        let cases = [
            ("4393", xsd("4393", "integer")),
            ("-5", xsd("-5", "integer")),
            ("+5", xsd("+5", "integer")),
            ("007", xsd("007", "integer")),
            ("124.92", xsd("124.92", "decimal")),
            ("-0.5", xsd("-0.5", "decimal")),
            ("+.5", xsd("+.5", "decimal")),
            (".5", xsd(".5", "decimal")),
            ("1.2e3", xsd("1.2e3", "double")),
            ("1E-3", xsd("1E-3", "double")),
            ("1.e3", xsd("1.e3", "double")),
            (".5e+2", xsd(".5e+2", "double")),
            ("-1.5E10", xsd("-1.5E10", "double")),
            ("true", xsd("true", "boolean")),
            ("false", xsd("false", "boolean")),
        ];
        for (written, read) in &cases {
            for end in [" .", ".", " ;.", " . # done"] {
                assert_eq!(
                    objects(&format!("ex:s ex:p {written}{end}\n")),
                    std::slice::from_ref(read)
                );
            }
        }
        // in a list, in a block, the last without its dot
        let body = "ex:g { ex:s ex:p 1, 2.5, 3e0, true ; ex:q -1 }\n";
        assert_eq!(objects(body).len(), 5);
        for bad in [
            "1.", "1.x", "1e", "1.5e", "+", "-.", ".e1", "1a", "12-3", "True", "1_0",
        ] {
            refuses(&format!("ex:s ex:p {bad} .\n"));
        }
    }

    #[test]
    fn prefixes_may_be_redefined_mid_file() {
        let quads = reads(
            "ex:g { ex:s ex:p ex:o }\n\
             @prefix ex: <http://other.org/> .\n\
             ex:g { ex:s ex:p ex:o }\n\
             PREFIX ex: <http://third.org/x#>\n\
             ex:s ex:p ex:o .\n\
             prefix : <http://empty.org/>\n\
             :s :p : .\n",
        );
        let graphs: Vec<String> = quads.iter().map(|q| q.graph_name.to_string()).collect();
        assert_eq!(graphs[..2], ["<http://ex.org/g>", "<http://other.org/g>"]);
        assert_eq!(quads[2].subject.to_string(), "<http://third.org/x#s>");
        assert_eq!(quads[3].object.to_string(), "<http://empty.org/>");
        refuses("undeclared:x ex:p ex:o .\n");
    }

    #[test]
    fn a_lists_and_comments() {
        let quads = reads(
            "# a comment\n\
             ex:g { # the graph\n\
               ex:s a ex:Stock ; # its type\n\
                 ex:p ex:o1 , ex:o2 ,\n    ex:o3 ;;\n\
                 ex:q \"x\"^^xsd:string , \"y\" ; .\n\
               _:b1 ex:p _:b.2 .\n\
             }\n\
             GRAPH <http://ex.org/h> { ex:s ex:p ex:o . }\n\
             graph _:g { ex:s ex:p ex:o }\n\
             { ex:s ex:p ex:o }\n\
             ex:g prov:generatedAtTime \"2024-01-01T00:00:00Z\"^^xsd:dateTime .#end",
        );
        assert_eq!(quads.len(), 11);
        assert_eq!(
            quads[0].predicate.as_str(),
            "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
        );
    }

    #[test]
    fn a_graph_in_two_blocks_and_empty_blocks() {
        let quads = reads("ex:g { ex:s ex:p 1 . }\nex:h { }\nex:g { ex:s ex:p 2 }\n{ }\n");
        assert_eq!(quads.len(), 2);
        assert!(quads
            .iter()
            .all(|q| q.graph_name.to_string() == "<http://ex.org/g>"));
    }

    #[test]
    fn forms_not_read_are_left_to_oxttl() {
        for body in [
            "@base <http://ex.org/> .\n",
            "BASE <http://ex.org/>\n",
            "<rel> ex:p ex:o .\n",
            "ex:s ex:p [ ex:q ex:o ] .\n",
            "[] ex:p ex:o .\n",
            "ex:s ex:p ( 1 2 ) .\n",
            "ex:s ex:p \"a\\nb\" .\n",
            "ex:s ex:p \"\"\"long\"\"\" .\n",
            "ex:s ex:p 'single' .\n",
            "ex:s ex:p \"x\"@en .\n",
            "ex:s ex:p \"x\" ^^xsd:string .\n",
            "ex:s ex:p ex:a\\.b .\n",
            "ex:s ex:p ex:a%20b .\n",
            "ex:s ex:p ex:é .\n",
            "ex:s ex:p <http://ex.org/\\u0041> .\n",
            "ex:s ex:p <<( ex:a ex:b ex:c )>> .\n",
            "ex:s ex:p ex:o {| ex:q ex:r |} .\n",
            "ex:s ex:p ex:o ~ ex:r .\n",
            "ex:g { ex:h { } }\n",
            "ex:g { @prefix a: <http://a.org/> . }\n",
            "ex:g { ex:s ex:p ex:o . . }\n",
            "ex:g { ex:s ex:p ex:o \n",
            "ex:s ex:p ex:o\n",
            "ex:s ex:p \"x\"^^<http://www.w3.org/1999/02/22-rdf-syntax-ns#langString> .\n",
            "ex:s a ex:o ; A ex:o .\n",
            "true ex:p ex:o .\n",
            "ex:s ex:p ex:o .\n.\n",
            "VERSION \"1.2\"\n",
        ] {
            refuses(body);
        }
    }

    /// A small deterministic generator (xorshift): no dependency.
    struct Random(u64);

    impl Random {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }

        fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
            items[self.below(items.len())]
        }

        /// One of `odd` now and then (one time in 16), else one of `usual`.
        fn term<'a>(&mut self, (usual, odd): (&[&'a str], &[&'a str])) -> &'a str {
            if self.below(16) == 0 {
                self.pick(odd)
            } else {
                self.pick(usual)
            }
        }
    }

    const SPACES: &[&str] = &[" ", " ", "  ", "\t", "\n", "\r\n", " # c\n", ""];
    type Terms = (&'static [&'static str], &'static [&'static str]);
    const NODES: Terms = (
        &[
            "ex:s",
            "ex:s1",
            "<http://ex.org/s>",
            "_:b1",
            "_:b.c",
            "ex:a.b",
            ":x",
            "ex:",
            "ex:1a",
            "ex:_a",
            "ex:a-",
            "e1:s",
            "_:1",
        ],
        &[
            "ex:a.",
            "_:-b",
            "<rel>",
            "<http://ex.org/a b>",
            "ex:a\\.b",
            "und:x",
            "<http://ex.org/%zz>",
            "[]",
            "<http://ex.org/é>",
            "ex:a:b",
            "<<",
            "x-y.z:a",
        ],
    );
    const VERBS: Terms = (
        &[
            "ex:p",
            "a",
            "<http://ex.org/p>",
            "prov:generatedAtTime",
            "ex:p.q",
        ],
        &["A", "<p>", "a.b", "ex:p%41"],
    );
    const OBJECTS: Terms = (
        &[
            "ex:o",
            "<http://ex.org/o>",
            "_:o",
            "\"x\"",
            "\"\"",
            "\"x\"^^xsd:string",
            "\"2024-01-01T00:00:00Z\"^^xsd:dateTime",
            "\"5\"^^<http://ex.org/t>",
            "4393",
            "-1",
            "+7",
            "124.92",
            ".5",
            "-.5",
            "1.2e3",
            "1E9",
            "1.e-2",
            "true",
            "false",
            "\"é😀\"",
            "0.0",
            "\"a b # c\"",
        ],
        &[
            "\"x\"@en",
            "\"a\\\"b\"",
            "\"\"\"l\"\"\"",
            "'s'",
            "1.",
            "1e",
            "tru",
            "[ ex:p 1 ]",
            "( 1 )",
            "\"x\"^^xsd:",
            "\"x\" ^^xsd:int",
            "1.5.",
            "ex:o.",
            "\"a\rb\"",
            "1x",
        ],
    );
    const PREFIX_LINES: &[&str] = &[
        "@prefix ex: <http://ex.org/> .",
        "@prefix ex: <http://other.org/ns#> .",
        "PREFIX e1: <http://e1.org/>",
        "prefix : <http://empty.org/>",
        "@prefix ex: <rel/> .",
        "@base <http://ex.org/> .",
        "@prefix ex:<http://ex.org/> .",
    ];

    /// A generated document: prefixes (redeclared on the way), default-graph triples and
    /// graph blocks of every opening, terms mostly of the form read and some not.
    fn document(r: &mut Random) -> String {
        let mut doc = String::from(
            "@prefix ex: <http://ex.org/> .\n@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .\n\
             PREFIX prov: <http://www.w3.org/ns/prov#>\nprefix e1: <urn:e1:>\n\
             @prefix : <http://empty.org/> .\n",
        );
        let triples = |r: &mut Random, doc: &mut String| {
            doc.push_str(r.term(NODES));
            doc.push(' ');
            for p in 0..1 + r.below(3) {
                if p > 0 {
                    doc.push_str(r.pick(&[" ;", ";", " ;;", " ;\n"]));
                    doc.push_str(r.pick(SPACES));
                }
                doc.push_str(r.term(VERBS));
                doc.push(' ');
                for o in 0..1 + r.below(3) {
                    if o > 0 {
                        doc.push_str(r.pick(&[",", " , ", ",\n"]));
                    }
                    doc.push_str(r.term(OBJECTS));
                }
            }
            if r.below(4) == 0 {
                doc.push_str(" ;");
            }
        };
        for _ in 0..1 + r.below(6) {
            doc.push_str(r.pick(SPACES));
            match r.below(10) {
                0 => doc.push_str(r.term((&PREFIX_LINES[..4], PREFIX_LINES))),
                1..=3 => {
                    triples(r, &mut doc);
                    doc.push_str(r.term((&[" .", ".", " . # c", ".#c"], &["", " ;", "}"])));
                }
                _ => {
                    let opening = r.pick(&["", "GRAPH ", "graph ", "{"]);
                    if opening != "{" {
                        doc.push_str(opening);
                        doc.push_str(r.term(NODES));
                        doc.push_str(r.pick(SPACES));
                    }
                    doc.push('{');
                    for t in 0..r.below(4) {
                        if t > 0 {
                            doc.push_str(r.term((&[" .", ".\n", " . "], &["", ";."])));
                        }
                        doc.push_str(r.pick(SPACES));
                        triples(r, &mut doc);
                    }
                    doc.push_str(r.term((&[" .", "", " . ", "\n"], &[" . .", ";", ","])));
                    doc.push_str(r.pick(SPACES));
                    doc.push('}');
                }
            }
            doc.push('\n');
        }
        doc
    }

    /// For many generated documents the scanner reads exactly oxttl's quads or gives up:
    /// never other quads, never a document oxttl refuses.
    #[test]
    fn generated_documents_are_read_as_oxttl_reads_them_or_left_to_it() {
        let mut r = Random(0x9e37_79b9_7f4a_7c15);
        let (mut read, mut valid) = (0, 0);
        for _ in 0..2_000 {
            let doc = document(&mut r);
            valid += usize::from(strict(&doc).is_ok());
            read += usize::from(agrees(&doc));
        }
        // the generator exercises both sides
        assert!(read > 200, "{read} read, {valid} valid");
        assert!(valid > read, "{read} read, {valid} valid");
    }
}
