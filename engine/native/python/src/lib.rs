//! `spaseq.engine._native`: the PyO3 binding of the native core (a thin layer: every
//! decision is the core's). Stubs for type checkers: `engine/_native/`.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// The runtime allocates and frees small objects (terms, runs, bindings) per event: mimalloc
/// does that in a fraction of the system allocator's instructions.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod arrow;
mod errors;
mod gpm;
mod late;
mod live;
mod output;
mod runtime;
mod stream;
mod timestamps;
use spaseq_io::dictionary::Dictionary;
use spaseq_io::replay::{self, Event, Format, ReplayError, GENERATED_AT_TIME};
use spaseq_io::stream::StreamError;
use spaseq_plan::{summary::summary, Plan, PLAN_VERSION};

/// The plan (JSON of `spaseq explain --plan`) as the native core reads it, summarised as
/// JSON; ValueError naming the field when it does not have docs/plan.md's shape.
#[pyfunction]
fn plan_summary(plan_json: &str) -> PyResult<String> {
    let plan = Plan::from_json(plan_json).map_err(|err| PyValueError::new_err(err.to_string()))?;
    Ok(summary(&plan).to_string())
}

fn read(path: &str, time_predicate: &str, dictionary: &mut Dictionary) -> PyResult<Vec<Event>> {
    let format = Format::of_path(path).ok_or_else(|| {
        errors::located(&StreamError {
            path: Some(path.to_owned()),
            error: ReplayError {
                line: None,
                column: None,
                message: "cannot tell the replay file's format: expected .trig, .nq or .nquads"
                    .to_owned(),
            },
        })
    })?;
    let reader = replay::open(path).map_err(|e| PyValueError::new_err(e.to_string()))?;
    replay::read_events(reader, format, time_predicate, dictionary).map_err(|error| {
        errors::located(&StreamError {
            path: Some(path.to_owned()),
            error,
        })
    })
}

/// A replay file's events as the native reader sees them: (graph, time in nanoseconds,
/// triples, dated), terms in N-Triples; `LocatedError` `PATH:LINE:COLUMN: message` on bad
/// input.
#[pyfunction]
#[pyo3(signature = (path, time_predicate = GENERATED_AT_TIME))]
fn read_replay(path: &str, time_predicate: &str) -> PyResult<Vec<stream::BatchEvent>> {
    let mut dictionary = Dictionary::new();
    let events = read(path, time_predicate, &mut dictionary)?;
    Ok(stream::batch_events(&events, &dictionary))
}

/// Parse a replay file into native events and count them: (events, triples, distinct
/// terms). What ingest costs without any Python object per event (benchmarks).
#[pyfunction]
#[pyo3(signature = (path, time_predicate = GENERATED_AT_TIME))]
fn count_replay(path: &str, time_predicate: &str) -> PyResult<(usize, usize, usize)> {
    let mut dictionary = Dictionary::new();
    let events = read(path, time_predicate, &mut dictionary)?;
    Ok((
        events.len(),
        events.iter().map(|e| e.triples.len()).sum(),
        dictionary.len(),
    ))
}

/// `_native._testing`: the core's pieces opened to the tests and benchmarks only (the plan
/// as the core reads it, the replay reader's events, FILTER values, one GPM's solutions,
/// spareval), kept out of the module the engine uses (docs/decisions.md 53).
fn testing(parent: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = parent.py();
    let name = format!("{}._testing", parent.name()?);
    let m = PyModule::new(py, &name)?;
    m.add_function(wrap_pyfunction!(plan_summary, &m)?)?;
    m.add_function(wrap_pyfunction!(read_replay, &m)?)?;
    m.add_function(wrap_pyfunction!(count_replay, &m)?)?;
    gpm::register_testing(&m)?;
    parent.add_submodule(&m)?;
    // a submodule of an extension is no package: `import spaseq.engine._native._testing`
    // finds it in sys.modules (PyO3 issue 759)
    py.import("sys")?.getattr("modules")?.set_item(name, &m)?;
    Ok(())
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("PLAN_VERSION", PLAN_VERSION)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    testing(m)?;
    errors::register(m)?;
    gpm::register(m)?;
    late::register(m)?;
    live::register(m)?;
    output::register(m)?;
    runtime::register(m)?;
    stream::register(m)?;
    timestamps::register(m)?;
    Ok(())
}
