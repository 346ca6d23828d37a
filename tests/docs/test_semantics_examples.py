"""Every example table of docs/semantics.md and docs/decisions.md (columns events | query |
matches) holds: each row is run with the engine and with the reference evaluator, and both
give exactly the matches the row lists (as a bag; the order of completion is section 9's
business)."""

from __future__ import annotations

import re
from decimal import Decimal
from pathlib import Path

import pytest
from pyoxigraph import NamedNode, Triple

from spaseq.engine import reference
from spaseq.engine.api import evaluate
from spaseq.engine.events import Event
from spaseq.engine.language.query import parse_query

ROOT = Path(__file__).resolve().parents[2]
EX = "http://ex.org/"
HEADER = "| events | query | matches |"


def cells(line: str) -> list[str]:
    """A Markdown table row's cells (``\\|`` is a literal bar)."""
    parts = re.split(r"(?<!\\)\|", line.strip())[1:-1]
    return [p.strip().replace("\\|", "|") for p in parts]


def code(cell: str) -> str:
    (text,) = re.findall(r"`([^`]*)`", cell)
    return text


def listed_matches(cell: str) -> list[str]:
    """The matches a cell lists: its code spans that are tuples, up to the first bare ';' or
    ':' (what follows is commentary, e.g. "not `(a1, c1)`")."""
    found = []
    for token in re.finditer(r"`([^`]*)`|[;:]", cell):
        if token.group(1) is None:
            break
        if token.group(1).startswith("("):
            found.append(token.group(1))
    return found


def rows() -> list[tuple[str, str, list[str]]]:
    """The tables' rows (a decision's table is indented inside its list item)."""
    out: list[tuple[str, str, list[str]]] = []
    for doc in ("semantics.md", "decisions.md"):
        out += _rows((ROOT / "docs" / doc).read_text(encoding="utf-8"))
    return out


def _rows(text: str) -> list[tuple[str, str, list[str]]]:
    out, in_table = [], False
    for line in (raw.strip() for raw in text.splitlines()):
        if line == HEADER:
            in_table = True
        elif in_table and line.startswith("|"):
            if not line.startswith("| ---"):
                events, query, matches = cells(line)
                out.append((code(events), code(query), listed_matches(matches)))
        else:
            in_table = False
    return out


def build(query: str, events: str) -> tuple[object, list[Event], list[str], set[str]]:
    seq = re.match(r"SEQ\((.*)\)(.*)$", query).groups()
    atoms = list(dict.fromkeys(re.findall(r"[A-Z]", seq[0])))
    gpms = " ".join(f"DEFINE GPM {a} ON S {{ ?{a.lower()} :kind :{a.lower()} }}" for a in atoms)
    text = (f"PREFIX : <{EX}>\nSELECT * {seq[1].strip()} FROM STREAM S <{EX}s>\n"
            f"WHERE {{ SEQ({seq[0]}) {gpms} }}")
    stream = []
    for i, ev in enumerate(events.split()):
        name, time = ev.split("@")
        start, _, end = time.partition("-")  # a1@2-5: an event over [2, 5] (section 17)
        triple = Triple(NamedNode(EX + name), NamedNode(EX + "kind"), NamedNode(EX + name[0]))
        stream.append(Event(EX + "s", Decimal(end or start), (triple,), i, NamedNode(EX + name),
                            start=Decimal(start)))
    kleene = [{a} for a in re.findall(r"([A-Z])(?:[+*]|\{)", seq[0])]
    kleene += [set(re.findall(r"[A-Z]", g)) for g in re.findall(r"\(([^()]*)\)(?:[+*]|\{)", seq[0])]
    return parse_query(text), stream, atoms, kleene


def spelled(match, atoms: list[str], kleene: list[set[str]]) -> str:
    """A match in the tables' notation: the events each atom took, in SEQ order; an iterated
    atom's (or group's, decision 66) in one bracket, in the order taken."""
    taken: dict[str, list[str]] = {}
    order: list[tuple[str, str]] = []
    for t in match.taken:
        name = t.event.name.value.removeprefix(EX)
        taken.setdefault(t.atom, []).append(name)
        order.append((t.atom, name))
    parts: list[str] = []
    for a in atoms:
        group = next((g for g in kleene if a in g), None)
        if group is not None:
            if min(group, key=atoms.index) == a and any(x in taken for x in group):
                parts.append(f"[{', '.join(n for x, n in order if x in group)}]")
        elif a in taken:
            parts.append(taken[a][0])
    return f"({', '.join(parts)})"


ROWS = rows()


def test_the_tables_are_found() -> None:
    assert len(ROWS) >= 24


@pytest.mark.parametrize(("events", "query", "expected"), ROWS, ids=[f"{q} | {e}" for e, q, _ in ROWS])
def test_example_row(events: str, query: str, expected: list[str]) -> None:
    parsed, stream, atoms, kleene = build(query, events)
    lasting = any(e.start != e.time for e in stream)  # the native core takes points only so far
    for evaluator in (reference.evaluate,) if lasting else (evaluate, reference.evaluate):
        got = sorted(spelled(m, atoms, kleene) for m in evaluator(parsed, stream))
        assert got == sorted(expected), evaluator.__module__
