//! The bottom of spaseq's native crates: the physical plan that the Python compiler writes
//! (`spaseq explain --plan`, docs/plan.md) read into typed Rust data, the interface the
//! native runtime is built from (with a summary the Python tests compare with the Python
//! plan). It depends on no other spaseq crate.
//!
//! - `json`: the plan's JSON encoding (dataclasses, frozensets) for serde, errors naming their
//!   field (`PlanError`); `plan.schema.json` is the format's JSON Schema, checked against
//!   these structs by `tests/schema.rs`;
//! - `algebra`: terms, patterns, expressions, operands and windows;
//! - `plan`: the plan itself (`Plan`, its automaton's steps, GPMs, run indexes);
//! - `summary`: what the core understood of a plan, for the Python tests.

pub mod algebra;
pub mod json;
pub mod plan;
pub mod summary;

pub use json::PlanError;
pub use plan::{Plan, PLAN_VERSION};
