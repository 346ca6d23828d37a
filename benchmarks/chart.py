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
