//! `spaseq.engine._native`: the PyO3 binding of the native core (a thin layer: every
//! decision is the core's). Stubs for type checkers: `engine/_native.pyi`.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use spaseq_core::{summary::summary, Plan, PLAN_VERSION};

/// The plan (JSON of `spaseq explain --plan`) as the native core reads it, summarised as
/// JSON; ValueError naming the field when it does not have docs/plan.md's shape.
#[pyfunction]
fn plan_summary(plan_json: &str) -> PyResult<String> {
    let plan = Plan::from_json(plan_json).map_err(|err| PyValueError::new_err(err.to_string()))?;
    Ok(summary(&plan).to_string())
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("PLAN_VERSION", PLAN_VERSION)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(plan_summary, m)?)?;
    Ok(())
}
