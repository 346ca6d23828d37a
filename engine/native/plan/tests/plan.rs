//! The plan of a V-shape query (`fixtures/vshape.rq`, written by `spaseq explain --plan`;
//! tests/compile/test_plan.py keeps this copy current) read by the core.

use spaseq_plan::algebra::{Expr, Operand, WindowSpan};
use spaseq_plan::plan::{GpmPath, Modifier, Strategy};
use spaseq_plan::Plan;

const VSHAPE: &str = include_str!("data/vshape.plan.json");

#[test]
fn reads_the_automaton_indexes_and_gpms() {
    let plan = Plan::from_json(VSHAPE).expect("a valid plan");
    assert_eq!(
        plan.query.window.span,
        WindowSpan::Nanoseconds(60_000_000_000)
    );
    assert_eq!(plan.steps.len(), 2);
    assert_eq!(plan.steps[1].operand, Operand::Gpm("B".to_owned()));
    assert_eq!(plan.steps[1].strategy, Some(Strategy::SkipTillNext));
    assert_eq!(plan.steps[1].modifier, Modifier::Plain);
    assert_eq!(
        plan.run_indexes[1].partition_keys,
        Some(vec!["c".to_owned()])
    );
    let range = plan.run_indexes[1].range.as_ref().expect("a range key");
    assert_eq!(range.run_var, "p1");
    assert!(range.by_gpm["B"].below);
    let b = plan.gpm("B").expect("GPM B");
    assert_eq!(b.path, GpmPath::Compiled);
    assert_eq!(b.variables, ["u", "c", "p2"]);
    assert!(matches!(&b.filters[0], Expr::Call { op, .. } if op == ">"));
    assert_eq!(plan.probes["http://ex.org/trades"][0].step, 1);
}

#[test]
fn errors_name_the_field() {
    let broken = VSHAPE.replacen("\"path\": \"compiled\"", "\"path\": \"magic\"", 1);
    let err = Plan::from_json(&broken).unwrap_err();
    assert_eq!(err.path, "plan.gpms.A.path");
    assert!(err.message.contains("magic"), "{err}");
    let newer = VSHAPE.replace("\"version\": 3", "\"version\": 4");
    assert!(Plan::from_json(&newer)
        .unwrap_err()
        .to_string()
        .contains("plan version 4"));
    assert!(Plan::from_json("{")
        .unwrap_err()
        .message
        .starts_with("not JSON"));
}
