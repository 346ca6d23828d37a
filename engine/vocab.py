"""The spaseq vocabulary: one stable namespace for extension functions, stream membership of
recorded events, and materialised matches, so that every room of the project spells it alike."""

from __future__ import annotations

from pyoxigraph import NamedNode

#: The spaseq namespace (prefix ``spaseq:``); documented in the README, never to change.
SPASEQ_NS = "https://w3id.org/spaseq#"

#: PROV-O, whose ``prov:generatedAtTime`` stamps recorded events (replay files, Datasets).
PROV_NS = "http://www.w3.org/ns/prov#"
GENERATED_AT_TIME = NamedNode(PROV_NS + "generatedAtTime")


def spaseq(local: str) -> NamedNode:
    """The IRI ``spaseq:local`` as a pyoxigraph NamedNode."""
    return NamedNode(SPASEQ_NS + local)
