"""The console of ``GET /`` (Accept: text/html) and what it needs beside the API: its own
assets (``/console/``), ``/docs`` with swagger-ui's files from the package ``fastapi-offline``
(``/console/swagger/``), and each query's automaton as SVG. Nothing comes from a CDN: the
console works with no network (docs/decisions.md 77).

The page and its assets are open even with ``--token-reads`` (they hold no data): the page
asks for the token and sends it with every call; ``/docs`` and ``/openapi.json`` stay open
as before (they tell a client how to authenticate)."""

from __future__ import annotations

from functools import cache
from importlib import resources
from pathlib import Path

from fastapi import APIRouter, FastAPI, Request, Response
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.staticfiles import StaticFiles
from starlette.responses import HTMLResponse

from spaseq.engine.compile.automaton_svg import automaton_svg

#: the console's files (console.html, .js, .css), package data beside this module
STATIC = Path(__file__).resolve().parent / "static"
ASSETS = "/console"
SWAGGER = "/console/swagger"

router = APIRouter()


@cache
def page() -> str:
    """The console's HTML (``static/console.html``)."""
    return (STATIC / "console.html").read_text(encoding="utf-8")


def is_page_request(request: Request) -> bool:
    """Whether ``request`` asks for the console itself: ``GET /`` from a browser."""
    return (request.method == "GET" and request.url.path == "/"
            and "text/html" in request.headers.get("accept", ""))


def install(app: FastAPI) -> None:
    """Serve the console's assets, ``/docs`` offline and the automaton route on ``app``. The
    assets and ``/docs`` are plain routes, outside the app's read guard; the automaton, an
    API route, is read like any query description."""
    app.mount(SWAGGER, StaticFiles(directory=str(_swagger_files())), name="swagger")
    app.mount(ASSETS, StaticFiles(directory=str(STATIC)), name="console")

    async def docs(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        return get_swagger_ui_html(
            openapi_url=f"{root}{app.openapi_url}", title=f"{app.title} - API",
            swagger_js_url=f"{root}{SWAGGER}/swagger-ui-bundle.js",
            swagger_css_url=f"{root}{SWAGGER}/swagger-ui.css",
            swagger_favicon_url=f"{root}{SWAGGER}/favicon.png",
            # no call to swagger's online validator either
            swagger_ui_parameters={"validatorUrl": None})

    app.add_route("/docs", docs, include_in_schema=False)
    app.include_router(router)


@router.get("/queries/{qid}/automaton", summary="A registered query's automaton (NFA_scep) as SVG, "
            "states left to right, as `spaseq explain` describes it",
            response_class=Response, responses={200: {"content": {"image/svg+xml": {}}}})
async def automaton(request: Request, qid: str) -> Response:
    reg = request.app.state.service.get(qid)
    return Response(automaton_svg(reg.query), media_type="image/svg+xml")


def _swagger_files() -> Path:
    """swagger-ui's bundle, stylesheet and icon, as the ``fastapi-offline`` package ships them."""
    return Path(str(resources.files("fastapi_offline").joinpath("static")))
