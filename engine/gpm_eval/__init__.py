"""Evaluating one GPM on one event in Python, for what the native core calls back: pyoxigraph's
SPARQL engine (``matcher``, over ``sparql_store``, shared with the reference's ``sparql_eval``)
and the KB as evaluation sees it (``kb_source``)."""
