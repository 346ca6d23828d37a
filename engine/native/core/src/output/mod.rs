//! Results written natively (issue 12): the machine-readable formats of `spaseq run` (the
//! jsonl contract, SPARQL 1.1 JSON, CSV and TSV results) written from the runtime's match
//! records, byte for byte as the Python writers (`engine/output/writers.py`, the oracle)
//! write them, without a Python object per match.
//!
//! A `Writer` does what `QueryOutput` + `Projector` + a Python writer do to each released
//! match, in release order (docs/decisions.md 4): SELECT's projection (the listed variables
//! that are bound, or every bound variable by name for `*`), DISTINCT (the first match of
//! each projected row is kept), then the row in the format. It is two halves: a `Collector`
//! (`collect.rs`) turns matches into a `Batch` of rows of term ids where the runtime is, and
//! a `Formatter` (`formatter.rs`) spells the batch, on the same thread or on one of its own
//! (`Background`). Terms are spelled once per term id and kept until the dictionary is
//! compacted. Times are written in the input's form unless `TimeFormat` says otherwise
//! (docs/decisions.md 43).

pub mod background;
pub mod collect;
pub mod formatter;
pub mod spell;

use crate::dictionary::Dictionary;
use crate::runtime::{MatchRecord, Streams};
use crate::vars::VarTable;
pub use background::Background;
pub use collect::{Batch, Collector};
pub use formatter::Formatter;

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

/// One query's results in one format, written on the caller's thread: a `Collector` and a
/// `Formatter` with a batch between them; `start`, `write` per match, `finish`, each
/// appending to a text buffer the caller writes out.
pub struct Writer {
    collector: Collector,
    formatter: Formatter,
    batch: Batch,
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
            formatter: Formatter::new(format, columns.clone(), with_time),
            collector: Collector::new(format, select, distinct, columns, time_format),
            batch: Batch::default(),
        }
    }

    /// Forget what is cached by term id (the engine's dictionary was compacted: ids now
    /// name other terms).
    pub fn forget_terms(&mut self) {
        self.collector.forget_terms();
    }

    /// Rows written so far (after DISTINCT).
    pub fn rows(&self) -> u64 {
        self.collector.rows()
    }

    /// What precedes the rows.
    pub fn start(&mut self, out: &mut String) {
        self.formatter.start(out);
    }

    /// What follows the rows.
    pub fn finish(&mut self, out: &mut String) {
        self.formatter.finish(out);
    }

    /// Write released matches in order; how many rows were written (DISTINCT drops some).
    pub fn write_all<'m>(
        &mut self,
        matches: impl IntoIterator<Item = &'m MatchRecord>,
        scope: &Scope<'_>,
        out: &mut String,
    ) -> usize {
        self.collector.open(&mut self.batch);
        for m in matches {
            self.collector.collect(m, scope, &mut self.batch);
        }
        self.formatter.write(&self.batch, out);
        self.batch.rows.len()
    }
}

#[cfg(test)]
mod tests {
    use super::formatter::{TimeCache, TimeSpelling, TIMES_KEPT};
    use super::spell::{datetime_seconds, json_seconds};

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
