"""Tests of knowledge-base loading into a pyoxigraph Store (engine/io/kb.py)."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from pyoxigraph import Literal, NamedNode

from spaseq.engine.errors import KnowledgeBaseError, UsageError
from spaseq.engine.io.kb import KbSpec, load_kb, parse_kb_option

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "io" / "kb"
KB_GRAPH = "http://www.example.com/kb"
SECTORS = "http://www.example.com/sectors"


def fixture(name: str) -> str:
    """Path of a knowledge-base fixture, as a string."""
    return str(FIXTURES / name)


def count(kb, graph: str) -> int:
    """Number of triples in one named graph of the knowledge base's store."""
    return len(list(kb.store.quads_for_pattern(None, None, None, NamedNode(graph))))


# --- parse_kb_option ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "spec"),
    [
        ("kb.ttl", KbSpec("kb.ttl", None)),
        ("http://example.org/g=kb.ttl", KbSpec("kb.ttl", "http://example.org/g")),
        ("urn:x:kb=dir/a=b.nt", KbSpec("dir/a=b.nt", "urn:x:kb")),
        ("<http://example.org/g?a=b>=kb.ttl", KbSpec("kb.ttl", "http://example.org/g?a=b")),
        ("dir/a=b.ttl", KbSpec("dir/a=b.ttl", None)),
        ("C:=x.ttl", KbSpec("C:=x.ttl", None)),
        ("<notclosed=kb.ttl", KbSpec("<notclosed=kb.ttl", None)),
    ],
)
def test_parse_kb_option(text: str, spec: KbSpec) -> None:
    assert parse_kb_option(text) == spec


@pytest.mark.parametrize(("text", "reason"), [("<bad iri>=kb.ttl", "not a valid absolute IRI"), ("http://g=", "no file")])
def test_parse_kb_option_errors(text: str, reason: str) -> None:
    with pytest.raises(UsageError, match=reason):
        parse_kb_option(text)


# --- load_kb ------------------------------------------------------------------------------------


def test_triples_go_to_the_single_query_graph() -> None:
    kb = load_kb([KbSpec(fixture("externalKB.nt"))], [KB_GRAPH])
    assert kb.graphs == [NamedNode(KB_GRAPH)]
    assert count(kb, KB_GRAPH) == 6
    assert kb.missing([KB_GRAPH]) == []
    rows = list(
        kb.store.query(
            "SELECT ?name WHERE { GRAPH <http://www.example.com/kb> "
            "{ <http://example/company#eBay> <http://example/name> ?name } }"
        )
    )
    assert [row["name"] for row in rows] == [
        Literal("ebay", datatype=NamedNode("http://www.w3.org/2001/XMLSchema#string"))
    ]


def test_explicit_graph_and_quads_keep_their_graphs() -> None:
    kb = load_kb(
        [KbSpec(fixture("companies.trig"), KB_GRAPH), KbSpec(fixture("sectors_only.trig"))],
        ["http://a.example/one", "http://a.example/two"],
    )
    assert kb.graphs == [NamedNode(KB_GRAPH), NamedNode(SECTORS)]
    assert count(kb, KB_GRAPH) == 1
    assert count(kb, SECTORS) == 3
    assert len(list(kb.store.quads_for_pattern(None, None, None, None))) == 4
    assert kb.missing([SECTORS, "http://a.example/one", KB_GRAPH, "http://a.example/one"]) == [
        "http://a.example/one"
    ]


def test_quad_file_without_default_triples_needs_no_graph() -> None:
    kb = load_kb([KbSpec(fixture("sectors_only.trig"))], [])
    assert kb.graphs == [NamedNode(SECTORS)]


def test_no_query_graph_is_ambiguous() -> None:
    path = fixture("externalKB.nt")
    with pytest.raises(KnowledgeBaseError) as info:
        load_kb([KbSpec(path)], [])
    assert str(info.value).startswith(f"{path}: the file has triples outside any named graph")
    assert f"--kb IRI={path}" in info.value.message


def test_several_query_graphs_are_ambiguous() -> None:
    path = fixture("companies.trig")
    with pytest.raises(KnowledgeBaseError) as info:
        load_kb([KbSpec(path)], [KB_GRAPH, SECTORS])
    message = info.value.message
    assert f"<{KB_GRAPH}>, <{SECTORS}>" in message
    assert f"--kb {KB_GRAPH}={path}" in message
    assert info.value.location is not None and info.value.location.file == path


def test_duplicate_query_graph_names_are_one_graph() -> None:
    kb = load_kb([KbSpec(fixture("externalKB.nt"))], [KB_GRAPH, KB_GRAPH])
    assert count(kb, KB_GRAPH) == 6


def test_syntax_error_has_line_and_column() -> None:
    path = fixture("bad.ttl")
    with pytest.raises(KnowledgeBaseError) as info:
        load_kb([KbSpec(fixture("externalKB.nt")), KbSpec(path)], [KB_GRAPH])
    assert str(info.value) == f"{path}:4:1: Turtle syntax error: A dot is expected at the end of statements"


def test_missing_file(tmp_path: Path) -> None:
    path = str(tmp_path / "absent.ttl")
    with pytest.raises(KnowledgeBaseError) as info:
        load_kb([KbSpec(path)], [KB_GRAPH])
    assert str(info.value) == f"{path}: no such file"


def test_unknown_format(tmp_path: Path) -> None:
    target = tmp_path / "kb.data"
    target.write_text("<http://a> <http://b> <http://c> .\n")
    with pytest.raises(KnowledgeBaseError, match="cannot tell the RDF format"):
        load_kb([KbSpec(str(target))], [KB_GRAPH])


def test_gzip_file(tmp_path: Path) -> None:
    target = tmp_path / "kb.nt.gz"
    target.write_bytes(gzip.compress((FIXTURES / "externalKB.nt").read_bytes()))
    kb = load_kb([KbSpec(str(target), KB_GRAPH)], [])
    assert count(kb, KB_GRAPH) == 6


def test_no_files_gives_an_empty_store() -> None:
    kb = load_kb([], [KB_GRAPH])
    assert kb.graphs == []
    assert len(kb.store) == 0
    assert kb.missing([KB_GRAPH]) == [KB_GRAPH]


def test_a_directory_is_named_whatever_its_name(tmp_path: Path) -> None:
    target = tmp_path / "kb"  # no extension: said to be a directory, not of unknown format
    target.mkdir()
    with pytest.raises(KnowledgeBaseError) as info:
        load_kb([KbSpec(str(target))], [KB_GRAPH])
    assert str(info.value) == f"{target}: is a directory, not an RDF file"
