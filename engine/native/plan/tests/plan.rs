//! The plan of a V-shape query (`fixtures/vshape.rq`, written by `spaseq explain --plan`;
//! tests/compile/test_plan.py keeps this copy current) read by the core.

use spaseq_plan::algebra::{Expr, Operand, WindowSpan};
use spaseq_plan::plan::{GpmPath, Modifier, Step, Strategy};
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
    let newer = VSHAPE.replace("\"version\": 4", "\"version\": 5");
    assert!(Plan::from_json(&newer)
        .unwrap_err()
        .to_string()
        .contains("plan version 5"));
    // the version is checked before any field (version 1 had other fields)
    let old = VSHAPE
        .replace("\"version\": 4", "\"version\": 1")
        .replace("\"evaluator\": \"native\",", "");
    let err = Plan::from_json(&old).unwrap_err();
    assert_eq!(err.path, "plan.version");
    assert_eq!(err.message, "plan version 1, this core reads version 4");
    assert!(Plan::from_json("{")
        .unwrap_err()
        .message
        .starts_with("not JSON"));
}

#[test]
fn every_field_the_runtime_reads_is_required() {
    let keys = "\"partition_keys\": [\n        \"c\"\n      ]";
    let err = Plan::from_json(&VSHAPE.replacen(keys, "\"partition_keys\": 7", 1)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "plan.run_indexes[1].partition_keys: invalid type: integer `7`, expected a sequence"
    );
    // null is a value (no partition keys); a missing field is an error, not a default
    let err = Plan::from_json(&VSHAPE.replacen(keys, "\"x\": 7", 1)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "plan.run_indexes[1]: missing field `partition_keys`"
    );
    let err = Plan::from_json(&VSHAPE.replacen("\"scale\": 1.0,", "", 1)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "plan.run_indexes[1].range.by_gpm.B: missing field `scale`"
    );
    let err =
        Plan::from_json(&VSHAPE.replacen("\"@type\": \"RangeKey\"", "\"@type\": \"Step\"", 1))
            .unwrap_err();
    assert_eq!(
        err.to_string(),
        "plan.run_indexes[1].range.by_gpm.B: expected a RangeKey, found a Step"
    );
}

#[test]
fn a_dataclass_whose_type_is_not_first_is_read_too() {
    // Plan::from_json reads through serde_json's sorted maps ("@type" first); a Step read
    // from text with "@type" last is read whole first
    let plan = Plan::from_json(VSHAPE).unwrap();
    let value: serde_json::Value = serde_json::from_str(VSHAPE).unwrap();
    let mut step = value["automaton"]["steps"][1].clone();
    step.as_object_mut().unwrap().remove("@type");
    let text = format!(
        "{}, \"@type\": \"Step\"}}",
        step.to_string().strip_suffix('}').unwrap()
    );
    assert!(text.ends_with("\"@type\": \"Step\"}"), "{text}");
    assert_eq!(serde_json::from_str::<Step>(&text).unwrap(), plan.steps[1]);
    let wrong = text.replace("\"Step\"}", "\"Atom\"}");
    let err = serde_json::from_str::<Step>(&wrong).unwrap_err();
    assert!(
        err.to_string().starts_with("expected a Step, found a Atom"),
        "{err}"
    );
}

#[test]
fn a_construct_query_s_template_is_read() {
    use spaseq_plan::algebra::{PatternTerm, Term};
    let mut plan: serde_json::Value = serde_json::from_str(VSHAPE).unwrap();
    plan["query"]["match"]["form"] = "construct".into();
    plan["query"]["match"]["template"] = serde_json::json!([{
        "@type": "TriplePattern",
        "subject": {"@type": "Var", "name": "_:b"},
        "predicate": {"@iri": "http://ex.org/p"},
        "object": {"@literal": "x", "language": "en"}
    }, {
        "@type": "TriplePattern",
        "subject": {"@type": "Var", "name": "_:b"},
        "predicate": {"@iri": "http://ex.org/q"},
        "object": {"@type": "Var", "name": "c"}
    }]);
    let read = Plan::from_json(&plan.to_string()).expect("a valid plan");
    assert_eq!(read.query.form, "construct");
    let template = &read.query.template;
    assert_eq!(template.len(), 2);
    assert_eq!(template[0].subject, PatternTerm::Var("_:b".to_owned()));
    assert!(
        matches!(&template[0].predicate, PatternTerm::Term(Term::Iri(i)) if i == "http://ex.org/p")
    );
    assert_eq!(template[1].object, PatternTerm::Var("c".to_owned()));
    assert!(Plan::from_json(VSHAPE).unwrap().query.template.is_empty());
}

#[test]
fn a_modifier_is_read_from_its_one_spelling() {
    let kleene = |min, max| Modifier::Kleene { min, max };
    for (text, modifier) in [
        ("", Modifier::Plain),
        ("?", Modifier::Optional),
        ("!", Modifier::Negation),
        ("+", Modifier::PLUS),
        ("*", kleene(0, None)),
        ("{3}", kleene(3, Some(3))),
        ("{1}", kleene(1, Some(1))),
        ("{2,}", kleene(2, None)),
        ("{0,1}", kleene(0, Some(1))),
        ("{2,10000}", kleene(2, Some(10000))),
    ] {
        assert_eq!(Modifier::parse(text), Ok(modifier), "{text}");
        assert_eq!(modifier.text(), text);
    }
    // another spelling of a modifier, bounds that take nothing or are upside down, other text
    for (text, why) in [
        ("{1,}", "is spelled \"+\""),
        ("{0,}", "is spelled \"*\""),
        ("{2,2}", "is spelled \"{2}\""),
        ("{02}", "is spelled \"{2}\""),
        ("{0}", "takes at least one event"),
        ("{0,0}", "takes at least one event"),
        (
            "{3,2}",
            "takes at least one event and at most its upper bound",
        ),
        ("{,2}", "unknown modifier"),
        ("{x}", "unknown modifier"),
        ("{99999999999}", "unknown modifier"),
        ("++", "unknown modifier"),
    ] {
        let err = Modifier::parse(text).unwrap_err();
        assert!(err.contains(why), "{text}: {err}");
    }
    // in a plan, the error names the field (the first Step's, not the query's atoms')
    let step = "},\n        \"modifier\": \"\",";
    let broken = VSHAPE.replacen(step, "},\n        \"modifier\": \"{1,}\",", 1);
    let err = Plan::from_json(&broken).unwrap_err();
    assert_eq!(err.path, "plan.automaton.steps[0].modifier");
    assert_eq!(err.message, "modifier \"{1,}\" is spelled \"+\"");
}
