"""The browser page of ``GET /`` (Accept: text/html): one self-contained HTML file, no build
step and nothing from a CDN, that drives the same routes as any client: register a query,
push events (pasted or a file), watch the matches arrive by SSE, run SPARQL."""

from __future__ import annotations

from functools import cache
from importlib import resources


@cache
def page() -> str:
    """The page's HTML (``page.html`` beside this module)."""
    return resources.files("spaseq.engine.server").joinpath("page.html").read_text(encoding="utf-8")
