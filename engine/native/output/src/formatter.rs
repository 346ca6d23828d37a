//! The text half of writing results: a `Batch` of rows spelled in one format, byte for byte
//! as the Python writers (the oracle, `tests/output/writers_oracle.py`) write them. It needs nothing of the runtime's (the batch carries
//! every term and event the first time a row names it), so it runs on whichever thread
//! writes the output.

use super::collect::{Batch, EventInfo, Resolved, RowHead};
use super::spell::{
    csv_field, csv_value, datetime_seconds, json_seconds, json_string, json_string_ascii,
    json_term, json_time_literal, python_space, table_term, table_time, time_datatype, time_value,
    tsv_value,
};
use super::trig::{Taken, Trig};
use super::{EventList, Format};
use oxrdf::Term;
use spaseq_io::dictionary::TermId;
use std::collections::HashMap;

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
/// Its slots are made on first use (a formatter of one row never fills them).
struct TimeCache(Vec<Option<(i128, TimeSpelling, Box<str>)>>);

impl TimeCache {
    fn new() -> Self {
        TimeCache(Vec::new())
    }

    /// Append `ns` spelled as `how` to `out`.
    fn push(&mut self, ns: i128, how: TimeSpelling, out: &mut String) {
        if self.0.is_empty() {
            self.0 = vec![None; TIMES_KEPT];
        }
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

/// Rows of one query in one format: `start`, `write` per batch, `finish`, each appending to
/// a text buffer the caller writes out.
pub struct Formatter {
    format: Format,
    /// The variables of the header (CSV, TSV, JSON), without `_time`/`_start`.
    columns: Vec<String>,
    with_time: bool,
    /// With `with_time`, the columns named `_time` (false) or `_start` (true): they hold the
    /// times, not the variables' values (`writers.Writer._terms`).
    time_columns: Vec<(usize, bool)>,
    /// With `with_time`, where `_time` and `_start` are among the row's variables (JSON: the
    /// times replace their values there).
    time_keys: [Option<usize>; 2],
    resolved: Option<Resolved>,
    /// Per term id, its spelling in this format (as sent by the collector).
    terms: Vec<Option<Box<str>>>,
    /// Per stream id, its IRI as a JSON string followed by `, "time": `.
    streams: Vec<Box<str>>,
    /// Per event uid, the rest of its jsonl object after `"stream": `.
    events: HashMap<u64, Box<str>, foldhash::fast::RandomState>,
    /// Times spelled for jsonl rows (a cache).
    times: TimeCache,
    rows: u64,
    /// The table's prefixes, longest namespace first (`with_prefixes`).
    prefixes: Vec<(String, String)>,
    /// The table's rows so far, as their cells (it sizes its columns at the end).
    table: Vec<Vec<String>>,
    /// The table holds SPARQL solutions (`as_solutions`): no times, counted in rows.
    solutions: bool,
    /// TriG's prefixes, output stream and template (`with_trig`).
    trig: Option<Trig>,
    /// TriG: per term id, its term; per stream id, its IRI; per event uid, the event.
    rdf_terms: Vec<Option<Term>>,
    stream_iris: Vec<String>,
    rdf_events: HashMap<u64, EventInfo, foldhash::fast::RandomState>,
    /// What jsonl records say of their events (`with_events`).
    event_list: EventList,
}

impl Formatter {
    /// A formatter of `format` with the header `columns`, `with_time` adding `_time` and
    /// `_start` (JSON, CSV, TSV).
    pub fn new(format: Format, columns: Vec<String>, with_time: bool) -> Formatter {
        let time_columns = columns
            .iter()
            .enumerate()
            .filter(|_| with_time)
            .filter_map(|(i, v)| time_name(v).map(|start| (i, start)))
            .collect();
        Formatter {
            format,
            columns,
            with_time,
            time_columns,
            time_keys: [None; 2],
            resolved: None,
            terms: Vec::new(),
            streams: Vec::new(),
            events: HashMap::default(),
            times: TimeCache::new(),
            rows: 0,
            prefixes: Vec::new(),
            table: Vec::new(),
            solutions: false,
            trig: None,
            rdf_terms: Vec::new(),
            stream_iris: Vec::new(),
            rdf_events: HashMap::default(),
            event_list: EventList::Full,
        }
    }

    /// The formatter writing jsonl records' events as `event_list` says.
    pub fn with_events(mut self, event_list: EventList) -> Formatter {
        self.event_list = event_list;
        self
    }

    /// The formatter writing TriG as `trig` says (for `Format::Trig`).
    pub fn with_trig(mut self, trig: Trig) -> Formatter {
        self.trig = Some(trig);
        self
    }

    /// The formatter with the query's `prefixes` (in declaration order): the table writes
    /// IRIs under them as prefixed names, trying longer namespaces first.
    pub fn with_prefixes(mut self, mut prefixes: Vec<(String, String)>) -> Formatter {
        prefixes.sort_by_key(|(_, ns)| std::cmp::Reverse(ns.chars().count())); // stable
        self.prefixes = prefixes;
        self
    }

    /// The formatter's table holding SPARQL solutions rather than matches (`spaseq kb
    /// query`): the same columns, prefixes and terms, without the time and start columns,
    /// counted in rows.
    pub fn as_solutions(mut self) -> Formatter {
        self.solutions = true;
        self
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
                csv_record(header.iter().map(String::as_str), out);
            }
            Format::Tsv => {
                let header: Vec<String> = self.header().iter().map(|v| format!("?{v}")).collect();
                out.push_str(&header.join("\t"));
                out.push('\n');
            }
            Format::Table | Format::Arrow => {}
            Format::Trig => {
                if let Some(trig) = &self.trig {
                    trig.start(out);
                }
            }
        }
    }

    /// What follows the rows.
    pub fn finish(&mut self, out: &mut String) {
        match self.format {
            Format::Json => out.push_str("\n]}}\n"),
            Format::Table => self.finish_table(out, false),
            _ => {}
        }
    }

    /// What follows the rows of a run stopped by an error (whose message follows): the
    /// table only when it has rows, counted as found before the error, never as a whole
    /// run's result; the other formats as `finish` (a JSON document stays whole).
    pub fn stopped(&mut self, out: &mut String) {
        match self.format {
            Format::Table if self.rows == 0 => {}
            Format::Table => self.finish_table(out, true),
            _ => self.finish(out),
        }
    }

    /// The table (`writers.TableWriter.finish`): a header, a rule, the rows, each column
    /// padded to its widest cell (in characters) and each line's trailing white space
    /// dropped, then the count of matches (`stopped`: found before an error).
    fn finish_table(&mut self, out: &mut String, stopped: bool) {
        let times = if self.solutions { 0 } else { 2 };
        let header: Vec<String> = ["time".to_owned(), "start".to_owned()]
            .into_iter()
            .take(times)
            .chain(self.columns.iter().map(|v| format!("?{v}")))
            .collect();
        let width = |s: &String| s.chars().count();
        let mut widths: Vec<usize> = header.iter().map(width).collect();
        for row in &self.table {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(width(cell));
            }
        }
        let line = |cells: &[String], out: &mut String| {
            let at = out.len();
            for (i, (cell, w)) in cells.iter().zip(&widths).enumerate() {
                if i > 0 {
                    out.push_str("  ");
                }
                out.push_str(cell);
                out.extend(std::iter::repeat_n(' ', w.saturating_sub(width(cell))));
            }
            let kept = out[at..].trim_end_matches(python_space).len();
            out.truncate(at + kept);
            out.push('\n');
        };
        line(&header, out);
        let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
        out.push_str(&rule.join("  "));
        out.push('\n');
        for row in std::mem::take(&mut self.table) {
            line(&row, out);
        }
        let count = self.rows;
        let noun = match (self.solutions, count == 1) {
            (false, true) => "match",
            (false, false) => "matches",
            (true, true) => "row",
            (true, false) => "rows",
        };
        let stopped = if stopped { " before the error" } else { "" };
        let _ = std::fmt::Write::write_fmt(out, format_args!("({count} {noun}{stopped})\n"));
    }

    /// Take in what `batch` sends, then append its rows.
    pub fn write(&mut self, batch: &Batch, out: &mut String) {
        self.take_in(batch);
        let Some(resolved) = self.resolved.take() else {
            return; // no row was ever collected
        };
        if self.with_time && self.format == Format::Json {
            self.time_keys = [None; 2];
            for (i, name) in resolved.names.iter().enumerate() {
                if let Some(start) = time_name(name) {
                    self.time_keys[usize::from(start)].get_or_insert(i);
                }
            }
        }
        let width = if self.format.by_columns() {
            resolved.columns.len()
        } else {
            resolved.row.len()
        };
        let mut taken_at = 0;
        for (i, head) in batch.rows.iter().enumerate() {
            let values = &batch.values[i * width..(i + 1) * width];
            let taken = &batch.taken[taken_at..head.taken_end as usize];
            taken_at = head.taken_end as usize;
            self.rows += 1;
            match self.format {
                Format::Jsonl => self.jsonl(head, values, taken, &resolved, out),
                Format::Json => self.json(head, values, &resolved, out),
                Format::Csv => self.csv(head, values, out),
                Format::Tsv => self.tsv(head, values, out),
                Format::Table => self.table_row(head, values),
                Format::Trig => self.trig_row(head, values, taken, &resolved, out),
                Format::Arrow => unreachable!("Arrow rows are built by columns::Columns"),
            }
        }
        self.resolved = Some(resolved);
    }

    fn take_in(&mut self, batch: &Batch) {
        if batch.forget_terms {
            self.terms.clear();
        }
        if batch.forget_terms || batch.forget_events {
            self.events.clear();
            self.rdf_events.clear();
        }
        if self.format == Format::Trig {
            if batch.forget_terms {
                self.rdf_terms.clear();
            }
            if let Some(resolved) = &batch.resolved {
                self.resolved = Some(resolved.clone());
            }
            self.stream_iris
                .extend(batch.streams.iter().map(|(_, iri)| iri.clone()));
            for (id, term) in &batch.terms {
                let i = *id as usize;
                if self.rdf_terms.len() <= i {
                    self.rdf_terms.resize(i + 1, None);
                }
                self.rdf_terms[i] = Some(term.clone());
            }
            for e in &batch.events {
                self.rdf_events.insert(e.uid, e.clone());
            }
            return;
        }
        if let Some(resolved) = &batch.resolved {
            self.resolved = Some(resolved.clone());
        }
        for (id, iri) in &batch.streams {
            debug_assert_eq!(*id as usize, self.streams.len(), "streams sent in order");
            let mut s = String::new();
            json_string(iri, &mut s);
            s.push_str(", \"time\": ");
            self.streams.push(s.into_boxed_str());
        }
        for (id, term) in &batch.terms {
            let i = *id as usize;
            if self.terms.len() <= i {
                self.terms.resize(i + 1, None);
            }
            self.terms[i] = Some(self.spell(term));
        }
        for e in &batch.events {
            let mut s = String::with_capacity(96);
            if self.event_list == EventList::Full {
                s.push_str(&self.streams[e.stream as usize]);
                self.times.push(e.time, TimeSpelling::Seconds, &mut s);
                s.push_str(", \"graph\": ");
            }
            match &e.graph {
                None => s.push_str("null"),
                Some(Term::BlankNode(b)) => json_string(&format!("_:{}", b.as_str()), &mut s),
                Some(Term::NamedNode(n)) => json_string(n.as_str(), &mut s),
                Some(other) => json_string(&other.to_string(), &mut s),
            }
            if self.event_list == EventList::Full {
                s.push('}');
            }
            self.events.insert(e.uid, s.into_boxed_str());
        }
    }

    /// A term spelled in this format.
    fn spell(&self, term: &Term) -> Box<str> {
        let mut s = String::new();
        match self.format {
            Format::Jsonl | Format::Json => json_term(term, &mut s),
            Format::Csv => s = csv_value(term),
            Format::Tsv => tsv_value(term, &mut s),
            Format::Table => table_term(term, &self.prefixes, &mut s),
            Format::Trig => unreachable!("TriG keeps its terms as terms"),
            Format::Arrow => unreachable!("Arrow rows are built by columns::Columns"),
        }
        s.into_boxed_str()
    }

    fn term(&self, id: TermId) -> &str {
        self.terms[id as usize]
            .as_deref()
            .expect("the collector sends a term before a row names it")
    }

    /// A row's bindings as a JSON object's members (`"v": {...}, ...`); whether any.
    fn bindings(&self, values: &[Option<TermId>], resolved: &Resolved, out: &mut String) -> bool {
        let mut any = false;
        for ((_, key), id) in resolved.row.iter().zip(values) {
            if let Some(id) = id {
                if any {
                    out.push_str(", ");
                }
                any = true;
                out.push_str(key);
                out.push_str(self.term(*id));
            }
        }
        any
    }

    fn jsonl(
        &mut self,
        head: &RowHead,
        values: &[Option<TermId>],
        taken: &[(u32, u64)],
        resolved: &Resolved,
        out: &mut String,
    ) {
        let RowHead {
            time, start, dated, ..
        } = *head;
        out.push_str("{\"time\": ");
        self.times.push(time, TimeSpelling::Seconds, out);
        out.push_str(", \"start\": ");
        self.times.push(start, TimeSpelling::Seconds, out);
        if dated {
            out.push_str(", \"time_iso\": \"");
            self.times.push(time, TimeSpelling::DateTime, out);
            out.push_str("\", \"start_iso\": \"");
            self.times.push(start, TimeSpelling::DateTime, out);
            out.push('"');
        }
        out.push_str(", \"bindings\": {");
        self.bindings(values, resolved, out);
        if self.event_list == EventList::None {
            out.push_str("}}\n");
            return;
        }
        out.push_str("}, \"events\": [");
        for (i, (gpm, uid)) in taken.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            if self.event_list == EventList::Full {
                out.push_str(&resolved.atoms[*gpm as usize]);
            }
            out.push_str(
                self.events
                    .get(uid)
                    .expect("the collector sends an event before a row names it"),
            );
        }
        out.push_str("]}\n");
    }

    fn json(
        &mut self,
        head: &RowHead,
        values: &[Option<TermId>],
        resolved: &Resolved,
        out: &mut String,
    ) {
        let RowHead {
            time, start, dated, ..
        } = *head;
        if self.rows > 1 {
            out.push_str(",\n");
        }
        out.push('{');
        if self.time_keys != [None; 2] {
            self.json_with_time_variables(head, values, resolved, out);
            out.push('}');
            return;
        }
        let any = self.bindings(values, resolved, out);
        if self.with_time {
            if any {
                out.push_str(", ");
            }
            out.push_str("\"_time\": ");
            json_time_literal(time, dated, out);
            out.push_str(", \"_start\": ");
            json_time_literal(start, dated, out);
        }
        out.push('}');
    }

    /// A JSON row's members when `_time` or `_start` is also a variable of the row (as
    /// `writers.JsonWriter` writes them: a bound one holds the time in its place, the others
    /// follow the bindings).
    fn json_with_time_variables(
        &self,
        head: &RowHead,
        values: &[Option<TermId>],
        resolved: &Resolved,
        out: &mut String,
    ) {
        let times = [head.time, head.start];
        let mut written = [false; 2];
        let mut any = false;
        for (i, ((_, key), id)) in resolved.row.iter().zip(values).enumerate() {
            let Some(id) = id else { continue };
            if std::mem::replace(&mut any, true) {
                out.push_str(", ");
            }
            out.push_str(key);
            match self.time_keys.iter().position(|k| *k == Some(i)) {
                Some(t) => {
                    json_time_literal(times[t], head.dated, out);
                    written[t] = true;
                }
                None => out.push_str(self.term(*id)),
            }
        }
        for (t, key) in ["\"_time\": ", "\"_start\": "].iter().enumerate() {
            if !written[t] {
                if std::mem::replace(&mut any, true) {
                    out.push_str(", ");
                }
                out.push_str(key);
                json_time_literal(times[t], head.dated, out);
            }
        }
    }

    /// A result as a TriG block (`trig.rs`).
    fn trig_row(
        &mut self,
        head: &RowHead,
        values: &[Option<TermId>],
        taken: &[(u32, u64)],
        resolved: &Resolved,
        out: &mut String,
    ) {
        let trig = self.trig.as_ref().expect("a TriG formatter has its Trig");
        let term = |id: TermId| {
            self.rdf_terms[id as usize]
                .as_ref()
                .expect("the collector sends a term before a row names it")
        };
        let values: Vec<Option<&Term>> = values.iter().map(|id| id.map(term)).collect();
        let bindings: Vec<(&str, &Term)> = resolved
            .names
            .iter()
            .zip(&values)
            .filter_map(|(v, t)| t.map(|t| (v.as_str(), t)))
            .collect();
        let taken: Vec<Taken<'_>> = taken
            .iter()
            .map(|(gpm, uid)| {
                let e = self
                    .rdf_events
                    .get(uid)
                    .expect("the collector sends an event before a row names it");
                Taken {
                    atom: &resolved.gpms[*gpm as usize],
                    stream: &self.stream_iris[e.stream as usize],
                    time: e.time,
                    dated: e.dated,
                    graph: e.graph.as_ref(),
                }
            })
            .collect();
        trig.result(
            self.rows,
            (head.time, head.start, head.dated),
            &values,
            &bindings,
            &taken,
            out,
        );
    }

    /// Times first (`--with-time`), then the columns.
    fn csv(&mut self, head: &RowHead, values: &[Option<TermId>], out: &mut String) {
        let RowHead {
            time, start, dated, ..
        } = *head;
        let mut cells: Vec<String> = Vec::new();
        if self.with_time {
            for ns in [time, start] {
                let mut s = String::new();
                time_value(ns, dated, &mut s);
                cells.push(s);
            }
        }
        for id in values {
            cells.push(id.map_or_else(String::new, |id| self.term(id).to_owned()));
        }
        for &(i, is_start) in &self.time_columns {
            let mut s = String::new();
            time_value(if is_start { start } else { time }, dated, &mut s);
            cells[i + 2] = s;
        }
        csv_record(cells.iter().map(String::as_str), out);
    }

    /// A row of the table, kept until `finish`: its times, then the columns.
    fn table_row(&mut self, head: &RowHead, values: &[Option<TermId>]) {
        let mut cells = Vec::with_capacity(values.len() + 2);
        for ns in [head.time, head.start] {
            if self.solutions {
                break;
            }
            let mut s = String::new();
            table_time(ns, &mut s);
            cells.push(s);
        }
        for id in values {
            cells.push(id.map_or_else(String::new, |id| self.term(id).to_owned()));
        }
        self.table.push(cells);
    }

    /// As `csv`, in SPARQL TSV: times as typed literals, terms in N-Triples.
    fn tsv(&mut self, head: &RowHead, values: &[Option<TermId>], out: &mut String) {
        let RowHead {
            time, start, dated, ..
        } = *head;
        let mut first = true;
        let mut sep = |out: &mut String| {
            if !std::mem::take(&mut first) {
                out.push('\t');
            }
        };
        let literal = |ns: i128, out: &mut String| {
            out.push('"');
            time_value(ns, dated, out);
            out.push_str("\"^^<");
            out.push_str(time_datatype(dated));
            out.push('>');
        };
        if self.with_time {
            for ns in [time, start] {
                sep(out);
                literal(ns, out);
            }
        }
        let mut clashes = self.time_columns.iter().peekable();
        for (i, id) in values.iter().enumerate() {
            sep(out);
            if let Some(&(_, is_start)) = clashes.next_if(|(c, _)| *c == i) {
                literal(if is_start { start } else { time }, out);
            } else if let Some(id) = id {
                out.push_str(self.term(*id));
            }
        }
        out.push('\n');
    }
}

/// Whether `name` is `_time` (false) or `_start` (true), the names `--with-time` adds.
fn time_name(name: &str) -> Option<bool> {
    match name {
        "_time" => Some(false),
        "_start" => Some(true),
        _ => None,
    }
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
