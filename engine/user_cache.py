"""Where spaseq keeps what it caches for the user (the Spark class archive, checked queries):
``$SPASEQ_CACHE_DIR``, else ``$XDG_CACHE_HOME/spaseq``, else ``~/.cache/spaseq``."""

from __future__ import annotations

import os
from pathlib import Path

#: Overrides the cache directory (tests; a shared or read-only home).
CACHE_ENV = "SPASEQ_CACHE_DIR"


def cache_dir() -> Path:
    """``$SPASEQ_CACHE_DIR``, else ``$XDG_CACHE_HOME/spaseq``, else ``~/.cache/spaseq``."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "spaseq"
