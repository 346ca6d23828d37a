"""The values every other room compares, orders and prints: SPARQL expression semantics as the
SPARQL 1.1 text has them (the ``dialects.SPEC`` table, used by the run functions), built from
one module per job (``kinds`` -> ``numbers`` -> ``lexical`` -> ``xsd_datetime`` -> ``literals``
-> ``terms``/``arithmetic``/``compare``/``strings`` -> ``casts``/``xpath_regex`` ->
``dialects``), and the one reading and writing of timestamps (``timestamps``)."""
