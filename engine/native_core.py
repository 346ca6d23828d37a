"""The native core (``spaseq.engine._native``, built from engine/native by setuptools-rust), as
the timestamps (``values.timestamps``, which read times with it), the planner (which asks it
how each GPM runs) and the runtime import it: imported here first, so that a missing build
says how to make it instead of failing with a bare ModuleNotFoundError."""

from __future__ import annotations

try:
    from spaseq.engine import _native
except ImportError as _missing:  # no silent slow fallback: say how to build it
    raise ImportError(
        "spaseq's native core (spaseq.engine._native) is not built: install spaseq from source "
        "with a Rust toolchain (https://rustup.rs), e.g. `pip install .` or `make test`") from _missing

__all__ = ["_native"]
