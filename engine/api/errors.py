"""The errors the ``Engine`` raises of its own (the others are ``spaseq.engine.errors``'s):
input refused by ``push`` and the drivers, and a speculative replay reading that failed."""

from __future__ import annotations

from spaseq.engine.errors import StreamError


class LateEventError(StreamError):
    """An event earlier than what a query has already processed on its streams."""


class UnreadStreamError(StreamError):
    """An event on a stream no registered query reads: most likely a misspelt stream IRI, so
    refused rather than silently accepted (``Engine(drop_unread=True)`` counts it instead)."""


class EventSyntaxError(StreamError):
    """Event text given to ``push`` that is not valid TriG/N-Quads/Turtle/N-Triples; its
    ``location`` is ``<event>:LINE:COLUMN`` within that text."""


class SpeculationFailed(Exception):
    """``run_replay`` was given a speculative reading (``ReplayReading(speculate=True)``) whose
    file turned out not to be read as it is written (decision 47): not a user's error, a
    signal to throw away what this engine did and released, and run again on a fresh one
    without speculating."""
