"""SPARQL value semantics (``sparql``) and the one reading of timestamps (``timestamps``): the
values every other room compares, orders and prints."""
