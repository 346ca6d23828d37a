"""Plans as JSON and back, without loss: every dataclass of the algebra, the automaton and
the plan is an object tagged ``"@type"``; RDF terms are ``{"@iri"}``, ``{"@bnode"}`` and
``{"@literal", "datatype" | "language"}``; frozensets ``{"@set": [...]}`` (sorted); tuples
are arrays; exact decimals (window lengths in seconds) ``{"@decimal": "0.3"}``; infinities
``{"@float": "inf"}``. docs/plan.md shows an example."""

from __future__ import annotations

import dataclasses
import json
import math
from decimal import Decimal
from typing import Any

from pyoxigraph import BlankNode, Literal, NamedNode

from spaseq.engine import errors
from spaseq.engine.algebra import operators as A
from spaseq.engine.compile import nfa, plan, range_keys, splitting


def _classes() -> dict[str, type]:
    out: dict[str, type] = {}
    for module in (A, nfa, plan, range_keys, splitting, errors):
        for name, value in vars(module).items():
            if isinstance(value, type) and dataclasses.is_dataclass(value) and value.__module__ == module.__name__:
                if name in out and out[name] is not value:
                    raise TypeError(f"two plan classes named {name}")
                out[name] = value
    return out


CLASSES = _classes()


def encode(value: Any) -> Any:
    """A JSON-ready structure for a plan (or any part of one)."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else {"@float": repr(value)}
    if isinstance(value, Decimal):  # times and window lengths, exact
        return {"@decimal": str(value)}
    if isinstance(value, NamedNode):
        return {"@iri": value.value}
    if isinstance(value, BlankNode):
        return {"@bnode": value.value}
    if isinstance(value, Literal):
        if value.language:
            return {"@literal": value.value, "language": value.language}
        return {"@literal": value.value, "datatype": value.datatype.value}
    if isinstance(value, tuple | list):
        return [encode(v) for v in value]
    if isinstance(value, frozenset | set):
        return {"@set": sorted((encode(v) for v in value), key=lambda v: json.dumps(v, sort_keys=True))}
    if isinstance(value, dict):
        if any(not isinstance(k, str) or k.startswith("@") for k in value):
            raise TypeError(f"plan dict keys must be plain strings: {list(value)!r}")
        return {k: encode(v) for k, v in value.items()}
    if dataclasses.is_dataclass(value) and type(value).__name__ in CLASSES:
        out = {"@type": type(value).__name__}
        for f in dataclasses.fields(value):
            out[f.name] = encode(getattr(value, f.name))
        return out
    raise TypeError(f"cannot write {type(value).__name__} into a plan")


def decode(data: Any) -> Any:
    """The inverse of ``encode``."""
    if data is None or isinstance(data, bool | int | float | str):
        return data
    if isinstance(data, list):
        return tuple(decode(v) for v in data)
    if not isinstance(data, dict):
        raise ValueError(f"not a plan value: {data!r}")
    if "@type" in data:
        cls = CLASSES.get(data["@type"])
        if cls is None:
            raise ValueError(f"unknown plan type {data['@type']!r}")
        return cls(**{k: decode(v) for k, v in data.items() if k != "@type"})
    if "@iri" in data:
        return NamedNode(data["@iri"])
    if "@bnode" in data:
        return BlankNode(data["@bnode"])
    if "@literal" in data:
        if "language" in data:
            return Literal(data["@literal"], language=data["language"])
        return Literal(data["@literal"], datatype=NamedNode(data["datatype"]))
    if "@set" in data:
        return frozenset(decode(v) for v in data["@set"])
    if "@decimal" in data:
        return Decimal(data["@decimal"])
    if "@float" in data:
        return float(data["@float"])
    return {k: decode(v) for k, v in data.items()}


def plan_to_json(p: plan.Plan, indent: int | None = 2) -> str:
    return json.dumps(encode(p), indent=indent, ensure_ascii=False)


def plan_from_json(text: str) -> plan.Plan:
    raw = json.loads(text)
    if not isinstance(raw, dict) or raw.get("@type") != "Plan":
        raise ValueError("not a spaseq plan")
    if raw.get("version") != plan.PLAN_VERSION:  # before decoding: fields differ between versions
        raise ValueError(f"plan version {raw.get('version')}, this spaseq reads version {plan.PLAN_VERSION}")
    p = decode(raw)
    assert isinstance(p, plan.Plan)
    return p
