"""The SPARQL functions of the spaseq namespace (``https://w3id.org/spaseq#``) for rdflib,
pyoxigraph and SPAseq GPM bodies. ``registry`` holds the table and the pyoxigraph binding,
``rdflib_functions`` the rdflib registration (imported on first use: the engine itself never
loads rdflib)."""

from __future__ import annotations

from typing import Any

__all__ = ["pyoxigraph_functions", "register_rdflib", "unregister_rdflib", "active_run", "RunContext"]


def __getattr__(name: str) -> Any:
    if name == "pyoxigraph_functions":
        from spaseq.engine.functions.registry import pyoxigraph_functions

        return pyoxigraph_functions
    if name in ("register_rdflib", "unregister_rdflib", "active_run"):
        from spaseq.extension_functions import rdflib_functions

        return getattr(rdflib_functions, name)
    if name == "RunContext":
        from spaseq.engine.functions.run_functions import RunContext

        return RunContext
    raise AttributeError(name)
