"""``/health`` (readiness) and ``/health/live`` (liveness) for probes and load balancers
(docs/decisions.md 73). Both stay open under ``--token-reads``, as the OpenAPI description
does: a probe carries no token, and they tell nothing but whether the server works."""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute

from .service import EngineService


def install(app: FastAPI, service: EngineService) -> None:
    """Add the routes to ``app`` beside its router's, so the read guard (a dependency of every
    route the router adds) does not apply to them; they are in the OpenAPI description still."""

    async def health() -> JSONResponse:
        checks = await service.readiness()
        ready = all(v in ("ok", "not used") for v in checks.values())
        return JSONResponse({"ready": ready, "checks": checks}, status_code=200 if ready else 503)

    async def live() -> dict:
        return {"live": True}

    app.router.routes.append(APIRoute(
        "/health", health, methods=["GET"],
        summary="Readiness: 200 when the engine answers, the KB is open and (--data) the journal takes "
                "a synced write; 503 with what is wrong otherwise. Open without the read token"))
    app.router.routes.append(APIRoute(
        "/health/live", live, methods=["GET"],
        summary="Liveness: 200 while the process answers HTTP. Open without the read token"))
