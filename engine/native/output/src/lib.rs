//! Results written natively (issue 12), the one implementation of every output format of
//! `spaseq run` (the jsonl contract, SPARQL 1.1 JSON, CSV and TSV results, the table for
//! people, and TriG, `trig.rs`): from the runtime's match records without a Python object
//! per match, or from rows given as values (`rows.rs`: results found in Python, the server's
//! and the rdflib plugin's rows). The Python writers they replaced are their test oracle,
//! byte for byte (`tests/output/writers_oracle.py`).
//!
//! Together they write each result the engine numbered (`MatchRecord::number`: DISTINCT is
//! applied there, once), in release order (docs/decisions.md 4): SELECT's projection (the
//! listed variables that are bound, or every bound variable by name for `*`), then the row in
//! the format. A `Collector` (`collect.rs`) turns matches into a `Batch` of rows of term ids
//! where the runtime is (a `RowCollector` does the same for rows given as values), and a
//! `Formatter` (`formatter.rs`) spells the batch, on the same thread or on one of its own
//! (`Background`). Terms are spelled once per term id and kept until the dictionary is
//! compacted. Times are written in the input's form unless `TimeFormat` says otherwise
//! (docs/decisions.md 43).
//!
//! The late-event output (`late.rs`, decision 64) is written here too: the events queries
//! dropped as late, as TriG.
//!
//! The top of the engine's crates: it reads the automaton's match records
//! (`spaseq-automaton`), and nothing below depends on it.

pub mod background;
pub mod collect;
pub mod columns;
pub mod derive;
pub mod formatter;
pub mod late;
pub mod rows;
pub mod spell;
pub mod trig;

pub use background::Background;
pub use collect::{Batch, Collector};
pub use formatter::Formatter;
pub use rows::{PlainRow, PlainTaken, RowCollector};
use spaseq_automaton::{MatchRecord, Streams};
use spaseq_gpm::vars::{Slot, VarTable};
use spaseq_io::dictionary::Dictionary;

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
    /// Aligned columns for people (every row is kept until the end, which sizes them).
    Table,
    /// Each result a named graph of the query's output stream (`trig.rs`).
    Trig,
    /// Arrow record batches (`columns.rs`), written as an Arrow IPC stream or Parquet by
    /// pyarrow: built by `Columns`, not by a `Formatter`.
    Arrow,
}

impl Format {
    pub fn parse(name: &str) -> Option<Format> {
        match name {
            "jsonl" => Some(Format::Jsonl),
            "json" => Some(Format::Json),
            "csv" => Some(Format::Csv),
            "tsv" => Some(Format::Tsv),
            "table" => Some(Format::Table),
            "trig" => Some(Format::Trig),
            "arrow" => Some(Format::Arrow),
            _ => None,
        }
    }

    /// Whether a row's cells are the header's columns (CSV, TSV, the table, Arrow) rather
    /// than the projected row's variables (jsonl, JSON, TriG).
    pub fn by_columns(self) -> bool {
        matches!(
            self,
            Format::Csv | Format::Tsv | Format::Table | Format::Arrow
        )
    }

    /// Whether rows carry the events their match took (jsonl, TriG, Arrow).
    pub fn lists_events(self) -> bool {
        matches!(self, Format::Jsonl | Format::Trig | Format::Arrow)
    }
}

/// What a jsonl record says of the events its match took (`--events`, issue 29): each as
/// `{"atom", "stream", "time", "graph"}` (the contract's default), its graph name only, or
/// nothing (the `events` member left out; nothing about the events is collected).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EventList {
    #[default]
    Full,
    Ids,
    None,
}

impl EventList {
    pub fn parse(name: &str) -> Option<EventList> {
        match name {
            "full" => Some(EventList::Full),
            "ids" => Some(EventList::Ids),
            "none" => Some(EventList::None),
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

    /// The time format `format` writes with: TriG writes times in the input's form whatever
    /// --time-format says (as an output stream's events are made: `derived.Derived`).
    pub fn of(self, format: Format) -> TimeFormat {
        if format == Format::Trig {
            TimeFormat::Input
        } else {
            self
        }
    }

    /// Whether `m`'s times are written as `xsd:dateTime`s (`times.dated`).
    pub fn dated(self, m: &MatchRecord) -> bool {
        let mut at = m.node.as_deref();
        self.dated_by(std::iter::from_fn(|| {
            let n = at?;
            at = n.parent.as_deref();
            Some(n.taken.event.dated)
        }))
    }

    /// Whether a match's times are written as `xsd:dateTime`s, given whether each event it
    /// took was stamped with one (`times.dated`): in the input's form, when every event was
    /// and there is at least one.
    pub fn dated_by(self, mut taken: impl Iterator<Item = bool>) -> bool {
        match self {
            TimeFormat::DateTime => true,
            TimeFormat::Epoch => false,
            TimeFormat::Input => {
                let mut any = false;
                for dated in taken.by_ref() {
                    if !dated {
                        return false;
                    }
                    any = true;
                }
                any
            }
        }
    }
}

/// The variables of a result row, in the row's order, with their slots: `select`'s (a slot
/// None when the query never binds it), or, without a SELECT list, every variable by name.
/// SELECT's projection, for the writers (`Collector`) and the engine's numbering alike.
pub fn row_slots<'a>(
    select: Option<&'a [String]>,
    vars: &'a VarTable,
) -> Vec<(&'a str, Option<Slot>)> {
    match select {
        Some(names) => names.iter().map(|v| (v.as_str(), vars.get(v))).collect(),
        None => {
            let mut all: Vec<(&str, Option<Slot>)> =
                (0..vars.len()).map(|s| (vars.name(s), Some(s))).collect();
            all.sort_by(|a, b| a.0.cmp(b.0));
            all
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
