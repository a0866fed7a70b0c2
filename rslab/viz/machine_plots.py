"""Plots of the simulated core: diagram, llvm-mca-style timeline, per-slot Gantt, stalls."""

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import FancyArrowPatch, Rectangle

from rslab.machine.stalls import CAUSES

SLOT_COLORS = {"ld": "#4C72B0", "st": "#8172B2", "valu": "#55A868", "pop": "#64B5CD",
               "sfu": "#DD8452", "xlu": "#937860", "scalar": "#8C8C8C", None: "#CCCCCC"}
CAUSE_COLORS = {"raw": "#C44E52", "branch": "#8C8C8C", "bank-conflict": "#4C72B0",
                "sfu-hold": "#DD8452", "fifo-full": "#DA8BC3", "sfu-wait": "#CCB974",
                "dma-wait": "#64B5CD"}


def _axes(ax, size):
    if ax is None:
        fig, ax = plt.subplots(figsize=size, constrained_layout=True)
    return ax.figure, ax


def _op_color(op):
    if op.text.startswith("vpop"):
        return SLOT_COLORS["pop"]
    return SLOT_COLORS.get(op.slot, SLOT_COLORS[None])


def plot_timeline(trace, *, first: int = 0, count: int = 32, ax=None, title=None):
    """llvm-mca-style timeline: one row per op (issue order), cycles across.

    A thin bar before issue is the bundle's stall (coloured by cause), the thick bar
    runs from issue to ready (coloured by slot class; pops in light blue).
    """
    ops = trace.ops[first:first + count]
    if not ops:
        raise ValueError(f"no ops in the range first={first}, count={count}")
    stall_of = {i: (b.stall, b.cause) for i, b in enumerate(trace.bundles)}
    fig, ax = _axes(ax, (7, 0.25 * len(ops) + 1.4))
    labels = []
    for row, op in enumerate(ops):
        stall, cause = stall_of[op.bundle]
        if stall:
            ax.barh(row, stall, left=op.issue - stall, height=0.3,
                    color=CAUSE_COLORS[cause], alpha=0.9)
        ax.barh(row, max(op.ready - op.issue, 1), left=op.issue, height=0.7,
                color=_op_color(op), edgecolor="black", linewidth=0.4)
        ax.text(op.issue + 0.15, row, "I", va="center", ha="left", fontsize=10)
        it = ",".join(str(i) for i in op.iters)
        labels.append(f"[{it}] {op.text}" if it else op.text)
    ax.set_yticks(range(len(ops)), labels, fontsize=10, family="monospace")
    ax.invert_yaxis()
    ax.set_xlabel("cycle")
    lo = min(op.issue - stall_of[op.bundle][0] for op in ops)
    hi = max(op.ready for op in ops)
    ax.set_xlim(lo - 0.5, hi + 0.5)
    ax.xaxis.set_major_locator(plt.MaxNLocator(integer=True))
    ax.grid(axis="x", alpha=0.3)
    _legend(ax, {op.slot if not op.text.startswith("vpop") else "pop" for op in ops},
            {stall_of[op.bundle][1] for op in ops} - {None})
    if title:
        ax.set_title(title)
    return fig


def _legend(ax, slots, causes):
    handles = [Rectangle((0, 0), 1, 1, color=SLOT_COLORS[s]) for s in sorted(slots, key=str)]
    names = [str(s) for s in sorted(slots, key=str)]
    for c in sorted(causes):
        handles.append(Rectangle((0, 0), 1, 0.3, color=CAUSE_COLORS[c]))
        names.append(f"stall: {c}")
    ax.legend(handles, names, fontsize=10, loc="upper right", framealpha=0.85)


def plot_slot_gantt(trace, *, start: int = 0, stop: int | None = None, ax=None, title=None):
    """One row per slot instance (valu0, valu1, sfu, ld, ...) plus a stall row."""
    stop = trace.run.cycles if stop is None else stop
    rows = [r for r in trace.slot_rows() if r[1] + r[2] > start and r[1] < stop]
    cfg = trace.run.config
    names = [f"{slot}{k}" if n > 1 else slot for slot, n in cfg.slots.items() for k in range(n)]
    index = {n: i for i, n in enumerate(names)}
    fig, ax = _axes(ax, (7, 0.4 * (len(names) + 1) + 1.4))
    for name, s, d, text in rows:
        color = SLOT_COLORS["pop"] if text.startswith("vpop") else SLOT_COLORS[
            name.rstrip("0123456789")]
        ax.barh(index[name], d, left=s, height=0.75, color=color, edgecolor="black",
                linewidth=0.3)
    srow = len(names)
    for b in trace.bundles:
        if b.cause is not None and b.cycle > start and b.cycle - b.stall < stop:
            ax.barh(srow, b.stall, left=b.cycle - b.stall, height=0.75,
                    color=CAUSE_COLORS[b.cause])
    ax.set_yticks(range(srow + 1), names + ["stalls"], fontsize=10)
    ax.invert_yaxis()
    ax.set_xlim(start, stop)
    ax.set_xlabel("cycle")
    ax.grid(axis="x", alpha=0.3)
    causes = {b.cause for b in trace.bundles if b.cause} & set(CAUSES)
    _legend(ax, set(), causes)
    if title:
        ax.set_title(title)
    return fig


def plot_stalls(runs: dict, *, ax=None, title=None, per=None):
    """Stacked bars of stall cycles by cause, one bar per named run (``per``: divide by it)."""
    fig, ax = _axes(ax, (7, 3.2))
    names = list(runs)
    bottom = np.zeros(len(names))
    for cause in CAUSES:
        vals = np.array([runs[n].stalls[cause] for n in names], dtype=float)
        if per is not None:
            vals = vals / np.asarray([per[n] for n in names], dtype=float)
        if vals.any():
            ax.bar(names, vals, bottom=bottom, color=CAUSE_COLORS[cause], label=cause)
            bottom += vals
    issue = np.array([runs[n].bundles for n in names], dtype=float)
    if per is not None:
        issue = issue / np.asarray([per[n] for n in names], dtype=float)
    ax.bar(names, issue, bottom=bottom, color="#EEEEEE", edgecolor="#999999", label="issue")
    ax.set_ylabel("cycles" + (" per unit" if per is not None else ""))
    ax.legend(fontsize=10)
    if title:
        ax.set_title(title)
    return fig


def plot_occupancy(trace, *, ax=None, title=None):
    """SFU FIFO entries and live vector registers over time."""
    fig, ax = _axes(ax, (7, 2.8))
    c, occ = trace.fifo_occupancy()
    _, live = trace.live_registers("v")
    ax.step(c, occ, where="post", label="SFU FIFO entries", color=SLOT_COLORS["sfu"])
    ax.step(c, live, where="post", label="live vector registers", color=SLOT_COLORS["valu"])
    ax.axhline(trace.run.config.fifo_depth, color=SLOT_COLORS["sfu"], ls=":", lw=1,
               label="FIFO depth")
    ax.set_xlabel("cycle")
    ax.legend(fontsize=10, loc="center right")
    if title:
        ax.set_title(title)
    return fig


def draw_core(config, *, ax=None):
    """A block diagram of the core with the slot counts and latencies of ``config``."""
    fig, ax = _axes(ax, (7, 4.6))
    lat, slots = config.latency, config.slots

    def box(x, y, w, h, text, color):
        ax.add_patch(Rectangle((x, y), w, h, facecolor=color, edgecolor="black", alpha=0.85))
        ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=10)

    def arrow(a, b):
        ax.add_patch(FancyArrowPatch(a, b, arrowstyle="-|>", mutation_scale=10, lw=1))

    box(0.0, 0.9, 1.9, 3.9, f"VMEM\n{config.vmem_bytes // 2**20} MiB\n{config.vmem_banks}"
        f"\nbanks\n× {config.bank_bytes} B", "#DDE6F3")
    box(0.0, -0.9, 1.9, 1.3, f"HBM → DMA\n{config.dma_bytes_per_cycle} B/cycle\n"
        f"latency {config.dma_latency}", "#EEEEEE")
    arrow((0.95, 0.4), (0.95, 0.9))
    box(2.5, 3.4, 1.6, 1.0, f"ld ×{slots['ld']}\nlatency {lat['ld']}", SLOT_COLORS["ld"])
    box(2.5, 1.9, 1.6, 1.0, f"st ×{slots['st']}", SLOT_COLORS["st"])
    arrow((1.9, 3.9), (2.5, 3.9))
    arrow((2.5, 2.4), (1.9, 2.4))
    box(4.7, 1.4, 1.9, 3.4, f"vector\nregisters\n{config.vregs} ×\n{config.lanes} lanes\n"
        "× 32 bit", "#F3F3DD")
    arrow((4.1, 3.9), (4.7, 3.9))
    arrow((4.7, 2.4), (4.1, 2.4))
    box(7.3, 3.8, 2.2, 1.0, f"VALU ×{slots['valu']}\nlatency {lat['valu']}", SLOT_COLORS["valu"])
    box(7.3, 2.2, 2.2, 1.2, f"SFU ×{slots['sfu']}: push\nhold {config.sfu_hold}\n"
        f"latency {lat['sfu']}", SLOT_COLORS["sfu"])
    box(10.0, 2.2, 1.9, 1.2, f"result FIFO\ndepth {config.fifo_depth}", SLOT_COLORS["pop"])
    box(7.3, 0.6, 2.2, 1.0, f"XLU ×{slots['xlu']}\nlatency {lat['xlu']}", SLOT_COLORS["xlu"])
    box(10.0, 0.2, 1.9, 1.4, f"scalar ×{slots['scalar']}\n{config.sregs} regs\n"
        f"latency {lat['scalar']}", "#DDDDDD")
    arrow((6.6, 4.5), (7.3, 4.5))
    arrow((7.3, 4.1), (6.6, 4.1))
    arrow((6.6, 2.8), (7.3, 2.8))
    arrow((9.5, 2.8), (10.0, 2.8))
    ax.plot([10.95, 10.95], [3.4, 3.6], color="black", lw=1)
    arrow((10.95, 3.6), (6.6, 3.6))
    ax.text(9.9, 3.62, "vpop (a VALU slot)", fontsize=10, ha="center", va="bottom")
    arrow((6.6, 1.7), (7.3, 1.1))
    ax.text(5.95, -0.55, f"one VLIW bundle: ld {slots['ld']}, st {slots['st']}, valu "
            f"{slots['valu']}, sfu {slots['sfu']}, xlu {slots['xlu']}, scalar "
            f"{slots['scalar']}\nin-order issue; a taken branch costs {config.branch_penalty}",
            ha="center", va="center", fontsize=10)
    ax.set_xlim(-0.1, 12.0)
    ax.set_ylim(-1.0, 4.9)
    ax.axis("off")
    return fig


def timeline_figure(trace, *, title: str, xmax: float, size=(7.5, 2.8)):
    """A figure of its own for ``plot_timeline`` (first 32 ops), cycles 0 to ``xmax``."""
    fig, ax = plt.subplots(figsize=size, layout="constrained")
    plot_timeline(trace, ax=ax, title=title)
    ax.set_xlim(-0.5, xmax)
    return fig


def plot_cycle_bars(bars: dict, *, ax=None, bound=None, ylabel="cycles", title=None):
    """Stacked bars, one per name of ``bars`` (``{name: {cause or "issue": cycles}}``):
    stall cycles by cause, then the issue cycles; ``bound`` draws the ResMII line."""
    fig, ax = _axes(ax, (5, 3.2))
    names = list(bars)
    bottom = np.zeros(len(names))
    for cause in list(CAUSE_COLORS) + ["issue"]:
        vals = np.array([bars[n].get(cause, 0.0) for n in names])
        if vals.any():
            ax.bar(names, vals, bottom=bottom, label=cause,
                   color=CAUSE_COLORS.get(cause, "#EEEEEE"), edgecolor="#999999")
            bottom += vals
    if bound is not None:
        ax.axhline(bound, color="k", ls="--", lw=1, label="ResMII")
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=10)
    ax.tick_params(axis="x", labelsize=10)
    if title:
        ax.set_title(title, fontsize=10)
    return fig


def stalls_and_occupancy(bars: dict, trace, *, bound, xmax: float, ylabel: str, title: str):
    """Cycle bars (``plot_cycle_bars``) beside the FIFO and live-register occupancy of
    ``trace`` over cycles 0 to ``xmax``."""
    fig, ax = plt.subplots(2, 1, figsize=(7, 6.4), layout="constrained")
    plot_cycle_bars(bars, ax=ax[0], bound=bound, ylabel=ylabel)
    plot_occupancy(trace, ax=ax[1], title=title)
    ax[1].set_xlim(0, xmax)
    return fig


def timeline_and_stalls(trace, bars: dict, *, start: int, span: int, title: str):
    """The timeline of the ops issued in cycles [start, start + span) beside one stacked bar
    of ``bars`` (``{cause or "issue": cycles}``, per packed vector)."""
    ops = [i for i, op in enumerate(trace.ops) if start <= op.issue < start + span]
    if not ops:
        raise ValueError(f"no op issues in cycles [{start}, {start + span})")
    fig, ax = plt.subplots(1, 2, figsize=(7, 0.25 * len(ops) + 1.8), layout="constrained",
                           gridspec_kw={"width_ratios": [3, 1]})
    plot_timeline(trace, first=ops[0], count=len(ops), ax=ax[0], title=title)
    plot_cycle_bars({"per packed\nvector": bars}, ax=ax[1], ylabel="cycles per packed vector")
    ax[1].legend(fontsize=10, loc="upper center", bbox_to_anchor=(0.5, -0.12))
    return fig


def plot_chain_and_independent(ns, chain, indep, config):
    """Cycles of n dependent VALU ops and of n independent ones (measured), with the two
    first-principles lines: n × latency and ⌈n / slots⌉ − 1 + latency."""
    ns = np.asarray(ns)
    lat, slots = config.latency["valu"], config.slots["valu"]
    fig, ax = plt.subplots(figsize=(7, 3.6), layout="constrained")
    ax.plot(ns, chain, "o-", ms=3, label="dependent chain (measured)")
    ax.plot(ns, indep, "s-", ms=3, label=f"independent, {slots} per bundle (measured)")
    ax.plot(ns, lat * ns, "k:", lw=1, label="n × latency")
    ax.plot(ns, np.ceil(ns / slots) - 1 + lat, "k--", lw=1, label="⌈n / slots⌉ − 1 + latency")
    ax.set_xlabel("VALU ops n")
    ax.set_ylabel("cycles")
    ax.legend(fontsize=10)
    return fig


def plot_burst(ns, measured, config):
    """Cycles of n pushes then n pops (measured) against the push line alone and against
    ``max(latency, n)`` after the last push (the pops issue one per bundle)."""
    ns = np.asarray(ns)
    hold, lat, pop = config.sfu_hold, config.latency["sfu"], config.latency["pop"]
    fig, ax = plt.subplots(figsize=(7, 3.4), layout="constrained")
    ax.plot(ns, measured, "o", ms=5, label="n pushes then n pops (measured)")
    ax.plot(ns, (1 + hold) * (ns - 1) + lat + pop, "k--", lw=1,
            label="(1 + hold)(n − 1) + latency + pop")
    ax.plot(ns, (1 + hold) * (ns - 1) + np.maximum(lat, ns) + pop, "C1-", lw=1,
            label="(1 + hold)(n − 1) + max(latency, n) + pop")
    ax.axvline(lat, color="gray", ls=":", lw=1)
    ax.text(lat, ax.get_ylim()[1], " n = latency", va="top", fontsize=10, color="gray")
    ax.set_xlabel("pushes n")
    ax.set_ylabel("cycles")
    ax.legend(fontsize=10, loc="lower right")
    return fig


def draw_packed_and_strides(strides, degrees):
    """Left: lanes 0–5 of a packed vector (elements l and l + 128); right: the bank-conflict
    degree of a strided vector access for each stride."""
    fig, ax = plt.subplots(2, 1, figsize=(7, 5.0), layout="constrained",
                           gridspec_kw={"height_ratios": [1, 1.3]})
    for lane in range(6):
        for half, elem in enumerate((lane, lane + 128)):
            ax[0].add_patch(Rectangle((lane, half), 0.95, 0.95, fc=["#DDE6F3", "#F3DDDD"][half],
                                      ec="k"))
            ax[0].text(lane + 0.47, half + 0.47, str(elem), ha="center", va="center",
                       fontsize=10)
    ax[0].text(6.3, 0.47, "…  low half-words", va="center", fontsize=10)
    ax[0].text(6.3, 1.47, "…  high half-words", va="center", fontsize=10)
    ax[0].set_xlim(0, 9.5)
    ax[0].set_ylim(0, 2)
    ax[0].axis("off")
    ax[0].set_title("lanes 0–5 of a packed vector: lane l holds elements l and l + 128",
                    fontsize=10)
    ax[1].bar(range(len(strides)), degrees, color=SLOT_COLORS["ld"])
    ax[1].set_xticks(range(len(strides)), [str(s) for s in strides], fontsize=10)
    ax[1].set_xlabel("stride (words)")
    ax[1].set_ylabel("conflict degree k")
    ax[1].set_yscale("log", base=2)
    return fig
