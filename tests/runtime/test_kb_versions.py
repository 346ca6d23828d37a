"""A GRAPH join reads the KB version current when its event arrived (decision 22), also when
lazy conjunction defers the event's evaluation to the end of its instant (issue 24 C): two
versions of a versioned store, written without Spark."""

from __future__ import annotations

from pathlib import Path

import pyoxigraph
import pytest

from spaseq.engine.api import Engine
from spaseq.engine.compile.plan import EngineOptions
from spaseq.engine.kb.layout import StoreLayout
from spaseq.engine.kb.reader import KbStore
from tests.util import EX, query_text

KB = EX + "kb"
QUERY = query_text(
    "A ; (B & C)",
    f"DEFINE GPM A ON U1 {{ ?s :a ?x }} "
    f"DEFINE GPM B ON U1 {{ ?s :b ?y . GRAPH <{KB}> {{ ?s :owner ?o }} }} "
    f"DEFINE GPM C ON U1 {{ ?t :c ?z }}", select="?o", within="10 SECONDS", streams=("u1",))


def new_version(root: Path, owner: str) -> None:
    """A version of the store at ``root`` holding ``:a :owner owner`` in graph <kb>."""
    layout = StoreLayout.at(root)
    layout.initialise()
    with layout.new_version("load") as pending:
        store = pyoxigraph.Store(str(layout.oxigraph_dir(pending.number)))
        store.add(pyoxigraph.Quad(pyoxigraph.NamedNode(EX + "a"), pyoxigraph.NamedNode(EX + "owner"),
                                  pyoxigraph.Literal(owner), pyoxigraph.NamedNode(KB)))
        store.flush()
        del store
        pending.meta = {"quads": 1}


def push(engine: Engine, t: int, turtle: str) -> None:
    engine.push(EX + "u1", t, turtle, format="turtle")


@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize("heartbeat", [False, True])
def test_a_deferred_operand_joins_the_version_its_event_arrived_under(tmp_path: Path, lazy: bool,
                                                                       heartbeat: bool) -> None:
    new_version(tmp_path / "kb", "alice")
    engine = Engine(kb=KbStore(tmp_path / "kb", check_interval_s=0),
                    options=EngineOptions(lazy_conjunction=lazy))
    handle = engine.register(QUERY)
    push(engine, 1, f"<{EX}a> <{EX}a> 1 .")
    push(engine, 2, f"<{EX}a> <{EX}b> 1 .")
    push(engine, 2, f"<{EX}x> <{EX}c> 1 .")
    new_version(tmp_path / "kb", "bob")
    if heartbeat:
        engine.advance_to(3)
    else:
        push(engine, 3, f"<{EX}x> <{EX}a> 2 .")
    engine.close()
    assert [r.bindings["o"].value for r in handle.rows()] == ["alice"]
    assert engine.graphs.kb_version == 2  # and the engine did switch


def test_a_native_run_with_lazy_conjunction_keeps_its_starting_version(tmp_path: Path) -> None:
    new_version(tmp_path / "kb", "alice")
    lazy = Engine(kb=KbStore(tmp_path / "kb", check_interval_s=0), options=EngineOptions(lazy_conjunction=True))
    lazy.register(QUERY)
    eager = Engine(kb=KbStore(tmp_path / "kb", check_interval_s=0))
    eager.register(QUERY)
    new_version(tmp_path / "kb", "bob")
    lazy._poll_kb_between_batches()
    eager._poll_kb_between_batches()
    assert (lazy.graphs.kb_version, eager.graphs.kb_version) == (1, 2)
