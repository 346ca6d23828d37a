"""Type stubs of ``spaseq.engine._native._testing``: the native core's pieces opened to the
tests and benchmarks only (docs/decisions.md 53); nothing of the engine imports it."""

__all__ = ["plan_summary", "read_replay", "count_replay", "sparql_select", "eval_filter", "eval_expr", "gpm_results"]

def plan_summary(plan_json: str) -> str:
    """The plan (``spaseq explain --plan`` JSON) as the native core reads it, summarised as
    JSON; ValueError naming the field when it does not have docs/plan.md's shape."""

def read_replay(
    path: str, time_predicate: str = ...
) -> list[tuple[str, int, list[tuple[str, str, str]], bool]]:
    """A replay file's events as the native reader sees them: (graph, time in nanoseconds,
    triples, dated), terms in N-Triples; ``LocatedError`` ``PATH:LINE:COLUMN: message`` on bad
    input."""

def count_replay(path: str, time_predicate: str = ...) -> tuple[int, int, int]:
    """Parse a replay file into native events: (events, triples, distinct terms)."""

def eval_filter(expr_json: str, bindings: dict[str, str]) -> bool | None:
    """The effective boolean value of a FILTER expression (its plan JSON) with variables
    bound to N-Triples terms; None for an error; ValueError outside the native subset."""

def eval_expr(expr_json: str, bindings: dict[str, str]) -> str | None:
    """The value of an expression as an N-Triples term (canonical literal); None for an error."""

def gpm_results(
    plan_json: str, gpm: str, triples: list[tuple[str, str, str]], mu: dict[str, str]
) -> list[dict[str, str]]:
    """eval(GPM, event, mu) natively: every solution mu ∪ nu of the plan's GPM ``gpm`` on the
    event's triples (N-Triples), as dicts of N-Triples terms; ValueError outside the subset."""

def sparql_select(query: str, ntriples: str) -> list[list[tuple[str, str]]]:
    """SELECT ``query`` evaluated by the core's spareval (the SPARQL path's evaluator) over
    ``ntriples`` as the default graph: per solution, (variable, N-Triples term) pairs;
    ValueError when it does not parse or evaluate."""
