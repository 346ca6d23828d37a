"""``python -m benchmarks``: run the benchmark suite (see benchmarks/README.md)."""

import sys

from benchmarks.runner import main

if __name__ == "__main__":
    sys.exit(main())
