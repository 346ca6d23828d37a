"""engine/language/syntax_errors.py: what a syntax error says, exactly, and where: brackets
never closed or closing nothing (named with where they were opened, in GPM bodies too),
misspelt keywords ("did you mean"), short grouped "expected" lists."""

from __future__ import annotations

import pytest

from spaseq.engine.errors import QueryError
from spaseq.engine.language.query import parse_query


#   1 PREFIX : <http://ex.org/>
#   2 SELECT * <clauses>
#   3 FROM STREAM S <http://ex.org/s>
#   4 WHERE {
#   5   SEQ(<seq>)
#   6   DEFINE GPM A ON S { <a> }         (its '{' at 6:21)
#   7   DEFINE GPM B ON S { <b> }         (its '{' at 7:21)
#   8 }
def query(*, clauses: str = "WITHIN 10 SECONDS", seq: str = "A ; B", a: str = "?s :p ?o",
          b: str = "?s :q ?x", end: str = "\n}\n") -> str:
    return (f"PREFIX : <http://ex.org/>\nSELECT * {clauses}\nFROM STREAM S <http://ex.org/s>\nWHERE {{\n"
            f"  SEQ({seq})\n  DEFINE GPM A ON S {{ {a} }}\n  DEFINE GPM B ON S {{ {b} }}{end}")


def error(text: str) -> str:
    """The error, as the CLI prints it (FILE:LINE:COLUMN: message)."""
    with pytest.raises(QueryError) as info:
        parse_query(text, "q.rq")
    return str(info.value)


# ---------------------------------------------------------------- brackets


@pytest.mark.parametrize(("text", "said"), [
    # a GPM body's '}' missing: the parser meets the next DEFINE inside the body
    (query().replace("{ ?s :p ?o }", "{ ?s :p ?o"),
     "q.rq:7:3: '{' opened at 6:21 is never closed (a '}' is missing before 'DEFINE')"),
    # the WHERE clause's '}' missing
    (query(end="\n"), "q.rq:7:33: '{' opened at 4:7 is never closed (a '}' is missing at the end of the query)"),
    # SEQ's ')'
    (query(seq="A ; B").replace("SEQ(A ; B)", "SEQ(A ; B"),
     "q.rq:6:3: '(' opened at 5:6 is never closed (a ')' is missing before 'DEFINE')"),
    # a FILTER's ')' inside a body, before the body's '}'
    (query(b="?s :q ?x FILTER(?x > (1 + 2)"),
     "q.rq:7:52: '(' opened at 7:38 is never closed (a ')' is missing before '}')"),
    # a quantifier's '}'
    (query(seq="A ; B{2"), "q.rq:5:14: '{' opened at 5:12 is never closed (a '}' is missing before ')')"),
    # a [ ... ] blank node's ']'
    (query(a="?s :p [ :q ?o"), "q.rq:6:37: '[' opened at 6:29 is never closed (a ']' is missing before '}')"),
    # EXISTS's '}' inside a FILTER's '(': the innermost is named
    (query(a="?s :p ?o FILTER(EXISTS { ?o :q ?x )"),
     "q.rq:6:57: '{' opened at 6:46 is never closed (a '}' is missing before ')')"),
])
def test_a_bracket_never_closed_is_named_with_where_it_opened(text, said):
    assert error(text) == said


@pytest.mark.parametrize(("text", "said"), [
    # one '}' too many at the end: the pair that ended the query is named
    (query(end="\n}\n}\n"), "q.rq:9:1: this '}' closes nothing (the '{' opened at 4:7 was closed at 8:1)"),
    # one ')' too many in a FILTER
    (query(a="?s :p ?o FILTER(?o > 3))"),
     "q.rq:6:46: this ')' closes nothing (the '(' opened at 6:38 was closed at 6:45)"),
    # a ']' with no '[' open at all
    (query(a="?s :p ?o ]"), "q.rq:6:32: this ']' closes nothing"),
])
def test_a_bracket_that_closes_nothing_says_so(text, said):
    assert error(text) == said


def test_a_body_closed_too_early_names_the_brace_that_closed_it():
    text = query(a="?s :p ?o } FILTER(?o > 3)")
    assert error(text) == ("q.rq:6:34: unexpected 'FILTER' after the '}' at 6:32, which closes the '{' opened "
                           "at 6:21: is that '}' one too many?")


def test_text_after_the_end_of_the_query_names_what_ended_it():
    assert error(query(end="\n}\nDEFINE")) == (
        "q.rq:9:1: unexpected 'DEFINE' after the end of the query (the '{' opened at 4:7 was closed at 8:1)")


def test_a_missing_operator_is_not_taken_for_a_missing_bracket():
    """After ``FILTER(?o``, a ')' would let ``?x`` start a triple: still, a variable there is
    more likely an operator forgotten."""
    assert error(query(a="?s :p ?o FILTER(?o ?x)")) == "q.rq:6:42: unexpected '?x'; expected an operator or ')'"


@pytest.mark.parametrize(("a", "said"), [
    ("?s :p 'abc", "q.rq:6:29: this ' opens a string that is not closed on its line"),
    ('?s :p """abc', 'q.rq:6:29: this """ opens a string that is never closed'),
])
def test_a_string_never_closed(a, said):
    assert error(query(a=a)) == said


@pytest.mark.parametrize("text", [
    query().replace("<http://ex.org/s>", "<http://ex.org/s"),
    query().replace("<http://ex.org/s>", "<http://ex.org/ s>"),
])
def test_an_iri_that_does_not_end(text):
    assert error(text) == "q.rq:3:15: this '<' starts an IRI that does not end: an IRI is <...>, with no space in it"


# ---------------------------------------------------------------- did you mean


@pytest.mark.parametrize(("text", "said"), [
    (query(clauses="WITHN 10 SECONDS"), "q.rq:2:10: unexpected 'WITHN'; did you mean WITHIN?"),
    (query().replace("SEQ(", "SEK("), "q.rq:5:3: unexpected 'SEK'; did you mean SEQ?"),
    (query().replace("DEFINE GPM A", "DEFNE GPM A"), "q.rq:6:3: unexpected 'DEFNE'; did you mean DEFINE?"),
    (query().replace("DEFINE GPM A", "DEFINE GMP A"), "q.rq:6:10: unexpected 'GMP'; did you mean GPM?"),
    (query().replace("WHERE", "WHRE"), "q.rq:4:1: unexpected 'WHRE'; did you mean WHERE?"),
    (query().replace("FROM STREAM", "FROM STREM"), "q.rq:3:6: unexpected 'STREM'; did you mean STREAM?"),
    ("PREFX : <http://ex.org/>\nSELECT *", "q.rq:1:1: unexpected 'PREFX'; did you mean PREFIX?"),
    # SPARQL's keywords and functions, in a GPM body
    (query(a="?s :p ?o FILTR(?o > 3)"), "q.rq:6:32: unexpected 'FILTR'; did you mean FILTER?"),
    (query(a="?s :p ?o OPTINAL { ?o :r ?y }"), "q.rq:6:32: unexpected 'OPTINAL'; did you mean OPTIONAL?"),
    (query(a="?s :p ?o FILTER(CONTIANS(?o, 'a'))"), "q.rq:6:39: unexpected 'CONTIANS'; did you mean CONTAINS?"),
])
def test_a_misspelt_keyword_gets_did_you_mean(text, said):
    assert error(text) == said


def test_no_suggestion_when_nothing_is_close():
    assert error(query(clauses="EVERY 10 SECONDS")) == (
        "q.rq:2:10: unexpected 'EVERY'; expected a keyword (WHERE, FROM, WITHIN, ...)")


def test_a_word_where_a_name_goes_is_not_corrected():
    """``DEFINE GPM A IN S``: IN is no misspelling of ON to difflib (too short to tell)."""
    assert error(query().replace("GPM A ON", "GPM A IN")) == "q.rq:6:16: unexpected 'IN'; expected ON"


@pytest.mark.parametrize(("clauses", "said"), [
    ("WITHIN 10 SECONS", "q.rq:2:20: unknown window unit SECONS; use MILLISECOND(S), SECOND(S), MINUTE(S), "
                         "HOUR(S), DAY(S) or EVENTS; did you mean SECONDS?"),
    ("WITHIN 10 EVNTS", "q.rq:2:20: unknown window unit EVNTS; use MILLISECOND(S), SECOND(S), MINUTE(S), "
                        "HOUR(S), DAY(S) or EVENTS; did you mean EVENTS?"),
    ("WITHIN 10 FORTNIGHTS", "q.rq:2:20: unknown window unit FORTNIGHTS; use MILLISECOND(S), SECOND(S), "
                             "MINUTE(S), HOUR(S), DAY(S) or EVENTS"),
    ("LATENESS 1 MINUTS", "q.rq:2:21: LATENESS takes a time unit, not MINUTS: MILLISECOND(S), SECOND(S), "
                          "MINUTE(S), HOUR(S) or DAY(S); did you mean MINUTES?"),
    ("SELECTION CHRONOLOGICLA", "q.rq:2:20: SELECTION takes UNRESTRICTED, CHRONOLOGICAL, RECENT or LATEST, not "
                                "CHRONOLOGICLA; did you mean CHRONOLOGICAL?"),
])
def test_a_misspelt_unit_or_policy_gets_did_you_mean(clauses, said):
    assert error(query(clauses=clauses)) == said


# ---------------------------------------------------------------- expected lists


@pytest.mark.parametrize(("text", "said"), [
    # the start of an expression is one thing
    (query(a="?s :p ?o FILTER(?o > )"), "q.rq:6:44: unexpected ')'; expected an expression"),
    (query(a="?s :p ?o FILTER ?o"), "q.rq:6:39: unexpected '?o'; expected an expression"),
    # after a complete expression: its operators, grouped
    (query(a="?s :p ?o BIND(?o + 1 ?x)"), "q.rq:6:44: unexpected '?x'; expected an operator or AS"),
    # after a triple: the pattern keywords, a few named, and the punctuation
    (query(a="?s :p ?o ?x"), "q.rq:6:32: unexpected '?x'; expected a keyword (FILTER, OPTIONAL, BIND, ...), "
                             "',', '.', ';', '{' or '}'"),
    # where an object goes
    (query(a="?s :p }"), "q.rq:6:29: unexpected '}'; expected a variable, an IRI, a literal, a blank node "
                         "or a path operator"),
    # a whole number in a quantifier
    (query(seq="A ; B{,3}"), "q.rq:5:13: unexpected ','; expected a whole number"),
    # SEQ's operators and modifiers
    (query(seq="A B"), "q.rq:5:9: unexpected 'B'; expected a sequence operator (',', ';' or ':'), a modifier "
                       "(+, *, ?, ! or {m,n}) or ')'"),
    (query(seq=""), "q.rq:5:7: unexpected ')'; expected a name or '('"),
    ("SELECT\nFROM STREAM S <http://ex.org/s>", "q.rq:2:1: unexpected 'FROM'; expected a variable, DISTINCT, "
                                                "REDUCED, '*' or '('"),
    ("", "q.rq:1:1: unexpected end of query; expected SELECT, PREFIX, BASE or CONSTRUCT"),
    (query(clauses="PARTITION ?s"), "q.rq:2:20: unexpected '?s'; expected BY"),
    (query(a="?s :p ?o @"), "q.rq:6:32: unexpected character '@'; expected a keyword (FILTER, OPTIONAL, BIND, "
                            "...), ',', '.', ';', '{' or '}'"),
    # comparisons do not chain (SPARQL's grammar)
    (query(a="?s :p ?o FILTER(?o > 0 = true)"),
     "q.rq:6:46: unexpected '=': comparisons do not chain; put the first in parentheses, as in (?a < ?b) = true"),
])
def test_expected_lists_are_grouped_and_short(text, said):
    assert error(text) == said
