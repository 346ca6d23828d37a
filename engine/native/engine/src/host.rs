//! What the engine asks of its host (the Python side, through the binding) for one query:
//! GPMs the plan gives to the `callback` evaluator, and the knowledge base's rows for GRAPH
//! blocks. Mappings cross as (variable, term id) pairs. A host keeps the first error a call
//! raised; the engine checks `failed` after each query's step and stops there.

use spaseq_io::dictionary::TermId;

/// (variable, term id) pairs: a mapping as it crosses to the host.
pub type Pairs = Vec<(String, TermId)>;

/// An event a run took, as the host sees it: (GPM, event uid, its local bindings).
pub type TakenPairs = (String, u64, Pairs);

/// One query's host.
pub trait Host {
    /// Whether the host evaluates GPMs at all (a plan giving one to `callback` needs it).
    fn evaluates(&self) -> bool;

    /// GPM `gpm`'s solutions on event `uid` by the host's own evaluator: with `mu` None its
    /// context-free solutions, else those compatible with `mu`; `start` (ns) and `taken`
    /// are the run's, for run functions.
    fn evaluate(
        &self,
        gpm: &str,
        uid: u64,
        mu: Option<Pairs>,
        start: Option<i128>,
        taken: Vec<TakenPairs>,
    ) -> Vec<Pairs>;

    /// The rows of GRAPH block `element` of GPM `gpm` agreeing with `bound`, from the
    /// knowledge base (asked once per binding and KB version: the engine caches them).
    fn kb_rows(&self, gpm: &str, element: usize, bound: Pairs) -> Vec<Pairs>;

    /// Keep `message` as the error of the event being processed (unless one is kept).
    fn fail(&self, message: String);

    /// Whether an error is kept: the engine stops after the step that raised it.
    fn failed(&self) -> bool;
}
