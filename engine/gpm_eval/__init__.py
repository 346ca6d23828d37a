"""Evaluating one GPM on one event: the compiled path over an event index (``event_index``,
``matcher``) and pyoxigraph's SPARQL engine as fallback and for the reference (``sparql_eval``)."""
