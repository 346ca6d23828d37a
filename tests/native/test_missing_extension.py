"""Without the native extension the engine does not fall back to anything: importing it fails
with a message that says how to build it."""

from __future__ import annotations

import subprocess
import sys


def test_importing_the_engine_without_the_extension_says_how_to_build_it() -> None:
    code = ("import sys; sys.modules['spaseq.engine._native'] = None\n"
            "import spaseq.engine.api")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0
    assert "native core (spaseq.engine._native) is not built" in proc.stderr
    assert "Rust toolchain" in proc.stderr
