//! Rows given as values rather than as the runtime's match records: the results a query gives
//! through Python (composed queries, `--materialize`, the reference evaluator) and the rows of
//! the server's match log and of the rdflib plugin. A `RowCollector` turns each into the same
//! `Batch` a `Collector` makes of a match, so that the `Formatter` spells both alike: there is
//! one spelling of every format, whoever found the rows.
//!
//! A row is a result already: projected (its bindings are the row's, in the row's order) and
//! past DISTINCT; its terms come as N-Triples and are parsed once per spelling kept.

use super::collect::{Batch, EventInfo, Resolved, RowHead};
use super::spell::json_string;
use super::{Format, TimeFormat};
use oxrdf::Term;
use spaseq_automaton::event::StreamId;
use spaseq_io::dictionary::TermId;
use std::collections::HashMap;

/// Terms a row collector keeps numbered before it starts again (the formatter keeps each one
/// spelled while it is numbered here).
const TERMS_KEPT: usize = 1 << 16;

/// One event a row's match took.
#[derive(Debug, Clone)]
pub struct PlainTaken {
    /// The GPM (atom) that took it.
    pub atom: String,
    /// Its stream's IRI.
    pub stream: String,
    /// Its time, in nanoseconds.
    pub time: i128,
    /// Stamped with an `xsd:dateTime`.
    pub dated: bool,
    /// Its graph name in N-Triples (`<iri>` or `_:label`), if it had one.
    pub graph: Option<String>,
}

/// One result row: its match's times (nanoseconds), its bindings (variable, term in
/// N-Triples) in the row's order, and the events its match took, first to last.
#[derive(Debug, Clone, Default)]
pub struct PlainRow {
    pub time: i128,
    pub start: i128,
    pub bindings: Vec<(String, String)>,
    pub taken: Vec<PlainTaken>,
}

/// Turns rows given as values into `Batch`es of one row each, numbering their terms,
/// variables, atoms and streams as the formatter needs them.
pub struct RowCollector {
    format: Format,
    /// The row's variables (None: every variable a row has bound so far, in name order).
    select: Option<Vec<String>>,
    /// The variables of the header (CSV, TSV, the table).
    columns: Vec<String>,
    time_format: TimeFormat,
    /// The row's variables as the formatter was last sent them.
    names: Vec<String>,
    /// The atoms (GPM names) numbered so far.
    atoms: Vec<String>,
    /// `names` or `atoms` changed since the formatter was sent them.
    changed: bool,
    /// Terms numbered, by their N-Triples spelling (sent to the formatter once each).
    terms: HashMap<String, TermId, foldhash::fast::RandomState>,
    streams: HashMap<String, StreamId, foldhash::fast::RandomState>,
    rows: u64,
}

impl RowCollector {
    /// A collector of rows of `select` (None: every bound variable by name) for `format`,
    /// whose header has the variables `columns`, times as `time_format` says.
    pub fn new(
        format: Format,
        select: Option<Vec<String>>,
        columns: Vec<String>,
        time_format: TimeFormat,
    ) -> RowCollector {
        RowCollector {
            format,
            names: select.clone().unwrap_or_default(),
            select,
            columns,
            time_format: time_format.of(format),
            atoms: Vec::new(),
            changed: true,
            terms: HashMap::default(),
            streams: HashMap::default(),
            rows: 0,
        }
    }

    /// Rows collected so far.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// `batch` emptied, then filled with `row` and what the formatter was not sent yet; an
    /// error for a term that is not N-Triples (nothing is collected then).
    pub fn fill(&mut self, row: &PlainRow, batch: &mut Batch) -> Result<(), String> {
        let parse = |text: &str| {
            text.parse::<Term>()
                .map_err(|e| format!("the term {text}: {e}"))
        };
        // every term parsed first: one that does not parse leaves everything as it was
        let forget = self.terms.len() + row.bindings.len() > TERMS_KEPT;
        let mut fresh: Vec<(&str, Term)> = Vec::new();
        for (_, text) in &row.bindings {
            let known = !forget && self.terms.contains_key(text);
            if !known && !fresh.iter().any(|(t, _)| t == text) {
                fresh.push((text, parse(text)?));
            }
        }
        let graphs = row
            .taken
            .iter()
            .map(|t| t.graph.as_deref().map(parse).transpose())
            .collect::<Result<Vec<Option<Term>>, String>>()?;
        if forget {
            self.terms.clear();
        }
        batch.reset(forget, true); // each batch numbers its own events
        for (text, term) in fresh {
            let id = self.terms.len() as TermId;
            self.terms.insert(text.to_owned(), id);
            batch.terms.push((id, term));
        }
        self.learn(row);
        if std::mem::take(&mut self.changed) {
            batch.resolved = Some(self.resolved());
        }
        // a variable's value: the row's binding, if the row has the variable
        let value = |name: &String| {
            if self.select.is_some() && !self.names.contains(name) {
                return None;
            }
            let (_, text) = row.bindings.iter().find(|(v, _)| v == name)?;
            Some(self.terms[text.as_str()])
        };
        let cells = if self.format.by_columns() {
            &self.columns
        } else {
            &self.names
        };
        batch.values.extend(cells.iter().map(value));
        if self.format.lists_events() {
            for (uid, (t, graph)) in row.taken.iter().zip(graphs).enumerate() {
                let gpm = self.atoms.iter().position(|a| *a == t.atom);
                batch
                    .taken
                    .push((gpm.expect("learnt above") as u32, uid as u64));
                let next = self.streams.len() as StreamId;
                let stream = *self.streams.entry(t.stream.clone()).or_insert_with(|| {
                    batch.streams.push((next, t.stream.clone()));
                    next
                });
                batch.events.push(EventInfo {
                    uid: uid as u64,
                    stream,
                    time: t.time,
                    dated: t.dated,
                    graph,
                });
            }
        }
        batch.rows.push(RowHead {
            time: row.time,
            start: row.start,
            dated: self.time_format.dated_by(row.taken.iter().map(|t| t.dated)),
            taken_end: batch.taken.len() as u32,
        });
        self.rows += 1;
        Ok(())
    }

    /// Number the variables (for `SELECT *`) and atoms `row` names for the first time.
    fn learn(&mut self, row: &PlainRow) {
        if self.select.is_none() {
            for (v, _) in &row.bindings {
                if let Err(at) = self.names.binary_search(v) {
                    self.names.insert(at, v.clone());
                    self.changed = true;
                }
            }
        }
        if self.format.lists_events() {
            for t in &row.taken {
                if !self.atoms.contains(&t.atom) {
                    self.atoms.push(t.atom.clone());
                    self.changed = true;
                }
            }
        }
    }

    /// The names the rows are written with (no slots: the rows carry their values).
    fn resolved(&self) -> Resolved {
        let key = |name: &str| {
            let mut s = String::new();
            json_string(name, &mut s);
            s.push_str(": ");
            (None, s)
        };
        let atoms = self
            .atoms
            .iter()
            .map(|g| {
                let mut s = String::from("{\"atom\": ");
                json_string(g, &mut s);
                s.push_str(", \"stream\": ");
                s
            })
            .collect();
        Resolved {
            row: self.names.iter().map(|v| key(v)).collect(),
            columns: vec![None; self.columns.len()],
            atoms,
            names: self.names.clone(),
            gpms: self.atoms.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Formatter;

    const INTEGER: &str = "<http://www.w3.org/2001/XMLSchema#integer>";

    fn taken(atom: &str, time: i128, dated: bool, graph: Option<&str>) -> PlainTaken {
        PlainTaken {
            atom: atom.into(),
            stream: "http://ex.org/s".into(),
            time,
            dated,
            graph: graph.map(str::to_owned),
        }
    }

    fn row(time: i128, bindings: &[(&str, &str)], taken: Vec<PlainTaken>) -> PlainRow {
        PlainRow {
            time,
            start: 1_000_000_000,
            bindings: bindings
                .iter()
                .map(|(v, t)| ((*v).to_owned(), (*t).to_owned()))
                .collect(),
            taken,
        }
    }

    /// The rows written by a collector and formatter of `format`.
    fn write(
        format: Format,
        select: Option<&[&str]>,
        columns: &[&str],
        with_time: bool,
        rows: &[PlainRow],
    ) -> String {
        write_ended(format, select, columns, with_time, rows, false)
    }

    /// As `write`, the table ended as a whole run's (`finish`) or as one an error stopped.
    fn write_ended(
        format: Format,
        select: Option<&[&str]>,
        columns: &[&str],
        with_time: bool,
        rows: &[PlainRow],
        stopped: bool,
    ) -> String {
        let select = select.map(|s| s.iter().map(|v| (*v).to_owned()).collect());
        let columns: Vec<String> = columns.iter().map(|v| (*v).to_owned()).collect();
        let mut collector = RowCollector::new(format, select, columns.clone(), TimeFormat::Input);
        let mut formatter = Formatter::new(format, columns, with_time);
        let mut out = String::new();
        let mut batch = Batch::default();
        formatter.start(&mut out);
        for r in rows {
            collector.fill(r, &mut batch).unwrap();
            formatter.write(&batch, &mut out);
        }
        if stopped {
            formatter.stopped(&mut out);
        } else {
            formatter.finish(&mut out);
        }
        out
    }

    /// What `writers.JsonlWriter` writes for the same rows (from Python).
    #[test]
    fn jsonl_rows_are_spelled_as_the_runtimes() {
        let one = format!("\"1\"^^{INTEGER}");
        let rows = [
            row(
                2_500_000_000,
                &[("x", "<http://ex.org/a>"), ("a", &one)],
                vec![
                    taken("A", 1_000_000_000, false, Some("<http://ex.org/g>")),
                    taken("B", 2_500_000_000, true, Some("_:b0")),
                ],
            ),
            row(
                3_000_000_000,
                &[("a", "\"é\"@fr")],
                vec![taken("B", 0, true, None)],
            ),
        ];
        let text = write(Format::Jsonl, Some(&["x", "a"]), &[], false, &rows);
        assert_eq!(
            text,
            "{\"time\": 2.5, \"start\": 1, \"bindings\": {\"x\": {\"type\": \"uri\", \"value\": \
             \"http://ex.org/a\"}, \"a\": {\"type\": \"literal\", \"value\": \"1\", \"datatype\": \
             \"http://www.w3.org/2001/XMLSchema#integer\"}}, \"events\": [{\"atom\": \"A\", \
             \"stream\": \"http://ex.org/s\", \"time\": 1, \"graph\": \"http://ex.org/g\"}, \
             {\"atom\": \"B\", \"stream\": \"http://ex.org/s\", \"time\": 2.5, \"graph\": \
             \"_:b0\"}]}\n\
             {\"time\": 3, \"start\": 1, \"time_iso\": \"1970-01-01T00:00:03Z\", \"start_iso\": \
             \"1970-01-01T00:00:01Z\", \"bindings\": {\"a\": {\"type\": \"literal\", \"value\": \
             \"é\", \"xml:lang\": \"fr\"}}, \"events\": [{\"atom\": \"B\", \"stream\": \
             \"http://ex.org/s\", \"time\": 0, \"graph\": null}]}\n"
        );
    }

    /// `SELECT *`: every variable a row binds, by name, as the rows bring new ones.
    #[test]
    fn every_variable_by_name_when_none_is_selected() {
        let rows = [
            row(0, &[("b", "<http://ex.org/b>")], vec![]),
            row(0, &[("c", "\"c\""), ("a", "\"a\"")], vec![]),
        ];
        assert_eq!(
            write(Format::Json, None, &["a", "b", "c"], false, &rows),
            "{\"head\": {\"vars\": [\"a\", \"b\", \"c\"]}, \"results\": {\"bindings\": [\n\
             {\"b\": {\"type\": \"uri\", \"value\": \"http://ex.org/b\"}},\n\
             {\"a\": {\"type\": \"literal\", \"value\": \"a\"}, \"c\": {\"type\": \"literal\", \
             \"value\": \"c\"}}\n]}}\n"
        );
        assert_eq!(
            write(Format::Csv, None, &["a", "b", "c"], false, &rows),
            "a,b,c\r\n,http://ex.org/b,\r\na,,c\r\n"
        );
        // a selected row leaves out what it does not select
        assert_eq!(
            write(Format::Tsv, Some(&["c"]), &["a", "c"], false, &rows),
            "?a\t?c\n\t\n\t\"c\"\n"
        );
    }

    /// With `--with-time`, a variable named `_time` or `_start` holds the time
    /// (`writers.Writer._terms`): in its place when bound (JSON), in its column (CSV, TSV).
    #[test]
    fn time_variables_hold_the_times_with_time() {
        let rows = [row(
            2_000_000_000,
            &[("_start", "\"s\""), ("x", "\"x\"")],
            vec![],
        )];
        let select = Some(&["_time", "_start", "x"][..]);
        assert_eq!(
            write(Format::Json, select, &["_time", "_start", "x"], true, &rows),
            "{\"head\": {\"vars\": [\"_time\", \"_start\", \"_time\", \"_start\", \"x\"]}, \
             \"results\": {\"bindings\": [\n\
             {\"_start\": {\"type\": \"literal\", \"value\": \"1\", \"datatype\": \
             \"http://www.w3.org/2001/XMLSchema#decimal\"}, \"x\": {\"type\": \"literal\", \
             \"value\": \"x\"}, \"_time\": {\"type\": \"literal\", \"value\": \"2\", \
             \"datatype\": \"http://www.w3.org/2001/XMLSchema#decimal\"}}\n]}}\n"
        );
        assert_eq!(
            write(Format::Csv, select, &["_time", "x", "_start"], true, &rows),
            "_time,_start,_time,x,_start\r\n2,1,2,x,1\r\n"
        );
        let decimal = "^^<http://www.w3.org/2001/XMLSchema#decimal>";
        assert_eq!(
            write(Format::Tsv, select, &["_start", "x"], true, &rows),
            format!("?_time\t?_start\t?_start\t?x\n\"2\"{decimal}\t\"1\"{decimal}\t\"1\"{decimal}\t\"x\"\n")
        );
        // without --with-time they are variables like any other
        assert_eq!(
            write(Format::Csv, select, &["_time", "_start"], false, &rows),
            "_time,_start\r\n,s\r\n"
        );
    }

    #[test]
    fn a_term_that_is_not_n_triples_collects_nothing() {
        let columns = vec!["x".to_owned()];
        let mut collector =
            RowCollector::new(Format::Csv, None, columns.clone(), TimeFormat::Input);
        let mut batch = Batch::default();
        let bad = row(0, &[("x", "<not an iri>")], vec![]);
        assert!(collector.fill(&bad, &mut batch).is_err());
        assert_eq!(collector.rows(), 0);
        let good = row(0, &[("x", "\"ok\"")], vec![]);
        collector.fill(&good, &mut batch).unwrap();
        let mut out = String::new();
        Formatter::new(Format::Csv, columns, false).write(&batch, &mut out);
        assert_eq!(out, "ok\r\n");
    }

    /// A run stopped by an error: no table at all without rows, and the rows found before
    /// it counted as such, never as a whole run's result.
    #[test]
    fn a_stopped_table_says_its_rows_came_before_the_error() {
        let stopped =
            |rows: &[PlainRow]| write_ended(Format::Table, None, &["x"], false, rows, true);
        assert_eq!(stopped(&[]), "");
        let one = row(2_000_000_000, &[("x", "\"a\"")], vec![]);
        assert_eq!(
            stopped(&[one]),
            "time  start  ?x\n----  -----  ---\n2     1      \"a\"\n(1 match before the error)\n"
        );
        let whole = write(Format::Table, None, &["x"], false, &[]);
        assert!(whole.ends_with("(0 matches)\n"), "{whole}");
    }
}
