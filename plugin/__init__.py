"""spaseq for rdflib: the query processor ``processor="spaseq"`` (found through entry points,
``processor``), its results (``result``) and the recorded-stream convention of a Dataset
(``dataset_streams``), whose ``load_streams`` fills a Dataset from replay files."""

from spaseq.plugin.dataset_streams import load_streams

__all__ = ["load_streams"]
