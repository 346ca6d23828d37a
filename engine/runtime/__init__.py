"""Running a compiled query over events: the native runtime (engine/native/automaton:
runs, the shared buffer, windows, run indexes, the lazy chain) behind ``native.QueryRuntime``."""
