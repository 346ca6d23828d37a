"""Every spaseq SPARQL function on both stores: the same table of calls is evaluated by a real
pyoxigraph Store (``custom_functions=pyoxigraph_functions(store, run=...)``) and a real rdflib
Dataset (``register_rdflib()``), over the same recorded stream, and must give the same,
hand-computed results; bad arguments are SPARQL errors (caught by COALESCE) in both."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pyoxigraph as ox
import pytest
from rdflib import Dataset

from spaseq.engine.functions.run_functions import RunContext
from spaseq.extension_functions import active_run, pyoxigraph_functions, register_rdflib
from spaseq.extension_functions.rdflib_functions import from_rdflib

EX = "http://ex.org/"
XSD = "http://www.w3.org/2001/XMLSchema#"
DEC, INT, BOOL = XSD + "decimal", XSD + "integer", XSD + "boolean"
PREFIXES = f"""PREFIX : <{EX}>
PREFIX xsd: <{XSD}>
PREFIX spaseq: <https://w3id.org/spaseq#>
"""

RECORDING = f"""@prefix : <{EX}> . @prefix xsd: <{XSD}> . @prefix prov: <http://www.w3.org/ns/prov#> .
:g1 prov:generatedAtTime "2024-01-01T10:00:00Z"^^xsd:dateTime .
:g2 prov:generatedAtTime "2024-01-01T10:20:00Z"^^xsd:dateTime .
:g3 prov:generatedAtTime 1704105000.5 .
:g4 prov:generatedAtTime "yesterday" .
:g1 {{ :x :v 1 }}
:g2 {{ :x :v 2 }}
:g3 {{ :x :v 3 }}
:g4 {{ :x :v 4 }}
"""

RUN = RunContext(
    event_time=100.0,
    stream=EX + "s1",
    start=40.0,
    iterations=(
        (("amt", ox.Literal("5", datatype=ox.NamedNode(INT))),),
        (("amt", ox.Literal("7.5", datatype=ox.NamedNode(DEC))), ("w", ox.NamedNode(EX + "w2"))),
        (("amt", ox.Literal("6", datatype=ox.NamedNode(INT))), ("w", ox.Literal("w3"))),
        (("note", ox.Literal("late")),),
    ),
)

ERROR = "error"
PT = "xsd:dayTimeDuration"

# (expression, run context or None, expected (lexical form, datatype) or an IRI or ERROR)
CASES = [
    # an event graph's timestamp
    ("spaseq:timestamp(:g1)", None, ("1704103200", DEC)),
    ("spaseq:timestamp(:g3)", None, ("1704105000.5", DEC)),
    ('spaseq:timestamp("2024-01-01T10:00:00+01:00"^^xsd:dateTime)', None, ("1704099600", DEC)),
    ("spaseq:timestamp(42)", None, ("42", DEC)),
    ("spaseq:timestamp(:nowhere)", None, ERROR),
    ("spaseq:timestamp(:g4)", None, ERROR),
    ('spaseq:timestamp("soon")', None, ERROR),
    ("spaseq:timestamp()", None, ERROR),
    ("spaseq:timestamp(:g1, :g2)", None, ERROR),
    ("spaseq:timestamp(?unbound)", None, ERROR),
    # strictly ordered in time
    ("spaseq:ordered(:g1, :g2)", None, ("true", BOOL)),
    ("spaseq:ordered(:g2, :g1)", None, ("false", BOOL)),
    ("spaseq:ordered(:g1, :g1)", None, ("false", BOOL)),
    ("spaseq:ordered(:g1, :g2, :g3)", None, ("true", BOOL)),
    ("spaseq:ordered(:g1, :g3, :g2)", None, ("false", BOOL)),
    ('spaseq:ordered(:g1, "2024-01-01T10:00:01Z"^^xsd:dateTime)', None, ("true", BOOL)),
    ("spaseq:ordered(:g1)", None, ERROR),
    ("spaseq:ordered(:g1, :nowhere)", None, ERROR),
    ("spaseq:ordered(:g1, <urn:x>, :g2)", None, ERROR),
    # within a duration
    (f'spaseq:within(:g1, :g2, "PT20M"^^{PT})', None, ("true", BOOL)),
    (f'spaseq:within(:g2, :g1, "PT20M"^^{PT})', None, ("true", BOOL)),
    (f'spaseq:within(:g1, :g2, "PT19M59.9S"^^{PT})', None, ("false", BOOL)),
    (f'spaseq:within(:g1, :g3, "PT30M"^^{PT})', None, ("false", BOOL)),
    (f'spaseq:within(:g1, :g3, "PT30M0.5S"^^{PT})', None, ("true", BOOL)),
    (f'spaseq:within(:g1, :g2, :g3, "P1D"^^{PT})', None, ("true", BOOL)),
    (f'spaseq:within(:g1, :g2, "-PT1H"^^{PT})', None, ("false", BOOL)),
    ('spaseq:within(:g1, :g2, "PT1H"^^xsd:duration)', None, ("true", BOOL)),
    ("spaseq:within(:g1, :g2, 3600)", None, ERROR),
    ('spaseq:within(:g1, :g2, "P1M"^^xsd:yearMonthDuration)', None, ERROR),
    (f'spaseq:within(:g1, :g2, "PT"^^{PT})', None, ERROR),
    (f'spaseq:within(:g1, :g2, "1 hour"^^{PT})', None, ERROR),
    (f'spaseq:within(:g1, "PT1H"^^{PT})', None, ERROR),
    (f'spaseq:within(:g1, :nowhere, "PT1H"^^{PT})', None, ERROR),
    # the run functions
    ("spaseq:eventTime()", RUN, ("100", DEC)),
    ("spaseq:eventStream()", RUN, EX + "s1"),
    ("spaseq:runStart()", RUN, ("40", DEC)),
    ("spaseq:eventTime() - spaseq:runStart()", RUN, ("60", DEC)),
    ('spaseq:within(spaseq:runStart(), spaseq:eventTime(), "PT1M"^^xsd:dayTimeDuration)', RUN, ("true", BOOL)),
    ("spaseq:eventTime(1)", RUN, ERROR),
    ("spaseq:eventTime()", None, ERROR),
    ("spaseq:runStart()", None, ERROR),
    ('spaseq:count("amt")', RUN, ("3", INT)),
    ('spaseq:count("?amt")', RUN, ("3", INT)),
    ('spaseq:count("w")', RUN, ("2", INT)),
    ('spaseq:count("nothing")', RUN, ("0", INT)),
    ('spaseq:sum("amt")', RUN, ("18.5", DEC)),
    ('spaseq:sum("nothing")', RUN, ("0", INT)),
    ('spaseq:sum("note")', RUN, ERROR),
    ('spaseq:avg("amt")', RUN, ("6.166666666666666666", DEC)),
    ('spaseq:avg("nothing")', RUN, ERROR),
    ('spaseq:min("amt")', RUN, ("5", INT)),
    ('spaseq:max("amt")', RUN, ("7.5", DEC)),
    ('spaseq:last("amt")', RUN, ("6", INT)),
    ('spaseq:first("amt")', RUN, ("5", INT)),
    ('spaseq:first("w")', RUN, EX + "w2"),
    ('spaseq:first("nothing")', RUN, ERROR),
    ('spaseq:min("nothing")', RUN, ERROR),
    ('spaseq:max("w")', RUN, ERROR),  # an IRI and a string have no order
    ('spaseq:last("w")', RUN, ("w3", XSD + "string")),
    ('spaseq:last("nothing")', RUN, ERROR),
    ('spaseq:count("amt")', None, ERROR),
    ("spaseq:count(5)", RUN, ERROR),
    ('spaseq:count("amt"@en)', RUN, ERROR),
    ('spaseq:count("amt", "w")', RUN, ERROR),
    ("spaseq:count()", RUN, ERROR),
]


@pytest.fixture(scope="module")
def store() -> ox.Store:
    s = ox.Store()
    s.load(RECORDING.encode(), format=ox.RdfFormat.TRIG)
    return s


@pytest.fixture(scope="module")
def dataset() -> Dataset:
    register_rdflib()
    ds = Dataset()
    ds.parse(data=RECORDING, format="trig")
    return ds


def _expected(term: ox.NamedNode | ox.Literal | None) -> object:
    if term is None or (isinstance(term, ox.Literal) and term.value == "!error"):
        return ERROR
    if isinstance(term, ox.NamedNode):
        return term.value
    return (term.value, term.datatype.value)


def _query(expr: str) -> str:
    return f'{PREFIXES}SELECT ?r WHERE {{ BIND(COALESCE({expr}, "!error") AS ?r) }}'


def on_pyoxigraph(store: ox.Store, expr: str, run: RunContext | None) -> object:
    rows = list(store.query(_query(expr), custom_functions=pyoxigraph_functions(store, run=run)))
    assert len(rows) == 1
    return _expected(rows[0]["r"])


def on_rdflib(dataset: Dataset, expr: str, run: RunContext | None) -> object:
    if run is None:
        rows = list(dataset.query(_query(expr)))
    else:
        with active_run(run):
            rows = list(dataset.query(_query(expr)))
    assert len(rows) == 1
    return _expected(from_rdflib(rows[0][0]))


@pytest.mark.parametrize("expr,run,expected", CASES, ids=[c[0] for c in CASES])
def test_function_on_both_stores(store, dataset, expr, run, expected) -> None:
    """The same term from both stores: times are spelled as pyoxigraph spells decimals."""
    assert on_pyoxigraph(store, expr, run) == expected
    assert on_rdflib(dataset, expr, run) == expected


C_SPARQL_STYLE = PREFIXES + """
SELECT ?g1 ?g2 ?a ?b WHERE {
  GRAPH ?g1 { :x :v ?a }
  GRAPH ?g2 { :x :v ?b }
  FILTER(spaseq:ordered(?g1, ?g2) && spaseq:within(?g1, ?g2, "PT25M"^^xsd:dayTimeDuration))
}"""


def test_pairs_of_events_close_in_time_on_both_stores(store, dataset) -> None:
    """What a C-SPARQL user writes over a recording: later pairs within 25 minutes (g4's
    timestamp is malformed: an error, hence no pair)."""
    ox_rows = {(r["g1"].value, r["g2"].value, int(r["a"].value), int(r["b"].value))
               for r in store.query(C_SPARQL_STYLE, custom_functions=pyoxigraph_functions(store))}
    rdf_rows = {(str(g1), str(g2), int(a), int(b)) for g1, g2, a, b in dataset.query(C_SPARQL_STYLE)}
    expected = {(EX + "g1", EX + "g2", 1, 2), (EX + "g2", EX + "g3", 2, 3)}
    assert ox_rows == expected
    assert rdf_rows == expected


def test_time_predicate_is_configurable(store) -> None:
    functions = pyoxigraph_functions(store, time_predicate=ox.NamedNode(EX + "at"))
    store2 = ox.Store()
    store2.add(ox.Quad(ox.NamedNode(EX + "g9"), ox.NamedNode(EX + "at"), ox.Literal("7", datatype=ox.NamedNode(INT))))
    rows = list(store2.query(_query("spaseq:timestamp(:g9)"),
                             custom_functions=pyoxigraph_functions(store2, time_predicate=ox.NamedNode(EX + "at"))))
    assert _expected(rows[0]["r"]) == ("7", DEC)
    rows = list(store.query(_query("spaseq:timestamp(:g1)"), custom_functions=functions))
    assert _expected(rows[0]["r"]) == ERROR  # g1 has no :at timestamp


def test_no_python_exception_reaches_a_store(store, dataset) -> None:
    """Terms no implementation expects (a quoted triple, a blank node) are SPARQL errors."""
    for expr in ("spaseq:timestamp(BNODE())", "spaseq:ordered(BNODE(), :g1)",
                 'spaseq:within(BNODE(), :g1, "PT1H"^^xsd:dayTimeDuration)'):
        assert on_pyoxigraph(store, expr, RUN) == ERROR
    assert on_rdflib(dataset, "spaseq:ordered(BNODE(), :g1)", RUN) == ERROR


def test_readme_example_runs_and_prints_what_it_says() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    found = re.search(r"<!-- functions-example[^>]*-->\n```python\n(.*?)```\n\nprints\n\n```\n(.*?)```", readme, re.S)
    assert found is not None
    out = subprocess.run([sys.executable, "-c", found.group(1)], capture_output=True, text=True,
                         check=True, cwd="/")
    assert out.stdout == found.group(2)


def test_public_names_are_attributes_and_importing_them_loads_no_rdflib() -> None:
    """``dir()`` and IDEs see every public name (no module ``__getattr__``); rdflib, slow to
    import, is loaded by ``register_rdflib`` only."""
    import spaseq.extension_functions as ext

    assert "__getattr__" not in vars(ext)
    assert set(ext.__all__) == {"RunContext", "active_run", "pyoxigraph_functions", "register_rdflib",
                                "unregister_rdflib"}
    assert all(name in dir(ext) and callable(getattr(ext, name)) for name in ext.__all__)
    code = ("import sys\nfrom spaseq.extension_functions import *\n"
            "print('rdflib' in sys.modules)\nregister_rdflib()\nprint('rdflib' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd="/")
    assert out.stdout.split() == ["False", "True"]
