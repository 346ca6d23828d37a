"""Tests of the SPAseq front end: text -> syntax tree -> algebra -> static checks
(engine/language/: spaseq.lark, parser.py, translate.py, checks.py, query.py;
engine/algebra/operators.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyoxigraph import Literal, NamedNode

from spaseq.engine.algebra import operators as A
from spaseq.engine.errors import QueryError
from spaseq.engine.language.query import load_query, parse_query

EX = "http://ex.org/"
XSD = "http://www.w3.org/2001/XMLSchema#"
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
RDF_TYPE = NamedNode(RDF + "type")
RDF_FIRST, RDF_REST, RDF_NIL = NamedNode(RDF + "first"), NamedNode(RDF + "rest"), NamedNode(RDF + "nil")

ROOT = Path(__file__).resolve().parents[2]
SHARED = Path(__file__).resolve().parents[3] / "shared" / "data" / "spaseq-reference-tests"


def ex(local: str) -> NamedNode:
    return NamedNode(EX + local)


def xsd(value: str, datatype: str) -> Literal:
    return Literal(value, datatype=NamedNode(XSD + datatype))


def integer(n: int) -> Literal:
    return xsd(str(n), "integer")


def v(name: str) -> A.Var:
    return A.Var(name)


def tp(s, p, o) -> A.TriplePattern:
    return A.TriplePattern(s, p, o)


def link(local: str) -> A.Path:
    return A.Path("link", (ex(local),))


# A query with one GPM ``A`` on stream ``S`` (its name at 6:21, the body's '{' at 6:28); the
# body text starts on line 7, column 1.
#   1 PREFIX : <http://ex.org/>
#   2 PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>
#   3 SELECT *
#   4 FROM STREAM S <http://ex.org/s>
#   5 WHERE {
#   6   SEQ(A) DEFINE GPM A ON S {
#   7 <body>
#     } }
def one_gpm(body: str) -> str:
    return (
        "PREFIX : <http://ex.org/>\nPREFIX xsd: <http://www.w3.org/2001/XMLSchema#>\nSELECT *\n"
        "FROM STREAM S <http://ex.org/s>\nWHERE {\n  SEQ(A) DEFINE GPM A ON S {\n" + body + "\n} }"
    )


def body(text: str) -> A.GroupPattern:
    """The algebra of a GPM body."""
    return parse_query(one_gpm(text), "q.rq").events["A"].pattern


def elements(text: str) -> tuple:
    return body(text).elements


def triples(text: str) -> tuple[A.TriplePattern, ...]:
    els = elements(text)
    assert len(els) == 1 and isinstance(els[0], A.BGP), els
    return els[0].triples


def only_filter(text: str) -> A.Filter:
    els = elements("?s :p ?o . ?s :q ?a . ?s :r ?b . ?s :t ?c FILTER " + text)
    assert isinstance(els[-1], A.Filter)
    return els[-1]


def error(text: str) -> QueryError:
    with pytest.raises(QueryError) as info:
        parse_query(text, "q.rq")
    return info.value


def assert_error(text: str, line: int, column: int, fragment: str) -> QueryError:
    err = error(text)
    assert err.location is not None
    assert (err.location.file, err.location.line, err.location.column) == ("q.rq", line, column), str(err)
    assert fragment in err.message, str(err)
    assert str(err).startswith(f"q.rq:{line}:{column}: ")
    return err


# A query with GPMs A and B on stream S, SEQ on line 5 (``  SEQ(`` puts the first atom at
# column 7), the DEFINEs on lines 6 and 7 (GPM names at column 14, the bodies' '{' at column 21,
# their first token at column 23).
def two_gpms(seq: str = "A, B", *, head: str = "SELECT ?s", a: str = "?s :p ?o", b: str = "?s :q ?x",
             extra: str = "") -> str:
    return (
        f"PREFIX : <http://ex.org/>\n{head}\nFROM STREAM S <http://ex.org/s>\nWHERE {{\n"
        f"  SEQ({seq})\n  DEFINE GPM A ON S {{ {a} }}\n  DEFINE GPM B ON S {{ {b} }}\n{extra}}}"
    )


# ---------------------------------------------------------------- prologue


def test_prefix_and_base_resolve_relative_iris():
    q = parse_query(
        "BASE <http://base.org/dir/doc>\n"
        "PREFIX : <http://ex.org/>\n"
        "PREFIX rel: <sub/>\n"
        "PREFIX up: <../up/>\n"
        "SELECT *\n"
        "FROM STREAM S1 <s1>\n"
        "FROM STREAM S2 <#frag>\n"
        "WHERE { SEQ(A, B)\n"
        "  DEFINE GPM A ON S1 { <x> rel:p up:o . ?s :q </abs> }\n"
        "  DEFINE GPM B ON S2 { ?s <?query> ?o }\n"
        "}",
        "q.rq",
    )
    assert q.base == "http://base.org/dir/doc"
    assert q.prefixes == {"": EX, "rel": "http://base.org/dir/sub/", "up": "http://base.org/up/"}
    assert q.streams == {"S1": "http://base.org/dir/s1", "S2": "http://base.org/dir/doc#frag"}
    assert q.events["A"].stream == "http://base.org/dir/s1"
    assert q.events["A"].pattern.elements == (
        A.BGP((
            tp(NamedNode("http://base.org/dir/x"), NamedNode("http://base.org/dir/sub/p"),
               NamedNode("http://base.org/up/o")),
            tp(v("s"), ex("q"), NamedNode("http://base.org/abs")),
        )),
    )
    assert q.events["B"].pattern.elements[0].triples[0].predicate == NamedNode(
        "http://base.org/dir/doc?query"
    )


def test_relative_prefix_ending_in_hash_keeps_the_hash():
    q = parse_query(
        "BASE <http://base.org/dir/>\nPREFIX ex: <ns#>\nSELECT * FROM STREAM S <http://ex.org/s>\n"
        "WHERE { SEQ(A) DEFINE GPM A ON S { ?s ex:p ?o } }",
        "q.rq",
    )
    assert q.prefixes["ex"] == "http://base.org/dir/ns#"
    assert q.events["A"].pattern.elements[0].triples[0].predicate == NamedNode(
        "http://base.org/dir/ns#p"
    )


def test_no_base_and_several_prefixes():
    q = parse_query(
        "PREFIX : <http://ex.org/>\nPREFIX x: <http://a.org/#>\nPREFIX b-c.d: <urn:x:>\n"
        "SELECT * FROM STREAM S x:stream\nWHERE { SEQ(A) DEFINE GPM A ON S { ?s x:p b-c.d:o ; :q ?o } }",
        "q.rq",
    )
    assert q.base is None
    assert q.prefixes == {"": EX, "x": "http://a.org/#", "b-c.d": "urn:x:"}
    assert q.streams == {"S": "http://a.org/#stream"}
    assert triples_of(q, "A") == (
        tp(v("s"), NamedNode("http://a.org/#p"), NamedNode("urn:x:o")),
        tp(v("s"), ex("q"), v("o")),
    )


def triples_of(q: A.Query, gpm: str) -> tuple[A.TriplePattern, ...]:
    (bgp,) = q.events[gpm].pattern.elements
    return bgp.triples


@pytest.mark.parametrize(
    ("text", "triple"),
    [
        ("?s a:p ?o", tp(v("s"), NamedNode("http://a.org/p"), v("o"))),
        ("?s acme:price ?o", tp(v("s"), NamedNode("http://acme.org/price"), v("o"))),
        ("?s :p acme:x", tp(v("s"), ex("p"), NamedNode("http://acme.org/x"))),
        ("?s :p trueish:x", tp(v("s"), ex("p"), NamedNode("http://t.org/x"))),
    ],
)
def test_prefixed_names_starting_like_keywords(text, triple):
    q = parse_query(
        "PREFIX : <http://ex.org/>\nPREFIX a: <http://a.org/>\nPREFIX acme: <http://acme.org/>\n"
        "PREFIX trueish: <http://t.org/>\nSELECT * FROM STREAM S <http://ex.org/s>\n"
        f"WHERE {{ SEQ(A) DEFINE GPM A ON S {{ {text} }} }}"
    )
    assert triples_of(q, "A") == (triple,)


def test_prefixed_names_starting_like_keywords_where_no_keyword_fits():
    q = parse_query(
        "PREFIX : <http://ex.org/>\nPREFIX acme: <http://acme.org/>\nSELECT * FROM STREAM S acme:s\n"
        "WHERE { SEQ(A) DEFINE GPM A ON S { acme:x :p ?o FILTER(?o = acme:y) } }"
    )
    assert q.streams == {"S": "http://acme.org/s"}
    bgp, flt = q.events["A"].pattern.elements
    assert bgp.triples == (tp(NamedNode("http://acme.org/x"), ex("p"), v("o")),)
    assert flt.expr == call("=", o_, A.ETerm(NamedNode("http://acme.org/y")))


def test_later_prefix_declaration_overrides_earlier():
    q = parse_query(
        "PREFIX : <http://old.org/>\nPREFIX : <http://ex.org/>\nSELECT * FROM STREAM S :s\n"
        "WHERE { SEQ(A) DEFINE GPM A ON S { ?s :p ?o } }"
    )
    assert q.streams == {"S": EX + "s"}


# ---------------------------------------------------------------- SELECT


@pytest.mark.parametrize(
    ("select", "variables", "distinct"),
    [
        ("SELECT *", None, False),
        ("SELECT ?s", ("s",), False),
        ("SELECT ?s $o ?x", ("s", "o", "x"), False),
        ("SELECT ?o ?s ?o", ("o", "s"), False),
        ("SELECT DISTINCT ?s", ("s",), True),
        ("select distinct *", None, True),
        ("SELECT REDUCED ?s", ("s",), False),
    ],
)
def test_select_clause(select, variables, distinct):
    q = parse_query(two_gpms(head=select))
    assert q.match == A.MatchSpec(variables, distinct)


# ---------------------------------------------------------------- WITHIN


@pytest.mark.parametrize(
    ("within", "window"),
    [
        ("", A.Window(None, 0.0, False)),
        ("WITHIN 1 SECOND", A.Window("time", 1.0, False)),
        ("WITHIN 10 SECONDS", A.Window("time", 10.0, False)),
        ("WITHIN 1.5 seconds", A.Window("time", 1.5, False)),
        ("WITHIN .5 SECONDS", A.Window("time", 0.5, False)),
        ("WITHIN 1 MINUTE", A.Window("time", 60.0, False)),
        ("within 3 Minutes", A.Window("time", 180.0, False)),
        ("WITHIN 1 HOUR", A.Window("time", 3600.0, False)),
        ("WITHIN 2 HOURS", A.Window("time", 7200.0, False)),
        ("WITHIN 2 DAYS", A.Window("time", 172800.0, False)),
        ("WITHIN 250 MILLISECONDS", A.Window("time", 0.25, False)),
        ("WITHIN 5 EVENTS", A.Window("events", 5.0, False)),
        ("WITHIN 1 EVENT", A.Window("events", 1.0, False)),
        ("WITHIN 30 MINUTES TUMBLING", A.Window("time", 1800.0, True)),
        ("WITHIN 10 SECONDS tumbling", A.Window("time", 10.0, True)),
        ("WITHIN 4 EVENTS TUMBLING", A.Window("events", 4.0, True)),
        ("WITHIN 1.5e3 SECONDS", A.Window("time", 1500.0, False)),  # any number, exactly
        ("WITHIN +2 MINUTES", A.Window("time", 120.0, False)),
        ("WITHIN 1e3 EVENTS", A.Window("events", 1000.0, False)),
    ],
)
def test_within_clause(within, window):
    q = parse_query(two_gpms(head=f"SELECT *\n{within}" if within else "SELECT *"))
    assert q.window == window


def test_window_describe():
    assert A.Window().describe() == "unbounded"
    assert A.Window("time", 90.0).describe() == "90s"
    assert A.Window("events", 3.0, True).describe() == "3 events tumbling"


# ---------------------------------------------------------------- PARTITION BY, FROM STREAM


@pytest.mark.parametrize(
    "clause", ["PARTITION BY (?s ?o)", "PARTITION BY ?s ?o", "partition by ( ?s\n ?o )"]
)
def test_partition_by_with_and_without_parentheses(clause):
    q = parse_query(two_gpms(head=f"SELECT *\nWITHIN 5 SECONDS\n{clause}", b="?s :q ?o"))
    assert q.partition_by == ("s", "o")


def test_clauses_in_any_order():
    q = parse_query(
        "PREFIX : <http://ex.org/>\nSELECT ?s\nFROM STREAM S <http://ex.org/s>\nPARTITION BY ?s\n"
        "WITHIN 2 MINUTES\nFROM STREAM T <http://ex.org/t>\n"
        "WHERE { SEQ(A, B) DEFINE GPM A ON S { ?s :p ?o } DEFINE GPM B ON T { ?s :q ?o } }"
    )
    assert q.partition_by == ("s",)
    assert q.window == A.Window("time", 120.0)
    assert q.streams == {"S": EX + "s", "T": EX + "t"}


def test_several_from_stream_clauses():
    q = parse_query(
        "PREFIX : <http://ex.org/>\nSELECT *\n"
        "FROM STREAM S1 <http://ex.org/one>\nFROM STREAM S2 :two\nFROM STREAM S3 <http://ex.org/one>\n"
        "WHERE { SEQ(A, B, C)\n"
        "  DEFINE GPM A ON S1 { ?s :p ?o }\n  DEFINE GPM B ON S2 { ?s :p ?o }\n"
        "  DEFINE GPM C ON S3 { ?s :p ?o }\n}"
    )
    assert q.streams == {"S1": EX + "one", "S2": EX + "two", "S3": EX + "one"}
    assert q.stream_iris == [EX + "one", EX + "two"]
    assert [(e.name, e.stream_name, e.stream) for e in q.events.values()] == [
        ("A", "S1", EX + "one"),
        ("B", "S2", EX + "two"),
        ("C", "S3", EX + "one"),
    ]


# ---------------------------------------------------------------- WHERE forms, keywords, comments


def test_both_where_forms_give_the_same_algebra():
    braced = parse_query(
        "PREFIX : <http://ex.org/>\nSELECT ?s FROM STREAM S <http://ex.org/s>\n"
        "WHERE { SEQ(A; B+, C) DEFINE GPM A ON S { ?s :a ?x } DEFINE GPM B ON S { ?s :b ?y }\n"
        "DEFINE GPM C ON S { ?s :c ?z } }"
    )
    seq_first = parse_query(
        "PREFIX : <http://ex.org/>\nSELECT ?s FROM STREAM S <http://ex.org/s>\n"
        "WHERE SEQ(A; B+, C) { DEFINE GPM A ON S { ?s :a ?x } DEFINE GPM B ON S { ?s :b ?y }\n"
        "DEFINE GPM C ON S { ?s :c ?z } }"
    )
    assert braced.seq == seq_first.seq
    assert braced.events == seq_first.events
    assert braced.match == seq_first.match
    assert [a.modifier for a in braced.seq.atoms] == ["", "+", ""]


def test_keywords_are_case_insensitive():
    upper = parse_query(
        "PREFIX : <http://ex.org/>\nSELECT DISTINCT ?s WITHIN 5 SECONDS PARTITION BY ?s\n"
        "FROM STREAM S <http://ex.org/s>\nWHERE { SEQ(A, B)\n"
        "DEFINE GPM A ON S { ?s :p ?o FILTER(?o > 1) OPTIONAL { ?s :q ?q } BIND(STR(?o) AS ?t) }\n"
        "DEFINE GPM B ON S { { ?s :r ?r } UNION { ?s :t ?r } MINUS { ?s :u 1 } VALUES ?r { 1 UNDEF }\n"
        "  GRAPH <http://kb/> { ?s :k ?k } FILTER NOT EXISTS { ?s :n 1 } FILTER(REGEX(?r, \"x\")) } }"
    )
    lower = parse_query(
        "prefix : <http://ex.org/>\nselect distinct ?s within 5 seconds partition by ?s\n"
        "from stream S <http://ex.org/s>\nwhere { seq(A, B)\n"
        "define gpm A on S { ?s :p ?o filter(?o > 1) optional { ?s :q ?q } bind(str(?o) as ?t) }\n"
        "define gpm B on S { { ?s :r ?r } union { ?s :t ?r } minus { ?s :u 1 } values ?r { 1 undef }\n"
        "  graph <http://kb/> { ?s :k ?k } filter not exists { ?s :n 1 } filter(regex(?r, \"x\")) } }"
    )
    mixed = parse_query(
        "Prefix : <http://ex.org/>\nSelect Distinct ?s Within 5 Seconds Partition By ?s\n"
        "From Stream S <http://ex.org/s>\nWhere { Seq(A, B)\n"
        "Define Gpm A On S { ?s :p ?o Filter(?o > 1) Optional { ?s :q ?q } Bind(Str(?o) As ?t) }\n"
        "Define Gpm B On S { { ?s :r ?r } Union { ?s :t ?r } Minus { ?s :u 1 } Values ?r { 1 Undef }\n"
        "  Graph <http://kb/> { ?s :k ?k } Filter Not Exists { ?s :n 1 } Filter(Regex(?r, \"x\")) } }"
    )

    def shape(q: A.Query):
        # the body texts differ in case; compare everything else
        return (
            q.match, q.window, q.partition_by, q.streams, q.seq,
            [[type(el).__name__ for el in ev.pattern.walk()] for ev in q.events.values()],
            [[el.expr for el in ev.pattern.walk() if isinstance(el, A.Filter | A.Bind)]
             for ev in q.events.values()],
        )

    assert shape(upper) == shape(lower) == shape(mixed)
    assert upper.match.distinct and upper.window == A.Window("time", 5.0)


def test_comments_are_ignored_but_not_inside_iris_and_strings():
    q = parse_query(
        "# a comment before everything\n"
        "PREFIX : <http://ex.org/ns#>   # trailing comment; the IRI keeps its '#'\n"
        "SELECT ?s # ?ignored\n"
        "FROM STREAM S <http://ex.org/stream#1>\n"
        "WHERE { # comment after a brace\n"
        "  SEQ(A, # comment inside SEQ\n"
        "      B)\n"
        "  DEFINE GPM A ON S { ?s :p \"a # b\" # not part of the string\n"
        "  }\n"
        "  DEFINE GPM B ON S { ?s <http://ex.org/x#y> ?o } # end\n"
        "} # after the query\n",
        "q.rq",
    )
    assert q.match.variables == ("s",)
    assert q.prefixes == {"": "http://ex.org/ns#"}
    assert q.streams == {"S": "http://ex.org/stream#1"}
    assert [a.operand.name for a in q.seq.atoms] == ["A", "B"]
    assert triples_of(q, "A") == (tp(v("s"), NamedNode("http://ex.org/ns#p"), Literal("a # b")),)
    assert triples_of(q, "B") == (tp(v("s"), NamedNode("http://ex.org/x#y"), v("o")),)
    assert q.warnings == ()


# ---------------------------------------------------------------- SEQ


def seq_query(seq: str, names: str = "ABCDEFG") -> str:
    defines = "\n".join(f"  DEFINE GPM {n} ON S {{ ?s :p{n} ?o{n} }}" for n in names)
    return (
        f"PREFIX : <http://ex.org/>\nSELECT ?s\nFROM STREAM S <http://ex.org/s>\nWHERE {{\n"
        f"  SEQ({seq})\n{defines}\n}}"
    )


def atoms(seq: str, names: str = "ABCDEFG") -> list[tuple]:
    q = parse_query(seq_query(seq, names))
    return [(a.operand, a.modifier, a.strategy) for a in q.seq.atoms]


def g(name: str) -> A.GpmRef:
    return A.GpmRef(name)


@pytest.mark.parametrize(
    ("seq", "strategies"),
    [
        ("A, B; C: D", [None, ",", ";", ":"]),
        ("A,B;C:D", [None, ",", ";", ":"]),
        ("A : B : C : D", [None, ":", ":", ":"]),
        ("A ;\n B ,\n C ; D", [None, ";", ",", ";"]),
    ],
)
def test_sequence_operators(seq, strategies):
    got = atoms(seq, "ABCD")
    assert [op for op, _, _ in got] == [g("A"), g("B"), g("C"), g("D")]
    assert [s for _, _, s in got] == strategies


def test_single_atom_sequence():
    assert atoms("A", "A") == [(g("A"), "", None)]


def test_modifiers():
    got = atoms("A, B+; C?: D, E!", "ABCDE")
    assert [(op.name, mod) for op, mod, _ in got] == [
        ("A", ""), ("B", "+"), ("C", "?"), ("D", ""), ("E", "!")
    ]
    assert (A.PLAIN, A.KLEENE, A.OPTIONAL, A.NEGATION) == ("", "+", "?", "!")


def test_nested_conjunction_and_disjunction():
    got = atoms("A, (B & (C | D)); ((E | F) & G)")
    assert got == [
        (g("A"), "", None),
        (A.Conjunction((g("B"), A.Disjunction((g("C"), g("D"))))), "", ","),
        (A.Conjunction((A.Disjunction((g("E"), g("F"))), g("G"))), "", ";"),
    ]
    assert list(A.operand_gpms(got[2][0])) == ["E", "F", "G"]


def test_binary_operator_with_three_operands_and_first_position():
    got = atoms("(A | B | C) : (D & E & F)", "ABCDEF")
    assert got == [
        (A.Disjunction((g("A"), g("B"), g("C"))), "", None),
        (A.Conjunction((g("D"), g("E"), g("F"))), "", ":"),
    ]


def test_parenthesised_single_name_is_a_plain_atom():
    assert atoms("A, (B)", "AB") == [(g("A"), "", None), (g("B"), "", ",")]


def test_sequence_locations():
    q = parse_query(seq_query("A, (B & C);\n   D+", "ABCD"), "q.rq")
    a, bc, d = q.seq.atoms
    assert (a.location.line, a.location.column) == (5, 7)
    assert (bc.location.line, bc.location.column) == (5, 10)  # the '('
    assert [(r.location.line, r.location.column) for r in bc.operand.operands] == [(5, 11), (5, 15)]
    assert (d.location.line, d.location.column) == (6, 4)


# ---------------------------------------------------------------- triples


def test_triples_with_semicolon_and_comma_abbreviations():
    assert triples("?s :p 1, 2 ; :q ?o ; ; :r :x, :y .\n?t :u ?s") == (
        tp(v("s"), ex("p"), integer(1)),
        tp(v("s"), ex("p"), integer(2)),
        tp(v("s"), ex("q"), v("o")),
        tp(v("s"), ex("r"), ex("x")),
        tp(v("s"), ex("r"), ex("y")),
        tp(v("t"), ex("u"), v("s")),
    )


def test_a_is_rdf_type():
    assert triples("?s a :C, :D ; :p ?o . ?o a ?type") == (
        tp(v("s"), RDF_TYPE, ex("C")),
        tp(v("s"), RDF_TYPE, ex("D")),
        tp(v("s"), ex("p"), v("o")),
        tp(v("o"), RDF_TYPE, v("type")),
    )


def test_variable_predicate_and_dollar_variables():
    assert triples("$s ?p $o") == (tp(v("s"), v("p"), v("o")),)


@pytest.mark.parametrize(
    ("text", "literal"),
    [
        ('"plain"', Literal("plain")),
        ("'single'", Literal("single")),
        ('""', Literal("")),
        ('"chat"@fr', Literal("chat", language="fr")),
        ('"colour"@en-GB', Literal("colour", language="en-GB")),
        ('"5"^^xsd:integer', integer(5)),
        ('"x"^^<http://ex.org/dt>', Literal("x", datatype=ex("dt"))),
        ('"x"^^:dt', Literal("x", datatype=ex("dt"))),
        ("42", integer(42)),
        ("-7", xsd("-7", "integer")),
        ("+3", xsd("3", "integer")),
        ("4.25", xsd("4.25", "decimal")),
        (".5", xsd(".5", "decimal")),
        ("-0.5", xsd("-0.5", "decimal")),
        ("4.2e1", xsd("4.2e1", "double")),
        ("1E-3", xsd("1E-3", "double")),
        ("-1.5e-2", xsd("-1.5e-2", "double")),
        ("true", xsd("true", "boolean")),
        ("false", xsd("false", "boolean")),
        ('"""long "quoted" text\nover two lines"""', Literal('long "quoted" text\nover two lines')),
        ("'''it's long'''", Literal("it's long")),
        ('"""ends with a quote \\""""', Literal('ends with a quote "')),
        (r'"tab\tnl\ncr\rbs\\bsp\bff\f"', Literal("tab\tnl\ncr\rbs\\bsp\bff\f")),
        (r'"\u00e9\U0001F600"', Literal("\u00e9\U0001f600")),
        ('"quote \' inside"', Literal("quote ' inside")),
        ("'quote \" inside'", Literal('quote " inside')),
        ('"é unicode ∀"', Literal("é unicode ∀")),
    ],
)
def test_literals(text, literal):
    assert triples(f"?s :p {text}") == (tp(v("s"), ex("p"), literal),)


@pytest.mark.parametrize("text", [r'"it\"s"', r"'it\'s'"])
def test_escaped_quote_in_short_string(text):
    assert triples(f"?s :p {text}") == (tp(v("s"), ex("p"), Literal("it's" if "'" in text else 'it"s')),)


@pytest.mark.parametrize("written", ["TRUE", "True", "true"])
def test_upper_case_boolean_literal(written):
    """true/false are keywords, case-insensitive (SPARQL 1.1 section 19.5)."""
    assert triples(f"?s :p {written}") == (tp(v("s"), ex("p"), xsd("true", "boolean")),)


def test_upper_case_booleans_reach_sparql_engines_lower_cased():
    """spargebra and pyoxigraph read only true/false: the body text handed to them has the
    literals lower-cased, every other character and every position unchanged."""
    group = body("?s :p ?o FILTER(?o && TRUE || FALSE) BIND(False AS ?f)\nVALUES ?v { TRUE }")
    assert group.text == "{\n?s :p ?o FILTER(?o && true || false) BIND(false AS ?f)\nVALUES ?v { true }\n}"
    (flt,) = [e for e in group.elements if isinstance(e, A.Filter)]
    assert flt.text == "?o && true || false"
    assert flt.expr.args[1] == A.ETerm(xsd("false", "boolean"))


def test_a_word_starting_with_true_is_not_a_boolean():
    assert_error(one_gpm("?s :p TRUEISH"), 7, 7,
                 "unexpected 'TRUEISH'; expected a variable, an IRI, a literal, a blank node or a path operator")


def test_blank_nodes():
    got = triples("_:b :p [] .\n[ :p 1 ; :q 2 ] :r ?o .\n?s :t [ :u _:b ] .\n[ :alone 3 ]")
    # blank nodes become variables named _:label; [] and [...] get fresh _:anonN names
    assert got[0] == tp(v("_:b"), ex("p"), got[0].object)
    assert got[0].object.is_blank and got[0].object.name.startswith("_:anon")
    b1 = got[1].subject
    assert got[1:4] == (tp(b1, ex("p"), integer(1)), tp(b1, ex("q"), integer(2)), tp(b1, ex("r"), v("o")))
    b2 = got[4].subject
    assert got[4:6] == (tp(b2, ex("u"), v("_:b")), tp(v("s"), ex("t"), b2))
    b3 = got[6].subject
    assert got[6:] == (tp(b3, ex("alone"), integer(3)),)
    fresh = {got[0].object, b1, b2, b3}
    assert len(fresh) == 4 and all(isinstance(x, A.Var) and x.is_blank for x in fresh)
    # blank node variables are not in scope (they are not projected or joined)
    assert A.in_scope_vars(body("_:b :p [] . [ :p ?x ] :q ?o")) == {"x", "o"}


def test_collections():
    got = triples("?s :l (1 ?x) . ?s :m () . (:a) :n ?o")
    c1, c2 = got[0].subject, got[2].subject
    assert got[:5] == (
        tp(c1, RDF_FIRST, integer(1)),
        tp(c1, RDF_REST, c2),
        tp(c2, RDF_FIRST, v("x")),
        tp(c2, RDF_REST, RDF_NIL),
        tp(v("s"), ex("l"), c1),
    )
    assert got[5] == tp(v("s"), ex("m"), RDF_NIL)
    c3 = got[6].subject
    assert got[6:] == (tp(c3, RDF_FIRST, ex("a")), tp(c3, RDF_REST, RDF_NIL), tp(c3, ex("n"), v("o")))
    assert all(c.is_blank for c in (c1, c2, c3))


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        (":p", ex("p")),
        ("a", RDF_TYPE),
        (":p/:q", A.Path("seq", (link("p"), link("q")))),
        (":p/:q/:r", A.Path("seq", (link("p"), link("q"), link("r")))),
        (":p|:q", A.Path("alt", (link("p"), link("q")))),
        ("^:p", A.Path("inv", (link("p"),))),
        (":p*", A.Path("zero_or_more", (link("p"),))),
        (":p?", A.Path("zero_or_one", (link("p"),))),
        ("!:p", A.Path("nps", (ex("p"),), (False,))),
        ("!^:p", A.Path("nps", (ex("p"),), (True,))),
        ("!a", A.Path("nps", (RDF_TYPE,), (False,))),
        ("!(:p|^:q|a)", A.Path("nps", (ex("p"), ex("q"), RDF_TYPE), (False, True, False))),
        ("(:p/:q)*", A.Path("zero_or_more", (A.Path("seq", (link("p"), link("q"))),))),
        (":p/^:q|:r", A.Path("alt", (A.Path("seq", (link("p"), A.Path("inv", (link("q"),)))), link("r")))),
        ("a/:p?", A.Path("seq", (A.Path("link", (RDF_TYPE,)), A.Path("zero_or_one", (link("p"),))))),
        ("(:p)", ex("p")),
    ],
)
def test_property_paths(path, expected):
    assert triples(f"?s {path} ?o") == (tp(v("s"), expected, v("o")),)


@pytest.mark.parametrize("text", ["?s :p+ ?o", "?s (:p/:q)+ ?o", "?s :p+/:q ?o"])
def test_one_or_more_path(text):
    (t,) = triples(text)
    assert t.predicate.kind in ("one_or_more", "seq")


# ---------------------------------------------------------------- FILTER expressions


def lit_i(n: int) -> A.ETerm:
    return A.ETerm(integer(n))


def call(op, *args, distinct=False) -> A.ECall:
    return A.ECall(op, tuple(args), distinct)


a_, b_, c_, o_ = A.EVar("a"), A.EVar("b"), A.EVar("c"), A.EVar("o")


@pytest.mark.parametrize(
    ("text", "expr"),
    [
        ("(?a || ?b && ?c)", call("||", a_, call("&&", b_, c_))),
        ("(?a || ?b || ?c)", call("||", call("||", a_, b_), c_)),
        ("(?a && ?b && ?c)", call("&&", call("&&", a_, b_), c_)),
        ("(?a = 1)", call("=", a_, lit_i(1))),
        ("(?a != ?b)", call("!=", a_, b_)),
        ("(?a < ?b)", call("<", a_, b_)),
        ("(?a > ?b)", call(">", a_, b_)),
        ("(?a <= ?b)", call("<=", a_, b_)),
        ("(?a >= ?b)", call(">=", a_, b_)),
        ("(?a * 2 / ?b)", call("/", call("*", a_, lit_i(2)), b_)),
        ("(?a * 2 > ?b / 3)", call(">", call("*", a_, lit_i(2)), call("/", b_, lit_i(3)))),
        ("(-?a < 2)", call("<", call("neg", a_), lit_i(2))),
        ("(?a = -1)", call("=", a_, call("neg", lit_i(1)))),
        ("(+?a)", call("pos", a_)),
        ("(!?a)", call("!", a_)),
        ("(!BOUND(?a))", call("!", call("BOUND", a_))),
        ("(?a IN (1, ?b, :x))", call("IN", a_, lit_i(1), b_, A.ETerm(ex("x")))),
        ("(?a NOT IN (3))", call("NOT IN", a_, lit_i(3))),
        ("(?a IN ())", call("IN", a_)),
        ("((?a))", a_),
        ("(true)", A.ETerm(xsd("true", "boolean"))),
        ('(?a = "x"@en)', call("=", a_, A.ETerm(Literal("x", language="en")))),
        ("(?a = 1.5)", call("=", a_, A.ETerm(xsd("1.5", "decimal")))),
        ("(?a = 2e0)", call("=", a_, A.ETerm(xsd("2e0", "double")))),
        ('(REGEX(STR(?a), "^x", "i"))',
         call("REGEX", call("STR", a_), A.ETerm(Literal("^x")), A.ETerm(Literal("i")))),
        ('(regex(?a, "x"))', call("REGEX", a_, A.ETerm(Literal("x")))),
        ("isIRI(?s)", call("ISIRI", A.EVar("s"))),
        ("(BOUND(?a))", call("BOUND", a_)),
        ("(LANG(?a) = \"en\")", call("=", call("LANG", a_), A.ETerm(Literal("en")))),
        ("(COALESCE(?a, 1) = IF(BOUND(?b), 1, 2))",
         call("=", call("COALESCE", a_, lit_i(1)), call("IF", call("BOUND", b_), lit_i(1), lit_i(2)))),
        ("(xsd:double(?a) > 1)", call(">", call(f"<{XSD}double>", a_), lit_i(1))),
        (f"(<{XSD}integer>(?a))", call(f"<{XSD}integer>", a_)),
        ("xsd:boolean(?a)", call(f"<{XSD}boolean>", a_)),
        ("(STRLEN(CONCAT(?a, ?b)) >= 3)",
         call(">=", call("STRLEN", call("CONCAT", a_, b_)), lit_i(3))),
        ("(?a = :x)", call("=", a_, A.ETerm(ex("x")))),
        ("(NOW() > ?a)", call(">", call("NOW"), a_)),
    ],
)
def test_filter_expressions(text, expr):
    f = only_filter(text)
    assert f.expr == expr
    # the constraint's text, without the brackets of a bracketted expression
    assert f.text == (text[1:-1] if text.startswith("(") else text)


@pytest.mark.parametrize(
    ("text", "expr"),
    [
        ("(?a + 1 > ?b)", call(">", call("+", a_, lit_i(1)), b_)),
        ("(?a - ?b < 0)", call("<", call("-", a_, b_), lit_i(0))),
        ("(2 - ?a * ?b = ?c)", call("=", call("-", lit_i(2), call("*", a_, b_)), c_)),
    ],
)
def test_filter_additive_expressions(text, expr):
    assert only_filter(text).expr == expr


def test_bind_with_addition():
    els = elements("?s :p ?o BIND(?o + 1 AS ?x)")
    assert els[1] == A.Bind(call("+", o_, lit_i(1)), "x")


def test_exists_and_not_exists():
    els = elements("?s :p ?o FILTER EXISTS { ?s :q ?z } FILTER(NOT EXISTS { ?s :r ?w . FILTER(?w > ?o) })")
    f1, f2 = els[1], els[2]
    assert isinstance(f1.expr, A.EExists) and not f1.expr.negated
    assert f1.expr.pattern.elements == (A.BGP((tp(v("s"), ex("q"), v("z")),)),)
    assert f1.text == "EXISTS { ?s :q ?z }"
    assert isinstance(f2.expr, A.EExists) and f2.expr.negated
    assert f2.expr.pattern.elements[1] == A.Filter(call(">", A.EVar("w"), o_), "?w > ?o")
    group = body("?s :p ?o FILTER EXISTS { ?s :q ?z } FILTER NOT EXISTS { GRAPH <http://kb/> { ?s :r ?w } }")
    # EXISTS patterns are walked, but bind nothing
    assert [type(el).__name__ for el in group.walk()] == ["BGP", "Filter", "BGP", "Filter", "GraphPattern", "BGP"]
    assert A.in_scope_vars(group) == {"s", "o"}
    assert A.graph_iris(group) == ["http://kb/"]


def test_filter_span_and_location():
    text = "?s :p ?o .\n  FILTER (?o > 1)\n"
    group = body(text)
    f = group.elements[1]
    assert group.text[f.span[0] : f.span[1]] == "FILTER (?o > 1)"
    assert f.text == "?o > 1"
    assert (group.location.line, group.location.column) == (6, 28)


def test_filter_and_expression_variables():
    group = body("?s :p ?o FILTER(?a > ?b || BOUND(?c)) FILTER EXISTS { ?x :p ?y }")
    assert A.expr_vars(group.elements[1].expr) == {"a", "b", "c"}
    assert A.expr_vars(group.elements[2].expr) == set()
    assert A.in_scope_vars(group) == {"s", "o"}
    assert A.mentioned_vars(group) == {"s", "o", "a", "b", "c", "x", "y"}


def test_unknown_function_is_a_query_error():
    try:
        err = error(one_gpm("?s :p ?o FILTER(<http://f.org/fn>(?o))"))
    except RuntimeError as exc:  # what happens today
        pytest.fail(f"RuntimeError escaped: {exc}")
    assert err.location is not None and err.location.line == 6
    assert "http://f.org/fn" in err.message


# ---------------------------------------------------------------- group pattern constructs


def test_optional():
    group = body("?s :p ?o OPTIONAL { ?o :q ?x . OPTIONAL { ?x :r ?y } }")
    bgp, opt = group.elements
    assert bgp == A.BGP((tp(v("s"), ex("p"), v("o")),))
    assert isinstance(opt, A.OptionalPattern)
    assert opt.pattern.text == "{ ?o :q ?x . OPTIONAL { ?x :r ?y } }"
    assert opt.pattern.elements[0] == A.BGP((tp(v("o"), ex("q"), v("x")),))
    assert isinstance(opt.pattern.elements[1], A.OptionalPattern)
    assert A.in_scope_vars(group) == {"s", "o", "x", "y"}


def test_union_and_sub_groups():
    group = body("{ ?s :a ?y } UNION { ?s :b ?z } UNION { ?s :c ?w } .\n{ ?s :d ?v }")
    union, single = group.elements
    assert isinstance(union, A.UnionPattern) and len(union.alternatives) == 3
    assert [alt.elements for alt in union.alternatives] == [
        (A.BGP((tp(v("s"), ex("a"), v("y")),)),),
        (A.BGP((tp(v("s"), ex("b"), v("z")),)),),
        (A.BGP((tp(v("s"), ex("c"), v("w")),)),),
    ]
    # a plain sub-group is a one-alternative union
    assert isinstance(single, A.UnionPattern) and len(single.alternatives) == 1
    assert single.alternatives[0].text == "{ ?s :d ?v }"
    assert A.in_scope_vars(group) == {"s", "y", "z", "w", "v"}


def test_minus_binds_nothing():
    group = body("?s :p ?o MINUS { ?s :q ?x }")
    assert isinstance(group.elements[1], A.MinusPattern)
    assert group.elements[1].pattern.elements == (A.BGP((tp(v("s"), ex("q"), v("x")),)),)
    assert A.in_scope_vars(group) == {"s", "o"}
    assert "x" in A.mentioned_vars(group)


def test_bind():
    group = body("?s :p ?o BIND(STR(?o) AS ?t) BIND(?o * 2 AS ?d)")
    assert group.elements[1:] == (
        A.Bind(call("STR", o_), "t"),
        A.Bind(call("*", o_, lit_i(2)), "d"),
    )
    assert A.in_scope_vars(group) == {"s", "o", "t", "d"}


def test_values_one_variable():
    (values,) = [el for el in elements('VALUES ?v { :a 1 "x" "y"@en UNDEF true -2 } ?s :p ?v')
                 if isinstance(el, A.Values)]
    assert values == A.Values(
        ("v",),
        ((ex("a"),), (integer(1),), (Literal("x"),), (Literal("y", language="en"),), (None,),
         (xsd("true", "boolean"),), (xsd("-2", "integer"),)),
    )


def test_values_full_form():
    els = elements('?s :p ?a VALUES (?a ?b) { (:a 1) (UNDEF "x"@en) (2.5 UNDEF) } VALUES () { () }')
    assert els[1] == A.Values(
        ("a", "b"),
        ((ex("a"), integer(1)), (None, Literal("x", language="en")), (xsd("2.5", "decimal"), None)),
    )
    assert els[2] == A.Values((), ((),))
    assert A.in_scope_vars(body("?s :p ?a VALUES (?a ?b) { (1 2) }")) == {"s", "a", "b"}


def test_values_empty_block_and_no_rows():
    els = elements("?s :p ?a VALUES ?a { } VALUES (?a) { }")
    assert els[1:] == (A.Values(("a",), ()), A.Values(("a",), ()))


def test_graph_patterns():
    q = parse_query(
        "PREFIX : <http://ex.org/>\nSELECT * FROM STREAM S <http://ex.org/s>\nWHERE { SEQ(A, B)\n"
        "DEFINE GPM A ON S { ?s :p ?o GRAPH <http://kb/2> { ?s :q ?k } GRAPH ?g { ?s :r ?m }\n"
        "  OPTIONAL { GRAPH :kb1 { ?s :t ?n } } GRAPH <http://kb/2> { ?s :u ?n } }\n"
        "DEFINE GPM B ON S { ?s :p ?o FILTER EXISTS { GRAPH <http://kb/3> { ?s :v 1 } }\n"
        "  GRAPH :kb1 { ?s :w ?x } } }"
    )
    a = q.events["A"].pattern
    g1, g2 = a.elements[1], a.elements[2]
    assert g1 == A.GraphPattern(
        NamedNode("http://kb/2"),
        A.GroupPattern((A.BGP((tp(v("s"), ex("q"), v("k")),)),), "{ ?s :q ?k }"),
    )
    assert g2.graph == A.Var("g")
    assert g2.pattern.elements == (A.BGP((tp(v("s"), ex("r"), v("m")),)),)
    assert A.graph_iris(a) == ["http://kb/2", EX + "kb1"]
    assert A.in_scope_vars(a) == {"s", "o", "k", "g", "m", "n"}
    assert "g" in A.mentioned_vars(a)
    assert A.graph_iris(q.events["B"].pattern) == ["http://kb/3", EX + "kb1"]
    assert q.graph_iris() == ["http://kb/2", EX + "kb1", "http://kb/3"]


def test_sub_select_as_whole_body():
    group = body("SELECT ?s (COUNT(?o) AS ?n) (SUM(DISTINCT ?o) AS ?t) WHERE { ?s :p ?o }\n"
                 "GROUP BY ?s HAVING (COUNT(?o) > 1) ORDER BY DESC(?n) LIMIT 5 OFFSET 1")
    (sub,) = group.elements
    assert isinstance(sub, A.SubSelect)
    assert sub.projected == ("s", "n", "t")
    assert sub.pattern.elements == (A.BGP((tp(v("s"), ex("p"), v("o")),)),)
    assert sub.text.startswith("SELECT ?s (COUNT(?o) AS ?n)") and sub.text.endswith("OFFSET 1")
    assert A.in_scope_vars(group) == {"s", "n", "t"}
    assert list(group.walk()) == [sub, sub.pattern.elements[0]]


def test_sub_select_nested_with_group_concat_and_star():
    group = body(
        '?s :p ?o . { SELECT ?s (GROUP_CONCAT(DISTINCT ?x; SEPARATOR=", ") AS ?all) '
        "{ ?s :q ?x } GROUP BY ?s }\n{ SELECT * WHERE { ?s :r ?z ; :u ?w } }"
    )
    bgp, nested, star = group.elements
    (sub,) = nested.alternatives[0].elements
    assert sub.projected == ("s", "all")
    (sub_star,) = star.alternatives[0].elements
    assert sub_star.projected == ("s", "w", "z")
    assert A.in_scope_vars(group) == {"s", "o", "all", "w", "z"}


def test_sub_select_group_by_expression_and_aggregates():
    group = body("SELECT ?k (MIN(?o) AS ?lo) (MAX(?o) AS ?hi) (AVG(?o) AS ?m) (SAMPLE(?o) AS ?any) "
                 "(COUNT(*) AS ?n) WHERE { ?s :p ?o } GROUP BY (STR(?s) AS ?k)")
    assert group.elements[0].projected == ("k", "lo", "hi", "m", "any", "n")


def test_service_is_rejected():
    err = assert_error(one_gpm("SERVICE <http://remote/sparql> { ?s :p ?o }"), 6, 21, "SERVICE is not supported")
    assert "GPM A" in err.message


# ---------------------------------------------------------------- the original and project queries


def _reference_queries() -> list[Path]:
    found = sorted(SHARED.glob("*/*.q")) if SHARED.is_dir() else []
    return found


@pytest.mark.skipif(not SHARED.is_dir(), reason="shared reference tests not present")
@pytest.mark.parametrize("path", _reference_queries(), ids=lambda p: p.parent.name)
def test_reference_queries_parse(path):
    q = load_query(str(path))
    assert q.seq.atoms
    used = [n for a in q.seq.atoms for n in A.operand_gpms(a.operand)]
    assert set(used) <= set(q.events)
    for ev in q.events.values():
        assert ev.stream == q.streams[ev.stream_name]
    assert q.window.kind == "time"
    copy = ROOT / "fixtures" / "original" / path.parent.name / path.name
    if copy.exists():
        again = load_query(str(copy))
        assert again.seq == q.seq and again.events == q.events


def test_reference_query_list_is_complete():
    if not SHARED.is_dir():
        pytest.skip("shared reference tests not present")
    assert {p.parent.name for p in _reference_queries()} == {
        "conjunction", "credit-card", "disjunction", "externalknowledgebase", "kleeneplus",
        "multistreams-powergeneration", "negation", "optional", "skip-till-next", "strict-contiguity",
    }


@pytest.mark.parametrize("path", sorted((ROOT / "fixtures" / "original").glob("*/*.q")),
                         ids=lambda p: p.parent.name)
def test_fixture_copies_of_original_queries_parse(path):
    q = load_query(str(path))
    assert q.seq.atoms


def test_original_kleene_query_structure():
    q = load_query(str(ROOT / "fixtures" / "original" / "kleeneplus" / "queryKleene.q"))
    assert [(a.operand.name, a.modifier, a.strategy) for a in q.seq.atoms] == [
        ("A", "", None), ("B", "+", ";"), ("C", "", ";")
    ]
    assert q.match.variables == ("company", "p3", "p1", "p2")
    assert q.window == A.Window("time", 100.0)
    assert q.streams == {"S1": "http://example.org/main"}
    assert q.warnings == ()
    (bgp, flt) = q.events["B"].pattern.elements
    assert flt.expr == call("<", A.EVar("p2"), A.EVar("p1"))


def test_original_conjunction_disjunction_negation_optional():
    base = ROOT / "fixtures" / "original"
    conj = load_query(str(base / "conjunction" / "queryConjunction.q")).seq.atoms
    assert conj[1].operand == A.Conjunction((g("B"), g("C"))) and conj[1].strategy == ","
    disj = load_query(str(base / "disjunction" / "queryDisjunction.q")).seq.atoms
    assert disj[1].operand == A.Disjunction((g("B"), g("C")))
    assert load_query(str(base / "negation" / "queryNegation.q")).seq.atoms[1].modifier == "!"
    assert load_query(str(base / "optional" / "queryOptional.q")).seq.atoms[1].modifier == "?"


def test_credit_card_query_warns_about_unbound_filter_variable():
    q = load_query(str(ROOT / "fixtures" / "original" / "credit-card" / "queryCardFB.q"))
    assert len(q.warnings) == 1
    assert "the FILTER of GPM B uses ?id1, which no GPM binds before B" in q.warnings[0]


def test_smartgrid_query():
    q = load_query(str(ROOT / "fixtures" / "smartgrid" / "query.rq"))
    assert [(a.operand.name, a.modifier, a.strategy) for a in q.seq.atoms] == [
        ("A", "", None), ("B", "+", ";"), ("C", "", ",")
    ]
    assert q.window == A.Window("time", 1800.0)
    assert q.match.variables == ("house", "fr1", "fr2", "house2", "city", "oname")
    assert q.streams == {
        "S1": "http://smartgrid.org/mainSource",
        "S2": "http://smartgrid.org/weather",
        "S3": "http://smartgrid.org/storageSource",
    }
    assert q.graph_iris() == ["http://smartgrid.org/db"]
    assert A.in_scope_vars(q.events["A"].pattern) == {"house", "l", "pw", "fr1", "city", "house2", "oname"}
    assert q.warnings == ()


# ---------------------------------------------------------------- errors


def test_syntax_error_lists_expected_tokens():
    text = two_gpms("A B")
    assert_error(text, 5, 9, "unexpected 'B'; expected a sequence operator (',', ';' or ':'), a modifier "
                             "(+, *, ?, ! or {m,n}) or ')'")


def test_syntax_error_inside_body():
    text = (
        "PREFIX : <http://ex.org/>\nSELECT ?s\nFROM STREAM S <http://ex.org/s>\nWHERE {\n  SEQ(A)\n"
        "  DEFINE GPM A ON S {\n    ?s :p ?o .\n    FILTER(?o > )\n  }\n}"
    )
    assert_error(text, 8, 17, "unexpected ')'; expected an expression")


def test_syntax_error_in_clause_order():
    text = "PREFIX : <http://ex.org/>\nSELECT\nFROM STREAM S <http://ex.org/s>"
    assert_error(text, 3, 1, "unexpected 'FROM'; expected a variable, DISTINCT, REDUCED, '*' or '('")


def test_unexpected_character():
    text = one_gpm("?s :p ?o @")
    assert_error(text, 7, 10, "unexpected character '@'")


def test_missing_stream_name():
    text = "SELECT ?s\nFROM STREAM <http://ex.org/s>"
    assert_error(text, 2, 13, "unexpected '<http://ex.org/s>'; expected a name")


def test_unexpected_end_of_query():
    text = two_gpms()[:-2]  # drop the final "\n}"
    assert text.endswith("?s :q ?x }")
    err = assert_error(text, 7, 33, "'{' opened at 4:7 is never closed (a '}' is missing at the end of the query)")
    assert err.location.line == len(text.splitlines())


def test_empty_query():
    assert_error("", 1, 1, "unexpected end of query; expected SELECT, PREFIX, BASE or CONSTRUCT")


def test_text_after_the_query():
    text = two_gpms() + "\nextra"
    try:
        assert_error(text, 9, 1, "unexpected 'extra'")
    except KeyError as exc:
        pytest.fail(f"KeyError escaped: {exc}")


def test_undefined_gpm_in_seq():
    assert_error(two_gpms("A, C"), 5, 10, "SEQ uses GPM C, which is not defined (defined: A, B)")


def test_undefined_gpm_inside_binary_operator():
    assert_error(two_gpms("A, (B | Z)"), 5, 15, "SEQ uses GPM Z, which is not defined")


def test_gpm_on_undeclared_stream():
    text = two_gpms().replace("DEFINE GPM B ON S", "DEFINE GPM B ON T")
    assert_error(text, 7, 19, "GPM B is defined on stream T, which no FROM STREAM clause declares (declared: S)")


def test_gpm_defined_twice():
    text = two_gpms().replace("DEFINE GPM B", "DEFINE GPM A")
    assert_error(text, 7, 14, "GPM A is defined twice")


def test_gpm_used_twice_in_seq():
    assert_error(two_gpms("A, B;\n   A"), 6, 4, "GPM A is used twice in SEQ")
    assert_error(two_gpms("A, (B & A)"), 5, 15, "GPM A is used twice in SEQ")


def test_sequence_cannot_start_with_optional():
    assert_error(two_gpms("A?, B"), 5, 7, "a sequence cannot start with an optional atom (A?)")
    # nor with one after a head negation: the first positive atom opens the sequence
    assert_error(two_gpms("A! ; B?", head="SELECT ?s WITHIN 5 SECONDS"), 5, 12,
                 "a sequence cannot start with an optional atom (B?)")


@pytest.mark.parametrize(
    ("head", "fragment"),
    [
        ("SELECT ?s", "only under a time window (WITHIN n SECONDS, MINUTES, ...): its absence is looked "
                      "for in the window before the first event, and without a window there is no bound"),
        ("SELECT ?s WITHIN 4 EVENTS", "only under a time window (WITHIN n SECONDS, MINUTES, ...): its absence "
                                      "is looked for in the window before the first event, and an "
                                      "event-count window does not bound it in time"),
    ],
)
def test_a_head_negation_needs_a_time_window(head, fragment):
    assert_error(two_gpms("A! ; B", head=head), 5, 7, "a sequence can start with a negated atom (A!) " + fragment)


def test_a_head_negation_needs_a_positive_atom():
    assert_error(two_gpms("A! ; B!", head="SELECT ?s WITHIN 5 SECONDS"), 5, 7,
                 "a sequence of negated atoms only (A!...) matches nothing: add a positive atom")


def test_a_head_negation_attaches_nothing_and_reads_the_match():
    """The operator after a head negation plays no part (the first positive atom opens the
    sequence); its FILTER may read what the positive atoms bind, without a warning."""
    q = parse_query(two_gpms("A! , B", head="SELECT ?s WITHIN 5 SECONDS", a="?s :p ?o FILTER(?o = ?x)"))
    assert [(a.modifier, a.strategy) for a in q.seq.atoms] == [("!", None), ("", ",")]
    assert [(a.modifier, a.strategy) for a in q.seq.positive] == [("", None)]
    assert q.warnings == ()


def test_sequence_cannot_end_with_optional():
    assert_error(two_gpms("A; B?"), 5, 10, "a sequence cannot end with an optional atom (B?)")


def test_sequence_may_end_with_negation():
    q = parse_query(two_gpms("A; B!"))
    assert [(a.modifier, a.strategy) for a in q.seq.atoms] == [("", None), ("!", ";")]


def test_unknown_prefix_in_body():
    assert_error(two_gpms(b="?s ex:q ?x"), 7, 26, "unknown prefix 'ex:' (no PREFIX declaration)")


def test_unknown_prefix_in_filter():
    assert_error(two_gpms(b="?s :q ?x FILTER(?x = foo:bar)"), 7, 44, "unknown prefix 'foo:'")


def test_unknown_prefix_in_from_stream():
    text = two_gpms().replace("<http://ex.org/s>", "ex:s")
    assert_error(text, 3, 15, "unknown prefix 'ex:' (no PREFIX declaration)")


def test_unknown_prefix_in_sub_select_modifiers():
    text = one_gpm("SELECT ?s (COUNT(?o) AS ?n) { ?s :p ?o } GROUP BY ?s\n HAVING (foo:f(?n))")
    assert_error(text, 8, 10, "unknown prefix 'foo:'")


def test_unknown_window_unit():
    text = two_gpms(head="SELECT ?s\nWITHIN 5 FORTNIGHTS")
    err = assert_error(text, 3, 10, "unknown window unit FORTNIGHTS")
    assert "SECOND(S)" in err.message and "EVENTS" in err.message


@pytest.mark.parametrize(
    ("within", "column", "fragment"),
    [
        ("WITHIN 0 SECONDS", 8, "WITHIN 0 SECONDS: a window of length 0; the WITHIN amount must be positive"),
        ("WITHIN -5 SECONDS", 8, "WITHIN -5 SECONDS: a negative window; the WITHIN amount must be positive"),
        ("WITHIN -0.5 EVENTS", 8, "WITHIN -0.5 EVENTS: a negative window"),
        ("WITHIN 1e400 SECONDS", 8, "WITHIN 1e400 SECONDS is too large: a window spans at most 10^18 seconds"),
        ("WITHIN 2e16 DAYS", 8, "WITHIN 2e16 DAYS is too large"),
        ("WITHIN 99999999999999999999999999999 SECONDS", 8, "is too large"),
        ("WITHIN 1e400 EVENTS", 8, "WITHIN 1e400 EVENTS is too large: a window spans at most 10^18 events"),
        ("WITHIN 1.5 EVENTS", 8, "WITHIN ... EVENTS takes a whole number of events"),
        ("WITHIN 1e-12 SECONDS", 8, "finer than a nanosecond"),
    ],
)
def test_bad_window_amount(within, column, fragment):
    assert_error(two_gpms(head=f"SELECT ?s\n{within}"), 3, column, fragment)


@pytest.mark.parametrize(
    ("seq", "column", "mod"),
    [("A, (B | C)?", 17, "?"), ("A, (B & C)!", 17, "!")],
)
def test_optional_and_negation_apply_to_gpm_names_only(seq, column, mod):
    text = two_gpms(seq, extra="  DEFINE GPM C ON S { ?s :r ?y }\n")
    assert_error(text, 5, column, f"'{mod}' applies to a GPM name, not to a parenthesised expression")


# ---------------------------------------------------------------- quantifiers (decision 61)


@pytest.mark.parametrize(
    ("seq", "low", "high", "text"),
    [
        ("A; B+", 1, None, "+"),
        ("A; B*; C", 0, None, "*"),
        ("A; B{3}", 3, 3, "{3}"),
        ("A; B{1}", 1, 1, "{1}"),
        ("A; B{2,}", 2, None, "{2,}"),
        ("A; B{1,}", 1, None, "+"),
        ("A; B{0,}; C", 0, None, "*"),
        ("A; B{2,5}", 2, 5, "{2,5}"),
        ("A; B{4,4}", 4, 4, "{4}"),
        ("A; B{0,1}; C", 0, 1, "{0,1}"),
        ("A; B { 2 , 10000 }", 2, 10000, "{2,10000}"),
        ("B{2}, A", 2, 2, "{2}"),
    ],
)
def test_a_quantifier_is_a_kleene_atom_with_bounds(seq, low, high, text):
    q = parse_query(two_gpms(seq, extra="  DEFINE GPM C ON S { ?s :r ?y }\n"))
    (atom,) = [a for a in q.seq.atoms if a.operand == A.GpmRef("B")]
    assert (atom.modifier, atom.low, atom.high, atom.modifier_text) == (A.KLEENE, low, high, text)
    assert A.iteration_bounds(atom.modifier_text) == (low, high)


@pytest.mark.parametrize(
    ("seq", "column", "fragment"),
    [
        ("A; B{5,2}", 11, "B{5,2}: the lower bound 5 is above the upper bound 2"),
        ("A; B{0}", 11, "B{0} takes no event at all"),
        ("A; B{0,0}", 11, "B{0,0} takes no event at all"),
        ("A; B{10001}", 12, "B{10001}: 10001 iterations is too many; a quantifier's bounds are at most 10000"),
        ("A; B{2,99999999999999999999}", 14, "iterations is too many"),
        ("A; B{2.5}", 13, "unexpected '.5'; expected ',' or '}'"),
        ("A; B{,3}", 12, "unexpected ','; expected a whole number"),
        ("A; B{-1}", 12, "unexpected '-1'; expected a whole number"),
    ],
)
def test_a_quantifier_s_bounds_are_checked_where_written(seq, column, fragment):
    assert_error(two_gpms(seq), 5, column, fragment)


@pytest.mark.parametrize(
    ("seq", "column", "fragment"),
    [
        ("B*, A", 7, "a sequence cannot start with B*, which may take no event: there is no earlier "
                     "event to measure its absence from"),
        ("B{0,2}; A", 7, "a sequence cannot start with B{0,2}, which may take no event"),
        ("A; B*", 10, "a sequence cannot end with B*, which may take no event: the match without it "
                      "would have to wait for an event that never comes"),
        ("A; B{0,3}", 10, "a sequence cannot end with B{0,3}, which may take no event"),
    ],
)
def test_zero_iterations_may_neither_start_nor_end_a_sequence(seq, column, fragment):
    assert_error(two_gpms(seq), 5, column, fragment)


@pytest.mark.parametrize(("seq", "low", "high"), [
    ("A, (B)+", 1, None), ("A, (B & C){2}", 2, 2), ("A; (B | C)* ; B2", 0, None),
    ("A, (B | C){1,3}", 1, 3), ("A; (B | (C & B2)){2,}", 2, None), ("(B | C){0,2} ; A", None, None),
])
def test_a_group_takes_the_iteration_forms(seq, low, high):
    """Decision 66: +, *, {n}, {m,n}, {m,} on a parenthesised group; zero iterations neither
    first nor last, as for a GPM name."""
    text = two_gpms(seq, extra="  DEFINE GPM C ON S { ?s :r ?y }\n  DEFINE GPM B2 ON S { ?s :t ?y }\n")
    if low is None:
        assert_error(text, 5, 7, "a sequence cannot start with (...){0,2}, which may take no event")
        return
    atom = parse_query(text).seq.atoms[1]  # (B)+ is B+: a group of one is its GPM
    assert (atom.modifier, atom.low, atom.high) == (A.KLEENE, low, high)


@pytest.mark.parametrize(("seq", "column", "mod"), [("A; (B & C)* ; B2", 17, "*"),
                                                     ("A; (B | (C & B2)){0,2} ; B2", 24, "{0,2}")])
def test_a_group_with_a_conjunction_must_take_an_iteration(seq, column, mod):
    text = two_gpms(seq, extra="  DEFINE GPM C ON S { ?s :r ?y }\n  DEFINE GPM B2 ON S { ?s :t ?y }\n")
    assert_error(text, 5, column, f"'{mod}' may take no iteration of a group holding a conjunction")


def test_partition_variable_not_bound_by_some_gpm():
    text = two_gpms(head="SELECT ?s\nPARTITION BY ?o")
    assert_error(text, 8, 14, "PARTITION BY ?o: GPM B does not bind ?o")


def test_within_twice():
    text = two_gpms(head="SELECT ?s\nWITHIN 5 SECONDS\n  WITHIN 6 SECONDS")
    assert_error(text, 4, 3, "a query has at most one WITHIN clause")


def test_partition_by_twice():
    text = two_gpms(head="SELECT ?s\nPARTITION BY ?s\nPARTITION BY ?s")
    assert_error(text, 4, 1, "a query has at most one PARTITION BY clause")


def test_stream_declared_twice():
    text = two_gpms().replace("FROM STREAM S <http://ex.org/s>",
                              "FROM STREAM S <http://ex.org/s>\nFROM STREAM S <http://ex.org/t>")
    assert_error(text, 4, 13, "stream S is declared twice")


def test_relative_iri_without_base_in_from_stream():
    text = two_gpms().replace("<http://ex.org/s>", "<stream1>")
    assert_error(text, 3, 15, "invalid IRI <stream1>")
    assert "a relative IRI needs a BASE declaration" in error(text).message


def test_relative_iri_without_base_in_body():
    assert_error(two_gpms(a="?s <p> ?o"), 6, 26, "a relative IRI needs a BASE declaration")


def test_body_rejected_by_pyoxigraph():
    text = two_gpms(b="?s :q ?x . ?s ?p ?o\n    BIND(1 AS ?o)")
    # reported at the body's opening brace, with pyoxigraph's message
    err = assert_error(text, 7, 21, "GPM B: ")
    assert len(err.message) > len("GPM B: ")


def test_values_row_of_wrong_length():
    assert_error(one_gpm("?s :p ?a VALUES (?a ?b) {\n  (1 2)\n  (3) }"), 9, 3, "VALUES row has 1 values for 2 variables")


def test_construct_template_is_translated():
    text = "CONSTRUCT { ?s ?p ?o }\nFROM STREAM S <http://ex.org/s>\nWHERE { SEQ(A) DEFINE GPM A ON S { ?s ?p ?o } }"
    q = parse_query(text)
    assert q.match.is_construct and q.match.variables is None
    assert q.match.template == (A.TriplePattern(A.Var("s"), A.Var("p"), A.Var("o")),)


def test_binary_operator_needs_parentheses():
    assert_error(two_gpms("A & B"), 5, 9, "unexpected '&'")


def test_mixed_binary_operators_need_parentheses():
    text = two_gpms("A, (B & C | D)", extra="  DEFINE GPM C ON S { ?s :r ?y }\n  DEFINE GPM D ON S { ?s :t ?y }\n")
    assert_error(text, 5, 17, "unexpected '|'; expected '&' or ')'")


def test_load_query_missing_file(tmp_path):
    with pytest.raises(QueryError) as info:
        load_query(str(tmp_path / "nope.rq"))
    assert str(info.value) == f"{tmp_path / 'nope.rq'}: no such query file"


def test_load_query_reports_the_file_name(tmp_path):
    path = tmp_path / "bad.rq"
    path.write_text(two_gpms("A, C"), encoding="utf-8")
    with pytest.raises(QueryError) as info:
        load_query(str(path))
    assert str(info.value).startswith(f"{path}:5:10: SEQ uses GPM C")


# ---------------------------------------------------------------- warnings


def test_no_warnings_for_a_clean_query():
    q = parse_query(two_gpms(b="?s :q ?x FILTER(?x > ?o)"), "q.rq")
    assert q.warnings == ()


def test_warning_projected_variable_not_bound():
    q = parse_query(two_gpms(head="SELECT ?s ?zz ?o"), "q.rq")
    assert q.warnings == ("q.rq: warning: ?zz is projected but no GPM binds it",)


def test_warning_gpm_defined_but_unused():
    q = parse_query(two_gpms("A"), "q.rq")
    assert q.warnings == ("q.rq:7:14: warning: GPM B is defined but not used in SEQ",)


def test_warning_filter_variable_not_bound_before():
    q = parse_query(two_gpms(a="?s :p ?o FILTER(?x > 1)", b="?s :q ?x FILTER(?o > ?y)"), "q.rq")
    assert q.warnings == (
        "q.rq:6:14: warning: the FILTER of GPM A uses ?x, which no GPM binds before A: "
        "what reads it is an error there (the FILTER is false unless ||, IF or COALESCE gets "
        "past the error)",
        "q.rq:7:14: warning: the FILTER of GPM B uses ?y, which no GPM binds before B: "
        "what reads it is an error there (the FILTER is false unless ||, IF or COALESCE gets "
        "past the error)",
    )


def test_no_warning_for_a_variable_only_tested_by_bound():
    """Issue 24: ``!BOUND(?zz) || ...`` is true on an unbound ?zz, not an error."""
    q = parse_query(two_gpms(b="?s :q ?x FILTER(!BOUND(?zz) || ?x > ?o)"), "q.rq")
    assert q.warnings == ()


def test_warning_filter_on_sibling_of_conjunction():
    text = two_gpms(
        "A, (B & C)", b="?s :q ?x", extra="  DEFINE GPM C ON S { ?s :r ?y FILTER(?y > ?x) }\n"
    )
    q = parse_query(text, "q.rq")
    assert len(q.warnings) == 1
    assert q.warnings[0].startswith("q.rq:8:14: warning: the FILTER of GPM C uses ?x")


def test_warnings_do_not_stop_parsing():
    q = parse_query(two_gpms("A", head="SELECT ?nothing"), "q.rq")
    assert len(q.warnings) == 2
    assert q.seq.atoms[0].operand == g("A")


# ---------------------------------------------------------------- selection and consumption


@pytest.mark.parametrize(
    ("head", "selection", "consumption"),
    [
        ("SELECT ?s WITHIN 5 SECONDS SELECTION CHRONOLOGICAL", "chronological", "none"),
        ("SELECT ?s SELECTION recent CONSUMPTION matched", "recent", "matched"),
        ("SELECT ?s CONSUMPTION MATCHED WITHIN 5 SECONDS", "unrestricted", "matched"),
        ("SELECT ?s WITHIN 5 SECONDS LATENESS 1 SECONDS SELECTION LATEST", "latest", "none"),
        ("SELECT ?s", "unrestricted", "none"),
    ],
)
def test_policies_are_read_in_any_clause_order(head, selection, consumption):
    q = parse_query(two_gpms("A ; B", head=head))
    assert (q.selection, q.consumption) == (selection, consumption)


@pytest.mark.parametrize(
    ("head", "seq", "line", "column", "fragment"),
    [
        ("SELECT ?s SELECTION RECNT", "A ; B", 2, 21,
         "SELECTION takes UNRESTRICTED, CHRONOLOGICAL, RECENT or LATEST, not RECNT; did you mean RECENT?"),
        ("SELECT ?s CONSUMPTION ALL", "A ; B", 2, 23, "CONSUMPTION takes NONE or MATCHED, not ALL"),
        ("SELECT ?s SELECTION RECENT SELECTION LATEST", "A ; B", 2, 28,
         "a query has at most one SELECTION clause"),
        ("SELECT ?s SELECTION RECENT", "A", 2, 11, "SEQ(A) takes one event per match, so there is nothing"),
        ("SELECT ?s SELECTION LATEST", "A ; B+", 5, 11, "not to iterations, optional or negated atoms"),
        ("SELECT ?s SELECTION LATEST", "A ; (B | A2)", 5, 11, "groups such as (...)"),
        ("SELECT ?s SELECTION LATEST CONSUMPTION MATCHED", "A ; B", 2, 11,
         "CONSUMPTION MATCHED means nothing with it"),
    ],
)
def test_a_policy_that_means_nothing_is_refused_where_written(head, seq, line, column, fragment):
    extra = "  DEFINE GPM A2 ON S { ?s :r ?o }\n" if "A2" in seq else ""
    assert_error(two_gpms(seq, head=head, extra=extra), line, column, fragment)


def test_a_selection_over_the_iterations_of_one_atom_means_something():
    q = parse_query(two_gpms("A{2,3}", head="SELECT ?s SELECTION RECENT"))
    assert q.selection == "recent"
