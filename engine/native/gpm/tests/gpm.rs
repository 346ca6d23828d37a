//! Native GPM evaluation on one event: the join (shared variables, repeated variables,
//! blank nodes, variable predicates, compatibility with mu), FILTER placement and values.

use spaseq_gpm::vars::{Row, VarTable};
use spaseq_gpm::{parse_term, Compiled, Env, EventIndex, GpmProgram};
use spaseq_io::dictionary::{Dictionary, TermId};
use spaseq_plan::Plan;

const XSD: &str = "http://www.w3.org/2001/XMLSchema#";

/// A plan with one GPM `G` whose body is `body` (built as `spaseq explain --plan` would).
fn gpm_plan(join_order: &str, variables: &str, local: &str, filters: &str) -> Plan {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../plan/tests/data/vshape.plan.json"
    ))
    .unwrap();
    let mut plan: serde_json::Value = serde_json::from_str(&text).unwrap();
    let gpms = plan["gpms"].as_object_mut().unwrap();
    let (_, first) = gpms.iter().next().unwrap();
    let mut g = first.clone();
    g["name"] = "G".into();
    g["path"] = "compiled".into();
    g["run_aware"] = false.into();
    g["graph_elements"] = serde_json::json!([]);
    g["required"] = serde_json::json!([]);
    g["join_order"] = serde_json::from_str(join_order).unwrap();
    g["variables"] = serde_json::from_str(variables).unwrap();
    g["local_vars"] = serde_json::from_str(local).unwrap();
    g["filters"] = serde_json::from_str(filters).unwrap();
    gpms.insert("G".to_owned(), g);
    Plan::from_value(&plan).unwrap()
}

fn var(name: &str) -> String {
    format!(r#"{{"@type": "Var", "name": "{name}"}}"#)
}

fn iri(local: &str) -> String {
    format!(r#"{{"@iri": "http://ex.org/{local}"}}"#)
}

fn tp(s: &str, p: &str, o: &str) -> String {
    format!(r#"{{"@type": "TriplePattern", "subject": {s}, "predicate": {p}, "object": {o}}}"#)
}

fn call(op: &str, args: &[String]) -> String {
    format!(
        r#"{{"@type": "ECall", "op": "{op}", "args": [{}], "distinct": false}}"#,
        args.join(", ")
    )
}

fn evar(name: &str) -> String {
    format!(r#"{{"@type": "EVar", "name": "{name}"}}"#)
}

fn lit(value: &str, dt: &str) -> String {
    format!(r#"{{"@type": "ETerm", "term": {{"@literal": "{value}", "datatype": "{XSD}{dt}"}}}}"#)
}

struct Event {
    dict: Dictionary,
    triples: Vec<[TermId; 3]>,
}

fn event(triples: &[(&str, &str, &str)]) -> Event {
    let dict = Dictionary::new();
    let id = |t: &str| dict.intern(parse_term(t).unwrap());
    let triples = triples
        .iter()
        .map(|(s, p, o)| [id(s), id(p), id(o)])
        .collect();
    Event { dict, triples }
}

fn names(rows: &[Row], vars: &VarTable, dict: &Dictionary) -> Vec<Vec<(String, String)>> {
    let mut out: Vec<Vec<(String, String)>> = rows
        .iter()
        .map(|row| {
            row.iter()
                .enumerate()
                .filter_map(|(slot, t)| {
                    t.map(|t| (vars.name(slot).to_owned(), dict.get(t).to_string()))
                })
                .collect()
        })
        .collect();
    out.sort();
    out
}

#[test]
fn joins_on_shared_and_repeated_variables_with_blank_nodes() {
    // ?s :p _:x . _:x :q ?v . ?s :r ?s
    let plan = gpm_plan(
        &format!(
            "[{}, {}, {}]",
            tp(&var("s"), &iri("p"), &var("_:x")),
            tp(&var("_:x"), &iri("q"), &var("v")),
            tp(&var("s"), &iri("r"), &var("s"))
        ),
        r#"["s", "v"]"#,
        r#"["s", "v"]"#,
        "[]",
    );
    let ev = event(&[
        ("<http://ex.org/a>", "<http://ex.org/p>", "_:n1"),
        ("<http://ex.org/a>", "<http://ex.org/p>", "_:n2"),
        ("_:n1", "<http://ex.org/q>", "\"1\""),
        ("_:n2", "<http://ex.org/q>", "\"1\""),
        (
            "<http://ex.org/a>",
            "<http://ex.org/r>",
            "<http://ex.org/a>",
        ),
        ("<http://ex.org/b>", "<http://ex.org/p>", "_:n1"),
        (
            "<http://ex.org/b>",
            "<http://ex.org/r>",
            "<http://ex.org/c>",
        ),
    ]);
    let mut vars = VarTable::new();
    let program = GpmProgram::compile(plan.gpm("G").unwrap(), &mut vars, &ev.dict, None).unwrap();
    let index = EventIndex::new(&ev.triples);
    assert!(program.may_match(&index));
    let mut out = Vec::new();
    program.results(&index, &vars.empty_row(), &ev.dict, &mut out);
    // two blank-node paths, one distinct solution; ?s :r ?s rules out b
    assert_eq!(
        names(&out, &vars, &ev.dict),
        vec![vec![
            ("s".to_owned(), "<http://ex.org/a>".to_owned()),
            ("v".to_owned(), "\"1\"".to_owned())
        ]]
    );
    assert_eq!(
        program.local_slots(),
        &[vars.get("s").unwrap(), vars.get("v").unwrap()]
    );

    // a context binding ?s to b: incompatible with every solution
    let mut mu = vars.empty_row();
    mu[vars.get("s").unwrap()] = Some(ev.dict.intern(parse_term("<http://ex.org/b>").unwrap()));
    out.clear();
    program.results(&index, &mu, &ev.dict, &mut out);
    assert!(out.is_empty());
}

#[test]
fn filters_mix_context_and_event_variables() {
    // ?u :price ?p2 . FILTER(?p2 > ?p1 && ?p2 * 2 <= 10.0)
    let filters = format!(
        "[{}, {}]",
        call(">", &[evar("p2"), evar("p1")]),
        call(
            "<=",
            &[
                call("*", &[evar("p2"), lit("2", "integer")]),
                lit("10.0", "decimal")
            ]
        )
    );
    let plan = gpm_plan(
        &format!("[{}]", tp(&var("u"), &iri("price"), &var("p2"))),
        r#"["u", "p2"]"#,
        r#"["p2", "u"]"#,
        &filters,
    );
    let ev = event(&[
        (
            "<http://ex.org/a>",
            "<http://ex.org/price>",
            &format!("\"3\"^^<{XSD}int>"),
        ),
        (
            "<http://ex.org/b>",
            "<http://ex.org/price>",
            &format!("\"4.5e0\"^^<{XSD}double>"),
        ),
        (
            "<http://ex.org/c>",
            "<http://ex.org/price>",
            &format!("\"7\"^^<{XSD}integer>"),
        ),
        ("<http://ex.org/d>", "<http://ex.org/price>", "\"8\""),
    ]);
    let mut vars = VarTable::new();
    let program = GpmProgram::compile(plan.gpm("G").unwrap(), &mut vars, &ev.dict, None).unwrap();
    let index = EventIndex::new(&ev.triples);
    let mut mu = vars.empty_row();
    mu[vars.get("p1").unwrap()] = Some(
        ev.dict
            .intern(parse_term(&format!("\"3.5\"^^<{XSD}decimal>")).unwrap()),
    );
    let mut out = Vec::new();
    program.results(&index, &mu, &ev.dict, &mut out);
    let us: Vec<String> = names(&out, &vars, &ev.dict)
        .into_iter()
        .map(|row| row.into_iter().find(|(n, _)| n == "u").unwrap().1)
        .collect();
    // 3 is not > 3.5; 7 * 2 > 10; "8" is a string (a type error: false)
    assert_eq!(us, vec!["<http://ex.org/b>".to_owned()]);
    // without ?p1 the first FILTER is an error: nothing
    out.clear();
    program.results(&index, &vars.empty_row(), &ev.dict, &mut out);
    assert!(out.is_empty());
}

#[test]
fn variable_predicates_and_the_prefilter() {
    let plan = gpm_plan(
        &format!(
            "[{}, {}]",
            tp(&var("s"), &iri("type"), &iri("T")),
            tp(&var("s"), &var("p"), &var("s"))
        ),
        r#"["s", "p"]"#,
        r#"["p", "s"]"#,
        "[]",
    );
    let mut json_plan = plan.clone();
    json_plan
        .gpms
        .iter_mut()
        .for_each(|g| g.required = vec!["http://ex.org/type".to_owned()]);
    let ev = event(&[
        (
            "<http://ex.org/a>",
            "<http://ex.org/type>",
            "<http://ex.org/T>",
        ),
        (
            "<http://ex.org/a>",
            "<http://ex.org/knows>",
            "<http://ex.org/a>",
        ),
        (
            "<http://ex.org/a>",
            "<http://ex.org/likes>",
            "<http://ex.org/b>",
        ),
    ]);
    let mut vars = VarTable::new();
    let program =
        GpmProgram::compile(json_plan.gpm("G").unwrap(), &mut vars, &ev.dict, None).unwrap();
    let index = EventIndex::new(&ev.triples);
    let mut out = Vec::new();
    program.results(&index, &vars.empty_row(), &ev.dict, &mut out);
    assert_eq!(out.len(), 1);
    assert!(!program.may_match(&EventIndex::new(&ev.triples[1..])));
}

#[test]
fn outside_the_subset_is_an_error() {
    let mut vars = VarTable::new();
    let dict = Dictionary::new();
    let plan = gpm_plan(
        "[]",
        "[]",
        "[]",
        &format!("[{}]", call("MD5", &[evar("x")])),
    );
    let err = GpmProgram::compile(plan.gpm("G").unwrap(), &mut vars, &dict, None).unwrap_err();
    assert!(err.to_string().contains("MD5"), "{err}");
}

#[test]
fn expression_values_follow_pyoxigraph() {
    let index = EventIndex::new(&[]);
    let eval = |expr: &str| {
        let mut vars = VarTable::new();
        let d = Dictionary::new();
        let compiled = Compiled::from_json(expr, &mut vars, &d, None).unwrap();
        let row = vars.empty_row();
        let env = Env {
            row: &row,
            dict: &d,
            index: &index,
            run: None,
        };
        compiled.value(&env).map(|v| v.to_term(&d).to_string())
    };
    assert_eq!(
        eval(&call("/", &[lit("1", "integer"), lit("4", "int")])),
        Some(format!("\"0.25\"^^<{XSD}decimal>"))
    );
    assert_eq!(
        eval(&call("/", &[lit("1", "integer"), lit("0", "integer")])),
        None
    );
    assert_eq!(
        eval(&call("+", &[lit("1.5", "float"), lit("1", "decimal")])),
        Some(format!("\"2.5\"^^<{XSD}float>"))
    );
    assert_eq!(
        eval(&call("STR", &[lit("01", "integer")])),
        Some("\"1\"".to_owned())
    );
    assert_eq!(
        eval(&call("<", &[lit("NaN", "double"), lit("1", "integer")])),
        None
    );
    assert_eq!(
        eval(&call("||", &[evar("unbound"), lit("true", "boolean")])),
        Some(format!("\"true\"^^<{XSD}boolean>"))
    );
    assert_eq!(
        eval(&call("&&", &[evar("unbound"), lit("true", "boolean")])),
        None
    );
    assert_eq!(
        eval(&call(
            "-",
            &[lit("2020-01-02", "date"), lit("2020-01-01", "date")]
        )),
        Some(format!("\"P1D\"^^<{XSD}dayTimeDuration>"))
    );
}

/// A probe (the triples a BGP needs under mu) refuses only events on which the BGP has no
/// solution compatible with mu, and does refuse some: every mu over a few values, on events
/// small and large (past the index's lookup threshold).
#[test]
fn a_probe_refuses_only_events_without_results() {
    // ?s :p ?o . ?o :q ?v . ?s :r <http://ex.org/k>
    let plain = gpm_plan(
        &format!(
            "[{}, {}, {}]",
            tp(&var("s"), &iri("p"), &var("o")),
            tp(&var("o"), &iri("q"), &var("v")),
            tp(&var("s"), &iri("r"), &iri("k"))
        ),
        r#"["s", "o", "v"]"#,
        r#"["s", "o", "v"]"#,
        "[]",
    );
    // ?s :p _:b . _:b :q ?v . ?o ?x ?s . ?s :r ?s (a blank node, a variable predicate, a
    // variable repeated in one pattern)
    let knotted = gpm_plan(
        &format!(
            "[{}, {}, {}, {}]",
            tp(&var("s"), &iri("p"), &var("_:b")),
            tp(&var("_:b"), &iri("q"), &var("v")),
            tp(&var("o"), &var("x"), &var("s")),
            tp(&var("s"), &iri("r"), &var("s"))
        ),
        r#"["s", "o", "v", "x"]"#,
        r#"["s", "o", "v", "x"]"#,
        "[]",
    );
    let node = |i: usize| format!("<http://ex.org/n{i}>");
    let (p, q, r, k) = (
        "<http://ex.org/p>".to_owned(),
        "<http://ex.org/q>".to_owned(),
        "<http://ex.org/r>".to_owned(),
        "<http://ex.org/k>".to_owned(),
    );
    let events: Vec<Vec<(String, String, String)>> = vec![
        vec![
            (node(0), p.clone(), node(1)),
            (node(1), q.clone(), node(2)),
            (node(0), r.clone(), node(0)),
            (node(3), q.clone(), node(0)),
        ],
        vec![
            (node(0), p.clone(), node(1)),
            (node(1), q.clone(), node(2)),
            (node(0), r.clone(), k.clone()),
        ],
        vec![(node(0), p.clone(), node(1)), (node(1), q.clone(), node(2))],
        vec![
            (node(3), p.clone(), node(1)),
            (node(1), q.clone(), node(0)),
            (node(3), r.clone(), k.clone()),
        ],
        // many pairs of :p and :q, so that lookups by subject and object are used
        (0..40)
            .flat_map(|i| {
                [
                    (node(i), p.clone(), node(i + 1)),
                    (node(i + 1), q.clone(), node((i * 7) % 5)),
                    (node(i % 3), r.clone(), k.clone()),
                    (node(i % 4), r.clone(), node(i % 4)),
                ]
            })
            .collect(),
    ];
    let (mut refused, mut admitted, mut knotted_found) = (0, 0, 0);
    for (plan, triples) in [&plain, &knotted]
        .into_iter()
        .flat_map(|plan| events.iter().map(move |triples| (plan, triples)))
    {
        let spelled: Vec<(&str, &str, &str)> = triples
            .iter()
            .map(|(s, p, o)| (s.as_str(), p.as_str(), o.as_str()))
            .collect();
        let ev = event(&spelled);
        let mut vars = VarTable::new();
        let program =
            GpmProgram::compile(plan.gpm("G").unwrap(), &mut vars, &ev.dict, None).unwrap();
        let index = EventIndex::new(&ev.triples);
        let slots = ["s", "o", "v"].map(|v| vars.get(v).unwrap());
        let values: Vec<Option<TermId>> = std::iter::once(None)
            .chain((0..6).map(|i| Some(ev.dict.intern(parse_term(&node(i)).unwrap()))))
            .collect();
        for &a in &values {
            for &b in &values {
                for &c in &values {
                    let mut mu = vars.empty_row();
                    for (slot, value) in slots.iter().zip([a, b, c]) {
                        mu[*slot] = value;
                    }
                    let mut out = Vec::new();
                    program.results(&index, &mu, &ev.dict, &mut out);
                    if program.probe(&mu).admits(&index) {
                        admitted += 1;
                        if !out.is_empty() && std::ptr::eq(plan, &knotted) {
                            knotted_found += 1;
                        }
                    } else {
                        assert!(out.is_empty(), "refused an event with results under {mu:?}");
                        refused += 1;
                    }
                }
            }
        }
    }
    assert!(
        refused > 100 && admitted > 20 && knotted_found > 5,
        "{refused} refused, {admitted} admitted, {knotted_found} with results of the knotted BGP"
    );
}

/// Two BGPs that are one under two namings give each other's base rows by renaming (the
/// same rows in the same order); a BGP differing by a constant, by a variable repeated, or
/// with a context-free FILTER is no twin.
#[test]
fn a_bgp_under_other_names_is_a_twin() {
    let bgp = |s: &str, o: &str, v: &str, filters: &str| {
        gpm_plan(
            &format!(
                "[{}, {}]",
                tp(&var(s), &iri("p"), &var(o)),
                tp(&var(s), &iri("q"), &var(v))
            ),
            &format!(r#"["{s}", "{o}", "{v}"]"#),
            &format!(r#"["{s}", "{o}", "{v}"]"#),
            filters,
        )
    };
    let ev = event(&[
        (
            "<http://ex.org/a>",
            "<http://ex.org/p>",
            "<http://ex.org/b>",
        ),
        (
            "<http://ex.org/a>",
            "<http://ex.org/p>",
            "<http://ex.org/c>",
        ),
        ("<http://ex.org/a>", "<http://ex.org/q>", "\"1\""),
        (
            "<http://ex.org/d>",
            "<http://ex.org/p>",
            "<http://ex.org/d>",
        ),
        ("<http://ex.org/d>", "<http://ex.org/q>", "\"2\""),
    ]);
    let mut vars = VarTable::new();
    let compile = |plan: &spaseq_plan::Plan, vars: &mut VarTable| {
        GpmProgram::compile(plan.gpm("G").unwrap(), vars, &ev.dict, None).unwrap()
    };
    let first = compile(&bgp("s", "o", "v", "[]"), &mut vars);
    let twin = compile(&bgp("s2", "o2", "v2", "[]"), &mut vars);
    // one variable for two: not one to one
    let knot = compile(&bgp("s3", "s3", "v3", "[]"), &mut vars);
    let filtered = compile(
        &bgp(
            "s4",
            "o4",
            "v4",
            &format!("[{}]", call(">", &[evar("v4"), lit("1", "integer")])),
        ),
        &mut vars,
    );
    let index = EventIndex::new(&ev.triples);
    let width = vars.len();
    let base = |program: &GpmProgram| {
        let mut rows = Vec::new();
        program.base(&index, width, &ev.dict, &mut rows);
        rows
    };
    let renaming = twin.base_renaming_from(&first).expect("a twin");
    let renamed: Vec<Row> = base(&first)
        .iter()
        .map(|row| {
            let mut out = vec![None; width];
            for &(from, to) in &renaming {
                out[to] = row[from];
            }
            out
        })
        .collect();
    assert_eq!(base(&twin).len(), 3);
    assert_eq!(renamed, base(&twin));
    assert!(first.base_renaming_from(&twin).is_some());
    assert!(knot.base_renaming_from(&first).is_none());
    assert!(first.base_renaming_from(&knot).is_none());
    assert!(filtered.base_renaming_from(&first).is_none());
}
