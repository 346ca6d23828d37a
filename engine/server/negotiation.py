"""Media types and content negotiation (RFC 9110 ``Accept`` with q-values)."""

from __future__ import annotations

SPARQL_JSON = "application/sparql-results+json"
SPARQL_XML = "application/sparql-results+xml"
CSV = "text/csv"
TSV = "text/tab-separated-values"
NDJSON = "application/x-ndjson"
SSE = "text/event-stream"
JSON = "application/json"
TRIG = "application/trig"
NQUADS = "application/n-quads"
TURTLE = "text/turtle"
NTRIPLES = "application/n-triples"
RDF_XML = "application/rdf+xml"
SPARQL_QUERY = "application/sparql-query"
SPARQL_UPDATE = "application/sparql-update"
FORM = "application/x-www-form-urlencoded"


def _parse(accept: str) -> list[tuple[str, float, int]]:
    """(media range, q, position) for each element of an Accept header."""
    out = []
    for i, part in enumerate(accept.split(",")):
        fields = [f.strip() for f in part.split(";")]
        if not fields[0]:
            continue
        q = 1.0
        for f in fields[1:]:
            name, _, value = f.partition("=")
            if name.strip().lower() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        out.append((fields[0].lower(), q, i))
    return out


def _specificity(media_range: str, offer: str) -> int | None:
    """How specifically ``media_range`` names ``offer`` (2 exact, 1 type/*, 0 */*), or None."""
    if media_range == offer:
        return 2
    kind = offer.split("/")[0]
    if media_range == f"{kind}/*":
        return 1
    if media_range == "*/*":
        return 0
    return None


def negotiate(accept: str | None, offers: list[str]) -> str | None:
    """The offer the client prefers (``offers`` in the server's order of preference for
    ties and for ``*/*``), or None when it accepts none of them (406). No header: the first."""
    if not accept or not accept.strip():
        return offers[0]
    ranges = _parse(accept)
    best: tuple[float, int, int, int] | None = None
    chosen = None
    for rank, offer in enumerate(offers):
        matches = [(s, q, pos) for r, q, pos in ranges if (s := _specificity(r, offer)) is not None]
        if not matches:
            continue
        spec, q, pos = max(matches)  # the most specific range decides the offer's q
        if q <= 0:
            continue
        key = (q, spec, -pos, -rank)
        if best is None or key > best:
            best, chosen = key, offer
    return chosen


def media_type(content_type: str | None) -> str:
    """The bare media type of a Content-Type header (parameters dropped, lower case)."""
    return (content_type or "").split(";")[0].strip().lower()
