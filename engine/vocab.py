"""The namespaces every room of the project spells alike: spaseq's own (extension functions,
stream membership of recorded events, materialised matches), XML Schema, RDF and PROV-O."""

from __future__ import annotations

from pyoxigraph import NamedNode

#: The spaseq namespace (prefix ``spaseq:``); documented in the README, never to change.
SPASEQ_NS = "https://w3id.org/spaseq#"

#: XML Schema datatypes (prefix ``xsd:``).
XSD_NS = "http://www.w3.org/2001/XMLSchema#"

#: RDF (prefix ``rdf:``).
RDF_NS = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"

#: PROV-O, whose ``prov:generatedAtTime`` stamps recorded events (replay files, Datasets);
#: an event that lasts also has ``prov:startedAtTime`` and ``prov:endedAtTime`` (decision 71).
PROV_NS = "http://www.w3.org/ns/prov#"
GENERATED_AT_TIME = NamedNode(PROV_NS + "generatedAtTime")
STARTED_AT_TIME = NamedNode(PROV_NS + "startedAtTime")
ENDED_AT_TIME = NamedNode(PROV_NS + "endedAtTime")


def spaseq(local: str) -> NamedNode:
    """The IRI ``spaseq:local`` as a pyoxigraph NamedNode."""
    return NamedNode(SPASEQ_NS + local)


def xsd(local: str) -> NamedNode:
    """The IRI ``xsd:local`` as a pyoxigraph NamedNode."""
    return NamedNode(XSD_NS + local)


XSD_STRING = xsd("string")
XSD_BOOLEAN = xsd("boolean")
XSD_INTEGER = xsd("integer")
XSD_DECIMAL = xsd("decimal")
XSD_FLOAT = xsd("float")
XSD_DOUBLE = xsd("double")
XSD_DATETIME = xsd("dateTime")
XSD_DATETIMESTAMP = xsd("dateTimeStamp")
XSD_DURATION = xsd("duration")
XSD_DAYTIME_DURATION = xsd("dayTimeDuration")

RDF_TYPE = NamedNode(RDF_NS + "type")
RDF_LANGSTRING = NamedNode(RDF_NS + "langString")
