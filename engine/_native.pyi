"""Type stubs of ``spaseq.engine._native``, the native core's PyO3 binding (engine/native)."""

PLAN_VERSION: int
__version__: str

def plan_summary(plan_json: str) -> str:
    """The plan (``spaseq explain --plan`` JSON) as the native core reads it, summarised as
    JSON; ValueError naming the field when it does not have docs/plan.md's shape."""

def read_replay(
    path: str, time_predicate: str = ...
) -> list[tuple[str, int, list[tuple[str, str, str]]]]:
    """A replay file's events as the native reader sees them: (graph, time in nanoseconds,
    triples), terms in N-Triples; ValueError ``PATH:LINE:COLUMN: message`` on bad input."""

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

class ReplayStream:
    """Replay files, one per stream, merged by time in bounded memory (native core
    ``stream``): what ``spaseq run`` reads (the Python reader per file, ``seq`` numbered as
    the CLI does, ties by file order then first appearance). Iterating yields batches of
    events ``(stream_iri, seq, time_ns, graph, [(s, p, o)])``, terms in N-Triples; after the
    usable events, a file's error as ValueError ``PATH:LINE:COLUMN: message``. The first
    pass over every file runs in the constructor (ValueError for a bad time predicate)."""

    def __init__(
        self,
        files: list[tuple[str, str]],
        time_predicate: str = ...,
        spill_dir: str | None = None,
        memory_events: int = ...,
        batch: int = ...,
    ) -> None: ...
    def __iter__(self) -> ReplayStream: ...
    def __next__(self) -> list[tuple[str, int, int, str, list[tuple[str, str, str]]]]: ...
    @property
    def notes(self) -> list[str]:
        """For the user (stderr): files sorted on disk, files read whole."""
    @property
    def modes(self) -> list[str]:
        """How each file is read: ``memory``, ``stream``, ``sorted`` or ``whole``."""
    @property
    def spilled_runs(self) -> int:
        """Sorted runs written to disk for out-of-order files."""
