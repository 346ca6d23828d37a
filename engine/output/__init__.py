"""Results to outputs: the native writers of every format (``native``), times (``times``),
CONSTRUCT (``construct``), matches as RDF (``match_rdf``), derived events (``derived``) and
materialisation (``materialize``)."""
