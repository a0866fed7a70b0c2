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
    carried_x = [x[e.dst] + e.distance * schedule.ii for e in g.edges
                 if e.kind != "anti" and e.distance > 0]
    for e in g.edges:
        if e.kind != "anti" and e.distance > 0:
            ax.scatter([x[e.dst] + e.distance * schedule.ii], [y[e.dst]], s=60,
                       facecolor="none", edgecolor="#c44e52", zorder=3)
    for s in range(schedule.stage_count + 1):
        ax.axvline(s * schedule.ii - 0.5, color="0.85", lw=0.8, zorder=0)
    ax.set_xlim(-1, max(list(x) + carried_x) + 6)
    ax.set_ylim(g.n, -1)
    ax.set_yticks([])
    ax.set_xlabel("issue cycle of iteration 0 (grey lines: stage boundaries)")
    ax.set_title(title or f"dependence graph at II = {schedule.ii} (dashed: loop-carried, "
                 "to the hollow marker: the same op one iteration later)")
    handles = [plt.Line2D([], [], marker="o", ls="", color=c, label=s)
               for s, c in SLOT_COLOURS.items()]
    handles.append(plt.Line2D([], [], marker="o", ls="", color="#937860", label="pop (VALU slot)"))
    ax.legend(handles=handles, fontsize=7, loc="lower left", ncol=4)
    return ax.figure


def _stage_colour(stage, stages):
    return plt.cm.viridis(stage / max(stages - 1, 1))


def plot_mrt(schedule, *, ax=None, slots=("ld", "valu", "sfu", "scalar"), reserved=None):
    """The modulo reservation table: II rows × slot units, each cell the op holding it.

    A cell reads ``label · S<stage>`` and is coloured by the op's stage: in kernel
    cycle ``r``, that op works for the iteration started ``stage`` blocks earlier.
    An SFU push books its row and the next ``hold`` rows (``hold``). ``reserved``
    maps (slot, row) to a text for slots the expansion keeps (e.g. the pointer step).
    """
    mrt = schedule.mrt()
    units = schedule.graph.model.units
    cols = [(s, u) for s in slots for u in range(units[s])]
    if ax is None:
        _, ax = plt.subplots(figsize=(1.5 * len(cols) + 1.2, 0.36 * schedule.ii + 1.2),
                             constrained_layout=True)
    stage_of = {op.label: t // schedule.ii
                for op, t in zip(schedule.graph.ops, schedule.times, strict=True)}
    first_row = {op.label: t % schedule.ii
                 for op, t in zip(schedule.graph.ops, schedule.times, strict=True)}
    sc = schedule.stage_count
    for j, (s, u) in enumerate(cols):
        for r in range(schedule.ii):
            row = mrt[s][r]
            if u < len(row):
                label = row[u]
                held = s == "sfu" and first_row[label] != r
                ax.add_patch(plt.Rectangle((j - 0.5, r - 0.5), 1, 1, alpha=0.45 if held else 0.9,
                                           color=_stage_colour(stage_of[label], sc)))
                text = f"{label} · S{stage_of[label]}" + (" (hold)" if held else "")
                dark = not held and stage_of[label] < 0.6 * (sc - 1)
                ax.text(j, r, text, ha="center", va="center", fontsize=7,
                        color="white" if dark else "black")
            elif reserved and (s, r) in reserved:
                ax.text(j, r, reserved[(s, r)], ha="center", va="center", fontsize=7,
                        color="0.3", style="italic")
    ax.set_xlim(-0.5, len(cols) - 0.5)
    ax.set_ylim(schedule.ii - 0.5, -0.5)
    ax.set_xticks(range(len(cols)), [f"{s}{u}" if units[s] > 1 else s for s, u in cols])
    ax.set_yticks(range(schedule.ii), [f"row {r}" for r in range(schedule.ii)], fontsize=7)
    ax.grid(False)
    handles = [plt.Rectangle((0, 0), 1, 1, color=_stage_colour(st, sc), label=f"stage {st}")
               for st in range(sc)]
    ax.legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1))
    ax.set_title(f"modulo reservation table, II = {schedule.ii}")
    return ax.figure


def plot_stage_table(schedule, *, iterations=6, ax=None):
    """Which iteration is in which stage in each block of II cycles."""
    sc = schedule.stage_count
    blocks = iterations + sc - 1
    if ax is None:
        _, ax = plt.subplots(figsize=(min(14, 1.0 * blocks + 2), 0.5 * iterations + 1.2),
                             constrained_layout=True)
    names = stage_names(schedule)
    for it in range(iterations):
        for s in range(sc):
            ax.add_patch(plt.Rectangle((it + s + 0.025, it - 0.4), 0.95, 0.8,
                                       color=_stage_colour(s, sc), alpha=0.9))
            ax.text(it + s + 0.5, it, f"S{s} {names[s]}", ha="center", va="center",
                    fontsize=7, color="white" if s < 0.6 * (sc - 1) else "black")
    ax.set_xlim(0, blocks)
    ax.set_ylim(iterations - 0.5, -0.5)
    ax.set_xticks(np.arange(blocks + 1), [f"{b * schedule.ii}" for b in range(blocks + 1)],
                  fontsize=7)
    ax.set_xlabel("cycle (block boundaries, every II cycles)")
    ax.set_ylabel("iteration")
    full = [b for b in range(blocks) if sc - 1 <= b < iterations]
    if full:
        ax.axvspan(full[0], full[-1] + 1, color="0.9", zorder=0)
    ax.set_title("stage table (shaded: kernel, every stage busy; left of it the prologue, "
                 "right the epilogue)")
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
        names.append("/".join(seen[:3]) or f"S{s}")
    return names


def plot_steady_gantts(loops: dict, *, pass_index: int = 1, cycles: int | None = None):
    """Per-slot Gantt charts of traced loops over the same number of cycles.

    ``loops`` maps a title to a ``rslab.kernels.studies.pipeline_trace.TracedLoop``; each
    window starts at kernel pass ``pass_index`` and lasts ``cycles`` (default: the
    longest pass). Dotted lines mark the starts of kernel passes.
    """
    from rslab.viz.machine_plots import plot_slot_gantt

    windows = {name: t.pass_window(pass_index) for name, t in loops.items()}
    cycles = cycles or max(w[3] - w[2] for w in windows.values())
    fig, axes = plt.subplots(len(loops), 1, figsize=(10, 2.4 * len(loops) + 0.4),
                             constrained_layout=True, squeeze=False)
    for ax, (name, t) in zip(axes[:, 0], loops.items(), strict=True):
        start = windows[name][2]
        plot_slot_gantt(t.trace, start=start, stop=start + cycles, ax=ax, title=name)
        for it in t.trace.loop_iterations(("index", 0)):
            if start <= it["start"] < start + cycles:
                ax.axvline(it["start"], color="black", ls=":", lw=1)
    return fig


def plot_pass_timeline(loop, *, pass_index: int = 1, title: str | None = None):
    """The machine's llvm-mca-style timeline of the ops of one kernel pass of a traced loop."""
    from rslab.viz.machine_plots import plot_timeline

    first, count, _, _ = loop.pass_window(pass_index)
    return plot_timeline(loop.trace, first=first, count=count, title=title)


def design_ylims(point_lists) -> tuple:
    """Shared y-limits of the three panels of :func:`plot_design_points` over many frames."""
    pts = [p for ps in point_lists for p in ps]
    if not pts:
        raise ValueError("point_lists must hold at least one point")
    ii = max(max(p["measured_ii"], p["ii"], p["res_mii"], p["rec_mii"]) for p in pts)
    stall = max(p["stalls_per_iter"] for p in pts)
    regs = max(max(p["vector_registers"], p["stages"]) for p in pts)
    return (0, ii * 1.1 + 1), (-0.2, max(stall, 1) * 1.15), (0, regs * 1.1 + 1)


def plot_design_points(xs, points, *, xlabel: str, title: str, ylims=None, compare=None,
                       compare_label: str = "compare"):
    """Three panels over one swept parameter: II, stalls per iteration, register pressure.

    ``points`` are dicts from ``pipeline_bench.sumexp_point`` (one per x);
    ``compare`` optionally holds a second list (e.g. a plan that ignores the
    hold), drawn as its measured II and its stall bars, labelled ``compare_label``.
    """
    if len(xs) != len(points) or (compare is not None and len(compare) != len(xs)):
        raise ValueError(f"xs, points and compare differ in length: {len(xs)} vs "
                         f"{len(points)}" + ("" if compare is None else f" vs {len(compare)}"))
    fig, axes = plt.subplots(1, 3, figsize=(10, 3.1), constrained_layout=True)

    def col(key, pts=points):
        return [p[key] for p in pts]

    a = axes[0]
    a.plot(xs, col("measured_ii"), "o-", label="measured II")
    a.plot(xs, col("ii"), "s", mfc="none", ms=9, label="planned II")
    if compare is not None:
        a.plot(xs, col("measured_ii", compare), "v-.", color="#dd8452",
               label=f"measured II, {compare_label}")
    a.plot(xs, col("res_mii"), ":", color="0.4", label="ResMII")
    a.plot(xs, col("rec_mii"), "--", color="#c44e52", label="RecMII")
    a.set_ylabel("cycles per iteration")
    series = [("planned with the machine", points)]
    if compare is not None:
        series.append((compare_label, compare))
    width = 0.8 / len(series)
    for k, (label, pts) in enumerate(series):
        pos = np.arange(len(xs)) + (k - (len(series) - 1) / 2) * width
        vals = col("stalls_per_iter", pts)
        axes[1].bar(pos, vals, width=width, label=label,
                    color=("#55a868", "#dd8452")[k])
        for x, v in zip(pos, vals, strict=True):
            axes[1].text(x, v, f"{v:g}", ha="center", va="bottom", fontsize=7)
    axes[1].set_xticks(range(len(xs)), [str(x) for x in xs])
    axes[1].set_ylabel("stall cycles per iteration")
    if compare is not None:
        axes[1].legend(fontsize=7, loc="upper left")
    c = axes[2]
    c.plot(xs, col("vector_registers"), "o-", color="#55a868", label="vector registers")
    c.plot(xs, col("stages"), "^--", color="#8172b2", label="stages")
    for ax, lim in zip(axes, ylims or (None,) * 3, strict=True):
        ax.set_xlabel(xlabel)
        ax.grid(alpha=0.3)
        if lim:
            ax.set_ylim(*lim)
    if len(xs) and all(isinstance(x, int) for x in xs):
        for ax in (axes[0], axes[2]):
            ax.set_xticks(xs)
    a.legend(fontsize=6)
    c.legend(fontsize=7)
    fig.suptitle(title)
    return fig


def plot_sweep(values, series: dict, *, xlabel, ylabel, ax=None, note=None):
    """Several measured curves over one swept parameter, on the same axes (``ylabel`` names
    what each is measured in)."""
    if ax is None:
        _, ax = plt.subplots(figsize=(6.5, 3.6))
    for label, ys in series.items():
        ax.plot(values, ys, marker="o", label=label)
    if note:
        ax.axhline(note[1], color="0.5", ls=":", label=note[0])
    ax.set_xticks(values)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=9)
    ax.grid(alpha=0.3)
    return ax.figure


def plot_ii_vs_bounds(rows, *, title: str = "Each loop's II against its lower bounds"):
    """Per loop (``rows``: ``loop``, ``ii``, ``res_mii``, ``rec_mii``, ``per_iteration``):
    II per vector the loop takes (``per_iteration`` of them an iteration) as a bar, ResMII and
    RecMII per vector as markers."""
    fig, ax = plt.subplots(figsize=(7, 0.42 * len(rows) + 2.0))
    y = np.arange(len(rows))[::-1]
    per = [max(r.get("per_iteration", 1), 1) for r in rows]
    ii = [r["ii"] / p for r, p in zip(rows, per, strict=True)]
    ax.barh(y, ii, color="#4c72b0", alpha=0.75, label="II (scheduler)")
    ax.plot([r["res_mii"] / p for r, p in zip(rows, per, strict=True)], y, "k|", ms=14, mew=2,
            label="ResMII (resources)")
    ax.plot([r["rec_mii"] / p for r, p in zip(rows, per, strict=True)], y, "r|", ms=14, mew=2,
            label="RecMII (recurrences)")
    for yi, r, v in zip(y, rows, ii, strict=True):
        ax.text(v, yi, f" {r['ii']}/{max(r['res_mii'], r['rec_mii'])}", va="center", fontsize=10)
    ax.set_xlim(0, 1.15 * max(ii))
    ax.set_yticks(y, [r["loop"] for r in rows], fontsize=10)
    ax.tick_params(axis="x", labelsize=10)
    ax.set_xlabel("cycles per vector (label: II / MII per iteration)", fontsize=10)
    ax.set_title(title, fontsize=11)
    fig.legend(*ax.get_legend_handles_labels(), fontsize=10, loc="lower center", ncol=3,
               frameon=False)
    fig.tight_layout(rect=(0, 0.5 / fig.get_figheight(), 1, 1))
    return fig
