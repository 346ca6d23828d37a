"""The SPARQL 1.1 Service Description ``GET /sparql`` gives without a query (docs/decisions.md
73, docs/vocabulary.md): the endpoint, its languages (SPARQL 1.1 Query and Update, and SPAseq),
its result formats, its default dataset (the matches in the default graph, the KB's named
graphs), and the streaming extensions' routes in the ``spaseq:`` vocabulary. Built as RDF and
serialised by pyoxigraph in the format the client accepts (Turtle by default)."""

from __future__ import annotations

import pyoxigraph
from fastapi import Request, Response
from pyoxigraph import BlankNode, Literal, NamedNode, Quad, RdfFormat

from spaseq.engine.vocab import RDF_TYPE, SPASEQ_NS, spaseq

from . import negotiation as mt
from .bodies import EVENT_MEDIA_TYPES
from .service import EngineService, ServiceError
from .sparql import GRAPH_FORMATS, RESULT_FORMATS, with_charset

SD_NS = "http://www.w3.org/ns/sparql-service-description#"
FORMATS_NS = "http://www.w3.org/ns/formats/"
RDFS_NS = "http://www.w3.org/2000/01/rdf-schema#"

#: the description's formats: Turtle first (the default), JSON-LD (pyoxigraph 0.5 on) beside
#: the graph formats
OFFERS: dict[str, RdfFormat] = {mt.TURTLE: RdfFormat.TURTLE}
if hasattr(RdfFormat, "JSON_LD"):
    OFFERS["application/ld+json"] = RdfFormat.JSON_LD
OFFERS.update((m, f) for m, f in GRAPH_FORMATS.items() if m != mt.TURTLE)
PREFIXES = {"sd": SD_NS, "formats": FORMATS_NS, "spaseq": SPASEQ_NS, "rdfs": RDFS_NS}

#: the W3C format IRIs (http://www.w3.org/ns/formats/) of the media types the server speaks
_FORMAT_IRIS = {mt.SPARQL_JSON: "SPARQL_Results_JSON", mt.SPARQL_XML: "SPARQL_Results_XML",
                mt.CSV: "SPARQL_Results_CSV", mt.TSV: "SPARQL_Results_TSV", mt.TURTLE: "Turtle",
                mt.NTRIPLES: "N-Triples", mt.NQUADS: "N-Quads", mt.TRIG: "TriG", mt.RDF_XML: "RDF_XML"}


def _sd(local: str) -> NamedNode:
    return NamedNode(SD_NS + local)


def _format(media: str) -> NamedNode | None:
    local = _FORMAT_IRIS.get(media)
    return NamedNode(FORMATS_NS + local) if local else None


def describe(base: str, kb_graphs: list) -> list[Quad]:
    """The description of the service at ``base`` (``http://host:port/``) whose KB has
    ``kb_graphs`` (named graphs)."""
    endpoint = NamedNode(base + "sparql")
    language = spaseq("SPAseq")
    triples: list[tuple] = [
        (endpoint, RDF_TYPE, _sd("Service")),
        (endpoint, _sd("endpoint"), endpoint),
        (endpoint, _sd("supportedLanguage"), _sd("SPARQL11Query")),
        (endpoint, _sd("supportedLanguage"), _sd("SPARQL11Update")),
        (endpoint, _sd("supportedLanguage"), language),
        (endpoint, _sd("feature"), _sd("EmptyGraphs")),
        (language, RDF_TYPE, _sd("Language")),
        (language, NamedNode(RDFS_NS + "label"), Literal("SPAseq")),
        (language, NamedNode(RDFS_NS + "comment"),
         Literal("Continuous queries over RDF graph streams: a SPAseq query sent by POST to the endpoint "
                 "(or to spaseq:queriesEndpoint) is registered, and its matches followed at "
                 "/queries/{id}/matches")),
        (endpoint, spaseq("queriesEndpoint"), NamedNode(base + "queries")),
        (endpoint, spaseq("eventsEndpoint"), NamedNode(base + "events")),
        (endpoint, spaseq("heartbeatEndpoint"), NamedNode(base + "heartbeat")),
        (endpoint, spaseq("graphStoreEndpoint"), NamedNode(base + "store")),
    ]
    for media in dict.fromkeys([*RESULT_FORMATS, *GRAPH_FORMATS]):
        if (iri := _format(media)) is not None:
            triples.append((endpoint, _sd("resultFormat"), iri))
    for media in EVENT_MEDIA_TYPES:
        if (iri := _format(media)) is not None:
            triples.append((endpoint, spaseq("eventFormat"), iri))
    dataset, default = BlankNode(), BlankNode()
    triples += [(endpoint, _sd("defaultDataset"), dataset), (dataset, RDF_TYPE, _sd("Dataset")),
                (dataset, _sd("defaultGraph"), default), (default, RDF_TYPE, _sd("Graph")),
                (default, NamedNode(RDFS_NS + "comment"),
                 Literal("the materialised matches: spaseq:Query and spaseq:Match descriptions"))]
    for graph in kb_graphs:
        if isinstance(graph, NamedNode):
            named = BlankNode()
            triples += [(dataset, _sd("namedGraph"), named), (named, RDF_TYPE, _sd("NamedGraph")),
                        (named, _sd("name"), graph)]
    return [Quad(s, p, o) for s, p, o in triples]


def service_description(request: Request, service: EngineService) -> Response:
    """The description as the client's ``Accept`` prefers (406 if none is offered)."""
    media = mt.negotiate(request.headers.get("accept"), list(OFFERS))
    if media is None:
        raise ServiceError(406, f"the service description comes as {', '.join(OFFERS)}")
    quads = describe(str(request.base_url), service.kb_graphs())
    body = pyoxigraph.serialize((q.triple for q in quads), format=OFFERS[media], prefixes=PREFIXES)
    return Response(body, media_type=with_charset(media))
