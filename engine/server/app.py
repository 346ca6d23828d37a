"""The HTTP application: the routes of ``spaseq serve`` (README, "spaseq serve"), served
with their OpenAPI description at ``/openapi.json`` (``/docs`` renders it).

Writes (register, delete, events, heartbeat) need the Bearer token when the server has one;
every refusal is ``{"error": message}`` with its status, a query's or a body's message as
``LINE:COLUMN: message``."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from decimal import Decimal
from urllib.parse import parse_qs

import anyio
from fastapi import Depends, FastAPI, Query, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import HTMLResponse, JSONResponse, StreamingResponse
from sse_starlette.sse import EventSourceResponse, ServerSentEvent
from starlette.exceptions import HTTPException as StarletteHTTPException

from spaseq.engine.errors import SpaseqError
from spaseq.engine.output.native import json_time

from . import console, graph_store, health, metrics
from . import negotiation as mt
from .bodies import EVENT_MEDIA_TYPES
from .config import ServerConfig
from .description import service_description
from .guards import error_response, read_body, require_read_token, require_token
from .matchlog import Expired
from .mqtt import MqttBridge
from .service import EngineService, Registered, ServiceError
from .sparql import (
    RESULT_FORMATS,
    Dataset,
    NotAcceptable,
    SparqlError,
    evaluate,
    is_spaseq,
    names_its_dataset,
    results_from_json,
    with_using,
)

_SPARQL_BODY = {"requestBody": {"content": {
    mt.SPARQL_QUERY: {"schema": {"type": "string"}},
    mt.FORM: {"schema": {"type": "object", "properties": {"query": {"type": "string"}}}}}}}
_EVENTS_BODY = {"requestBody": {"required": True, "content": {
    m: {"schema": {"type": "string"}} for m in EVENT_MEDIA_TYPES}}}


def create_app(config: ServerConfig) -> FastAPI:
    """The application for ``config``; its lifespan starts and stops the engine service."""
    service = EngineService(config)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        try:
            await service.start()
        except SpaseqError as exc:  # a user mistake (a KB file, --data): said, no traceback
            print(f"spaseq serve: {exc}" if exc.location is None else str(exc), file=sys.stderr)
            app.state.user_error = True
            raise
        ticks = asyncio.create_task(service.idle_ticks())
        bridge = MqttBridge(service, config.mqtt) if config.mqtt is not None else None
        app.state.mqtt = bridge
        if bridge is not None:
            await bridge.start()
        try:
            yield
        finally:
            ticks.cancel()
            if bridge is not None:
                await bridge.stop()
            await service.stop()

    def read_guard(request: Request) -> None:
        if not console.is_page_request(request):  # the console asks for the token itself
            require_read_token(request, config)

    app = FastAPI(title="spaseq serve", version="0.1.0", lifespan=lifespan, docs_url=None,
                  dependencies=[Depends(read_guard)],
                  description="A SPARQL endpoint with streaming extensions: register SPAseq "
                              "continuous queries, push RDF graph events, receive matches live.")
    app.state.service = service
    app.state.user_error = False
    app.state.streams = 0
    app.state.mqtt = None
    if config.cors:
        app.add_middleware(CORSMiddleware, allow_origins=list(config.cors),
                           allow_methods=["GET", "HEAD", "POST", "PUT", "DELETE"],
                           allow_headers=["Authorization", "Content-Type", "Last-Event-ID", "Accept"],
                           expose_headers=["Location"])

    @app.exception_handler(ServiceError)
    async def _service_error(request: Request, exc: ServiceError) -> JSONResponse:
        return error_response(exc.status, exc.message, exc.headers)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        return error_response(exc.status_code, str(exc.detail), dict(exc.headers or {}))

    @app.exception_handler(RequestValidationError)
    async def _validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {}
        where = ".".join(str(p) for p in first.get("loc", ()))
        return error_response(400, f"{where}: {first.get('msg', 'invalid request')}")

    # ------------------------------------------------------------------ index

    @app.get("/", summary="For a browser (Accept: text/html) the console: the queries, their "
                          "matches live, rates, automata, SPARQL; otherwise where the routes are")
    async def index(request: Request) -> Response:
        if console.is_page_request(request):
            return HTMLResponse(console.page())
        mqtt = {"mqtt": app.state.mqtt.status()} if app.state.mqtt is not None else {}
        return JSONResponse({"service": "spaseq serve", "sparql": "/sparql", "queries": "/queries",
                             "events": "/events?stream=IRI", "heartbeat": "/heartbeat?time=T",
                             "store": "/store?graph=IRI", "health": "/health",
                             "metrics": "/metrics", "openapi": "/openapi.json", **service.status(),
                             "followers": app.state.streams, **mqtt})

    # ------------------------------------------------------------------ SPARQL protocol

    @app.get("/sparql", summary="SPARQL 1.1 query over the KB and the materialised matches; without "
                             "parameters, the SPARQL 1.1 Service Description (Turtle by default)")
    async def sparql_get(request: Request, query: str | None = None) -> Response:
        params = request.query_params
        if query is None and not params:  # SPARQL 1.1 Service Description: GET without parameters
            return service_description(request, service)
        if query is None:
            raise ServiceError(400, "give the query as query=")
        if len(params.getlist("query")) > 1:  # the protocol's bad_multiple_queries
            raise ServiceError(400, "give one query=, not several")
        if is_spaseq(query):
            raise ServiceError(405, "a SPAseq query registers a continuous query: send it with POST",
                               {"Allow": "POST"})
        return await _sparql(request, query, _dataset(params.getlist("default-graph-uri"),
                                                      params.getlist("named-graph-uri")))

    @app.post("/sparql", summary="SPARQL 1.1 query, or register a SPAseq query (201)",
              openapi_extra=_SPARQL_BODY, status_code=200)
    async def sparql_post(request: Request) -> Response:
        media = mt.media_type(request.headers.get("content-type"))
        body = await read_body(request, config.max_body)
        params = {k: request.query_params.getlist(k) for k in request.query_params}
        if media == mt.SPARQL_QUERY:
            query = _utf8(body)
        elif media == mt.FORM:
            form = parse_qs(_utf8(body), keep_blank_values=True)
            for k, v in form.items():
                params.setdefault(k, []).extend(v)
            # SPARQLWrapper sends a text it takes for an update (a keyword such as LOAD in a
            # comment is enough) as update=: a SPAseq query registers however it is sent
            update = next(iter(form.get("update") or ()), None)
            if not form.get("query") and update is not None and is_spaseq(update):
                form["query"] = [update]
            elif update is not None:
                if len(form["update"]) > 1:
                    raise ServiceError(400, "give one update=, not several")
                return await _update(request, update, params)
            if not form.get("query"):
                raise ServiceError(400, "give the query as query=")
            if len(form["query"]) > 1:
                raise ServiceError(400, "give one query=, not several")
            query = form["query"][0]
        elif media == mt.SPARQL_UPDATE:
            return await _update(request, _utf8(body), params)
        else:
            raise ServiceError(415, f"a SPARQL query is sent as {mt.SPARQL_QUERY} or {mt.FORM}, "
                               f"not {media or 'a body without Content-Type'}")
        if is_spaseq(query):
            # output-stream=IRI names the query's output stream (SPARQLWrapper itself sends
            # output=json, so the name differs)
            return await _register(request, query, next(iter(params.get("output-stream") or ()), None))
        return await _sparql(request, query, _dataset(params.get("default-graph-uri", []),
                                                      params.get("named-graph-uri", [])))

    async def _update(request: Request, text: str, params: dict[str, list[str]]) -> Response:
        """SPARQL Update on the in-memory KB: a write (token), 204 once applied (and journaled).
        The protocol's dataset parameters are written into the update as USING clauses; 400
        when the update names its own dataset (USING, WITH) too."""
        require_token(request, config)
        using, named = params.get("using-graph-uri", []), params.get("using-named-graph-uri", [])
        if using or named:
            if names_its_dataset(text):
                raise ServiceError(400, "using-graph-uri/using-named-graph-uri and the update's own "
                                        "USING or WITH: give the dataset one way")
            text = with_using(text, using, named)
        await service.update(text)
        return Response(status_code=204)

    async def _sparql(request: Request, query: str, dataset: Dataset) -> Response:
        assert service.store is not None
        await service.follow_kb()
        try:
            answer = await anyio.to_thread.run_sync(evaluate, service.store, query, dataset,
                                                    request.headers.get("accept"))
        except SparqlError as exc:
            raise ServiceError(400, str(exc)) from None
        except NotAcceptable as exc:
            raise ServiceError(406, str(exc)) from None
        return Response(answer.body, media_type=answer.media_type)

    # ------------------------------------------------------------------ other protocols

    app.include_router(graph_store.router(service, config))
    app.include_router(metrics.router(service))
    health.install(app, service)

    # ------------------------------------------------------------------ queries

    async def _register(request: Request, text: str, output: str | None) -> JSONResponse:
        require_token(request, config)
        reg = await service.register(text, output)
        return JSONResponse(reg.describe(), status_code=201,
                            headers={"Location": f"/queries/{reg.id}"})

    @app.get("/queries", summary="The registered queries")
    async def list_queries() -> list[dict]:
        return [r.describe() for r in service.queries.values()]

    @app.post("/queries", summary="Register a SPAseq continuous query (201 + Location)",
              openapi_extra=_SPARQL_BODY, status_code=201)
    async def post_query(request: Request,
                         output: str | None = Query(None, alias="output-stream")) -> Response:
        require_token(request, config)
        media = mt.media_type(request.headers.get("content-type"))
        body = await read_body(request, config.max_body)
        if media == mt.SPARQL_QUERY:
            text = _utf8(body)
        elif media == mt.FORM:
            form = parse_qs(_utf8(body), keep_blank_values=True)
            if not form.get("query"):
                raise ServiceError(400, "give the query as query=")
            text = form["query"][0]
            output = output or next(iter(form.get("output-stream") or ()), None)
        else:
            raise ServiceError(415, f"a query is sent as {mt.SPARQL_QUERY} or {mt.FORM}, "
                               f"not {media or 'a body without Content-Type'}")
        return await _register(request, text, output)

    @app.get("/queries/{qid}", summary="A registered query: description and statistics")
    async def get_query(qid: str) -> dict:
        return service.get(qid).details()

    @app.delete("/queries/{qid}", summary="Unregister a query", status_code=204)
    async def delete_query(request: Request, qid: str) -> Response:
        require_token(request, config)
        service.get(qid)
        await service.delete(qid)
        return Response(status_code=204)

    # ------------------------------------------------------------------ events

    @app.post("/events", summary="Push events on a stream (all or nothing)", openapi_extra=_EVENTS_BODY)
    async def post_events(request: Request, response: Response, stream: str, time: str | None = None,
                          name: str | None = None, batch: str | None = None,
                          start: str | None = None) -> dict:
        require_token(request, config)
        media = mt.media_type(request.headers.get("content-type"))
        if media not in EVENT_MEDIA_TYPES:
            raise ServiceError(415, f"events are sent as {', '.join(EVENT_MEDIA_TYPES)}, "
                               f"not {media or 'a body without Content-Type'}")
        body = await read_body(request, config.max_body)
        # a client that may send a batch again (no answer before a crash) names it once
        key = request.headers.get("idempotency-key") or batch
        accepted, repeated, late = await service.push(stream, body, media, time, name, key, start)
        if repeated:
            response.headers["Idempotent-Replayed"] = "true"
        # the late events the queries dropped (--late drop), each with the queries it was late for
        return {"accepted": accepted, "late": late} if late else {"accepted": accepted}

    @app.post("/heartbeat", summary="Advance the clock: no event before time will come")
    async def heartbeat(request: Request, time: str) -> dict:
        require_token(request, config)
        await service.heartbeat(time)
        return {"clock": service.status()["clock"]}

    # ------------------------------------------------------------------ matches

    @app.get("/queries/{qid}/matches", summary="A query's matches: SSE, ndjson, or SPARQL results")
    async def matches(request: Request, qid: str, since: int = 0) -> Response:
        reg = service.get(qid)
        offers = [mt.SPARQL_JSON, mt.SSE, mt.NDJSON, mt.SPARQL_XML, mt.CSV, mt.TSV, mt.JSON]
        if reg.construct:
            offers.append(mt.TRIG)
        media = mt.negotiate(request.headers.get("accept"), offers)
        if media is None:
            raise ServiceError(406, f"matches come as {', '.join(offers)}")
        if media in (mt.SSE, mt.NDJSON):
            if app.state.streams >= config.max_clients:
                raise ServiceError(503, f"{app.state.streams} clients are following matches, the most "
                                   "this server serves (--max-clients)", {"Retry-After": "5"})
            last = request.headers.get("last-event-id")
            start = int(last) if last is not None and last.strip().isdigit() else since
            _since(reg, start)  # 410 now rather than a stream that cannot start
            if media == mt.SSE:
                return EventSourceResponse(_sse(request, reg, start), ping=config.keepalive,
                                           send_timeout=30)
            return StreamingResponse(_ndjson(request, reg, start), media_type=mt.NDJSON)
        entries = _since(reg, since)
        headers = {"X-Spaseq-Last": str(entries[-1].seq if entries else max(since, 0))}
        if media == mt.TRIG:
            return Response("".join(e.trig or "" for e in entries), media_type=mt.TRIG, headers=headers)
        document = _results(reg, entries)
        if RESULT_FORMATS[media] is RESULT_FORMATS[mt.SPARQL_JSON]:
            return Response(json.dumps(document, ensure_ascii=False), media_type=media, headers=headers)
        body = await anyio.to_thread.run_sync(results_from_json, document, media)
        return Response(body, media_type=media, headers=headers)

    def _since(reg: Registered, n: int) -> list:
        try:
            return reg.log.since(n)
        except Expired as exc:
            raise ServiceError(410, f"matches up to {exc.first - 1} are no longer kept (--keep-matches): "
                               f"ask from since={exc.first - 1}") from None

    async def _follow(request: Request, reg: Registered, start: int) -> AsyncIterator:
        """The query's entries after ``start`` as they come, until the client leaves, the query
        is deleted or the server stops. A follower more than ``--follower-lag`` results behind
        (or behind what is kept) gets a final ``Cutoff`` instead: it is never waited for, so
        ingestion goes on at its own pace, and it may resume from the number it was given."""
        app.state.streams += 1
        try:
            cursor = start
            while True:
                waiter = service.changed
                for entry in list(reg.log.entries):
                    if entry.seq <= cursor:
                        continue
                    if len(reg.log) - cursor > config.follower_lag or entry.seq != cursor + 1:
                        yield Cutoff(cursor, len(reg.log))
                        return
                    yield entry
                    cursor = entry.seq
                if service.queries.get(reg.id) is not reg or await request.is_disconnected():
                    return
                with contextlib.suppress(TimeoutError):
                    with anyio.fail_after(1.0):
                        await waiter.wait()
        finally:
            app.state.streams -= 1

    async def _sse(request: Request, reg: Registered, start: int) -> AsyncIterator[ServerSentEvent]:
        async for entry in _follow(request, reg, start):
            if isinstance(entry, Cutoff):
                yield ServerSentEvent(data=json.dumps(entry.message()), event="cutoff")
            else:
                yield ServerSentEvent(data=entry.line, id=str(entry.seq))

    async def _ndjson(request: Request, reg: Registered, start: int) -> AsyncIterator[str]:
        async for entry in _follow(request, reg, start):
            yield json.dumps(entry.message()) + "\n" if isinstance(entry, Cutoff) else entry.numbered + "\n"

    console.install(app)  # its assets, /docs offline, the automaton of a query
    return app


@dataclass(frozen=True)
class Cutoff:
    """The last thing a follower that fell too far behind is sent: where it stopped."""

    delivered: int   # the last number it was sent
    last: int        # the last number there is

    def message(self) -> dict:
        return {"error": f"cut off: {self.last - self.delivered} matches behind, more than this server "
                         "buffers for one client (--follower-lag); reconnect with Last-Event-ID or "
                         "since= to resume", "resume": self.delivered}


def _dataset(default: list[str], named: list[str]) -> Dataset:
    return Dataset(list(default), list(named))


def _utf8(body: bytes) -> str:
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ServiceError(400, f"the body is not UTF-8: {exc}") from None


def _results(reg: Registered, entries: list) -> dict:
    """Entries as a SPARQL 1.1 JSON results document with ``_time`` and ``_start``: as
    xsd:dateTime when the logged record has them so (``time_iso``, ``start_iso``: the
    server's --time-format applied to the match), else as xsd:decimal seconds."""
    rows = []
    for entry in entries:
        record = entry.record
        dated = "time_iso" in record  # the record's times are written as xsd:dateTime
        row = {"_time": json_time(Decimal(record["time"]), dated),
               "_start": json_time(Decimal(record["start"]), dated)}
        row.update(record["bindings"])
        rows.append(row)
    return {"head": {"vars": ["_time", "_start", *reg.variables]}, "results": {"bindings": rows}}
