"""The front door from text to algebra: parse, translate, check (a query file seen before is
read from the cache of checked queries, ``cache.py``, without importing the parser)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from spaseq.engine.algebra.operators import Query
from spaseq.engine.errors import Location, QueryError


def parse_query(text: str, file: str = "<query>", prefixes: Mapping[str, str] | None = None) -> Query:
    """Parse and check a SPAseq query; raise QueryError naming FILE:LINE:COLUMN. ``prefixes``
    are predeclared namespaces (the query's own PREFIX declarations override them)."""
    from spaseq.engine.language.checks import check
    from spaseq.engine.language.parser import parse_tree
    from spaseq.engine.language.translate import translate

    return check(translate(parse_tree(text, file), text, file, prefixes))


def load_query(path: str) -> Query:
    """Read and parse a query file (from the cache when it was parsed before)."""
    from spaseq.engine.language.cache import cached_query

    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise QueryError("no such query file", Location(path)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise QueryError(f"cannot read query file: {exc}", Location(path)) from None
    return cached_query(text, path, lambda: parse_query(text, path))
