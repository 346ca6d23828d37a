//! A plan as the native core understood it, as JSON: what the Python tests compare with the
//! Python plan, field by field, to keep docs/plan.md's contract true from the consumer side.

use crate::algebra::{Expr, PatternTerm, WindowSpan};
use crate::plan::{GpmPath, Plan, Strategy};
use serde_json::{json, Value};

pub fn summary(plan: &Plan) -> Value {
    let window = match plan.query.window.span {
        WindowSpan::Unbounded => json!({"kind": null}),
        WindowSpan::Nanoseconds(ns) => json!({"kind": "time", "nanoseconds": ns.to_string()}),
        WindowSpan::Events(n) => json!({"kind": "events", "events": n}),
    };
    let steps: Vec<Value> = plan
        .steps
        .iter()
        .zip(&plan.run_indexes)
        .map(|(s, ix)| {
            json!({
                "index": s.index,
                "operand": s.operand.text(),
                "modifier": s.modifier.text(),
                "strategy": s.strategy.map(|st| match st { Strategy::Strict => ",", Strategy::SkipTillNext => ";", Strategy::SkipTillAny => ":" }),
                "streams": s.streams,
                "bound_before": s.bound_before,
                "partition_keys": ix.partition_keys,
                "range": ix.range.as_ref().map(|r| json!({
                    "run_var": r.run_var,
                    "by_gpm": r.by_gpm.iter().map(|(g, k)| (g.clone(), json!([k.event_var, k.below, k.scale, k.offset]))).collect::<serde_json::Map<_, _>>(),
                })),
            })
        })
        .collect();
    let gpms: serde_json::Map<String, Value> = plan
        .gpms
        .iter()
        .map(|g| {
            let mut filter_vars = Vec::new();
            g.filters.iter().for_each(|f| f.variables(&mut filter_vars));
            (
                g.name.clone(),
                json!({
                    "stream": g.stream,
                    "path": match g.path { GpmPath::Compiled => "compiled", GpmPath::Sparql => "sparql" },
                    "variables": g.variables,
                    "join_order": g.join_order.iter().map(|tp| json!([term(&tp.subject), term(&tp.predicate), term(&tp.object)])).collect::<Vec<_>>(),
                    "filters": g.filters.iter().map(expr).collect::<Vec<_>>(),
                    "filter_variables": filter_vars,
                    "graph_elements": g.graph_elements.len(),
                    "required": g.required,
                }),
            )
        })
        .collect();
    json!({
        "version": plan.version,
        "window": window,
        "tumbling": plan.query.window.tumbling,
        "streams": plan.query.streams,
        "options": plan.options.0,
        "steps": steps,
        "gpms": gpms,
        "probes": plan.probes.iter().map(|(s, ps)| (s.clone(), json!(ps.iter().map(|p| json!([p.step, p.ranged, p.loops, p.gpms])).collect::<Vec<_>>()))).collect::<serde_json::Map<_, _>>(),
        "kleene_gpms": plan.kleene_gpms,
        "lazy_chain": plan.lazy_chain,
    })
}

fn term(t: &PatternTerm) -> String {
    match t {
        PatternTerm::Var(name) => format!("?{name}"),
        PatternTerm::Term(term) => term.to_ntriples(),
        PatternTerm::Path(_) => "(path)".to_owned(),
    }
}

/// An expression in prefix form, `(> ?p2 ?p1)`, for comparison with the Python plan.
fn expr(e: &Expr) -> String {
    match e {
        Expr::Var(name) => format!("?{name}"),
        Expr::Term(term) => term.to_ntriples(),
        Expr::Call { op, args, distinct } => {
            let mut parts = vec![op.clone()];
            if *distinct {
                parts.push("DISTINCT".to_owned());
            }
            parts.extend(args.iter().map(expr));
            format!("({})", parts.join(" "))
        }
        Expr::Exists { negated, .. } => {
            if *negated { "(NOT EXISTS)" } else { "(EXISTS)" }.to_owned()
        }
    }
}
