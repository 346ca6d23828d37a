//! plan.schema.json against the serde structs: on every plan the crates' tests read
//! (engine/native/*/tests/data/*.plan.json, kept current by tests/compile/test_plan.py), each
//! field removed and each value set to null in turn, the core must refuse the plan exactly
//! when the schema does. A field the structs read but the schema does not require (or the
//! other way round), or a null one side allows and the other not, fails here, with its path.
//! (tests/compile/test_plan_schema.py validates the plans Python writes against the schema.)

use serde_json::Value;
use spaseq_plan::Plan;
use std::path::Path;

const SCHEMA: &str = include_str!("../plan.schema.json");

/// The fixtures the crates' tests read.
fn plans() -> Vec<(String, Value)> {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut out = Vec::new();
    for krate in std::fs::read_dir(&crates).unwrap() {
        let data = krate.unwrap().path().join("tests").join("data");
        for file in std::fs::read_dir(&data).into_iter().flatten() {
            let path = file.unwrap().path();
            if path.to_string_lossy().ends_with(".plan.json") {
                let text = std::fs::read_to_string(&path).unwrap();
                let name = path.strip_prefix(&crates).unwrap().display().to_string();
                out.push((name, serde_json::from_str(&text).unwrap()));
            }
        }
    }
    assert!(out.len() >= 7, "the fixtures were not found");
    out
}

fn list(arg: &Value) -> std::slice::Iter<'_, Value> {
    arg.as_array().expect("an array").iter()
}

/// Whether `value` is valid against `schema`, for the keywords plan.schema.json uses (any
/// other keyword fails the test: this is not a general validator).
fn valid(schema: &Value, root: &Value, value: &Value) -> bool {
    let Value::Object(keywords) = schema else {
        return schema == &Value::Bool(true);
    };
    keywords
        .iter()
        .all(|(keyword, arg)| match keyword.as_str() {
            "$ref" => {
                let name = arg.as_str().unwrap().strip_prefix("#/$defs/").unwrap();
                valid(&root["$defs"][name], root, value)
            }
            "type" => {
                let types = arg.as_array().map_or(vec![arg], |a| a.iter().collect());
                types.iter().any(|t| match t.as_str().unwrap() {
                    "object" => value.is_object(),
                    "array" => value.is_array(),
                    "string" => value.is_string(),
                    "integer" => value.is_i64() || value.is_u64(),
                    "number" => value.is_number(),
                    "boolean" => value.is_boolean(),
                    "null" => value.is_null(),
                    other => panic!("unknown type {other}"),
                })
            }
            "const" => value == arg,
            "enum" => list(arg).any(|v| v == value),
            "pattern" => value.as_str().is_none_or(|text| {
                regex::Regex::new(arg.as_str().unwrap())
                    .unwrap()
                    .is_match(text)
            }),
            "minimum" => value.as_f64().is_none_or(|x| x >= arg.as_f64().unwrap()),
            "required" => value.as_object().is_none_or(|object| {
                list(arg).all(|name| object.contains_key(name.as_str().unwrap()))
            }),
            "properties" => value.as_object().is_none_or(|object| {
                arg.as_object()
                    .unwrap()
                    .iter()
                    .all(|(name, sub)| object.get(name).is_none_or(|field| valid(sub, root, field)))
            }),
            "additionalProperties" => value.as_object().is_none_or(|object| {
                object
                    .iter()
                    .filter(|(name, _)| {
                        keywords
                            .get("properties")
                            .is_none_or(|p| p.get(*name).is_none())
                    })
                    .all(|(_, field)| valid(arg, root, field))
            }),
            "items" => value
                .as_array()
                .is_none_or(|items| items.iter().all(|item| valid(arg, root, item))),
            "anyOf" => list(arg).any(|sub| valid(sub, root, value)),
            "$schema" | "$defs" | "title" | "description" => true,
            other => panic!("plan.schema.json uses {other}, which this test does not check"),
        })
}

/// A place in a plan: member names and item indexes from the root.
type Place = Vec<Result<String, usize>>;

/// Each mutation of `value`: a member removed (true) or a member or item set to null (false).
fn mutations(value: &Value, place: &Place, out: &mut Vec<(Place, bool)>) {
    let children: Vec<(Result<String, usize>, &Value)> = match value {
        Value::Object(object) => object.iter().map(|(k, v)| (Ok(k.clone()), v)).collect(),
        Value::Array(items) => items.iter().enumerate().map(|(i, v)| (Err(i), v)).collect(),
        _ => return,
    };
    for (step, child) in children {
        let mut inner = place.clone();
        inner.push(step);
        if value.is_object() {
            out.push((inner.clone(), true));
        }
        out.push((inner.clone(), false));
        mutations(child, &inner, out);
    }
}

/// `plan` mutated, and the mutation in words.
fn mutate(plan: &Value, place: &Place, remove: bool) -> (Value, String) {
    let mut mutant = plan.clone();
    let mut parent = &mut mutant;
    let mut what = "plan".to_owned();
    for step in &place[..place.len() - 1] {
        parent = match step {
            Ok(name) => &mut parent[name.as_str()],
            Err(i) => &mut parent[*i],
        };
    }
    match place.last().unwrap() {
        Ok(name) if remove => {
            parent.as_object_mut().unwrap().remove(name);
        }
        Ok(name) => parent[name.as_str()] = Value::Null,
        Err(i) => parent[*i] = Value::Null,
    }
    for step in place {
        match step {
            Ok(name) => what += &format!(".{name}"),
            Err(i) => what += &format!("[{i}]"),
        }
    }
    what += if remove { " removed" } else { " = null" };
    (mutant, what)
}

#[test]
fn the_fixture_plans_are_valid_and_read() {
    let schema: Value = serde_json::from_str(SCHEMA).unwrap();
    for (name, plan) in plans() {
        assert!(valid(&schema, &schema, &plan), "{name} is not valid");
        Plan::from_value(&plan).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

#[test]
fn the_schema_refuses_what_the_structs_refuse() {
    let schema: Value = serde_json::from_str(SCHEMA).unwrap();
    let mut disagree = Vec::new();
    let mut checked = 0;
    for (name, plan) in plans() {
        let mut all = Vec::new();
        mutations(&plan, &Vec::new(), &mut all);
        for (place, remove) in all {
            let (mutant, what) = mutate(&plan, &place, remove);
            let read = Plan::from_value(&mutant);
            if read.is_ok() != valid(&schema, &schema, &mutant) {
                disagree.push(match read {
                    Ok(_) => format!("{name}: {what}: the core accepts it, the schema refuses it"),
                    Err(e) => format!("{name}: {what}: the schema allows it, the core says {e}"),
                });
            }
            checked += 1;
        }
    }
    assert!(checked > 1000, "{checked} mutants only");
    assert!(disagree.is_empty(), "{}", disagree.join("\n"));
}
