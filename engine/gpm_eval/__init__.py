"""Evaluating one GPM on one event: the compiled path over an event index (``matcher``, with
``compile.gpm_codegen``), pyoxigraph's SPARQL engine for the rest (``sparql_store``, shared with
the reference's ``sparql_eval``), and the KB as evaluation sees it (``kb_source``)."""
