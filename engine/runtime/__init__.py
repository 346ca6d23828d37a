"""Running a compiled query over events: runs, the shared buffer and windows (``query_runtime``),
run indexes (``range_index``) and the lazy chain (``lazy_chain``)."""
