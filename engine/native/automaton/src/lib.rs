//! The NFA_scep runtime (SEMANTICS.md sections 4-8, the Python `runtime.query_runtime` it
//! replaces): runs (partial matches) waiting at steps of the automaton advance, clone and
//! die as the events of the query's streams arrive, and complete matches are released in
//! the total match order (docs/decisions.md 4).
//!
//! - `event`: an event as the runtime holds it (shared by every query and every run);
//! - `buffer`: the shared buffer of taken events (parent-linked nodes: cloning is O(1));
//! - `window`: WITHIN arithmetic on exact nanoseconds or event positions;
//! - `operand`: a step's operand (a GPM, `&`, `|`) compiled to GPM indexes;
//! - `gpms`: what the runtime asks of GPM evaluation (`spaseq_gpm::GpmProgram` answers it);
//! - `lazy_chain`: a skip-till-any prefix evaluated only when its trigger's events come;
//! - `order`: complete matches and their order;
//! - `range_index`: partitions of waiting runs, sorted by a range key;
//! - `query`: one query's runs, indexes and clock;
//! - `snapshot`: the native half of `Engine.snapshot()` (the dictionary, streams, events
//!   held and every query's state).
//!
//! A crate of its own above `spaseq-plan`, `spaseq-io` and `spaseq-gpm` (the steps, the
//! events, their GPMs' results), below the writers (`spaseq-output`).

// the crate by its own name, so that test support shared with tests/ names it alike
extern crate self as spaseq_automaton;

pub mod buffer;
pub mod event;
pub mod gpms;
pub mod lazy_chain;
pub mod operand;
pub mod order;
pub mod query;
pub mod range_index;
pub mod snapshot;
pub mod window;

pub use buffer::{Node, Taken};
pub use event::{EventData, EventRef, Streams};
pub use gpms::{GpmEval, RunView};
pub use order::MatchRecord;
pub use query::{QueryRuntime, QueryState, Unsupported, MOMENT_CHUNK};
pub use snapshot::SnapshotError;
