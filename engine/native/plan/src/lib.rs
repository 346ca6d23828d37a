//! The bottom of spaseq's native crates: the physical plan that the Python compiler writes
//! (`spaseq explain --plan`, docs/plan.md) read into typed Rust data, the interface the
//! native runtime is built from (with a summary the Python tests compare with the Python
//! plan). It depends on no other spaseq crate.
//!
//! - `json`: the plan's JSON read with the place of each error (`At`, `PlanError`);
//! - `algebra`: terms, patterns, expressions, operands and windows;
//! - `plan`: the plan itself (`Plan`, its automaton's steps, GPMs, run indexes);
//! - `summary`: what the core understood of a plan, for the Python tests.

pub mod algebra;
pub mod json;
pub mod plan;
pub mod summary;

pub use json::PlanError;
pub use plan::{Plan, PLAN_VERSION};
