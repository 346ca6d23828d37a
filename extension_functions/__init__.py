"""The SPARQL functions of the spaseq namespace (``https://w3id.org/spaseq#``) for rdflib,
pyoxigraph and SPAseq GPM bodies. ``engine.functions.registry`` holds the table and the
pyoxigraph binding, ``rdflib_functions`` the rdflib registration. Every public name is an
attribute of this package; importing it does not import rdflib (``register_rdflib`` does, and
raises ``MissingExtraError`` without the ``spaseq[rdflib]`` extra)."""

from __future__ import annotations

from pyoxigraph import NamedNode

from spaseq.engine.errors import require_extra
from spaseq.engine.functions.registry import pyoxigraph_functions
from spaseq.engine.functions.run_functions import RunContext
from spaseq.engine.vocab import GENERATED_AT_TIME
from spaseq.extension_functions.runs import active_run

__all__ = ["RunContext", "active_run", "pyoxigraph_functions", "register_rdflib", "unregister_rdflib"]


def register_rdflib(time_predicate: NamedNode = GENERATED_AT_TIME) -> None:
    """Register every spaseq function with rdflib's SPARQL engine, once per process
    (idempotent; replaces an earlier registration, e.g. one with another time predicate)."""
    require_extra("rdflib", "register_rdflib", "rdflib")
    from spaseq.extension_functions import rdflib_functions  # rdflib is imported only now

    rdflib_functions.register(time_predicate)


def unregister_rdflib() -> None:
    """Remove the spaseq functions from rdflib."""
    from spaseq.extension_functions import rdflib_functions

    rdflib_functions.unregister()
