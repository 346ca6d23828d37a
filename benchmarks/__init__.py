"""spaseq's benchmark suite: generators, queries, baselines and the runner (``python -m benchmarks``)."""
