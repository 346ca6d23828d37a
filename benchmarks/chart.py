"""The results chart (like the paper's Figures 15-16): throughput per workload, window and system."""

from __future__ import annotations

from pathlib import Path

INSTALL_HINT = "pip install -e '.[bench]'  (the 'bench' extra: matplotlib)"


def write_chart(report: dict, path: Path) -> str:
    """Draw triples/s (log scale) per workload (one panel each), window and system; return a message."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return f"chart skipped: matplotlib is not installed ({INSTALL_HINT})"
    runs = [r for r in report["runs"] if r["status"] == "ok" and r.get("triples_per_s")]
    workloads = [w for w in report["workloads"] if any(r["workload"] == w for r in runs)]
    if not workloads:
        return "chart skipped: no successful measurements"
    labels = _ordered_labels(report, runs)
    colours = _colours(plt, report, runs, labels)
    cols = min(4, len(workloads))
    rows = (len(workloads) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.4 * rows), squeeze=False)
    for ax, workload in zip(axes.flat, workloads, strict=False):
        mine = [r for r in runs if r["workload"] == workload]
        size = max(r["size"] for r in mine)
        mine = [r for r in mine if r["size"] == size]
        windows = sorted({r["window_minutes"] for r in mine})
        present = [label for label in labels if any(r["label"] == label for r in mine)]
        width = 0.8 / max(1, len(present))
        for k, label in enumerate(present):
            xs, ys = [], []
            for i, window in enumerate(windows):
                for r in mine:
                    if r["label"] == label and r["window_minutes"] == window:
                        xs.append(i + (k - (len(present) - 1) / 2) * width)
                        ys.append(r["triples_per_s"])
            ax.bar(xs, ys, width=width, color=colours[label], label=label)
        ax.set_yscale("log")
        ax.set_xticks(range(len(windows)), [f"{w} min" for w in windows])
        ax.set_title(f"{workload} (n={size:,})", fontsize=10)
        ax.set_ylabel("triples / s")
        ax.grid(axis="y", which="both", alpha=0.3)
    for ax in list(axes.flat)[len(workloads):]:
        ax.axis("off")
    handles = [plt.Rectangle((0, 0), 1, 1, color=colours[label]) for label in labels]
    fig.legend(handles, labels, loc="lower center", ncol=min(5, len(labels)), fontsize=8)
    machine = report.get("machine", {})
    fig.suptitle(f"spaseq throughput ({report.get('mode')} run, {machine.get('cpu_count')} CPUs, "
                 f"Python {machine.get('python')}, pyoxigraph {machine.get('pyoxigraph')})", fontsize=11)
    fig.tight_layout(rect=(0, 0.08, 1, 0.95))
    fig.savefig(path, dpi=120, bbox_inches="tight")  # the legend may be wider than the panels
    plt.close(fig)
    return f"chart: {path}"


_RANK = {"spaseq": 0, "reference": 0, "ablation": 1, "baseline": 2, "ceiling": 3}


def _ordered_labels(report: dict, runs: list[dict]) -> list[str]:
    """The systems in legend order: the engine, its ablations (option order), baseline, ceiling."""
    options = list(report.get("engine", {}).get("options", {}))
    first: dict[str, tuple[int, int]] = {}
    for r in runs:
        position = options.index(r["option"]) if r.get("option") in options else 0
        first.setdefault(r["label"], (_RANK.get(r["system"], 1), position))
    return sorted(first, key=lambda label: first[label])


def _colours(plt: object, report: dict, runs: list[dict], labels: list[str]) -> dict[str, object]:
    """Fixed colours for the engine, baseline and ceiling; a palette for the ablations."""
    system = {r["label"]: r["system"] for r in runs}
    fixed = {"spaseq": "#1f4e9c", "reference": "#1f4e9c", "baseline": "#d6336c", "ceiling": "#7f7f7f"}
    palette = plt.get_cmap("tab20")  # type: ignore[attr-defined]
    out: dict[str, object] = {}
    k = 0
    for label in labels:
        if system[label] in fixed:
            out[label] = fixed[system[label]]
        else:
            out[label] = palette((2 * k + 1) % 20)
            k += 1
    return out


def write_latency_chart(report: dict, path: Path) -> str:
    """``live_latency``'s chart: p50 and p99 latency (ms, log scale) per lateness, one panel per
    stamps × rate, the nominal wait for the watermark marked; return a message."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return f"chart skipped: matplotlib is not installed ({INSTALL_HINT})"
    runs = [r for r in report["runs"] if r.get("latency_ms", {}).get("p50") is not None]
    panels = list(dict.fromkeys((r.get("stamps", "file"), r["rate_events_per_s"]) for r in runs))
    if not panels:
        return "chart skipped: no measured matches"
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.6), squeeze=False)
    for ax, (stamps, rate) in zip(axes.flat, panels, strict=False):
        mine = sorted((r for r in runs if (r.get("stamps", "file"), r["rate_events_per_s"]) == (stamps, rate)),
                      key=lambda r: r.get("lateness_s", 0))
        xs = range(len(mine))
        for k, (p, colour) in enumerate((("p50", "#1f4e9c"), ("p99", "#d6336c"))):
            ax.bar([x + (k - 0.5) * 0.38 for x in xs], [r["latency_ms"][p] for r in mine], width=0.38,
                   color=colour, label=p)
        waits = [r.get("nominal_wait_ms") for r in mine]
        ax.scatter([x for x, w in zip(xs, waits, strict=True) if w], [w for w in waits if w], marker="_",
                   s=400, color="black", label="watermark wait (schedule)", zorder=3)
        ax.set_yscale("log")
        ax.set_xticks(list(xs), [_lateness_label(r.get("lateness_s", 0)) for r in mine])
        ax.set_xlabel("lateness (event time)")
        ax.set_ylabel("event written → match written (ms)")
        ax.set_title(f"stamps {stamps}, {rate:,.0f} events/s", fontsize=10)
        ax.grid(axis="y", which="both", alpha=0.3)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=3, fontsize=8)
    machine = report.get("machine", {})
    fig.suptitle(f"spaseq live latency by LATENESS ({report.get('workload')}, {report.get('events'):,} events, "
                 f"{machine.get('cpus')} CPUs)", fontsize=11)
    fig.tight_layout(rect=(0, 0.08, 1, 0.93))
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)
    return f"chart: {path}"


def _lateness_label(seconds: float) -> str:
    if seconds == 0:
        return "0 (baseline)"
    return f"{seconds * 1000:g} ms" if seconds < 1 else f"{seconds:g} s"


def write_spark_batch_chart(report: dict, path: Path) -> str:
    """``spark_batch``'s chart: events/s per system (whole command and after its start-up), one
    panel per workload, the scaling efficiencies in the title; return a message."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return f"chart skipped: matplotlib is not installed ({INSTALL_HINT})"
    runs = [r for r in report["runs"] if r["status"] == "ok"]
    workloads = list(dict.fromkeys(r["workload"] for r in runs))
    if not workloads:
        return "chart skipped: no successful measurements"
    fig, axes = plt.subplots(1, len(workloads), figsize=(5.6 * len(workloads), 4.2), squeeze=False)
    for ax, workload in zip(axes.flat, workloads, strict=False):
        mine = [r for r in runs if r["workload"] == workload]
        xs = range(len(mine))
        ax.bar([x - 0.2 for x in xs], [r["events_per_s"] for r in mine], width=0.4, color="#9db4dc",
               label="whole command")
        ax.bar([x + 0.2 for x in xs], [r.get("work_events_per_s") or 0 for r in mine], width=0.4,
               color="#1f4e9c", label="after start-up")
        ax.set_xticks(list(xs), [r["system"] for r in mine], rotation=20, ha="right", fontsize=8)
        ax.set_ylabel("events / s")
        ax.set_yscale("log")
        ax.grid(axis="y", which="both", alpha=0.3)
        eff = report.get("scaling_efficiency", {}).get(workload, {})
        notes = ", ".join(f"{name} {e.get('work_events_per_s')}" for name, e in eff.items())
        split = mine[0]["split"]
        ax.set_title(f"{workload} (split by {split})" + (f"\nscaling efficiency: {notes}" if notes else ""),
                     fontsize=10)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=2, fontsize=8)
    machine = report.get("machine", {})
    fig.suptitle(f"spaseq run --spark, batch ({report['input']['events']:,} events, {machine.get('cpus')} CPUs)",
                 fontsize=11)
    fig.tight_layout(rect=(0, 0.08, 1, 0.93))
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)
    return f"chart: {path}"
