"""The layering of the code: every import (module level or inside a function) goes from a
higher room to a lower one, no module imports itself back through others, and ``engine/``
keeps few modules at its top. Read statically with ``ast``, so nothing is imported."""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: folder -> the package it installs as (engine/spark is the package spaseq.spark: the layout's
#: top level is fixed, so its folder sits in engine/, but it is no room of spaseq.engine)
PACKAGES = {"engine": "spaseq.engine", "plugin": "spaseq.plugin", "extension_functions": "spaseq.extension_functions",
            "engine/spark": "spaseq.spark"}

#: room (a sub-package of engine, a top module of engine, or a whole package) -> rank; a module
#: may import its own room and rooms of a lower rank only. Data flows up this table: text ->
#: syntax tree -> algebra -> plan -> runtime -> results -> outputs (docs/decisions.md, 31).
RANKS: dict[str, int] = {
    "engine.errors": 0, "engine.vocab": 0, "engine.version": 0, "engine.user_cache": 0,
    "engine._native": 0,  # the native core (engine/native): imports nothing of the project
    "engine.native_core": 1,  # imports the native core, saying how to build it when missing
    "engine.values": 2,
    "engine.events": 3, "engine.algebra": 3,
    "engine.matches": 4,
    "engine.functions": 5,
    "engine.language": 6, "engine.io": 6,
    "engine.compile": 7,
    "engine.gpm_eval": 8,
    "engine.reference": 9, "engine.runtime": 9, "engine.kb": 9,
    "engine.output": 10,
    "engine.composition": 11, "engine.api": 12,
    "engine.server": 13,  # spaseq serve: the HTTP endpoint over the Engine
    "spark": 13,  # spaseq.spark, queries on Spark: the engine inside Spark's operators
    "engine.cli": 14, "engine": 14,  # engine/__init__: the public names
    "extension_functions": 15,
    "plugin": 16,
}
#: modules that must not be on the import path of the named room, even indirectly
FORBIDDEN = {"engine.gpm_eval": {"spaseq.engine.kb.layout"}, "engine.runtime": {"spaseq.engine.kb.layout"}}


def _modules() -> dict[str, Path]:
    out = {}
    nested = [ROOT / f for f in PACKAGES if "/" in f]
    for folder, package in PACKAGES.items():
        # the native extension is known by its stubs (engine/_native/*.pyi)
        for path in [*(ROOT / folder).rglob("*.py"), *(ROOT / folder).rglob("*.pyi")]:
            if any(n != ROOT / folder and n in path.parents for n in nested):
                continue  # another package's folder (engine/spark in engine/)
            parts = path.relative_to(ROOT / folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join((package, *parts))] = path
    return out


MODULES = _modules()


def _imports(name: str, path: Path) -> set[str]:
    """The project modules ``name`` imports (``from a import b`` counts a.b when it is a module)."""
    found: set[str] = set()
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = name.split(".") if is_package else name.split(".")[:-1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base]) if base else ".".join(anchor)
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names]
        else:
            continue
        for t in targets:
            while t and t not in MODULES:
                t = t.rpartition(".")[0]
            if t and t != name:
                found.add(t)
    return found


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def room(module: str) -> str:
    rest = module.removeprefix("spaseq.")
    parts = rest.split(".")
    if parts[0] != "engine":
        return parts[0]
    return ".".join(parts[:2])


def test_every_room_has_a_rank() -> None:
    assert {room(m) for m in MODULES} <= set(RANKS), {room(m) for m in MODULES} - set(RANKS)


def test_no_module_import_cycle() -> None:
    try:
        graphlib.TopologicalSorter(GRAPH).prepare()
    except graphlib.CycleError as err:
        pytest.fail(f"import cycle: {' -> '.join(err.args[1])}")


def test_rooms_import_only_lower_rooms() -> None:
    wrong = [
        f"{m} ({room(m)}, rank {RANKS[room(m)]}) imports {t} ({room(t)}, rank {RANKS[room(t)]})"
        for m, targets in GRAPH.items() for t in targets
        if room(t) != room(m) and RANKS[room(t)] >= RANKS[room(m)]
    ]
    assert not wrong, "\n".join(wrong)


def test_forbidden_modules_stay_off_import_paths() -> None:
    def reach(start: str) -> set[str]:
        seen, todo = set(), [start]
        while todo:
            for t in GRAPH[todo.pop()]:
                if t not in seen:
                    seen.add(t)
                    todo.append(t)
        return seen

    for prefix, banned in FORBIDDEN.items():
        for m in (m for m in MODULES if room(m) == prefix):
            assert not (reach(m) & banned), f"{m} reaches {reach(m) & banned}"


def test_engine_top_stays_small() -> None:
    """engine/'s own modules are the public door and facts every room shares (errors, the
    vocabulary, the version, the user's cache folder); everything else lives in a room."""
    top = [p.name for p in (ROOT / "engine").glob("*.py")]
    assert len(top) <= 9, top


def test_production_code_imports_no_test_module() -> None:
    """Test oracles live beside the tests (the Python writers: tests/output/writers_oracle.py,
    docs/decisions.md 58) and production code never imports them: one production
    implementation of each fact."""
    for name, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            modules = ([a.name for a in node.names] if isinstance(node, ast.Import)
                       else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            assert not [m for m in modules if m == "tests" or m.startswith("tests.")], name


def test_the_checker_sees_a_violation() -> None:
    """The rank check itself can fail: a lower room importing a higher one is reported."""
    assert RANKS[room("spaseq.engine.values.kinds")] < RANKS[room("spaseq.engine.runtime.native")]
    assert "spaseq.engine.algebra.operators" in GRAPH["spaseq.engine.language.translate"]
