"""Build the API reference (HTML, with pdoc) from the docstrings of spaseq's public modules.

`make docs` runs it into build/docs; any warning pdoc raises (a module that fails to import, a
type annotation or a docstring link it cannot resolve) fails the build, so `make test` keeps the
docstrings sound. Usage: python docs/api_reference.py [OUTPUT-DIR]
"""

from __future__ import annotations

import importlib
import re
import sys
import warnings
from pathlib import Path

import pdoc
import pdoc.render

# The modules a user of spaseq imports; none of them needs pyspark or Java at import time
# (the Spark jobs of spaseq.engine.kb are documented by the README's "Knowledge base").
MODULES = [
    "spaseq.engine",
    "spaseq.engine.api",
    "spaseq.engine.errors",
    "spaseq.engine.events",
    "spaseq.engine.matches",
    "spaseq.engine.composition",
    "spaseq.engine.compile.plan",
    "spaseq.engine.language.query",
    "spaseq.engine.output.derived",
    "spaseq.engine.kb.reader",
    "spaseq.engine.reference",
    "spaseq.plugin",
    "spaseq.plugin.processor",
    "spaseq.plugin.result",
    "spaseq.plugin.dataset_streams",
    "spaseq.extension_functions",
]


# pdoc cannot resolve postponed annotations in the constructor typing.NamedTuple generates
# (it has no module of its own: pdoc issue 765); such a warning about a NamedTuple is pdoc's,
# not the docstrings', and the class's fields are documented all the same.
_NAMEDTUPLE_INIT = re.compile(r"Error parsing type annotation .* for ([\w.]+)\.__init__\b")


def _resolve_lazy_exports(module_name: str) -> None:
    """Put a module's lazily imported ``__all__`` names (a module ``__getattr__``, e.g.
    spaseq.extension_functions, which loads rdflib only when asked) into its namespace, where
    pdoc looks for them."""
    module = importlib.import_module(module_name)
    if "__getattr__" in vars(module):
        for name in getattr(module, "__all__", ()):
            vars(module).setdefault(name, getattr(module, name))


def _is_namedtuple(qualname: str) -> bool:
    module_name, _, cls_name = qualname.rpartition(".")
    cls = getattr(sys.modules.get(module_name), cls_name, None)
    return isinstance(cls, type) and issubclass(cls, tuple) and hasattr(cls, "_fields")


def build(output: Path) -> list[str]:
    """Write the reference into ``output``; return the warnings pdoc gave (none is success)."""
    pdoc.render.configure(docformat="markdown", show_source=False, search=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for name in MODULES:
            _resolve_lazy_exports(name)
        pdoc.pdoc(*MODULES, output_directory=output)
    problems = []
    for w in caught:
        known = _NAMEDTUPLE_INIT.search(str(w.message))
        if known is None or not _is_namedtuple(known.group(1)):
            problems.append(f"{w.category.__name__}: {w.message}")
    return problems


def main(argv: list[str]) -> int:
    output = Path(argv[0] if argv else "build/docs")
    problems = build(output)
    for problem in problems:
        print(f"docs: {problem}", file=sys.stderr)
    if problems:
        print(f"docs: {len(problems)} warning(s): the API reference was not built cleanly", file=sys.stderr)
        return 1
    print(f"docs: API reference written to {output}/index.html")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
