"""Latency and bus bandwidth against message size, one line per backend and mode (matplotlib, Agg).

Recommended thresholds are vertical lines; the NVLink limit, when known, a horizontal one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from capgap.tune.recommend import Row
from capgap.tune.spec import format_size

_COLOURS = {
    "nccl": "tab:blue",
    "one_shot": "tab:orange",
    "two_shot": "tab:green",
    "two_shot_copy": "tab:red",
    "multimem": "tab:purple",
}
_STYLES = {"eager": "--", "graph": "-"}


def plot(rows: list[Row], values: dict[str, Any], path: Path, title: str) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (lat, bw) = plt.subplots(1, 2, figsize=(14, 5.5))
    groups: dict[tuple[str, str], list[Row]] = {}
    for row in rows:
        groups.setdefault((row.backend, row.mode), []).append(row)
    for (backend, mode), series in sorted(groups.items()):
        series.sort(key=lambda r: r.bytes)
        xs = [r.bytes for r in series]
        style = {"color": _COLOURS.get(backend, "black"), "linestyle": _STYLES.get(mode, ":"), "marker": "."}
        lat.plot(xs, [r.median_us for r in series], label=f"{backend} ({mode})", **style)
        bw.plot(xs, [r.busbw_gbps for r in series], label=f"{backend} ({mode})", **style)
    measured = values.get("measured", {})
    decided = measured.get("decided_by")
    marks: dict[tuple[int, str], list[str]] = {}  # (size, colour) -> labels, so equal marks share a line
    for mode, summary in measured.get("modes", {}).items():
        if summary.get("max_size_bytes"):
            tag = "recommended " if mode == decided else ""
            marks.setdefault((summary["max_size_bytes"], "black"), []).append(f"{tag}max_size ({mode})")
        switch = summary.get("one_shot_beats_two_shot_until_bytes")
        if switch and mode == decided:
            marks.setdefault((switch, _COLOURS["one_shot"]), []).append(f"one-shot wins up to ({mode})")
    for (size, colour), labels in marks.items():
        for ax in (lat, bw):
            ax.axvline(size, color=colour, linestyle=":", linewidth=1.2)
        lat.annotate(
            f"{', '.join(labels)} {format_size(size)}",
            (size, 0.98),
            xycoords=("data", "axes fraction"),
            rotation=90,
            va="top",
            ha="right",
            fontsize=8,
            color=colour,
        )
    link = measured.get("link", {})
    if "limit_gbps" in link:
        bw.axhline(link["limit_gbps"], color="black", linewidth=1)
        text = f"NVLink limit {link['limit_gbps']:.0f} GB/s ({link['links']} x {link['per_link_gbps']:g})"
        bw.annotate(
            text, (0.01, link["limit_gbps"]), xycoords=("axes fraction", "data"), va="bottom", fontsize=8
        )
    ticks = sorted({r.bytes for r in rows})
    for ax, label in (
        (lat, "latency per all-reduce (us), max over ranks, median of repeats"),
        (bw, "bus bandwidth (GB/s) = algbw x 2(n-1)/n"),
    ):
        ax.set_xscale("log", base=2)
        ax.set_xticks(ticks[::2] if len(ticks) > 10 else ticks)
        ax.set_xticklabels([format_size(t) for t in (ticks[::2] if len(ticks) > 10 else ticks)], rotation=45)
        ax.set_xlabel("message size")
        ax.set_ylabel(label)
        ax.grid(True, which="major", alpha=0.3)
    lat.set_yscale("log")
    bw.legend(fontsize=8, loc="upper left", bbox_to_anchor=(0.0, 0.93))
    fig.suptitle(title)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
