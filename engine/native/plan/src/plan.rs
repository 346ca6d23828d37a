//! The physical plan of one query (docs/plan.md), read from the JSON that
//! `spaseq explain --plan` prints: what the native runtime is built from.

use crate::algebra::{Expr, Operand, Term, TriplePattern, Window};
use crate::json::{At, PlanError, Result};
use serde_json::Value;
use std::collections::BTreeMap;

/// The plan format this crate reads (`compile/plan.py`, PLAN_VERSION).
pub const PLAN_VERSION: usize = 3;

/// The engine's switches (EngineOptions), by name: each optimisation can be turned off.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options(pub BTreeMap<String, bool>);

impl Options {
    pub fn enabled(&self, name: &str) -> bool {
        self.0.get(name).copied().unwrap_or(false)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Modifier {
    Plain,
    Kleene,
    Optional,
    Negation,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    /// `,` strict contiguity
    Strict,
    /// `;` skip-till-next
    SkipTillNext,
    /// `:` skip-till-any
    SkipTillAny,
}

/// A state of NFA_scep: what a run waiting there needs.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub index: usize,
    pub operand: Operand,
    pub modifier: Modifier,
    /// How the atom attaches to what precedes it (None for the first atom).
    pub strategy: Option<Strategy>,
    pub streams: Vec<String>,
    pub gpms: Vec<String>,
    pub bound_before: Vec<String>,
    pub bound_after: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GpmPath {
    /// Joins and FILTERs over the event's triples, evaluated by the engine.
    Compiled,
    /// A SPARQL engine over the event as a graph.
    Sparql,
}

/// Which evaluator runs a GPM, as the planner recorded it (it asked the core: the
/// binding's `gpm_evaluators`); the runtime evaluates it so or refuses the plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Evaluator {
    /// The compiled program (joins and FILTERs over the event's index), in the core.
    Native,
    /// The body on spareval, in the core.
    Spareval,
    /// The engine's Python matcher, called back.
    Callback,
}

impl Evaluator {
    pub fn name(self) -> &'static str {
        match self {
            Evaluator::Native => "native",
            Evaluator::Spareval => "spareval",
            Evaluator::Callback => "callback",
        }
    }
}

/// How one GPM is evaluated on an event.
#[derive(Debug, Clone, PartialEq)]
pub struct GpmPlan {
    pub name: String,
    pub stream: String,
    pub path: GpmPath,
    /// None while the planner is asking the core (a plan to run must say).
    pub evaluator: Option<Evaluator>,
    pub join_shaped: bool,
    pub run_aware: bool,
    pub key_vars: Vec<String>,
    pub local_vars: Vec<String>,
    pub required: Vec<String>,
    pub cost: usize,
    pub join_order: Vec<TriplePattern>,
    pub variables: Vec<String>,
    pub filters: Vec<Expr>,
    /// Top-level GRAPH blocks joined against the knowledge base (kept as plan JSON).
    pub graph_elements: Vec<Value>,
    /// Per GRAPH block, the variables its KB rows bind.
    pub graph_vars: Vec<Vec<String>>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RangeKey {
    pub run_var: String,
    pub event_var: String,
    /// Visit runs whose key is at most `(value - offset) / scale` of the event's value (else
    /// at least): the FILTER compares the event's variable with `scale * run_var + offset`.
    pub below: bool,
    pub scale: f64,
    pub offset: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct StepRange {
    pub run_var: String,
    pub by_gpm: BTreeMap<String, RangeKey>,
}

/// How runs waiting at one step are indexed.
#[derive(Debug, Clone, PartialEq)]
pub struct RunIndex {
    pub partition_keys: Option<Vec<String>>,
    pub range: Option<StepRange>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeStep {
    pub step: usize,
    pub ranged: bool,
    pub loops: Vec<bool>,
    pub gpms: Vec<String>,
}

/// What the query asks for around the automaton.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryInfo {
    /// SELECT variables (None: `*`).
    pub variables: Option<Vec<String>>,
    pub distinct: bool,
    /// "select" or "construct".
    pub form: String,
    pub window: Window,
    /// FROM STREAM name -> IRI, in the query's order.
    pub streams: Vec<(String, String)>,
    pub partition_by: Vec<String>,
    pub base: Option<String>,
    pub prefixes: BTreeMap<String, String>,
    /// Each GPM's body as written (for the SPARQL path).
    pub bodies: BTreeMap<String, String>,
}

/// A query compiled for the runtime.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub version: usize,
    pub query: QueryInfo,
    pub options: Options,
    pub steps: Vec<Step>,
    /// In the query's order.
    pub gpms: Vec<GpmPlan>,
    pub run_indexes: Vec<RunIndex>,
    pub probes: BTreeMap<String, Vec<ProbeStep>>,
    pub kleene_gpms: Vec<String>,
    pub lazy_chain: usize,
}

impl Plan {
    /// Read a plan from `spaseq explain --plan`'s JSON; the error names the offending field.
    pub fn from_json(text: &str) -> Result<Self> {
        let value: Value = serde_json::from_str(text).map_err(|err| PlanError {
            path: "plan".to_owned(),
            message: format!("not JSON: {err}"),
        })?;
        Self::read(&At::root(&value))
    }

    pub fn read(at: &At<'_>) -> Result<Self> {
        at.typed("Plan")?;
        let version = at.get("version")?;
        if version.usize()? != PLAN_VERSION {
            return version.error(format!(
                "plan version {}, this core reads version {PLAN_VERSION}",
                version.usize()?
            ));
        }
        let automaton = at.get("automaton")?;
        automaton.typed("Automaton")?;
        let steps: Vec<Step> = automaton
            .get("steps")?
            .items()?
            .iter()
            .map(read_step)
            .collect::<Result<_>>()?;
        let run_indexes: Vec<RunIndex> = at
            .get("run_indexes")?
            .items()?
            .iter()
            .map(read_run_index)
            .collect::<Result<_>>()?;
        if run_indexes.len() != steps.len() {
            return at.get("run_indexes")?.error(format!(
                "{} run indexes for {} steps",
                run_indexes.len(),
                steps.len()
            ));
        }
        let mut probes = BTreeMap::new();
        for (stream, list) in at.get("probes")?.entries()? {
            probes.insert(
                stream.to_owned(),
                list.items()?
                    .iter()
                    .map(read_probe)
                    .collect::<Result<_>>()?,
            );
        }
        Ok(Plan {
            version: PLAN_VERSION,
            query: read_query(&at.get("query")?)?,
            options: read_options(&at.get("options")?)?,
            steps,
            gpms: at
                .get("gpms")?
                .entries()?
                .iter()
                .map(|(_, g)| read_gpm(g))
                .collect::<Result<_>>()?,
            run_indexes,
            probes,
            kleene_gpms: at.get("kleene_gpms")?.string_set()?,
            lazy_chain: at.get("lazy_chain")?.usize()?,
        })
    }

    pub fn gpm(&self, name: &str) -> Option<&GpmPlan> {
        self.gpms.iter().find(|g| g.name == name)
    }
}

fn read_options(at: &At<'_>) -> Result<Options> {
    at.typed("EngineOptions")?;
    let mut out = BTreeMap::new();
    for (name, value) in at.entries_of_dataclass()? {
        out.insert(name.to_owned(), value.bool()?);
    }
    Ok(Options(out))
}

fn read_query(at: &At<'_>) -> Result<QueryInfo> {
    at.typed("Query")?;
    let spec = at.get("match")?;
    spec.typed("MatchSpec")?;
    let variables = spec.get("variables")?;
    let mut bodies = BTreeMap::new();
    for (name, event) in at.get("events")?.entries()? {
        event.typed("EventPattern")?;
        let pattern = event.get("pattern")?;
        pattern.typed("GroupPattern")?;
        bodies.insert(name.to_owned(), pattern.get("text")?.string()?);
    }
    let mut prefixes = BTreeMap::new();
    for (prefix, iri) in at.get("prefixes")?.entries()? {
        prefixes.insert(prefix.to_owned(), iri.string()?);
    }
    Ok(QueryInfo {
        variables: if variables.is_null() {
            None
        } else {
            Some(variables.strings()?)
        },
        distinct: spec.get("distinct")?.bool()?,
        form: spec.get("form")?.string()?,
        window: Window::read(&at.get("window")?)?,
        streams: at
            .get("streams")?
            .entries()?
            .iter()
            .map(|(k, v)| Ok(((*k).to_owned(), v.string()?)))
            .collect::<Result<_>>()?,
        partition_by: at.get("partition_by")?.strings()?,
        base: at.get("base")?.opt_string()?,
        prefixes,
        bodies,
    })
}

fn read_step(at: &At<'_>) -> Result<Step> {
    at.typed("Step")?;
    let modifier = at.get("modifier")?;
    let strategy = at.get("strategy")?;
    Ok(Step {
        index: at.get("index")?.usize()?,
        operand: Operand::read(&at.get("operand")?)?,
        modifier: match modifier.str()? {
            "" => Modifier::Plain,
            "+" => Modifier::Kleene,
            "?" => Modifier::Optional,
            "!" => Modifier::Negation,
            other => return modifier.error(format!("unknown modifier {other:?}")),
        },
        strategy: match strategy.value.as_str() {
            None if strategy.is_null() => None,
            Some(",") => Some(Strategy::Strict),
            Some(";") => Some(Strategy::SkipTillNext),
            Some(":") => Some(Strategy::SkipTillAny),
            _ => return strategy.error("expected \",\", \";\", \":\" or null"),
        },
        streams: at.get("streams")?.string_set()?,
        gpms: at.get("gpms")?.strings()?,
        bound_before: at.get("bound_before")?.string_set()?,
        bound_after: at.get("bound_after")?.string_set()?,
    })
}

fn read_gpm(at: &At<'_>) -> Result<GpmPlan> {
    at.typed("GpmPlan")?;
    let path = at.get("path")?;
    Ok(GpmPlan {
        name: at.get("name")?.string()?,
        stream: at.get("stream")?.string()?,
        path: match path.str()? {
            "compiled" => GpmPath::Compiled,
            "sparql" => GpmPath::Sparql,
            other => return path.error(format!("unknown evaluation path {other:?}")),
        },
        evaluator: {
            let at = at.get("evaluator")?;
            match at.str()? {
                "" => None,
                "native" => Some(Evaluator::Native),
                "spareval" => Some(Evaluator::Spareval),
                "callback" => Some(Evaluator::Callback),
                other => return at.error(format!("unknown evaluator {other:?}")),
            }
        },
        join_shaped: at.get("join_shaped")?.bool()?,
        run_aware: at.get("run_aware")?.bool()?,
        key_vars: at.get("key_vars")?.string_set()?,
        local_vars: at.get("local_vars")?.strings()?,
        required: at
            .get("required")?
            .items()?
            .iter()
            .map(|t| match Term::read(t)? {
                Term::Iri(iri) => Ok(iri),
                _ => t.error("a required predicate must be an IRI"),
            })
            .collect::<Result<_>>()?,
        cost: at.get("cost")?.usize()?,
        join_order: at
            .get("join_order")?
            .items()?
            .iter()
            .map(TriplePattern::read)
            .collect::<Result<_>>()?,
        variables: at.get("variables")?.strings()?,
        filters: at
            .get("filters")?
            .items()?
            .iter()
            .map(Expr::read)
            .collect::<Result<_>>()?,
        graph_elements: at
            .get("graph_elements")?
            .items()?
            .iter()
            .map(|g| g.value.clone())
            .collect(),
        graph_vars: at
            .get("graph_vars")?
            .items()?
            .iter()
            .map(At::strings)
            .collect::<Result<_>>()?,
    })
}

fn read_run_index(at: &At<'_>) -> Result<RunIndex> {
    at.typed("RunIndexPlan")?;
    let keys = at.get("partition_keys")?;
    let range = at.get("range")?;
    Ok(RunIndex {
        partition_keys: if keys.is_null() {
            None
        } else {
            Some(keys.strings()?)
        },
        range: if range.is_null() {
            None
        } else {
            Some(read_range(&range)?)
        },
    })
}

fn read_range(at: &At<'_>) -> Result<StepRange> {
    at.typed("StepRange")?;
    let mut by_gpm = BTreeMap::new();
    for (gpm, key) in at.get("by_gpm")?.entries()? {
        key.typed("RangeKey")?;
        by_gpm.insert(
            gpm.to_owned(),
            RangeKey {
                run_var: key.get("run_var")?.string()?,
                event_var: key.get("event_var")?.string()?,
                below: key.get("below")?.bool()?,
                scale: key.f64_or("scale", 1.0)?,
                offset: key.f64_or("offset", 0.0)?,
            },
        );
    }
    Ok(StepRange {
        run_var: at.get("run_var")?.string()?,
        by_gpm,
    })
}

fn read_probe(at: &At<'_>) -> Result<ProbeStep> {
    at.typed("ProbeStep")?;
    Ok(ProbeStep {
        step: at.get("step")?.usize()?,
        ranged: at.get("ranged")?.bool()?,
        loops: at
            .get("loops")?
            .items()?
            .iter()
            .map(At::bool)
            .collect::<Result<_>>()?,
        gpms: at.get("gpms")?.strings()?,
    })
}
