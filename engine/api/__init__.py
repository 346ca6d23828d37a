"""The embeddable engine: register queries, push events, receive matches.

    from spaseq.engine.api import Engine
    engine = Engine(kb=store)                       # optional KB: a pyoxigraph Store, or a
                                                    # KbStore / directory made by `spaseq kb load`
    handle = engine.register(query_text, on_match=print)
    engine.push("http://example.org/stream", 10.0, triples_or_graph, name=None)
                                                    # (time: seconds, a datetime or a literal;
                                                    # returns Pushed: the queries it was late for)
    engine.advance_to(20.0)                         # heartbeat: closes windows
    engine.close()                                  # end of input
    rows = handle.rows()                            # projected result rows so far

    with Engine() as engine:                        # close() on leaving the block
        ...

    data = engine.snapshot()                        # every partial match, window and clock
    engine = Engine.restore(data, kb=store)         # ... continued, e.g. in another process

Several queries share one engine and one pass over the events: each event is parsed and
indexed once, and its context-independent GPM solutions are shared by every run.

The package's modules, one job each: ``engine`` (the ``Engine``: registration, push and
lateness, compaction, lifecycle), ``handle`` (``QueryHandle``), ``pushed`` (``Pushed``, what
``push`` did with an event), ``errors`` (the errors it raises), ``convert`` (what ``push`` accepts: triples, text, times), ``snapshots`` (the state
a snapshot writes and reads back), ``instants`` (the KB version switching at instant starts,
decision 22) and ``drivers`` (``run``, ``run_replay``, ``run_live``).
"""

# every name imported from spaseq.engine.api; those not in __all__ (not in the reference) are
# re-exported by the `as` spelling
from spaseq.engine.api.engine import Engine
from spaseq.engine.api.engine import evaluate as evaluate
from spaseq.engine.api.errors import EventSyntaxError, LateEventError, UnreadStreamError
from spaseq.engine.api.errors import SpeculationFailed as SpeculationFailed
from spaseq.engine.api.handle import QueryHandle
from spaseq.engine.api.pushed import Pushed
from spaseq.engine.compile.plan import EngineOptions
from spaseq.engine.runtime.snapshot import SnapshotError

__all__ = ["Engine", "EngineOptions", "EventSyntaxError", "LateEventError", "Pushed", "QueryHandle",
           "SnapshotError", "UnreadStreamError"]
