"""The reference evaluator (the oracle): SEMANTICS.md implemented directly (``evaluator``).

``from spaseq.engine import reference; reference.evaluate(query, streamset)`` is public API."""

from spaseq.engine.reference.evaluator import ReferenceEvaluator, evaluate

__all__ = ["ReferenceEvaluator", "evaluate"]
