"""``spaseq serve``: a SPARQL endpoint with streaming extensions (issue 13).

One process holds one engine, the knowledge base and the matches, and speaks HTTP: the SPARQL
1.1 Protocol at ``/sparql`` over the KB and the materialised matches, and the streaming
extension (register continuous queries, push events, receive matches live). One job per
module: ``config`` (the command's settings and their checks), ``negotiation`` (media types),
``bodies`` (request bodies to events, through the replay reader), ``matchlog`` (each query's
numbered matches), ``journal`` (durability under ``--data``), ``service`` (the engine on its
own thread), ``sparql`` (the protocol over pyoxigraph), ``graph_store`` (the Graph Store
Protocol), ``description`` (the service description), ``health`` and ``metrics`` (for
operators), ``app`` (routes, auth, limits), ``serve`` (uvicorn, TLS, signals)."""
