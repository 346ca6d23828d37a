"""The background knowledge base as a versioned on-disk Oxigraph store, built by Spark jobs.

``layout`` (the store directory, its CURRENT pointer, leases, retention), ``reader`` (opening
the current version read-only for the engine), ``relevance`` (which quads a query's GRAPH
patterns can use), ``session`` (the SparkSession), ``parse`` (N-Triples/N-Quads lines parsed
in the executors), ``whole`` (Turtle, TriG, RDF/XML... dumps read whole), ``load_job`` and ``refresh_job`` (the two Spark jobs), ``commands``
(``spaseq kb load|refresh|info|query``).
"""
