"""The physical plan of one query: everything the runtime precomputes from it, as immutable
data with no reference to runtime objects (docs/plan.md describes every field).

``compile.planner.plan_query`` builds it; ``compile.plan_json`` writes it as JSON and reads it
back without loss (``spaseq explain --plan``): the interface the native core is built from
(``runtime.native.QueryRuntime`` hands it the JSON); the Python GPM matchers it calls back for
bodies outside the native evaluator are built from it too.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pyoxigraph import NamedNode

from spaseq.engine.algebra import operators as A
from spaseq.engine.compile.nfa import Automaton
from spaseq.engine.compile.range_keys import StepRange
from spaseq.engine.compile.splitting import SplitPlan

PLAN_VERSION = 4  # 4: EngineOptions.intervals and GPM timers; 3: GpmPlan.evaluator and Plan.explain; 2: no solver, direct_solver, row_slots


@dataclass(frozen=True)
class EngineOptions:
    """The optimisations of the paper's Section 7, each switchable for measurement."""

    push_windows: bool = True
    index_streams: bool = True
    partition_runs: bool = True
    range_index: bool = True
    share_context_free: bool = True
    prefilter: bool = True
    cost_ordered_disjunction: bool = True
    lazy_conjunction: bool = False
    compiled_gpm: bool = True
    lazy_chain: bool = False
    #: events may last (docs/decisions.md 71): runs wait until their window ends, since an event
    #: beginning before the clock may still extend them; off, runs die as soon as no point event
    #: could extend them and an event that lasts is refused (a query with a timer turns it on)
    intervals: bool = False


COMPILED = "compiled"  # GpmPlan.path: generated join and FILTER code over the event's index
SPARQL = "sparql"      # GpmPlan.path: a SPARQL engine (pyoxigraph) on the event as a graph

# GpmPlan.evaluator: which evaluator runs the GPM, as the native core answered the planner
NATIVE = "native"      # the core's compiled program
SPAREVAL = "spareval"  # the core's SPARQL engine on the event as a graph
CALLBACK = "callback"  # the engine's Python matcher, called back


@dataclass(frozen=True)
class GpmPlan:
    """How one GPM (``query.events[name]``) is evaluated on an event."""

    name: str
    stream: str
    path: str                                   # COMPILED or SPARQL
    join_shaped: bool                           # context-free part once per event, then per run
    run_aware: bool                             # calls run functions: evaluated per run
    key_vars: frozenset[str]                    # bound by every context-free solution
    local_vars: tuple[str, ...]                 # the body's variables, sorted (taken bindings)
    required: tuple[NamedNode, ...]             # constant predicates of its triples (pre-filter)
    cost: int                                   # number of triple patterns (disjunction order)
    join_order: tuple[A.TriplePattern, ...] = ()      # COMPILED: triple patterns, in join order
    variables: tuple[str, ...] = ()                   # COMPILED: the join's row layout
    filters: tuple[A.Expr, ...] = ()                  # COMPILED: top-level FILTER conjuncts
    graph_elements: tuple[A.GraphPattern, ...] = ()   # COMPILED: GRAPH blocks joined with the KB
    graph_vars: tuple[tuple[str, ...], ...] = ()      # COMPILED: per GRAPH block, what its KB rows bind
    evaluator: str = ""                               # NATIVE, SPAREVAL or CALLBACK ("": not yet asked)
    consumes: tuple[A.TriplePattern, ...] = ()        # CONSUMPTION MATCHED: the patterns reading the event


@dataclass(frozen=True)
class RunIndexPlan:
    """How runs waiting at one automaton step are indexed (aligned with ``automaton.steps``)."""

    partition_keys: tuple[str, ...] | None      # None: by stream only; (): range key only
    range: StepRange | None                     # sorted by a FILTER comparison (range_keys)


@dataclass(frozen=True)
class ProbeStep:
    """A partitioned step an event of one stream can feed, in the order the runtime probes."""

    step: int
    ranged: bool
    loops: tuple[bool, ...]                     # (False,) or (False, True) for Kleene+ steps
    gpms: tuple[str, ...]                       # the step's GPMs on this stream


@dataclass(frozen=True)
class Explain:
    """What only ``spaseq explain`` reads, never the runtime."""

    lazy_prefix: int = 0                        # lazy chain possible over steps 0..t (0: none)
    evaluators: dict[str, str] = field(default_factory=dict)  # GPM -> why it is not native


@dataclass(frozen=True)
class Plan:
    """A query compiled for the runtime."""

    query: A.Query
    options: EngineOptions
    automaton: Automaton
    gpms: dict[str, GpmPlan]
    run_indexes: tuple[RunIndexPlan, ...]
    probes: dict[str, tuple[ProbeStep, ...]]
    kleene_gpms: frozenset[str]                 # GPMs under Kleene+ (run-function aggregates)
    lazy_chain: int                             # the trigger step used (explain.lazy_prefix if enabled)
    split: SplitPlan = SplitPlan()              # how the input may be split (the Spark runner's)
    explain: Explain = Explain()
    version: int = PLAN_VERSION

    @property
    def steps(self):
        return self.automaton.steps
