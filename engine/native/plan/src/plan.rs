//! The physical plan of one query (docs/plan.md), read from the JSON that
//! `spaseq explain --plan` prints: what the native runtime is built from. Each struct reads
//! the dataclass of its name (`@type`); fields the runtime does not read are ignored, every
//! field it reads is required (plan.schema.json says which).

use crate::algebra::{Expr, Operand, Term, TriplePattern, Window};
use crate::json::{dataclass, nullable, set, unexpected, via_tagged, PlanError, Result, Tagged};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer};
use serde_json::Value;
use std::collections::BTreeMap;

/// The plan format this crate reads (`compile/plan.py`, PLAN_VERSION).
pub const PLAN_VERSION: usize = 4;

/// The engine's switches (EngineOptions), by name: each optimisation can be turned off.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options(pub BTreeMap<String, bool>);

impl Options {
    /// The switches a plan must have (those of EngineOptions; any others are kept too).
    pub const NAMES: [&'static str; 11] = [
        "push_windows",
        "index_streams",
        "partition_runs",
        "range_index",
        "share_context_free",
        "prefilter",
        "cost_ordered_disjunction",
        "lazy_conjunction",
        "compiled_gpm",
        "lazy_chain",
        "intervals",
    ];

    pub fn enabled(&self, name: &str) -> bool {
        self.0.get(name).copied().unwrap_or(false)
    }
}

impl Tagged for Options {
    const WHAT: &'static str = "an EngineOptions";
    fn fields<'de, D: Deserializer<'de>>(
        tag: &str,
        fields: D,
    ) -> std::result::Result<Self, D::Error> {
        if tag != "EngineOptions" {
            return Err(unexpected(Self::WHAT, tag));
        }
        let switches = BTreeMap::<String, bool>::deserialize(fields)?;
        match Options::NAMES
            .iter()
            .find(|name| !switches.contains_key(**name))
        {
            Some(name) => Err(D::Error::missing_field(name)),
            None => Ok(Options(switches)),
        }
    }
}

via_tagged!(Options);

/// What an atom's modifier makes of it (a Step's `modifier`, docs/plan.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Modifier {
    /// `""`: one event.
    Plain,
    /// Every iteration form (docs/decisions.md 61): between `min` and `max` events (`max`
    /// None: no upper bound), each count a match of its own. Spelled `+` ({1,}), `*` ({0,}),
    /// `{n}` ({n,n}), `{m,}` or `{m,n}` (m < n), one spelling each.
    Kleene { min: u32, max: Option<u32> },
    /// `?`
    Optional,
    /// `!`
    Negation,
}

impl Modifier {
    /// `X+`: one or more iterations.
    pub const PLUS: Modifier = Modifier::Kleene { min: 1, max: None };

    /// The modifier's one spelling, as the planner writes it (`algebra/operators.py`'s
    /// `iteration_text` for the Kleene forms).
    pub fn text(self) -> String {
        match self {
            Modifier::Plain => String::new(),
            Modifier::Optional => "?".into(),
            Modifier::Negation => "!".into(),
            Modifier::Kleene { min: 1, max: None } => "+".into(),
            Modifier::Kleene { min: 0, max: None } => "*".into(),
            Modifier::Kleene { min, max: None } => format!("{{{min},}}"),
            Modifier::Kleene {
                min,
                max: Some(max),
            } if min == max => format!("{{{min}}}"),
            Modifier::Kleene {
                min,
                max: Some(max),
            } => format!("{{{min},{max}}}"),
        }
    }

    /// The modifier a Step's text spells; anything but the one spelling of a modifier that
    /// takes an event (`{1,}` for `+`, `{2,1}`, `{0}`) is refused, saying why.
    pub fn parse(text: &str) -> std::result::Result<Self, String> {
        let modifier = match text {
            "" => Modifier::Plain,
            "?" => Modifier::Optional,
            "!" => Modifier::Negation,
            "+" => Modifier::PLUS,
            "*" => Modifier::Kleene { min: 0, max: None },
            _ => Self::quantifier(text).ok_or_else(|| {
                format!("unknown modifier {text:?}: expected \"\", \"?\", \"!\", \"+\", \"*\", \"{{n}}\", \"{{m,}}\" or \"{{m,n}}\"")
            })?,
        };
        if let Modifier::Kleene {
            min,
            max: Some(max),
        } = modifier
        {
            if max == 0 || min > max {
                return Err(format!(
                    "modifier {text:?}: a Kleene atom takes at least one event and at most its upper bound"
                ));
            }
        }
        let spelled = modifier.text();
        if spelled != text {
            return Err(format!("modifier {text:?} is spelled {spelled:?}"));
        }
        Ok(modifier)
    }

    /// `{n}`, `{m,}` or `{m,n}` (bounds in decimal digits), None when the text is not one.
    fn quantifier(text: &str) -> Option<Self> {
        let inner = text.strip_prefix('{')?.strip_suffix('}')?;
        let number = |s: &str| -> Option<u32> {
            if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            s.parse().ok()
        };
        Some(match inner.split_once(',') {
            None => {
                let n = number(inner)?;
                Modifier::Kleene {
                    min: n,
                    max: Some(n),
                }
            }
            Some((min, "")) => Modifier::Kleene {
                min: number(min)?,
                max: None,
            },
            Some((min, max)) => Modifier::Kleene {
                min: number(min)?,
                max: Some(number(max)?),
            },
        })
    }
}

impl<'de> Deserialize<'de> for Modifier {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        Modifier::parse(&String::deserialize(d)?).map_err(D::Error::custom)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum Strategy {
    /// `,` strict contiguity
    #[serde(rename = ",")]
    Strict,
    /// `;` skip-till-next
    #[serde(rename = ";")]
    SkipTillNext,
    /// `:` skip-till-any
    #[serde(rename = ":")]
    SkipTillAny,
}

/// A state of NFA_scep: what a run waiting there needs.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(remote = "Self")]
pub struct Step {
    pub index: usize,
    pub operand: Operand,
    pub modifier: Modifier,
    /// How the atom attaches to what precedes it (None for the first atom).
    #[serde(deserialize_with = "nullable")]
    pub strategy: Option<Strategy>,
    #[serde(deserialize_with = "set")]
    pub streams: Vec<String>,
    pub gpms: Vec<String>,
    #[serde(deserialize_with = "set")]
    pub bound_before: Vec<String>,
    #[serde(deserialize_with = "set")]
    pub bound_after: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
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

    /// `""` (not asked yet) or an evaluator's name.
    fn read<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Option<Self>, D::Error> {
        match String::deserialize(d)?.as_str() {
            "" => Ok(None),
            "native" => Ok(Some(Evaluator::Native)),
            "spareval" => Ok(Some(Evaluator::Spareval)),
            "callback" => Ok(Some(Evaluator::Callback)),
            other => Err(D::Error::custom(format!("unknown evaluator {other:?}"))),
        }
    }
}

/// How one GPM is evaluated on an event.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(remote = "Self")]
pub struct GpmPlan {
    pub name: String,
    pub stream: String,
    pub path: GpmPath,
    /// None while the planner is asking the core (a plan to run must say).
    #[serde(deserialize_with = "Evaluator::read")]
    pub evaluator: Option<Evaluator>,
    pub join_shaped: bool,
    pub run_aware: bool,
    #[serde(deserialize_with = "set")]
    pub key_vars: Vec<String>,
    pub local_vars: Vec<String>,
    /// The constant predicates (IRIs) an event must have.
    #[serde(deserialize_with = "iris")]
    pub required: Vec<String>,
    pub cost: usize,
    pub join_order: Vec<TriplePattern>,
    pub variables: Vec<String>,
    pub filters: Vec<Expr>,
    /// Top-level GRAPH blocks joined against the knowledge base (kept as plan JSON).
    pub graph_elements: Vec<Value>,
    /// Per GRAPH block, the variables its KB rows bind.
    pub graph_vars: Vec<Vec<String>>,
    /// CONSUMPTION MATCHED: the triple patterns that read the event, whose instances by a
    /// taken solution an emitted match uses up (empty otherwise; docs/decisions.md 65).
    #[serde(default)]
    pub consumes: Vec<TriplePattern>,
}

/// IRIs, `[{"@iri": ...}, ...]`.
fn iris<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Vec<String>, D::Error> {
    struct Iri(String);
    impl<'de> Deserialize<'de> for Iri {
        fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
            match Term::deserialize(d)? {
                Term::Iri(iri) => Ok(Iri(iri)),
                _ => Err(D::Error::custom("a required predicate must be an IRI")),
            }
        }
    }
    Ok(Vec::<Iri>::deserialize(d)?
        .into_iter()
        .map(|i| i.0)
        .collect())
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(remote = "Self")]
pub struct RangeKey {
    pub run_var: String,
    pub event_var: String,
    /// Visit runs whose key is at most `(value - offset) / scale` of the event's value (else
    /// at least): the FILTER compares the event's variable with `scale * run_var + offset`.
    pub below: bool,
    pub scale: f64,
    pub offset: f64,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(remote = "Self")]
pub struct StepRange {
    pub run_var: String,
    pub by_gpm: BTreeMap<String, RangeKey>,
}

/// How runs waiting at one step are indexed.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(remote = "Self")]
pub struct RunIndex {
    #[serde(deserialize_with = "nullable")]
    pub partition_keys: Option<Vec<String>>,
    #[serde(deserialize_with = "nullable")]
    pub range: Option<StepRange>,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(remote = "Self")]
pub struct ProbeStep {
    pub step: usize,
    pub ranged: bool,
    pub loops: Vec<bool>,
    pub gpms: Vec<String>,
}

dataclass!(
    Step = "Step",
    GpmPlan = "GpmPlan",
    RangeKey = "RangeKey",
    StepRange = "StepRange",
    RunIndex = "RunIndexPlan",
    ProbeStep = "ProbeStep",
);

/// What the query asks for around the automaton.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryInfo {
    /// SELECT variables (None: `*`).
    pub variables: Option<Vec<String>>,
    pub distinct: bool,
    /// "select" or "construct".
    pub form: String,
    /// A CONSTRUCT query's template (empty for SELECT): variables by name, a blank node of
    /// the template as a variable named `_:label` (a fresh node per result).
    pub template: Vec<TriplePattern>,
    pub window: Window,
    /// LATENESS (ns): how far behind the latest time seen on its streams an event may come
    /// and still be evaluated in time order (0: events are evaluated as they come).
    pub lateness: u128,
    /// SELECTION: which partial matches an event extends (docs/decisions.md 65).
    pub selection: Selection,
    /// CONSUMPTION MATCHED: an emitted match uses up the event triples it took.
    pub consume_matched: bool,
    /// FROM STREAM name -> IRI, by name.
    pub streams: Vec<(String, String)>,
    pub partition_by: Vec<String>,
    pub base: Option<String>,
    pub prefixes: BTreeMap<String, String>,
    /// Each GPM's body as written (for the SPARQL path).
    pub bodies: BTreeMap<String, String>,
    /// The relative timers, by the GPM they modify (docs/decisions.md 71).
    pub timers: BTreeMap<String, Timer>,
    /// SELECT `(expression AS ?v)`: (v, the expression's text), over what COLLECT timers
    /// gathered.
    pub expressions: Vec<(String, String)>,
}

/// A relative timer (`DEFINE GPM I ON S AFTER A FOR d NOT {...}`, docs/decisions.md 71):
/// the interval `[end(A), end(A) + d]` (`after`) or `[start(A) - d, start(A)]`, in which no
/// event of the GPM's stream has a result (`collect` false) or whose results it gathers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Timer {
    pub anchor: String,
    pub after: bool,
    /// `d`, in nanoseconds.
    pub duration: u128,
    pub collect: bool,
}

/// A timer as written: `{"@type": "Timer", "side": "after"|"before", "anchor": ...,
/// "seconds": {"@decimal": ...}, "mode": "not"|"collect"}`.
#[derive(Deserialize)]
#[serde(remote = "Self")]
struct TimerJson {
    side: String,
    anchor: String,
    seconds: Value,
    mode: String,
}

impl TimerJson {
    fn timer(&self) -> std::result::Result<Timer, String> {
        let duration = self.seconds["@decimal"]
            .as_str()
            .and_then(crate::algebra::nanoseconds)
            .ok_or("a timer's duration: a non-negative number of seconds to the nanosecond")?;
        let after = match self.side.as_str() {
            "after" => true,
            "before" => false,
            other => return Err(format!("unknown timer side {other:?}")),
        };
        let collect = match self.mode.as_str() {
            "not" => false,
            "collect" => true,
            other => return Err(format!("unknown timer mode {other:?}")),
        };
        Ok(Timer {
            anchor: self.anchor.clone(),
            after,
            duration,
            collect,
        })
    }
}

/// LATENESS as written: `{"@decimal": seconds}`, or null (or absent: a plan of an earlier
/// spaseq) for none (the engine's default is applied before planning), to the nanosecond.
fn lateness<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<u128, D::Error> {
    let value: Option<Value> = nullable(d)?;
    match value {
        None => Ok(0),
        Some(v) => v["@decimal"]
            .as_str()
            .and_then(crate::algebra::nanoseconds)
            .ok_or_else(|| {
                D::Error::custom("expected a non-negative number of seconds to the nanosecond")
            }),
    }
}

/// RSEP-QL's selection policies (SELECTION ..., docs/decisions.md 65).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Selection {
    /// Every partial match an event may extend (the language without the clause).
    #[default]
    Unrestricted,
    /// Of the partial matches an event's result extends, those that come first.
    Chronological,
    /// Of the partial matches an event's result extends, those that come last.
    Recent,
    /// C-SPARQL's naive SEQ: every event of a match is its GPM's latest.
    Latest,
}

/// `"none"` or `"matched"` (absent: a plan of an earlier spaseq, none).
fn consumption<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<bool, D::Error> {
    match String::deserialize(d)?.as_str() {
        "none" => Ok(false),
        "matched" => Ok(true),
        other => Err(D::Error::custom(format!(
            "unknown consumption policy {other:?}"
        ))),
    }
}

/// The parts of the plan's `Query` (the checked algebra) the runtime reads.
#[derive(Deserialize)]
#[serde(remote = "Self")]
struct Query {
    #[serde(rename = "match")]
    spec: MatchSpec,
    window: Window,
    #[serde(default, deserialize_with = "lateness")]
    lateness: u128,
    #[serde(default)]
    selection: Selection,
    #[serde(default, rename = "consumption", deserialize_with = "consumption")]
    consume_matched: bool,
    events: BTreeMap<String, EventPattern>,
    streams: BTreeMap<String, String>,
    partition_by: Vec<String>,
    #[serde(deserialize_with = "nullable")]
    base: Option<String>,
    prefixes: BTreeMap<String, String>,
}

#[derive(Deserialize)]
#[serde(remote = "Self")]
struct MatchSpec {
    #[serde(deserialize_with = "nullable")]
    variables: Option<Vec<String>>,
    distinct: bool,
    form: String,
    template: Vec<TriplePattern>,
    #[serde(default)]
    expressions: Vec<(String, String)>,
}

#[derive(Deserialize)]
#[serde(remote = "Self")]
struct EventPattern {
    pattern: GroupPattern,
    #[serde(default, deserialize_with = "nullable")]
    timer: Option<TimerJson>,
}

#[derive(Deserialize)]
#[serde(remote = "Self")]
struct GroupPattern {
    text: String,
}

#[derive(Deserialize)]
#[serde(remote = "Self")]
struct Automaton {
    steps: Vec<Step>,
}

/// The plan as written, before its parts are checked against each other.
#[derive(Deserialize)]
#[serde(remote = "Self")]
struct PlanJson {
    version: usize,
    query: Query,
    options: Options,
    automaton: Automaton,
    gpms: BTreeMap<String, GpmPlan>,
    run_indexes: Vec<RunIndex>,
    probes: BTreeMap<String, Vec<ProbeStep>>,
    #[serde(deserialize_with = "set")]
    kleene_gpms: Vec<String>,
    lazy_chain: usize,
}

dataclass!(
    Query = "Query",
    MatchSpec = "MatchSpec",
    EventPattern = "EventPattern",
    TimerJson = "Timer",
    GroupPattern = "GroupPattern",
    Automaton = "Automaton",
    PlanJson = "Plan",
);

/// A query compiled for the runtime.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub version: usize,
    pub query: QueryInfo,
    pub options: Options,
    pub steps: Vec<Step>,
    /// By name.
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
        Self::from_value(&value)
    }

    /// Read a plan from its JSON value: its version first (other versions have other fields).
    pub fn from_value(value: &Value) -> Result<Self> {
        match value["version"].as_u64() {
            Some(version) if value["@type"] == "Plan" && version != PLAN_VERSION as u64 => {
                return Err(PlanError {
                    path: "plan.version".to_owned(),
                    message: format!(
                        "plan version {version}, this core reads version {PLAN_VERSION}"
                    ),
                })
            }
            _ => {}
        }
        let plan: PlanJson = crate::json::read(value)?;
        let query = plan.query;
        if plan.run_indexes.len() != plan.automaton.steps.len() {
            return Err(PlanError {
                path: "plan.run_indexes".to_owned(),
                message: format!(
                    "{} run indexes for {} steps",
                    plan.run_indexes.len(),
                    plan.automaton.steps.len()
                ),
            });
        }
        let mut timers = BTreeMap::new();
        for (name, event) in &query.events {
            if let Some(timer) = &event.timer {
                let timer = timer.timer().map_err(|message| PlanError {
                    path: format!("plan.query.events.{name}.timer"),
                    message,
                })?;
                timers.insert(name.clone(), timer);
            }
        }
        Ok(Plan {
            version: plan.version,
            query: QueryInfo {
                variables: query.spec.variables,
                distinct: query.spec.distinct,
                form: query.spec.form,
                template: query.spec.template,
                window: query.window,
                lateness: query.lateness,
                selection: query.selection,
                consume_matched: query.consume_matched,
                streams: query.streams.into_iter().collect(),
                partition_by: query.partition_by,
                base: query.base,
                prefixes: query.prefixes,
                bodies: (query.events.iter())
                    .map(|(name, event)| (name.clone(), event.pattern.text.clone()))
                    .collect(),
                timers,
                expressions: query.spec.expressions,
            },
            options: plan.options,
            steps: plan.automaton.steps,
            gpms: plan.gpms.into_values().collect(),
            run_indexes: plan.run_indexes,
            probes: plan.probes,
            kleene_gpms: plan.kleene_gpms,
            lazy_chain: plan.lazy_chain,
        })
    }

    pub fn gpm(&self, name: &str) -> Option<&GpmPlan> {
        self.gpms.iter().find(|g| g.name == name)
    }
}
