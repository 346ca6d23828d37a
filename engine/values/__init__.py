"""The values every other room reads, orders and prints: literals analysed by kind and value,
built from one module per job (``kinds`` -> ``numbers`` -> ``lexical`` -> ``xsd_datetime`` ->
``literals`` -> ``terms``/``arithmetic``/``compare``), ``+``, ``/`` and ordering as the SPARQL
1.1 text has them (the run functions' semantics; GPM FILTERs run in the native core), and the
one reading and writing of timestamps (``timestamps``)."""
