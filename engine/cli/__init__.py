"""The ``spaseq`` command: ``main`` (the parser and dispatch), one module per subcommand
(``run``, ``explain``, ``kb``), and ``common`` (engine options, warnings, exit status)."""
