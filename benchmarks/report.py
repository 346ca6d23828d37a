"""A benchmark's JSON report: printed, and written to the file its ``--out`` names."""

from __future__ import annotations

import json
from pathlib import Path


def emit(report: dict, out: str | Path | None) -> None:
    """Print ``report`` as indented JSON on stdout and, when ``out`` is set, write it there."""
    text = json.dumps(report, indent=2)
    if out:
        Path(out).write_text(text + "\n", encoding="utf-8")
    print(text)
