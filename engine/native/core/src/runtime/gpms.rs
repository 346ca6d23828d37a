//! What the runtime asks of GPM evaluation (`eval(A, e, mu)`, SEMANTICS.md section 2), so
//! that the automaton does not depend on how a body is evaluated.

use crate::dictionary::Dictionary;
use crate::vars::{Row, Slot};

pub trait GpmEval {
    /// An event's triples prepared for evaluation, once per event for every GPM.
    type Index;

    /// Every mu ∪ nu: nu a solution of GPM `gpm` on the event, compatible with mu, for
    /// which the body's FILTERs hold.
    fn results(
        &self,
        gpm: usize,
        index: &Self::Index,
        mu: &[Option<u32>],
        dict: &Dictionary,
        out: &mut Vec<Row>,
    );

    /// The solutions that do not depend on a context (the BGP and the FILTERs on its own
    /// variables): what partitioned runs are looked up by. A superset of `results` for any
    /// mu, restricted to the GPM's variables.
    fn base(&self, gpm: usize, index: &Self::Index, dict: &Dictionary, out: &mut Vec<Row>);

    /// The slots of the GPM's local variables, in the plan's order.
    fn local_slots(&self, gpm: usize) -> &[Slot];
}
