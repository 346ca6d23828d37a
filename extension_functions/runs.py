"""The run rdflib queries see in the run functions: rdflib's functions are registered once per
process, so the run travels in a context variable, set by ``active_run``. Kept apart from
``rdflib_functions`` so that importing the package does not import rdflib."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar

from spaseq.engine.functions.run_functions import RunContext

ACTIVE_RUN: ContextVar[RunContext | None] = ContextVar("spaseq_active_run", default=None)


@contextlib.contextmanager
def active_run(run: RunContext) -> Iterator[None]:
    """Within this block, rdflib queries see ``run`` in the run functions."""
    token = ACTIVE_RUN.set(run)
    try:
        yield
    finally:
        ACTIVE_RUN.reset(token)
