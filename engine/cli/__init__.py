"""The ``spaseq`` command: ``main`` (run, explain and the argument plumbing) and ``kb`` (the
knowledge-base subcommands)."""
