"""engine/language/suggest.py: the closest possible word, compared case-insensitively, only
when close (difflib's ratio at least ``CUTOFF``)."""

from __future__ import annotations

import pytest

from spaseq.engine.language.suggest import did_you_mean, hint

KEYWORDS = ("WITHIN", "WHERE", "FROM", "SEQ", "FILTER", "OPTIONAL")


@pytest.mark.parametrize(("word", "suggested"), [
    ("WITHN", "WITHIN"),    # a letter missing
    ("withn", "WITHIN"),    # in any case; the suggestion as the language spells it
    ("WHRE", "WHERE"),
    ("SEK", "SEQ"),         # a letter wrong in a short word
    ("FILTRE", "FILTER"),   # two letters swapped
    ("OPTIONALL", "OPTIONAL"),
    ("EVERY", None),        # nothing close
    ("ON", None),           # too short to tell
    ("where", None),        # the word itself is no misspelling
])
def test_did_you_mean(word, suggested):
    assert did_you_mean(word, KEYWORDS) == suggested


def test_hint_ends_a_message_or_adds_nothing():
    assert hint("SECONS", ("SECONDS", "MINUTES")) == "; did you mean SECONDS?"
    assert hint("FORTNIGHTS", ("SECONDS", "MINUTES")) == ""
