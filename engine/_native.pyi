"""Type stubs of ``spaseq.engine._native``, the native core's PyO3 binding (engine/native)."""

PLAN_VERSION: int
__version__: str

def plan_summary(plan_json: str) -> str:
    """The plan (``spaseq explain --plan`` JSON) as the native core reads it, summarised as
    JSON; ValueError naming the field when it does not have docs/plan.md's shape."""
