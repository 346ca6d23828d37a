"""What every route shares: JSON errors, the body size limit, the Bearer token for writes."""

from __future__ import annotations

import hmac

from fastapi import Request
from fastapi.responses import JSONResponse

from .config import ServerConfig
from .service import ServiceError


def error_response(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    """Every refusal: ``{"error": message}`` with its status."""
    return JSONResponse({"error": message}, status_code=status, headers=headers)


async def read_body(request: Request, limit: int) -> bytes:
    """The request body, or ServiceError 413 as soon as it is known to exceed ``limit``
    (by its Content-Length, or while it arrives)."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise ServiceError(413, f"the body has {declared} bytes, more than this server takes "
                           f"(--max-body {limit})")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise ServiceError(413, f"the body is larger than this server takes (--max-body {limit})")
        chunks.append(chunk)
    return b"".join(chunks)


def require_token(request: Request, config: ServerConfig) -> None:
    """A write needs ``Authorization: Bearer TOKEN`` when the server has a token (401)."""
    if not config.token:
        return
    _check_bearer(request, config.token, "writes")


def require_read_token(request: Request, config: ServerConfig) -> None:
    """With ``--token-reads`` every route needs the token too (401), reads included (the
    OpenAPI description stays open: it tells a client how to authenticate)."""
    if config.token and config.token_reads:
        _check_bearer(request, config.token, "requests")


def _check_bearer(request: Request, token: str, what: str) -> None:
    scheme, _, given = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(), token.encode()):
        raise ServiceError(401, f"this server takes {what} only with Authorization: Bearer TOKEN "
                           "(the token it was started with)", {"WWW-Authenticate": 'Bearer realm="spaseq"'})
