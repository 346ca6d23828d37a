"""spaseq for rdflib: the query processor ``processor="spaseq"`` (found through entry points,
``processor``), its results (``result``) and the recorded-stream convention of a Dataset
(``dataset_streams``), whose ``load_streams`` fills a Dataset from replay files. rdflib is the
``spaseq[rdflib]`` extra: without it, importing this package raises ``MissingExtraError``."""

from spaseq.engine.errors import require_extra

require_extra("rdflib", "spaseq.plugin", "rdflib")

from spaseq.plugin.dataset_streams import load_streams  # noqa: E402  (after the check)

__all__ = ["load_streams"]
