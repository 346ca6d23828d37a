"""``python -m spaseq.engine.cli``: the ``spaseq`` command."""

from spaseq.engine.cli.main import main

raise SystemExit(main())
