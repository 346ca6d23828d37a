//! Variables as slots: every variable of a query gets a small integer, so a solution (a
//! `Row`) is an array of term ids indexed by slot, and joins compare integers.

use crate::dictionary::TermId;
use std::collections::HashMap;

pub type Slot = usize;

/// A solution mapping: `row[slot]` is the term bound to that variable, if any.
pub type Row = Vec<Option<TermId>>;

/// The query's variables, by slot, in the order they were first seen.
#[derive(Debug, Clone, Default)]
pub struct VarTable {
    names: Vec<String>,
    slots: HashMap<String, Slot>,
}

impl VarTable {
    pub fn new() -> Self {
        Self::default()
    }

    /// The slot of `name`, given one on first sight.
    pub fn slot(&mut self, name: &str) -> Slot {
        if let Some(&slot) = self.slots.get(name) {
            return slot;
        }
        let slot = self.names.len();
        self.names.push(name.to_owned());
        self.slots.insert(name.to_owned(), slot);
        slot
    }

    /// The slot of `name` if the query has it.
    pub fn get(&self, name: &str) -> Option<Slot> {
        self.slots.get(name).copied()
    }

    pub fn name(&self, slot: Slot) -> &str {
        &self.names[slot]
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// An empty row with room for every variable.
    pub fn empty_row(&self) -> Row {
        vec![None; self.names.len()]
    }
}
