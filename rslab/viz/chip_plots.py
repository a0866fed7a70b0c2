"""Plots for the chapter "Many cores": the curves against the chip's bound, a chip run's cores."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.collections import PolyCollection

PHASE_COLOURS = {"max": "#4c72b0", "sumexp": "#55a868", "accept": "#8172b2",
                 "residual": "#c44e52", "bonus": "#dd8452", "setup": "#bbbbbb",
                 "hbm": "#937860", "dma-wait": "#b5a48c", "barrier": "#222222"}
"""A colour per phase of a core's program, and per wait drawn over it."""


def cycles_vs_cores(points, name: str, mode: str, highlight: int | None = None):
    """Cycles against cores (both axes log2) of every R at one test point and mode: the run
    (solid) and the chip's bound (dashed); ``highlight`` marks a core count."""
    pts = [p for p in points if p["name"] == name and p["mode"] == mode]
    fig, ax = plt.subplots(figsize=(7, 4.2))
    colours = plt.cm.viridis(np.linspace(0, 0.9, len({p["R"] for p in pts}) or 1))
    for colour, R in zip(colours, sorted({p["R"] for p in pts}), strict=False):
        curve = sorted((p for p in pts if p["R"] == R), key=lambda p: p["cores"])
        c = [p["cores"] for p in curve]
        ax.plot(c, [p["cycles"] for p in curve], "o-", color=colour, label=f"R = {R}")
        ax.plot(c, [p["bound_cycles"] for p in curve], "--", color=colour, alpha=0.7)
    if highlight is not None:
        ax.axvline(highlight, color="#888888", lw=1)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    counts = sorted({p["cores"] for p in pts})
    ax.set_xticks(counts, [str(c) for c in counts])
    ax.set_xlabel("cores")
    ax.set_ylabel("cycles (dashed: the chip's bound)")
    ax.set_title(f"{name}, {mode} mode")
    ax.legend(fontsize=10, ncols=2)
    fig.tight_layout()
    return fig


def chip_timeline(segments: dict, hbm_per_cycle, bandwidth: int, title: str = ""):
    """A row per core of its phases over time (``segments``: core → (start, end, phase)), the
    waits for the HBM and the barrier drawn over them, and under them the HBM's bytes per
    cycle against its bandwidth."""
    cores = sorted(segments)
    fig, (ax, hb) = plt.subplots(2, 1, figsize=(7, 2.4 + 0.1 * len(cores) + 1.5),
                                 sharex=True, gridspec_kw={"height_ratios": [3, 1]})
    by_phase: dict = {}  # one collection of rectangles per phase: fast with thousands
    for row, c in enumerate(cores):
        for start, end, phase in segments[c]:
            by_phase.setdefault(phase, []).append(
                [(start, row - 0.4), (end, row - 0.4), (end, row + 0.4), (start, row + 0.4)])
    for phase, boxes in by_phase.items():
        ax.add_collection(PolyCollection(boxes, facecolors=PHASE_COLOURS.get(phase, "#cccccc"),
                                         linewidths=0))
    ax.set_xlim(0, max((end for c in cores for _, end, _ in segments[c]), default=1))
    ax.set_ylim(-0.5, len(cores) - 0.5)
    every = max(1, len(cores) // 8)
    ax.set_yticks(range(0, len(cores), every), [str(c) for c in cores[::every]])
    ax.set_ylabel("core")
    ax.invert_yaxis()
    handles = [plt.Rectangle((0, 0), 1, 1, color=col) for col in PHASE_COLOURS.values()]
    ax.legend(handles, list(PHASE_COLOURS), fontsize=10, ncols=5, loc="lower left",
              bbox_to_anchor=(0, 1.0), frameon=False)
    ax.set_title(title, fontsize=10, pad=48)
    t = np.arange(len(hbm_per_cycle))
    hb.fill_between(t, hbm_per_cycle, step="post", color=PHASE_COLOURS["hbm"], lw=0)
    hb.axhline(bandwidth, color="#222222", lw=1, ls="--")
    hb.set_ylabel("HBM B/cycle")
    hb.set_xlabel("cycle")
    fig.tight_layout()
    return fig
