//! What the runtime asks of GPM evaluation (`eval(A, e, mu)`, SEMANTICS.md section 2), so
//! that the automaton does not depend on how a body is evaluated.

use super::buffer::Node;
use spaseq_gpm::join::Probe;
use spaseq_gpm::vars::{Row, Slot};
use spaseq_io::dictionary::Dictionary;
use std::rc::Rc;

/// What a GPM calling run functions (`spaseq:` functions over the run's events) sees of the
/// run being extended: its start and the events it took. Empty for other evaluations.
#[derive(Debug, Clone, Copy, Default)]
pub struct RunView<'a> {
    pub start: Option<i128>,
    pub node: Option<&'a Rc<Node>>,
}

pub trait GpmEval {
    /// An event's triples prepared for evaluation, once per event for every GPM.
    type Index;

    /// Every mu ∪ nu: nu a solution of GPM `gpm` on the event, compatible with mu, for
    /// which the body's FILTERs hold (`run`: the run being extended, for run functions).
    fn results(
        &self,
        gpm: usize,
        index: &Self::Index,
        mu: &[Option<u32>],
        run: RunView<'_>,
        dict: &Dictionary,
        out: &mut Vec<Row>,
    );

    /// The solutions that do not depend on a context (the BGP and the FILTERs on its own
    /// variables): what partitioned runs are looked up by. A superset of `results` for any
    /// mu, restricted to the GPM's variables.
    fn base(&self, gpm: usize, index: &Self::Index, dict: &Dictionary, out: &mut Vec<Row>);

    /// The slots of the GPM's local variables, in the plan's order.
    fn local_slots(&self, gpm: usize) -> &[Slot];

    /// A quick test of events for GPM `gpm` under mu, for scans over many kept events:
    /// `admits` is false only for an event on which `results` has nothing. By default it
    /// admits every event.
    fn probe(&self, _gpm: usize, _mu: &[Option<u32>]) -> Probe {
        Probe::default()
    }

    /// Whether `probe` (this evaluator's, for the GPM it was made for) admits the event.
    fn admits(&self, _probe: &Probe, _index: &Self::Index) -> bool {
        true
    }
}
