"""The automaton as SVG (the console's picture, ``GET /queries/{id}/automaton``): one state
per state of NFA_scep, the final one doubly circled, and one edge per edge ``spaseq explain``
lists, each labelled with its predicate; a well-formed document for every query fixture."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from spaseq.engine.compile.automaton_svg import automaton_svg
from spaseq.engine.compile.nfa import automaton_text
from spaseq.engine.language.query import load_query, parse_query

ROOT = Path(__file__).resolve().parents[2]
NS = {"s": "http://www.w3.org/2000/svg"}


def _query(seq: str, gpms: str) -> str:
    return f"""PREFIX : <http://ex.org/>
SELECT * WITHIN 1 MINUTE FROM STREAM S <http://ex.org/s> FROM STREAM T <http://ex.org/t>
WHERE {{ SEQ({seq}) {gpms} }}"""


def _gpm(name: str, stream: str = "S") -> str:
    return f"DEFINE GPM {name} ON {stream} {{ ?x :{name.lower()} ?{name.lower()} }}"


def _drawn(text: str) -> tuple[list[str], list[tuple[str, str, str, str]], ET.Element]:
    svg = ET.fromstring(automaton_svg(parse_query(text)))
    states = [g.get("data-state") or "" for g in svg.iterfind("s:g[@class='state']", NS)]
    edges = [(g.get("data-source") or "", g.get("data-target") or "", g.get("data-kind") or "",
              g.findtext("s:text", "", NS)) for g in svg.iterfind("s:g[@class='edge']", NS)]
    return states, edges, svg


def test_a_sequence_with_skip_till_next() -> None:
    states, edges, svg = _drawn(_query("A; B", _gpm("A") + _gpm("B", "T")))
    assert states == ["x0", "x1", "x2"]
    assert sorted(edges) == [("x0", "x1", "take", "{S}, ø, A"), ("x1", "x1", "skip", "{S,T}, ;, -"),
                             ("x1", "x2", "take", "{T}, ;, B")]
    final = svg.find("s:g[@data-state='x2']", NS)
    assert final is not None and len(final.findall("s:circle", NS)) == 2  # the final state
    assert len(svg.find("s:g[@data-state='x1']", NS).findall("s:circle", NS)) == 1  # type: ignore[union-attr]


def test_kleene_conjunction_and_negation_edges() -> None:
    text = _query("A, B+, (C & D), E!, F", "".join(_gpm(n) for n in "ABCDEF"))
    states, edges, _ = _drawn(text)
    assert states == [f"x{i}" for i in range(6)]
    kinds = sorted((s, t, k) for s, t, k, _ in edges)
    assert ("x2", "x2", "iterate") in kinds  # B+ loops on the state after it
    assert [e for e in kinds if e[:2] == ("x2", "x3")] == [("x2", "x3", "take")] * 2  # C & D: one edge each
    assert ("x3", "x4", "absent") in kinds  # E!
    # every edge explain prints is drawn, and no other
    printed = automaton_text(parse_query(text)).splitlines()[1:]
    assert len(edges) == len(printed)


@pytest.mark.parametrize("path", sorted(ROOT.glob("fixtures/**/*.rq")), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_fixture_query_is_drawn(path: Path) -> None:
    query = load_query(str(path))
    svg = ET.fromstring(automaton_svg(query))
    printed = automaton_text(query).splitlines()
    assert len(svg.findall("s:g[@class='edge']", NS)) == len(printed) - 1
    assert float(svg.get("width") or 0) > 0 and svg.get("viewBox")
