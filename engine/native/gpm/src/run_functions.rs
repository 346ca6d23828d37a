//! The `spaseq:` run functions, natively (the Python `functions.run_functions` they port):
//! a GPM body's FILTERs may ask about the run being extended: the event's time and stream,
//! the run's start, and aggregates over the values a variable took in the run's Kleene+
//! iterations so far (`count`, `sum`, `min`, `max`, `avg`, `last`). Errors (no iteration,
//! a value that is not a number, values without an order) make the expression an error, as
//! the Python functions' `FunctionError` does.

use super::error::CompileError;
use super::functions::{self as f, Arith};
use super::value::Value;
use crate::vars::Slot;
use oxrdf::vocab::xsd;
use oxsdatatypes::{Decimal, Integer};
use spaseq_io::dictionary::{Dictionary, TermId};
use spaseq_plan::algebra::{Expr, Term};
use std::cmp::Ordering;
use std::str::FromStr;

pub const SPASEQ_NS: &str = "https://w3id.org/spaseq#";

/// What the run functions read of the run and the event being evaluated.
pub struct RunEnv<'a> {
    /// The event's time (ns).
    pub time: i128,
    /// The run's start (ns): its first event's time, this event's when nothing is taken.
    pub start: i128,
    /// The event's stream IRI.
    pub stream: TermId,
    /// The values the variable in `slot` took in the run's Kleene+ iterations so far, in
    /// order (one per iteration that bound it).
    pub iterations: &'a dyn Fn(Slot) -> Vec<TermId>,
}

/// A run function over the Kleene+ iterations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Aggregate {
    Count,
    Sum,
    Min,
    Max,
    Avg,
    /// The first iteration's value: RSEP-QL's FIRST over the iterations (decision 65).
    First,
    Last,
}

/// A compiled run-function call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunFn {
    EventTime,
    EventStream,
    RunStart,
    Aggregate(Aggregate, Slot),
}

/// The run-function call `op(args)` compiled (`slot` gives a variable its slot); None when
/// `op` is no run function; Err for a call the Python function answers with an error every
/// time (wrong arity, a variable name that is not a constant string): left to Python.
pub fn compile(
    op: &str,
    args: &[Expr],
    slot: &mut dyn FnMut(&str) -> Slot,
) -> Option<Result<RunFn, CompileError>> {
    let name = op
        .strip_prefix('<')?
        .strip_suffix('>')?
        .strip_prefix(SPASEQ_NS)?;
    let aggregate = match name {
        "eventTime" | "eventStream" | "runStart" => {
            return Some(if args.is_empty() {
                Ok(match name {
                    "eventTime" => RunFn::EventTime,
                    "eventStream" => RunFn::EventStream,
                    _ => RunFn::RunStart,
                })
            } else {
                Err(CompileError::Unsupported(format!(
                    "spaseq:{name} with arguments"
                )))
            })
        }
        "count" => Aggregate::Count,
        "sum" => Aggregate::Sum,
        "min" => Aggregate::Min,
        "max" => Aggregate::Max,
        "avg" => Aggregate::Avg,
        "first" => Aggregate::First,
        "last" => Aggregate::Last,
        _ => return None,
    };
    let var = match args {
        [Expr::Term(Term::Literal {
            value,
            datatype,
            language: None,
        })] if datatype == xsd::STRING.as_str() => value.strip_prefix(['?', '$']).unwrap_or(value),
        _ => "",
    };
    Some(if var.is_empty() {
        Err(CompileError::Unsupported(format!(
            "spaseq:{name} without one variable name"
        )))
    } else {
        Ok(RunFn::Aggregate(aggregate, slot(var)))
    })
}

/// Nanoseconds as exact xsd:decimal seconds (what `spaseq:eventTime()` returns).
pub fn seconds(ns: i128) -> Option<Value> {
    let sign = if ns < 0 { "-" } else { "" };
    let abs = ns.unsigned_abs();
    let text = format!("{sign}{}.{:09}", abs / 1_000_000_000, abs % 1_000_000_000);
    Decimal::from_str(&text).ok().map(Value::Decimal)
}

/// The order `spaseq:min`/`max` use (the SPARQL 1.1 operator table, as the Python
/// functions' `SPEC.compare`): numbers, simple strings, booleans and dateTimes among their
/// own kind; anything else, and NaN, has no order.
fn order(a: &Value, b: &Value, dict: &Dictionary) -> Option<Ordering> {
    use Value as V;
    let nan = |v: &Value| match v {
        V::Double(d) => f64::from(*d).is_nan(),
        V::Float(x) => f32::from(*x).is_nan(),
        _ => false,
    };
    match (a, b) {
        (V::Str(x), V::Str(y)) => Some(x.cmp(y)),
        (V::Boolean(x), V::Boolean(y)) => Some(x.cmp(y)),
        (V::DateTime(x), V::DateTime(y)) => x.partial_cmp(y),
        _ if a.is_numeric() && b.is_numeric() && !nan(a) && !nan(b) => {
            super::value::compare(a, b, dict)
        }
        _ => None,
    }
}

impl RunFn {
    pub fn eval(self, run: Option<&RunEnv<'_>>, dict: &Dictionary) -> Option<Value> {
        let run = run?; // outside a run: an error, as in Python
        match self {
            RunFn::EventTime => seconds(run.time),
            RunFn::RunStart => seconds(run.start),
            RunFn::EventStream => Some(Value::Node(run.stream)),
            RunFn::Aggregate(agg, slot) => {
                let values: Vec<Value> = (run.iterations)(slot)
                    .into_iter()
                    .map(|id| Value::of_term(id, dict))
                    .collect();
                aggregate(agg, values, dict)
            }
        }
    }
}

fn sum(values: &[Value]) -> Option<Value> {
    let mut total = Value::Integer(Integer::from(0));
    for v in values {
        if !v.is_numeric() {
            return None;
        }
        total = f::arithmetic(Arith::Add, &total, v)?;
    }
    Some(total)
}

fn aggregate(agg: Aggregate, values: Vec<Value>, dict: &Dictionary) -> Option<Value> {
    match agg {
        Aggregate::Count => Some(Value::Integer(Integer::from(values.len() as i64))),
        Aggregate::Sum => sum(&values),
        Aggregate::Avg => {
            if values.is_empty() {
                return None;
            }
            let n = Value::Integer(Integer::from(values.len() as i64));
            f::arithmetic(Arith::Div, &sum(&values)?, &n)
        }
        Aggregate::First => values.into_iter().next(),
        Aggregate::Last => values.into_iter().last(),
        Aggregate::Min | Aggregate::Max => {
            let wanted = if agg == Aggregate::Min {
                Ordering::Less
            } else {
                Ordering::Greater
            };
            let mut values = values.into_iter();
            let mut best = values.next()?;
            for v in values {
                if order(&v, &best, dict)? == wanted {
                    best = v;
                }
            }
            Some(best)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxrdf::{Literal, NamedNode};

    fn show(v: Option<Value>) -> String {
        format!("{v:?}")
    }

    fn num(v: &str, dt: &str) -> Value {
        Value::of_literal(&Literal::new_typed_literal(
            v,
            NamedNode::new_unchecked(format!("http://www.w3.org/2001/XMLSchema#{dt}")),
        ))
    }

    #[test]
    fn event_times_are_exact_decimal_seconds() {
        assert_eq!(
            show(seconds(-1_500_000_000)),
            show(Some(num("-1.5", "decimal")))
        );
        assert_eq!(
            show(seconds(1_000_000_001)),
            show(Some(num("1.000000001", "decimal")))
        );
        assert_eq!(show(seconds(0)), show(Some(num("0", "decimal"))));
    }

    #[test]
    fn aggregates_follow_the_python_functions() {
        let d = Dictionary::new();
        let ints = vec![num("1", "integer"), num("4", "integer")];
        assert_eq!(
            show(aggregate(Aggregate::Avg, ints.clone(), &d)),
            show(Some(num("2.5", "decimal")))
        );
        assert_eq!(
            show(aggregate(Aggregate::Sum, vec![], &d)),
            show(Some(num("0", "integer")))
        );
        assert_eq!(show(aggregate(Aggregate::Avg, vec![], &d)), show(None));
        assert_eq!(
            show(aggregate(Aggregate::Max, ints.clone(), &d)),
            show(Some(ints[1].clone()))
        );
        assert_eq!(
            show(aggregate(Aggregate::Last, ints.clone(), &d)),
            show(Some(ints[1].clone()))
        );
        let nan = num("NaN", "double");
        assert_eq!(
            show(aggregate(Aggregate::Min, vec![nan.clone(), nan], &d)),
            show(None)
        );
        let text = Value::Str("3".into());
        assert_eq!(
            show(aggregate(Aggregate::Sum, vec![text.clone()], &d)),
            show(None)
        );
        assert_eq!(
            show(aggregate(
                Aggregate::Min,
                vec![text, num("1", "integer")],
                &d
            )),
            show(None)
        );
        assert_eq!(
            show(aggregate(Aggregate::Count, ints, &d)),
            show(Some(num("2", "integer")))
        );
    }
}
