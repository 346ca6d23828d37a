"""The layering of the native crates (engine/native/, issue 25): each spaseq-* crate depends only
on spaseq crates below it in ``ORDER``, so the core stays split with one-way dependencies, as
oxigraph's. cargo refuses cycles of normal dependencies, but not an upward dependency that makes
none yet, nor one through ``[dev-dependencies]`` (cargo allows those cycles): this test names
either. Read from the Cargo.toml files, so nothing is built."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

NATIVE = Path(__file__).resolve().parents[2] / "engine" / "native"

#: the crates from the bottom up: a crate may depend on the crates before it only. A new crate
#: gets its place here (and in the workspace's Cargo.toml, whose comment says what each holds).
ORDER = [
    "spaseq-plan",  # the plan read from its JSON: algebra, plan, summary
    "spaseq-io",  # events in: dictionary, hash, time, replay, stream, disposal
    "spaseq-gpm",  # GPM evaluation on one event; vars
    "spaseq-automaton",  # the NFA_scep runtime; snapshot
    "spaseq-output",  # results written natively from the runtime's match records
    "spaseq-engine",  # the engine: every query's runtime fed by every way in; its host
    "spaseq-python",  # the PyO3 binding (spaseq.engine._native)
]

DEPENDENCY_TABLES = ("dependencies", "dev-dependencies", "build-dependencies")


def _load(path: Path) -> dict[str, Any]:
    return tomllib.loads(path.read_text(encoding="utf-8"))


WORKSPACE = _load(NATIVE / "Cargo.toml")
#: crate name -> (its directory, its manifest)
CRATES: dict[str, tuple[str, dict[str, Any]]] = {
    (m := _load(NATIVE / member / "Cargo.toml"))["package"]["name"]: (member, m)
    for member in WORKSPACE["workspace"]["members"]
}


def _spaseq_dependencies(manifest: dict[str, Any]) -> dict[str, str]:
    """Each spaseq crate ``manifest`` depends on -> the table that says so."""
    tables = [(name, manifest.get(name, {})) for name in DEPENDENCY_TABLES]
    for target, spec in manifest.get("target", {}).items():
        tables += [(f"target.{target}.{name}", spec.get(name, {})) for name in DEPENDENCY_TABLES]
    found = {}
    for table_name, table in tables:
        for key, spec in table.items():
            name = spec.get("package", key) if isinstance(spec, dict) else key
            if name.startswith("spaseq-"):
                found[name] = table_name
    return found


def test_every_crate_of_the_workspace_has_its_place_in_the_order() -> None:
    assert set(CRATES) == set(ORDER), (
        f"the workspace's crates {sorted(CRATES)} are not those of ORDER {ORDER}: give a new crate its "
        "place in ORDER (tests/architecture/test_crates.py), below every crate that will use it"
    )
    assert list(CRATES) == ORDER, "engine/native/Cargo.toml lists its members in ORDER, bottom up"


@pytest.mark.parametrize("crate", ORDER)
def test_each_crate_is_named_after_its_directory(crate: str) -> None:
    directory, _ = CRATES[crate]
    assert crate == f"spaseq-{directory}", f"engine/native/{directory}/ holds the crate spaseq-{directory}"


@pytest.mark.parametrize("crate", ORDER)
def test_each_crate_depends_only_on_crates_below_it(crate: str) -> None:
    directory, manifest = CRATES[crate]
    below = ORDER[: ORDER.index(crate)]
    upward = {dep: table for dep, table in _spaseq_dependencies(manifest).items() if dep not in below}
    assert not upward, (
        f"engine/native/{directory}/Cargo.toml: {crate} depends on "
        + ", ".join(f"{dep} ({table})" for dep, table in sorted(upward.items()))
        + f", not below it; it may use only {below or 'no spaseq crate'}. Move what it needs down "
        "into a lower crate (as the fast hasher went from replay to spaseq-io), or the code that "
        "needs it up."
    )


def test_the_workspace_names_each_crate_by_its_directory() -> None:
    """[workspace.dependencies] is where the crates find each other: one entry per library crate,
    its path the crate's directory."""
    entries = {k: v for k, v in WORKSPACE["workspace"]["dependencies"].items() if k.startswith("spaseq-")}
    libraries = [c for c in ORDER if c != "spaseq-python"]
    assert list(entries) == libraries
    for name, spec in entries.items():
        assert spec == {"path": CRATES[name][0]}, name
