"""The SPARQL 1.1 Graph Store HTTP Protocol at ``/store`` (docs/decisions.md 73).

GET and HEAD read the dataset ``/sparql`` answers over: a named graph (``?graph=IRI``: the
KB's, or a CONSTRUCT match's), the default graph (``?default``: the materialised matches), or
everything (no parameter: TriG or N-Quads). PUT, POST and DELETE write the KB's named graphs,
each as the SPARQL Update the protocol defines it to be (GSP section 5), so a write is checked,
applied, journaled (``--data``) and replayed at a restart exactly as a SPARQL Update is. The
default graph is the engine's (the matches): writing it is refused, as is a body's
default-graph triples sent to the whole store."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import quote

import anyio
import pyoxigraph
from fastapi import APIRouter, Query, Request, Response
from pyoxigraph import BlankNode, DefaultGraph, NamedNode, Quad, RdfFormat

from spaseq.engine.errors import SpaseqError
from spaseq.engine.io.parsing import syntax_error_location

from . import negotiation as mt
from .bodies import BODY, BodyError, check_iri, located
from .config import ServerConfig
from .guards import read_body, require_token
from .service import EngineService, ServiceError
from .sparql import GRAPH_FORMATS, with_charset

#: a whole dataset as GET /store gives it (the first is the default)
DATASET_FORMATS: dict[str, RdfFormat] = {mt.TRIG: RdfFormat.TRIG, mt.NQUADS: RdfFormat.N_QUADS}
#: the bodies PUT and POST take, named for the OpenAPI description (pyoxigraph reads any
#: media type it knows: ``RdfFormat.from_media_type``)
BODY_MEDIA_TYPES = (mt.TURTLE, mt.NTRIPLES, mt.RDF_XML, mt.TRIG, mt.NQUADS, "application/ld+json")

_GRAPH = Query(None, description="the named graph (an absolute IRI)")
_DEFAULT = Query(None, description="present (no value): the default graph, the materialised matches")
_BODY = {"requestBody": {"required": True, "content": {m: {"schema": {"type": "string"}}
                                                        for m in BODY_MEDIA_TYPES}}}
_DEFAULT_IS_THE_ENGINES = ("the default graph holds the materialised matches, written by the engine: "
                           "write the knowledge base's named graphs, ?graph=IRI")


@dataclass(frozen=True)
class Target:
    """What a request names: a graph, the default graph, or (neither) the whole store."""

    graph: NamedNode | None = None
    default: bool = False


def target(request: Request) -> Target:
    """The request's ``?graph=IRI`` or ``?default`` (400 for both, several, or a bad IRI)."""
    params = request.query_params
    graphs = params.getlist("graph")
    if graphs and "default" in params:
        raise ServiceError(400, "give ?graph=IRI or ?default, not both")
    if len(graphs) > 1:
        raise ServiceError(400, "give one graph=, not several")
    if graphs:
        try:
            return Target(graph=NamedNode(check_iri(graphs[0], "graph")))
        except BodyError as exc:
            raise ServiceError(400, str(exc)) from None
    return Target(default="default" in params)


def read_payload(body: bytes, media: str, where: Target) -> list[Quad]:
    """A PUT or POST body as quads: for a graph, its triples (a named graph in it is refused);
    for the whole store, a dataset's quads in named graphs. ServiceError 415 for a format
    pyoxigraph does not read, 400 ``LINE:COLUMN: message`` for a body it cannot parse."""
    fmt = RdfFormat.from_media_type(media) if media else None
    if fmt is None:
        raise ServiceError(415, f"a graph is sent as {', '.join(BODY_MEDIA_TYPES)} (or another RDF "
                                f"format pyoxigraph reads), not {media or 'a body without Content-Type'}")
    graph = where.graph
    try:
        quads = list(pyoxigraph.parse(body, format=fmt, base_iri=graph.value if graph else None,
                                      without_named_graphs=graph is not None))
    except SyntaxError as err:
        location, message = syntax_error_location(err, BODY)
        if graph is not None and message == "Named graphs are not allowed":
            raise ServiceError(400, f"the body of one graph (?graph=) has a named graph: send the {fmt.name} "
                                    "to /store without ?graph=, or the graph's triples") from None
        raise ServiceError(400, located(SpaseqError(f"{fmt.name} syntax error: {message}", location))) from None
    except UnicodeDecodeError as err:
        raise ServiceError(400, f"the body is not UTF-8: {err}") from None
    if graph is None:
        if any(isinstance(q.graph_name, DefaultGraph) for q in quads):
            raise ServiceError(400, "the body has triples in the default graph, which holds the materialised "
                                    "matches: name their graph (?graph=IRI, or a TriG graph block)")
        if any(isinstance(q.graph_name, BlankNode) for q in quads):
            raise ServiceError(400, "a graph named by a blank node cannot be written: name it with an IRI")
    return quads


def graph_names(quads: list[Quad]) -> list[NamedNode]:
    """The named graphs of a dataset body (``read_payload`` refused any other), in body order."""
    return [g for g in dict.fromkeys(q.graph_name for q in quads) if isinstance(g, NamedNode)]


def as_update(method: str, graph: NamedNode | None, quads: list[Quad]) -> str:
    """The SPARQL Update the protocol defines ``method`` on ``graph`` (None: the whole store) to
    be: PUT is DROP SILENT then INSERT DATA (an empty body leaves an empty graph), POST is
    INSERT DATA, DELETE is DROP."""
    if method == "DELETE":
        assert graph is not None
        return f"DROP GRAPH <{graph.value}>"
    parts = []
    if method == "PUT":
        parts.append(f"DROP SILENT GRAPH <{graph.value}>" if graph is not None else "DROP SILENT ALL")
    if graph is not None:
        parts.append(f"CREATE SILENT GRAPH <{graph.value}>")
        data = _graph_block(graph, (q.triple for q in quads))
    else:
        data = "\n".join(_graph_block(g, (q.triple for q in quads if q.graph_name == g)) for g in graph_names(quads))
    if quads:
        parts.append(f"INSERT DATA {{\n{data}}}")
    return " ;\n".join(parts)


def _graph_block(graph: NamedNode, triples: Iterable[pyoxigraph.Triple]) -> str:
    """``GRAPH <g> { ... }`` with the triples in N-Triples (valid SPARQL term syntax)."""
    text = pyoxigraph.serialize(triples, format=RdfFormat.N_TRIPLES).decode()  # type: ignore[union-attr]  # pyoxigraph's stubs: bytes, not None, without an output
    return f"GRAPH <{graph.value}> {{\n{text}}}\n"


def router(service: EngineService, config: ServerConfig) -> APIRouter:
    """The ``/store`` routes over ``service``'s KB and store."""
    routes = APIRouter()

    # HEAD is GET without the body (the same handler): left out of the OpenAPI description
    @routes.head("/store", include_in_schema=False)
    @routes.get("/store", summary="Graph Store Protocol: a named graph (?graph=IRI), the default graph "
                                  "(?default: the matches) or the whole store (TriG, N-Quads)")
    async def get_store(request: Request, graph: str | None = _GRAPH, default: str | None = _DEFAULT) -> Response:
        where = target(request)
        await service.follow_kb()
        store = service.store
        assert store is not None
        offers = GRAPH_FORMATS if where.graph is not None or where.default else DATASET_FORMATS
        media = mt.negotiate(request.headers.get("accept"), list(offers))
        if media is None:
            raise ServiceError(406, f"{'a graph' if offers is GRAPH_FORMATS else 'the store'} comes as "
                               f"{', '.join(offers)}")
        if where.graph is not None:
            if not store.contains_named_graph(where.graph):
                raise ServiceError(404, f"no graph <{where.graph.value}> (GET /store lists them all)")
            name: NamedNode | DefaultGraph | None = where.graph
        else:
            name = DefaultGraph() if where.default else None

        def serialize() -> bytes:
            quads = store.quads_for_pattern(None, None, None, name)
            if name is None:  # the whole store
                return pyoxigraph.serialize(quads, format=offers[media])  # type: ignore[return-value]  # pyoxigraph's stubs: bytes, not None, without an output
            return pyoxigraph.serialize((q.triple for q in quads), format=offers[media])  # type: ignore[return-value]  # as above

        return Response(await anyio.to_thread.run_sync(serialize), media_type=with_charset(media))

    async def write(request: Request, method: str) -> Response:
        """PUT and POST: 201 (Location) when the graph is new, 204 otherwise."""
        require_token(request, config)
        where = target(request)
        if where.default:
            raise ServiceError(405, _DEFAULT_IS_THE_ENGINES, {"Allow": "GET, HEAD"})
        service.check_writable()
        media = mt.media_type(request.headers.get("content-type"))
        body = await read_body(request, config.max_body)
        quads = await anyio.to_thread.run_sync(read_payload, body, media, where)
        graphs = [where.graph] if where.graph is not None else graph_names(quads)
        existed = await service.write_graphs(as_update(method, where.graph, quads), graphs, create=True)
        if existed or where.graph is None:
            return Response(status_code=204)
        return Response(status_code=201, headers={"Location": f"/store?graph={quote(where.graph.value, safe='')}"})

    @routes.put("/store", summary="Graph Store Protocol: replace a KB graph (?graph=IRI), or every KB "
                                  "graph (a TriG or N-Quads body); 201 for a new graph, else 204",
                openapi_extra=_BODY, status_code=204)
    async def put_store(request: Request, graph: str | None = _GRAPH, default: str | None = _DEFAULT) -> Response:
        return await write(request, "PUT")

    @routes.post("/store", summary="Graph Store Protocol: add to a KB graph (?graph=IRI), or add a TriG "
                                   "or N-Quads body's graphs; 201 for a new graph, else 204",
                 openapi_extra=_BODY, status_code=204)
    async def post_store(request: Request, graph: str | None = _GRAPH, default: str | None = _DEFAULT) -> Response:
        return await write(request, "POST")

    @routes.delete("/store", summary="Graph Store Protocol: delete a KB graph (?graph=IRI); 404 if "
                                     "the KB has none", status_code=204)
    async def delete_store(request: Request, graph: str | None = _GRAPH,
                           default: str | None = _DEFAULT) -> Response:
        require_token(request, config)
        where = target(request)
        if where.default:
            raise ServiceError(405, _DEFAULT_IS_THE_ENGINES, {"Allow": "GET, HEAD"})
        if where.graph is None:
            raise ServiceError(405, "name the graph to delete: ?graph=IRI", {"Allow": "GET, HEAD, PUT, POST"})
        await service.write_graphs(as_update("DELETE", where.graph, []), [where.graph], create=False)
        return Response(status_code=204)

    return routes
