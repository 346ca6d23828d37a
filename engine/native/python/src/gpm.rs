//! The binding of GPM evaluation and FILTER expressions (issue 12): `gpm_evaluators` for the
//! planner, the rest for tests (`_native._testing`). Terms travel as N-Triples strings,
//! expressions and plans as their plan JSON (docs/plan.md).

use crate::arrow::{StrColumn, Strings};
use crate::stream::triples_of_rows;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use spaseq_engine::choose_evaluator;
use spaseq_gpm::vars::{Row, VarTable};
use spaseq_gpm::{parse_term, Compiled, Env, EventIndex, GpmProgram};
use spaseq_io::dictionary::{Dictionary, TermId};
use spaseq_plan::Plan;
use std::collections::HashMap;

fn value_error(message: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(message.to_string())
}

fn term(text: &str, dict: &Dictionary) -> PyResult<TermId> {
    Ok(dict.intern(parse_term(text).map_err(value_error)?))
}

/// A row holding `bindings` (variable name -> N-Triples term).
fn row_of(
    bindings: &HashMap<String, String>,
    vars: &mut VarTable,
    dict: &Dictionary,
) -> PyResult<Row> {
    let mut pairs = Vec::new();
    for (name, text) in bindings {
        pairs.push((vars.slot(name), term(text, dict)?));
    }
    let mut row = vars.empty_row();
    for (slot, id) in pairs {
        row[slot] = Some(id);
    }
    Ok(row)
}

/// An expression (its plan JSON) compiled, with a row of `bindings`.
fn compile_expression(
    expr_json: &str,
    bindings: &HashMap<String, String>,
    dict: &Dictionary,
) -> PyResult<(Compiled, Row)> {
    let mut vars = VarTable::new();
    let compiled = Compiled::from_json(expr_json, &mut vars, dict, None).map_err(value_error)?;
    let mut row = row_of(bindings, &mut vars, dict)?;
    row.resize(vars.len(), None);
    Ok((compiled, row))
}

/// The effective boolean value of an expression (plan JSON) with variables bound to
/// N-Triples terms: True/False, None for an error; ValueError outside the native subset.
#[pyfunction]
fn eval_filter(expr_json: &str, bindings: HashMap<String, String>) -> PyResult<Option<bool>> {
    let dict = Dictionary::new();
    let (compiled, row) = compile_expression(expr_json, &bindings, &dict)?;
    let index = EventIndex::new(&[]);
    Ok(compiled.ebv(&Env {
        row: &row,
        dict: &dict,
        index: &index,
        run: None,
    }))
}

/// The value of an expression as an N-Triples term (canonical literal), None for an error.
#[pyfunction]
fn eval_expr(expr_json: &str, bindings: HashMap<String, String>) -> PyResult<Option<String>> {
    let dict = Dictionary::new();
    let (compiled, row) = compile_expression(expr_json, &bindings, &dict)?;
    let index = EventIndex::new(&[]);
    let env = Env {
        row: &row,
        dict: &dict,
        index: &index,
        run: None,
    };
    Ok(compiled.value(&env).map(|v| v.to_term(&dict).to_string()))
}

/// eval(GPM, event, mu) natively: the GPM `gpm` of a plan (JSON) on an event given as
/// N-Triples triples, in the context `mu`; every solution mu ∪ nu as a dict of N-Triples
/// terms. ValueError when the GPM is outside the native subset.
#[pyfunction]
fn gpm_results(
    plan_json: &str,
    gpm: &str,
    triples: Vec<(String, String, String)>,
    mu: HashMap<String, String>,
) -> PyResult<Vec<HashMap<String, String>>> {
    let plan = Plan::from_json(plan_json).map_err(value_error)?;
    let gpm_plan = plan
        .gpm(gpm)
        .ok_or_else(|| value_error(format!("no GPM {gpm}")))?;
    let mut vars = VarTable::new();
    let dict = Dictionary::new();
    let program = GpmProgram::compile(gpm_plan, &mut vars, &dict, plan.query.base.as_deref())
        .map_err(value_error)?;
    let mut event = Vec::with_capacity(triples.len());
    for (s, p, o) in &triples {
        event.push([term(s, &dict)?, term(p, &dict)?, term(o, &dict)?]);
    }
    let row = row_of(&mu, &mut vars, &dict)?;
    let index = EventIndex::new(&event);
    let mut out = Vec::new();
    if program.may_match(&index) {
        program.results(&index, &row, &dict, &mut out);
    }
    Ok(out
        .iter()
        .map(|row| {
            row.iter()
                .enumerate()
                .filter_map(|(slot, id)| {
                    id.map(|id| (vars.name(slot).to_owned(), dict.get(id).to_string()))
                })
                .collect()
        })
        .collect())
}

/// Per GPM of a plan, in the plan's order, which evaluator this core gives it, the
/// planner's question (`compile/planner.py` records the answer in the plan, which the
/// runtime then follows): ("native", None) for the compiled path's programs (GRAPH blocks
/// included, their KB rows asked of the engine), ("spareval", why not native) for the
/// SPARQL path on spareval, ("callback", why neither) for the engine's Python matcher.
#[pyfunction]
fn gpm_evaluators(plan_json: &str) -> PyResult<Vec<(String, &'static str, Option<String>)>> {
    let plan = Plan::from_json(plan_json).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let dict = Dictionary::new();
    let mut vars = VarTable::new();
    Ok(plan
        .gpms
        .iter()
        .map(|gpm| {
            let (evaluator, why) = choose_evaluator(&plan, gpm, &mut vars, &dict);
            (gpm.name.clone(), evaluator.name(), why)
        })
        .collect())
}

/// SELECT `query` evaluated by the core's spareval over `ntriples` (N-Triples text) as the
/// default graph: per solution, (variable, N-Triples term) pairs. ValueError when it fails.
#[pyfunction]
fn sparql_select(query: &str, ntriples: &str) -> PyResult<Vec<Vec<(String, String)>>> {
    let triples = oxttl::NTriplesParser::new()
        .for_slice(ntriples.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .map_err(value_error)?;
    let rows = spaseq_gpm::sparql_select::select(query, &triples).map_err(value_error)?;
    Ok(rows
        .into_iter()
        .map(|row| row.into_iter().map(|(v, t)| (v, t.to_string())).collect())
        .collect())
}

/// The keys events give a query split by key (`spaseq_gpm::routing`): built once from its
/// GPMs' routing patterns, then asked per batch of events.
#[pyclass(module = "spaseq.engine._native", name = "Router", frozen)]
pub struct PyRouter {
    router: spaseq_gpm::routing::Router,
}

#[pymethods]
impl PyRouter {
    /// `gpms`: (stream IRI, patterns), a pattern three texts, `?name` for a variable or a
    /// term in N-Triples; `keys`: the key variables. ValueError for text that is no term.
    #[new]
    fn new(gpms: Vec<(String, Vec<[String; 3]>)>, keys: Vec<String>) -> PyResult<Self> {
        let router = spaseq_gpm::routing::Router::new(&gpms, &keys).map_err(value_error)?;
        Ok(PyRouter { router })
    }

    /// Per event (its stream IRI and triples in N-Triples, as Arrow string buffers:
    /// `arrow::StrColumn`): the keys it goes to, each the key variables' terms in N-Triples
    /// joined by a space, sorted. ValueError (naming the event, counted from 0) for text that
    /// is not N-Triples.
    fn keys(
        &self,
        py: Python<'_>,
        streams: StrColumn<'_>,
        triples: StrColumn<'_>,
    ) -> PyResult<Vec<Vec<String>>> {
        let (streams, triples) = (Strings::of(&streams)?, Strings::of(&triples)?);
        if streams.len() != triples.len() {
            return Err(PyValueError::new_err(
                "Router.keys: columns of unequal lengths",
            ));
        }
        py.detach(|| {
            let parsed = triples_of_rows(triples)?;
            (0..streams.len())
                .map(|row| Ok(self.router.keys(streams.get(row)?, &parsed[row])))
                .collect::<Result<Vec<_>, String>>()
        })
        .map_err(value_error)
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(gpm_evaluators, m)?)?;
    m.add_class::<PyRouter>()?;
    Ok(())
}

/// The test hooks: `_native._testing`'s functions of this module.
pub fn register_testing(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(sparql_select, m)?)?;
    m.add_function(wrap_pyfunction!(eval_filter, m)?)?;
    m.add_function(wrap_pyfunction!(eval_expr, m)?)?;
    m.add_function(wrap_pyfunction!(gpm_results, m)?)?;
    Ok(())
}
