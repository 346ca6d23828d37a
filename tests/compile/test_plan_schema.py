"""The plan's JSON Schema, engine/native/plan/plan.schema.json: every plan the planner writes
is valid against it (the fixtures' and generated ones), and docs/plan.md, the schema in words,
names each of its fields. The Rust side checks the schema against the serde structs that read
the plan (engine/native/plan/tests/schema.rs: the core refuses a plan exactly when the schema
does)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from jsonschema import Draft202012Validator

from spaseq.engine.compile.plan import EngineOptions, Plan
from spaseq.engine.compile.plan_json import plan_to_json
from spaseq.engine.compile.planner import plan_query
from spaseq.engine.language.query import load_query, parse_query
from tests.compile.test_plan import QUERY_FILES, ROOT
from tests.properties.test_differential import EXAMPLES, options, queries

SCHEMA = json.loads((ROOT / "engine/native/plan/plan.schema.json").read_text(encoding="utf-8"))
VALIDATOR = Draft202012Validator(SCHEMA)


def _errors(data: Any) -> list[str]:
    return [f"plan/{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in VALIDATOR.iter_errors(data)]


def _check(plan: Plan) -> None:
    errors = _errors(json.loads(plan_to_json(plan)))
    assert not errors, "\n".join(errors[:10])


def test_the_schema_is_a_draft_2020_12_schema() -> None:
    Draft202012Validator.check_schema(SCHEMA)
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"


@pytest.mark.parametrize("path", QUERY_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_fixture_plan_is_valid(path: Path) -> None:
    for opts in (EngineOptions(), EngineOptions(lazy_chain=True, lazy_conjunction=True, compiled_gpm=False)):
        _check(plan_query(load_query(str(path)), opts))


@settings(max_examples=EXAMPLES)
@given(queries(), options)
def test_every_generated_plan_is_valid(text: str, opts: EngineOptions) -> None:
    _check(plan_query(parse_query(text), opts))


def test_the_schema_refuses_what_the_core_cannot_read() -> None:
    data = json.loads(plan_to_json(plan_query(load_query(str(ROOT / "fixtures" / "vshape.rq")))))
    assert not _errors(data)
    key = data["run_indexes"][1]["range"]["by_gpm"]["B"]
    del key["scale"]
    data["gpms"]["A"]["evaluator"] = "magic"
    data["run_indexes"][1]["partition_keys"] = 7
    errors = sorted(_errors(data))
    assert [e.split(": ")[0] for e in errors] == [
        "plan/gpms/A/evaluator", "plan/run_indexes/1/partition_keys", "plan/run_indexes/1/range"]
    assert "'magic' is not one of" in errors[0] and "7 is not of type" in errors[1]
    assert _errors({**data, "version": 4})


def _schema_names(node: Any, out: set[str]) -> set[str]:
    """Every field (property or required member) and every @type the schema names."""
    if isinstance(node, list):
        for sub in node:
            _schema_names(sub, out)
    elif isinstance(node, dict):
        out.update(node.get("properties", {}), node.get("required", []))
        if isinstance(node.get("const"), str):
            out.add(node["const"])
        for key in ("properties", "$defs"):
            _schema_names(list(node.get(key, {}).values()), out)
        for key in ("items", "additionalProperties", "anyOf", "$ref"):
            if isinstance(node.get(key), dict | list):
                _schema_names(node[key], out)
    return out


def test_docs_plan_md_names_every_field_of_the_schema() -> None:
    docs = (ROOT / "docs" / "plan.md").read_text(encoding="utf-8")
    assert "engine/native/plan/plan.schema.json" in docs
    missing = sorted(name for name in _schema_names(SCHEMA, set())
                     if not re.search(rf"[`\"]{re.escape(name)}[`\"]", docs))
    assert not missing, f"docs/plan.md does not name {missing}"


def test_the_examples_of_docs_plan_md_are_valid() -> None:
    docs = (ROOT / "docs" / "plan.md").read_text(encoding="utf-8")
    examples = [json.loads(block) for block in re.findall(r"```json\n(.*?)\n```", docs, re.S)]
    typed = [e for e in examples if e.get("@type") in SCHEMA["$defs"]]
    assert {e["@type"] for e in typed} == {"GpmPlan", "RunIndexPlan"}
    for example in typed:
        errors = list(Draft202012Validator({**SCHEMA, "$ref": f"#/$defs/{example['@type']}"}).iter_errors(example))
        assert not errors, (example["@type"], [e.message for e in errors])

