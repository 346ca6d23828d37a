"""The KB jobs' live progress line: a phase that ends before the next redraw still shows its
final counts (a fast load's "reading" phase lasted less than one redraw interval)."""

from __future__ import annotations

import io

from spaseq.engine.kb.progress import Display


def test_a_phase_ending_between_redraws_shows_its_final_counts():
    out = io.StringIO()
    counts = ["0 lines"]
    display = Display(out, "spaseq kb load", live=True, interval_s=3600)
    display.phase("reading 1 input(s)", lambda: counts[0])
    counts[0] = "14 lines"  # the counts change, and the phase ends, before any redraw
    display.phase("exporting")
    display.close()
    frames = out.getvalue().split("\r")
    assert any(f.startswith("spaseq kb load: reading 1 input(s) · 14 lines") for f in frames), frames
    assert out.getvalue().endswith("\r\x1b[K")
