"""Peer systems the benchmark can run spaseq's workloads through (optional: ``pip install .[bench-peers]``)."""
