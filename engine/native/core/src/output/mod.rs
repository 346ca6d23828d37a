//! Results written natively (issue 12): the machine-readable formats of `spaseq run` (the
//! jsonl contract, SPARQL 1.1 JSON, CSV and TSV results) written from the runtime's match
//! records, byte for byte as the Python writers (`engine/output/writers.py`, the oracle)
//! write them, without a Python object per match.
//!
//! A `Writer` does what `QueryOutput` + `Projector` + a Python writer do to each released
//! match, in release order (docs/decisions.md 4): SELECT's projection (the listed variables
//! that are bound, or every bound variable by name for `*`), DISTINCT (the first match of
//! each projected row is kept), then the row in the format. Terms are spelled once per term
//! id and kept (the dictionary only grows, so an id keeps its term). Times are written in
//! the input's form unless `TimeFormat` says otherwise (docs/decisions.md 43).

pub mod spell;

use crate::dictionary::{Dictionary, TermId};
use crate::runtime::{MatchRecord, Streams};
use crate::vars::{Slot, VarTable};
use oxrdf::Term;
use spell::{
    csv_field, csv_value, datetime_seconds, json_seconds, json_string, json_string_ascii,
    json_term, json_time_literal, time_datatype, time_value, tsv_value,
};
use std::collections::{HashMap, HashSet};

/// Events whose jsonl spelling is kept (a match's events recur in many matches).
const EVENTS_KEPT: usize = 1 << 16;

/// Slots of the cache of spelled times (a power of two): enough for a window's worth of
/// start times at an event a second for about an hour.
const TIMES_KEPT: usize = 4096;

/// How a time is spelled in a jsonl row.
#[derive(Clone, Copy, PartialEq, Eq)]
enum TimeSpelling {
    /// `json_seconds`: a JSON number of seconds.
    Seconds,
    /// `datetime_seconds`: an `xsd:dateTime` in UTC.
    DateTime,
}

/// Times spelled recently, direct-mapped by time: the matches an event completes share its
/// time, and their starts recur (spelling a dateTime costs about as much as the rest of a
/// row's times and bindings together).
struct TimeCache(Vec<Option<(i128, TimeSpelling, Box<str>)>>);

impl TimeCache {
    fn new() -> Self {
        TimeCache(vec![None; TIMES_KEPT])
    }

    /// Append `ns` spelled as `how` to `out`.
    fn push(&mut self, ns: i128, how: TimeSpelling, out: &mut String) {
        let mixed =
            (ns as u64 ^ (ns >> 64) as u64 ^ how as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let slot = &mut self.0[(mixed >> (64 - TIMES_KEPT.trailing_zeros())) as usize];
        if let Some((t, h, spelled)) = slot {
            if *t == ns && *h == how {
                out.push_str(spelled);
                return;
            }
        }
        let mut s = String::new();
        match how {
            TimeSpelling::Seconds => json_seconds(ns, &mut s),
            TimeSpelling::DateTime => datetime_seconds(ns, &mut s),
        }
        out.push_str(&s);
        *slot = Some((ns, how, s.into_boxed_str()));
    }
}

/// The formats written natively.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// One JSON object per match (README "The jsonl contract").
    Jsonl,
    /// SPARQL 1.1 Query Results JSON.
    Json,
    /// SPARQL 1.1 Query Results CSV.
    Csv,
    /// SPARQL 1.1 Query Results TSV.
    Tsv,
}

impl Format {
    pub fn parse(name: &str) -> Option<Format> {
        match name {
            "jsonl" => Some(Format::Jsonl),
            "json" => Some(Format::Json),
            "csv" => Some(Format::Csv),
            "tsv" => Some(Format::Tsv),
            _ => None,
        }
    }
}

/// How results write times (`output/times.py`, docs/decisions.md 43).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeFormat {
    /// As the input wrote them: `xsd:dateTime` for a match whose every event was stamped
    /// with one, `xsd:decimal` seconds otherwise.
    Input,
    /// Always `xsd:dateTime` (UTC).
    DateTime,
    /// Always `xsd:decimal` seconds (jsonl: no `time_iso`/`start_iso`).
    Epoch,
}

impl TimeFormat {
    pub fn parse(name: &str) -> Option<TimeFormat> {
        match name {
            "input" => Some(TimeFormat::Input),
            "dateTime" => Some(TimeFormat::DateTime),
            "epoch" => Some(TimeFormat::Epoch),
            _ => None,
        }
    }

    /// Whether `m`'s times are written as `xsd:dateTime`s (`times.dated`).
    pub fn dated(self, m: &MatchRecord) -> bool {
        match self {
            TimeFormat::DateTime => true,
            TimeFormat::Epoch => false,
            TimeFormat::Input => {
                let mut at = m.node.as_deref();
                let mut any = false;
                while let Some(n) = at {
                    if !n.taken.event.dated {
                        return false;
                    }
                    any = true;
                    at = n.parent.as_deref();
                }
                any
            }
        }
    }
}

/// What names a query's matches: its terms, variables, GPMs and the engine's streams.
pub struct Scope<'a> {
    pub dict: &'a Dictionary,
    pub vars: &'a VarTable,
    pub gpms: &'a [String],
    pub streams: &'a Streams,
}

/// The variables resolved to the query's slots (on the first match: the writer is made
/// before the query's variable table exists).
struct Resolved {
    /// The projected row's variables in order: (slot, `"name": ` as JSON).
    row: Vec<(Option<Slot>, String)>,
    /// Per column (CSV, TSV, JSON head), its slot if the projection keeps it.
    columns: Vec<Option<Slot>>,
    /// Per GPM, `{"atom": "NAME", "stream": ` (jsonl events).
    atoms: Vec<String>,
}

/// One query's results in one format; `start`, `write` per match, `finish`, each appending
/// to a text buffer the caller writes out.
pub struct Writer {
    format: Format,
    /// The row's variables (None: every bound variable, in name order).
    select: Option<Vec<String>>,
    distinct: bool,
    /// The variables of the header (CSV, TSV, JSON), without `_time`/`_start`.
    columns: Vec<String>,
    with_time: bool,
    time_format: TimeFormat,
    resolved: Option<Resolved>,
    /// DISTINCT's rows written, as terms (term ids do not outlive a dictionary compaction).
    seen: HashSet<Vec<Option<oxrdf::Term>>>,
    /// Per term id, its spelling in this format (a cache: built on first use).
    terms: Vec<Option<Box<str>>>,
    /// Per stream id, its IRI as a JSON string followed by `, "time": `.
    streams: Vec<Option<Box<str>>>,
    /// Per (GPM, event uid), the event's jsonl object (a cache, cleared when it is full).
    events: HashMap<(usize, u64), Box<str>, foldhash::fast::RandomState>,
    /// Times spelled for jsonl rows (a cache).
    times: TimeCache,
    rows: u64,
}

impl Writer {
    /// A writer of `format`: rows of `select` (None: every bound variable by name), DISTINCT
    /// or not, `columns` the header's variables, `with_time` adding `_time` and `_start`
    /// (JSON, CSV, TSV), times written as `time_format` says.
    pub fn new(
        format: Format,
        select: Option<Vec<String>>,
        distinct: bool,
        columns: Vec<String>,
        with_time: bool,
        time_format: TimeFormat,
    ) -> Writer {
        Writer {
            format,
            select,
            distinct,
            columns,
            with_time,
            time_format,
            resolved: None,
            seen: HashSet::new(),
            terms: Vec::new(),
            streams: Vec::new(),
            events: HashMap::default(),
            times: TimeCache::new(),
            rows: 0,
        }
    }

    /// Forget what is cached by term id (the engine's dictionary was compacted: ids now
    /// name other terms).
    pub fn forget_terms(&mut self) {
        self.terms.clear();
    }

    /// Rows written so far (after DISTINCT).
    pub fn rows(&self) -> u64 {
        self.rows
    }

    fn header(&self) -> Vec<String> {
        let time = ["_time", "_start"].map(str::to_owned);
        let time = if self.with_time { &time[..] } else { &[] };
        time.iter().chain(&self.columns).cloned().collect()
    }

    /// What precedes the rows.
    pub fn start(&mut self, out: &mut String) {
        match self.format {
            Format::Jsonl => {}
            Format::Json => {
                out.push_str("{\"head\": {\"vars\": [");
                for (i, v) in self.header().iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    json_string_ascii(v, out);
                }
                out.push_str("]}, \"results\": {\"bindings\": [\n");
            }
            Format::Csv => {
                let header = self.header();
                Self::csv_record(header.iter().map(String::as_str), out);
            }
            Format::Tsv => {
                let header: Vec<String> = self.header().iter().map(|v| format!("?{v}")).collect();
                out.push_str(&header.join("\t"));
                out.push('\n');
            }
        }
    }

    /// What follows the rows.
    pub fn finish(&mut self, out: &mut String) {
        if self.format == Format::Json {
            out.push_str("\n]}}\n");
        }
    }

    fn resolve(&mut self, scope: &Scope<'_>) {
        if self.resolved.is_some() {
            return;
        }
        let vars = scope.vars;
        let row: Vec<Option<Slot>> = match &self.select {
            Some(names) => names.iter().map(|v| vars.get(v)).collect(),
            None => {
                let mut slots: Vec<Slot> = (0..vars.len()).collect();
                slots.sort_by(|a, b| vars.name(*a).cmp(vars.name(*b)));
                slots.into_iter().map(Some).collect()
            }
        };
        let key = |slot: Option<Slot>, name: &str| {
            let mut s = String::new();
            json_string(name, &mut s);
            s.push_str(": ");
            (slot, s)
        };
        let row: Vec<(Option<Slot>, String)> = match &self.select {
            Some(names) => names.iter().zip(row).map(|(v, s)| key(s, v)).collect(),
            None => row
                .into_iter()
                .map(|s| key(s, vars.name(s.expect("a slot"))))
                .collect(),
        };
        let kept: HashSet<Slot> = row.iter().filter_map(|(s, _)| *s).collect();
        let columns = self
            .columns
            .iter()
            .map(|v| vars.get(v).filter(|s| kept.contains(s)))
            .collect();
        let atoms = scope
            .gpms
            .iter()
            .map(|g| {
                let mut s = String::from("{\"atom\": ");
                json_string(g, &mut s);
                s.push_str(", \"stream\": ");
                s
            })
            .collect();
        self.resolved = Some(Resolved {
            row,
            columns,
            atoms,
        });
    }

    /// Write one released match (nothing when DISTINCT drops its row); whether a row was
    /// written.
    pub fn write(&mut self, m: &MatchRecord, scope: &Scope<'_>, out: &mut String) -> bool {
        self.resolve(scope);
        let resolved = self.resolved.as_ref().expect("resolved above");
        let value = |slot: Option<Slot>| slot.and_then(|s| m.mu.get(s).copied().flatten());
        if self.distinct {
            let key: Vec<Option<oxrdf::Term>> = resolved
                .row
                .iter()
                .map(|(s, _)| value(*s).map(|id| scope.dict.get(id).clone()))
                .collect();
            if !self.seen.insert(key) {
                return false;
            }
        }
        self.rows += 1;
        match self.format {
            Format::Jsonl => self.jsonl(m, scope, out),
            Format::Json => self.json(m, scope, out),
            Format::Csv => {
                let mut cells: Vec<String> = Vec::new();
                if self.with_time {
                    let dated = self.time_format.dated(m);
                    for ns in [m.time, m.start] {
                        let mut s = String::new();
                        time_value(ns, dated, &mut s);
                        cells.push(s);
                    }
                }
                let columns = &self.resolved.as_ref().expect("resolved").columns;
                let ids: Vec<Option<TermId>> = columns.iter().map(|s| value(*s)).collect();
                for id in ids {
                    cells.push(match id {
                        Some(id) => self.term(id, scope.dict).to_owned(),
                        None => String::new(),
                    });
                }
                Self::csv_record(cells.iter().map(String::as_str), out);
            }
            Format::Tsv => {
                let mut first = true;
                let mut sep = |out: &mut String| {
                    if !std::mem::take(&mut first) {
                        out.push('\t');
                    }
                };
                if self.with_time {
                    let dated = self.time_format.dated(m);
                    for ns in [m.time, m.start] {
                        sep(out);
                        out.push('"');
                        time_value(ns, dated, out);
                        out.push_str("\"^^<");
                        out.push_str(time_datatype(dated));
                        out.push('>');
                    }
                }
                let columns = &self.resolved.as_ref().expect("resolved").columns;
                let ids: Vec<Option<TermId>> = columns.iter().map(|s| value(*s)).collect();
                for id in ids {
                    sep(out);
                    if let Some(id) = id {
                        out.push_str(self.term(id, scope.dict));
                    }
                }
                out.push('\n');
            }
        }
        true
    }

    /// A record as Python's `csv.writer` writes it (a lone empty field is written `""`).
    fn csv_record<'s>(cells: impl Iterator<Item = &'s str>, out: &mut String) {
        let cells: Vec<&str> = cells.collect();
        if cells.len() == 1 && cells[0].is_empty() {
            out.push_str("\"\"");
        }
        for (i, cell) in cells.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            csv_field(cell, out);
        }
        out.push_str("\r\n");
    }

    /// The spelling of a term in this format (cached per id).
    fn term(&mut self, id: TermId, dict: &Dictionary) -> &str {
        let i = id as usize;
        if self.terms.len() <= i {
            self.terms.resize(i + 1, None);
        }
        let format = self.format;
        self.terms[i].get_or_insert_with(|| {
            let term = dict.get(id);
            let mut s = String::new();
            match format {
                Format::Jsonl | Format::Json => json_term(term, &mut s),
                Format::Csv => s = csv_value(term),
                Format::Tsv => tsv_value(term, &mut s),
            }
            s.into_boxed_str()
        })
    }

    fn stream(&mut self, id: u32, streams: &Streams) -> &str {
        let i = id as usize;
        if self.streams.len() <= i {
            self.streams.resize(i + 1, None);
        }
        self.streams[i].get_or_insert_with(|| {
            let mut s = String::new();
            json_string(streams.iri(id), &mut s);
            s.push_str(", \"time\": ");
            s.into_boxed_str()
        })
    }

    /// The row's bindings as a JSON object's members (`"v": {...}, ...`), then `extra`.
    fn bindings(&mut self, m: &MatchRecord, dict: &Dictionary, out: &mut String) -> bool {
        let resolved = self.resolved.take().expect("resolved");
        let mut any = false;
        for (slot, key) in &resolved.row {
            if let Some(id) = slot.and_then(|s| m.mu.get(s).copied().flatten()) {
                if any {
                    out.push_str(", ");
                }
                any = true;
                out.push_str(key);
                out.push_str(self.term(id, dict));
            }
        }
        self.resolved = Some(resolved);
        any
    }

    fn jsonl(&mut self, m: &MatchRecord, scope: &Scope<'_>, out: &mut String) {
        out.push_str("{\"time\": ");
        self.times.push(m.time, TimeSpelling::Seconds, out);
        out.push_str(", \"start\": ");
        self.times.push(m.start, TimeSpelling::Seconds, out);
        if self.time_format.dated(m) {
            out.push_str(", \"time_iso\": \"");
            self.times.push(m.time, TimeSpelling::DateTime, out);
            out.push_str("\", \"start_iso\": \"");
            self.times.push(m.start, TimeSpelling::DateTime, out);
            out.push('"');
        }
        out.push_str(", \"bindings\": {");
        self.bindings(m, scope.dict, out);
        out.push_str("}, \"events\": [");
        let mut at = m.node.as_deref();
        let mut chain = Vec::new();
        while let Some(n) = at {
            chain.push(&n.taken);
            at = n.parent.as_deref();
        }
        for (i, taken) in chain.iter().rev().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            let key = (taken.gpm, taken.event.uid);
            if let Some(spelled) = self.events.get(&key) {
                out.push_str(spelled);
                continue;
            }
            let mut s = String::with_capacity(128);
            s.push_str(&self.resolved.as_ref().expect("resolved").atoms[taken.gpm]);
            let e = &taken.event;
            s.push_str(self.stream(e.stream, scope.streams));
            self.times.push(e.time, TimeSpelling::Seconds, &mut s);
            s.push_str(", \"graph\": ");
            match &e.graph {
                None => s.push_str("null"),
                Some(Term::BlankNode(b)) => json_string(&format!("_:{}", b.as_str()), &mut s),
                Some(Term::NamedNode(n)) => json_string(n.as_str(), &mut s),
                Some(other) => json_string(&other.to_string(), &mut s),
            }
            s.push('}');
            out.push_str(&s);
            if self.events.len() >= EVENTS_KEPT {
                self.events.clear();
            }
            self.events.insert(key, s.into_boxed_str());
        }
        out.push_str("]}\n");
    }

    fn json(&mut self, m: &MatchRecord, scope: &Scope<'_>, out: &mut String) {
        if self.rows > 1 {
            out.push_str(",\n");
        }
        out.push('{');
        let any = self.bindings(m, scope.dict, out);
        if self.with_time {
            if any {
                out.push_str(", ");
            }
            let dated = self.time_format.dated(m);
            out.push_str("\"_time\": ");
            json_time_literal(m.time, dated, out);
            out.push_str(", \"_start\": ");
            json_time_literal(m.start, dated, out);
        }
        out.push('}');
    }
}

#[cfg(test)]
mod tests {
    use super::{datetime_seconds, json_seconds, TimeCache, TimeSpelling, TIMES_KEPT};

    /// The cache spells every time as the spellers do, times that share a slot and the two
    /// spellings of one time included (each asked twice: spelled, then from the cache).
    #[test]
    fn time_cache_spells_as_the_spellers() {
        let mut cache = TimeCache::new();
        let times = (0..4 * TIMES_KEPT as i128)
            .map(|i| 1_767_225_600_000_000_000 + i * 250_000_000)
            .chain([0, -1, 1, -1_500_000_000, 12_345]);
        for ns in times
            .collect::<Vec<_>>()
            .iter()
            .copied()
            .cycle()
            .take(10 * TIMES_KEPT)
        {
            for how in [TimeSpelling::Seconds, TimeSpelling::DateTime] {
                let mut expected = String::new();
                match how {
                    TimeSpelling::Seconds => json_seconds(ns, &mut expected),
                    TimeSpelling::DateTime => datetime_seconds(ns, &mut expected),
                }
                for _ in 0..2 {
                    let mut got = String::from("x");
                    cache.push(ns, how, &mut got);
                    assert_eq!(got, format!("x{expected}"), "{ns}");
                }
            }
        }
    }
}
