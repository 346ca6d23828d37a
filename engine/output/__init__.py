"""Results to outputs: result writers (``writers``), CONSTRUCT (``construct``), matches as RDF
(``match_rdf``), derived events (``derived``, ``trig``) and materialisation (``materialize``)."""
