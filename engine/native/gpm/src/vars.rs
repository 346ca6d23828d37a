//! Variables as slots (and names numbered in general): every variable of a query gets a small integer, so a solution (a
//! `Row`) is an array of term ids indexed by slot, and joins compare integers.

use spaseq_io::dictionary::TermId;
use std::collections::HashMap;

pub type Slot = usize;

/// A solution mapping: `row[slot]` is the term bound to that variable, if any.
pub type Row = Vec<Option<TermId>>;

/// Names numbered in the order they were first seen (variables, stream IRIs). Hashed with
/// foldhash, as the dictionary hashes terms: every event looks its stream's name up here,
/// and SipHash cost that lookup ~330 instructions.
#[derive(Debug, Clone, Default)]
pub struct Names {
    names: Vec<String>,
    numbers: HashMap<String, usize, foldhash::fast::RandomState>,
}

impl Names {
    /// The number of `name`, given one on first sight.
    pub fn number(&mut self, name: &str) -> usize {
        if let Some(&n) = self.numbers.get(name) {
            return n;
        }
        self.names.push(name.to_owned());
        self.numbers.insert(name.to_owned(), self.names.len() - 1);
        self.names.len() - 1
    }

    /// The number of `name` if it has one.
    pub fn get(&self, name: &str) -> Option<usize> {
        self.numbers.get(name).copied()
    }

    pub fn name(&self, number: usize) -> &str {
        &self.names[number]
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

/// The query's variables, by slot, in the order they were first seen.
#[derive(Debug, Clone, Default)]
pub struct VarTable(Names);

impl VarTable {
    pub fn new() -> Self {
        Self::default()
    }

    /// The slot of `name`, given one on first sight.
    pub fn slot(&mut self, name: &str) -> Slot {
        self.0.number(name)
    }

    /// The slot of `name` if the query has it.
    pub fn get(&self, name: &str) -> Option<Slot> {
        self.0.get(name)
    }

    pub fn name(&self, slot: Slot) -> &str {
        self.0.name(slot)
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// An empty row with room for every variable.
    pub fn empty_row(&self) -> Row {
        vec![None; self.len()]
    }
}
