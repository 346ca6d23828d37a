"""The query algebra: SPARQL 1.1 group patterns and the SEQ, WINDOW, EVENT and MATCH operators
(``operators``); what the language room produces and every later room reads."""
