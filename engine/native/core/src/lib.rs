//! spaseq's native engine core (issue 12), growing in steps. Today: the physical plan that
//! the Python compiler writes (`spaseq explain --plan`, docs/plan.md) read into typed Rust
//! data, the interface the native runtime is built from, and a summary of it that the
//! Python tests compare with the Python plan.

pub mod algebra;
pub mod json;
pub mod plan;
pub mod summary;

pub use json::PlanError;
pub use plan::{Plan, PLAN_VERSION};
