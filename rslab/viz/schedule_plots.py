"""Plots for software pipelining: dependence graph, MRT, stage table, sweeps (matplotlib only)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from rslab.schedule import slot_of

SLOT_COLOURS = {"ld": "#4c72b0", "st": "#8172b2", "valu": "#55a868", "sfu": "#c44e52",
                "xlu": "#ccb974", "scalar": "#64b5cd"}


def _colour(op):
    return "#937860" if op.is_pop else SLOT_COLOURS[slot_of(op.opcode)]


def plot_dependence_graph(schedule, *, ax=None, title=None):
    """Ops placed at their issue cycle (x) in lanes (y); arrows are dependences.

    Loop-carried edges are dashed and labelled with their distance.
    """
    g = schedule.graph
    if ax is None:
        _, ax = plt.subplots(figsize=(11, 0.28 * g.n + 1.5))
    order = sorted(range(g.n), key=lambda k: (schedule.times[k], k))
    y = {k: i for i, k in enumerate(order)}
    x = schedule.times
    for e in g.edges:
        if e.kind == "anti":
            continue
        x0, y0, x1, y1 = x[e.src], y[e.src], x[e.dst], y[e.dst]
        carried = e.distance > 0
        if carried:
            x1 = x1 + e.distance * schedule.ii
        ax.annotate("", xy=(x1, y1), xytext=(x0, y0),
                    arrowprops=dict(arrowstyle="->", lw=0.8, color="0.5" if not carried
                                    else "#c44e52", ls="--" if carried else "-",
                                    connectionstyle="arc3,rad=0.25" if carried else "arc3"))
    for k in range(g.n):
        op = g.ops[k]
        ax.scatter([x[k]], [y[k]], s=60, color=_colour(op), zorder=3)
        ax.text(x[k] + 0.4, y[k], f"{op.label} ({op.opcode})", va="center", fontsize=7)
    for s in range(schedule.stage_count + 1):
        ax.axvline(s * schedule.ii - 0.5, color="0.85", lw=0.8, zorder=0)
    ax.set_ylim(g.n, -1)
    ax.set_yticks([])
    ax.set_xlabel("issue cycle of iteration 0 (grey lines: stage boundaries)")
    ax.set_title(title or f"dependence graph at II = {schedule.ii} (dashed: loop-carried)")
    handles = [plt.Line2D([], [], marker="o", ls="", color=c, label=s)
               for s, c in SLOT_COLOURS.items()]
    handles.append(plt.Line2D([], [], marker="o", ls="", color="#937860", label="pop"))
    ax.legend(handles=handles, fontsize=7, loc="lower left", ncol=4)
    return ax.figure


def plot_mrt(schedule, *, ax=None, slots=("ld", "valu", "sfu", "scalar")):
    """The modulo reservation table: II rows × slot units, each cell the op holding it."""
    mrt = schedule.mrt()
    units = schedule.graph.model.units
    cols = [(s, u) for s in slots for u in range(units[s])]
    if ax is None:
        _, ax = plt.subplots(figsize=(1.6 * len(cols) + 1, 0.32 * schedule.ii + 1))
    grid = np.zeros((schedule.ii, len(cols)))
    for j, (s, u) in enumerate(cols):
        for r in range(schedule.ii):
            row = mrt[s][r]
            if u < len(row):
                grid[r, j] = 1
                ax.text(j, r, row[u], ha="center", va="center", fontsize=7)
    ax.imshow(grid, cmap="Greens", vmin=0, vmax=2.5, aspect="auto")
    ax.set_xticks(range(len(cols)), [f"{s}{u}" for s, u in cols])
    ax.set_yticks(range(schedule.ii), [f"row {r}" for r in range(schedule.ii)], fontsize=7)
    ax.set_title(f"modulo reservation table, II = {schedule.ii}")
    return ax.figure


def plot_stage_table(schedule, *, iterations=6, ax=None):
    """Which iteration is in which stage in each II-block of cycles."""
    sc = schedule.stage_count
    blocks = iterations + sc - 1
    if ax is None:
        _, ax = plt.subplots(figsize=(min(14, 1.0 * blocks + 2), 0.5 * iterations + 1.2))
    names = stage_names(schedule)
    for it in range(iterations):
        for s in range(sc):
            ax.add_patch(plt.Rectangle((it + s, it - 0.4), 0.95, 0.8,
                                       color=plt.cm.viridis(s / max(sc - 1, 1)), alpha=0.8))
            ax.text(it + s + 0.47, it, names[s], ha="center", va="center", fontsize=7,
                    color="white")
    ax.set_xlim(0, blocks)
    ax.set_ylim(iterations - 0.5, -0.5)
    ax.set_xticks(np.arange(blocks) + 0.5, [f"{b * schedule.ii}" for b in range(blocks)],
                  fontsize=7)
    ax.set_xlabel("cycle at the start of each block of II cycles")
    ax.set_ylabel("iteration")
    full = [b for b in range(blocks) if sc - 1 <= b < iterations]
    if full:
        ax.axvspan(full[0], full[-1] + 1, color="0.9", zorder=0)
    ax.set_title("stage table (shaded: kernel, every stage busy)")
    return ax.figure


def stage_names(schedule) -> list:
    """A short name per stage from the ops it holds (e.g. ``unpack``, ``exp2``, ``pop``)."""
    tags = {"vld": "load", "vunpack": "unpack", "vsub": "sub", "vmul": "mul", "vexp2": "exp2",
            "vlog2": "log2", "vpop": "pop", "vadd": "add", "vmax": "max", "vsel": "sel"}
    names = []
    for s in range(schedule.stage_count):
        seen = []
        for k, t in sorted(enumerate(schedule.times), key=lambda kt: kt[1]):
            if t // schedule.ii == s:
                tag = tags.get(schedule.graph.ops[k].opcode.split(".")[0])
                if tag and tag not in seen:
                    seen.append(tag)
        names.append("/".join(seen[:2]) or f"S{s}")
    return names


def plot_issue_timeline(schedule, *, iterations=4, ax=None):
    """Steady-state picture: per cycle, the ops issued (coloured by slot) and their iteration."""
    g = schedule.graph
    if ax is None:
        _, ax = plt.subplots(figsize=(12, 3.2))
    total = (iterations + schedule.stage_count - 1) * schedule.ii
    counts = {}
    for it in range(iterations):
        for k, t in enumerate(schedule.times):
            c = t + it * schedule.ii
            row = counts.get(c, 0)
            counts[c] = row + 1
            ax.add_patch(plt.Rectangle((c, row), 0.9, 0.9, color=_colour(g.ops[k])))
            ax.text(c + 0.45, row + 0.45, str(it), ha="center", va="center", fontsize=6,
                    color="white")
    ax.set_xlim(0, total)
    ax.set_ylim(0, max(counts.values()) + 0.5)
    ax.set_xlabel("cycle")
    ax.set_ylabel("ops issued")
    ax.set_title("issue timeline: each box an op, the number its iteration")
    return ax.figure


def plot_sweep(values, series: dict, *, xlabel, ax=None, note=None):
    """Several measured curves over one swept parameter, on the same axes."""
    if ax is None:
        _, ax = plt.subplots(figsize=(6.5, 3.6))
    for label, ys in series.items():
        ax.plot(values, ys, marker="o", label=label)
    if note:
        ax.axhline(note[1], color="0.5", ls=":", label=note[0])
    ax.set_xlabel(xlabel)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return ax.figure
