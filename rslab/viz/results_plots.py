"""Plots and tables for the chapter "Results": the full sampler, baseline versus optimised.

Every figure is at most 7 inches wide, the width a page shows, with text of at least 10 pt
(:data:`STYLE`), so that it is legible as shown.
"""

from __future__ import annotations

import functools

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Patch
from matplotlib.ticker import NullFormatter

PHASE_ORDER = ("max", "sumexp", "acceptance", "residual", "bonus", "dma_wait", "setup")
PHASE_LABELS = {"max": "row max", "sumexp": "sum-exp", "acceptance": "acceptance",
                "residual": "residual Gumbel", "bonus": "bonus Gumbel", "dma_wait": "DMA wait",
                "setup": "setup / drain"}
PHASE_COLOURS = {"max": "#4c72b0", "sumexp": "#55a868", "acceptance": "#8172b2",
                 "residual": "#c44e52", "bonus": "#dd8452", "dma_wait": "#937860",
                 "setup": "#bbbbbb"}
STYLE = {"font.size": 10, "axes.titlesize": 11, "axes.labelsize": 10, "xtick.labelsize": 10,
         "ytick.labelsize": 10, "legend.fontsize": 10, "figure.titlesize": 11}
"""Text sizes of every figure here: 10 pt at least, as shown at 7 inches."""
WIDTH = 7.0
"""Inches: the width a page shows a figure at."""


def legible(draw):
    """Draw under :data:`STYLE`."""
    @functools.wraps(draw)
    def wrapper(*args, **kwargs):
        with plt.rc_context(STYLE):
            return draw(*args, **kwargs)
    return wrapper


def results_table(rows, note: dict) -> str:
    """Markdown table for the benchmark's report: our cycles, speedups against every baseline
    measured, the optimised program's floor, beside the design note's figures (labelled as
    the note's)."""
    lines = ["| test point | S | R | V | path | baseline (model) | optimised (model) | "
             "speedup (model) | also against (model) | floor (model) | optimised / floor | "
             "note: baseline | note: optimised | note: speedup | tokens = reference |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        nb, no = note[r["name"]]
        also = "; ".join(f"{a['baseline']}: {a['cycles']:,} ({a['speedup']:.2f}×)"
                         for a in r.get("also_against", [])) or "—"
        lines.append(f"| {r['name']} | {r['S']} | {r['R']} | {r['vocab']:,} | {r['path']} | "
                     f"{r['baseline']}: {r['baseline_cycles']:,} | {r['optimized_cycles']:,} | "
                     f"{r['speedup']:.2f}× | {also} | {r['optimized_bound_cycles']:,} | "
                     f"{r['optimized_ratio']:.3f} | {nb:,} | {no:,} | {nb / no:.2f}× | "
                     f"{'yes' if r['tokens_match_reference'] else 'NO'} |")
    return "\n".join(lines)


def floor_table(rows, which: str = "optimized") -> str:
    """Markdown table per test point and phase: achieved cycles, the floor, what binds it,
    and their ratio (``which``: ``optimized`` or ``baseline``)."""
    lines = ["| test point | phase | achieved | floor | binding | achieved / floor |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        for ph in PHASE_ORDER:
            f = r[f"{which}_floor"][ph]
            if not f["achieved"] and not f["bound_cycles"]:
                continue
            ratio = f"{f['ratio']:.2f}" if f["ratio"] is not None else "—"
            lines.append(f"| {r['name']} | {PHASE_LABELS[ph]} | {f['achieved']:,} | "
                         f"{f['bound_cycles']:,} | {f['binding']} | {ratio} |")
    return "\n".join(lines)


def _stacked_rows(ax, labels, columns):
    """Horizontal bars, one per label, stacked by phase (``columns``: phase → cycles)."""
    y = np.arange(len(labels))[::-1]
    left = np.zeros(len(labels))
    for ph in PHASE_ORDER:
        vals = np.array([c.get(ph, 0) for c in columns], dtype=float)
        if vals.any():
            ax.barh(y, vals, left=left, color=PHASE_COLOURS[ph], label=PHASE_LABELS[ph],
                    height=0.6)
            left += vals
    ax.set_yticks(y, labels)
    ax.ticklabel_format(axis="x", style="sci", scilimits=(0, 0))
    return left


def _legend_below(fig, axes):
    seen = {}
    for ax in np.ravel(axes):
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            seen.setdefault(lab, h)
    fig.legend(list(seen.values()), list(seen.keys()), loc="lower center",
               ncol=min(3, len(seen)), frameon=False)


@legible
def phase_bars(rows, *, title: str = "Where the cycles go"):
    """Cycles per phase, baseline and optimised, one panel per test point."""
    fig, axes = plt.subplots(len(rows), 1, figsize=(WIDTH, 2.0 + 1.6 * len(rows)),
                             squeeze=False)
    for ax, r in zip(axes[:, 0], rows, strict=True):
        _stacked_rows(ax, [f"baseline\n({r['baseline']})", "optimised"],
                      [r["baseline_phases"], r["optimized_phases"]])
        ax.set_title(f"{r['name']} (R = {r['R']}, S = {r['S']}, V = {r['vocab']:,})")
        ax.set_xlabel("cycles")
    _legend_below(fig, axes)
    fig.suptitle(title)
    fig.tight_layout(rect=(0, 0.16, 1, 1))
    return fig


@legible
def chain_vs_bound(items):
    """Bar pairs per loop: baseline cycles per packed vector vs optimised (II per vector)."""
    fig, ax = plt.subplots(figsize=(WIDTH, 3.8))
    names = [it["loop"] for it in items]
    x = np.arange(len(items))
    base = [it["baseline_per_vector"] for it in items]
    opt = [it["optimised_per_vector"] for it in items]
    ax.bar(x - 0.2, base, 0.4, label="first translation (chain latency)", color="#c44e52")
    ax.bar(x + 0.2, opt, 0.4, label="optimised (II: resource bound)", color="#4c72b0")
    for i in range(len(items)):
        ax.text(i, max(base[i], opt[i]) * 1.02, f"{base[i] / opt[i]:.1f}×", ha="center")
    ax.set_xticks(x, names)
    ax.set_ylabel("cycles per packed vector")
    ax.set_ylim(0, 1.2 * max(base + opt))
    ax.legend(loc="upper left", frameon=False)
    ax.set_title("Each loop's gain ≈ chain latency / resource bound")
    fig.tight_layout()
    return fig


@legible
def speedup_vs_vocab(sweep, highlight=None):
    """Speedup of both test points against the vocabulary size, and the phases at ``highlight``.

    ``sweep`` maps V → list of scenario rows (as returned by the kernel benchmark).
    """
    vocab = sorted(sweep)
    fig, (ax, bx) = plt.subplots(2, 1, figsize=(WIDTH, 7.0),
                                 gridspec_kw={"height_ratios": [3, 2.6]})
    for name, colour in (("all-accept", "#4c72b0"), ("first-reject", "#c44e52")):
        sp = [next(r for r in sweep[v] if r["name"] == name)["speedup"] for v in vocab]
        ax.plot(vocab, sp, "o-", color=colour, label=name)
    ax.set_xscale("log")
    ax.axhline(1, color="grey", lw=0.8)
    ax.set_xlabel("vocabulary size V")
    ax.set_ylabel("speedup")
    ax.legend(frameon=False)
    if highlight is not None:
        ax.axvline(highlight, color="k", ls="--", lw=0.8)
        rows = sweep[highlight]
        labels, cols = [], []
        for r in rows:
            for which, key in (("baseline", "baseline_phases"), ("optimised",
                                                                 "optimized_phases")):
                total = sum(r[key].values())
                cols.append({ph: v / total for ph, v in r[key].items()})
                labels.append(f"{r['name']}, {which}")
        _stacked_rows(bx, labels, cols)
        bx.ticklabel_format(axis="x", style="plain")
        bx.set_xlim(0, 1)
        bx.set_xlabel(f"share of cycles at V = {highlight:,}")
        bx.legend(loc="upper center", bbox_to_anchor=(0.5, -0.3), ncol=3, frameon=False)
    fig.tight_layout()
    return fig


@legible
def exact_vs_fast(fast_rows, exact_rows):
    """Optimised cycles per phase on both paths, per test point."""
    fig, axes = plt.subplots(len(fast_rows), 1, figsize=(WIDTH, 2.0 + 1.6 * len(fast_rows)),
                             squeeze=False)
    for ax, f, e in zip(axes[:, 0], fast_rows, exact_rows, strict=True):
        _stacked_rows(ax, ["Fast", "Exact"], [f["optimized_phases"], e["optimized_phases"]])
        ax.set_title(f"{f['name']}, optimised: Exact / Fast = "
                     f"{e['optimized_cycles'] / f['optimized_cycles']:.2f}×")
        ax.set_xlabel("cycles")
    _legend_below(fig, axes)
    fig.tight_layout(rect=(0, 0.16, 1, 1))
    return fig


@legible
def step_bars(rows, *, title: str = "One optimisation at a time (all-accept)"):
    """Cycles per phase of each optimisation step (one bar each, the first on top), with its
    cycles and the speedup so far."""
    phase_key = {"acceptance": "accept"}
    fig, ax = plt.subplots(figsize=(WIDTH, 1.2 + 0.42 * len(rows)))
    labels = [f"{i}. {r['step']}" for i, r in enumerate(rows)]
    ends = _stacked_rows(ax, labels, [{ph: r["phases"][phase_key.get(ph, ph)]
                                       for ph in PHASE_ORDER} for r in rows])
    for y, end, r in zip(np.arange(len(rows))[::-1], ends, rows, strict=True):
        ax.annotate(f"{r['cycles']:,} ({r['speedup']:.2f}×)", (end, y), xytext=(4, 0),
                    textcoords="offset points", va="center")
    ax.set_xlim(0, 1.45 * max(r["cycles"] for r in rows))
    ax.set_xlabel("cycles")
    ax.legend(loc="lower right", frameon=False)
    ax.set_title(title)
    fig.tight_layout()
    return fig


def headline_table(items) -> str:
    """Markdown: per test point our optimised cycles against the floor and the speedup against
    every baseline, beside the design note's figures (labelled as the note's)."""
    lines = ["| test point | optimised (model) | floor (model) | optimised / floor | "
             "speedup (model) | note: optimised | note: speedup |",
             "|---|---|---|---|---|---|---|"]
    for it in items:
        speedups = "<br>".join(f"{s:.2f}× against {b}" for b, s in it["speedups"])
        lines.append(f"| {it['name']} | {it['optimised']:,} | {it['floor']:,} | "
                     f"{it['ratio']:.3f} | {speedups} | {it['note_optimised']:,} | "
                     f"{it['note_speedup']:.2f}× against the note's {it['note_baseline']} |")
    return "\n".join(lines)


BASELINE_BAR = {"facecolor": "white", "edgecolor": "#777777"}
"""The floor figure's baseline bars: unfilled, apart from the grey setup phase."""
FLOOR_BAR = {"fill": False, "hatch": "//", "edgecolor": "k"}


@legible
def floor_bars(items, *, title: str = "Each phase against its floor"):
    """Per test point, per phase: the baseline's and the optimised program's cycles and the
    optimised program's floor (log scale), with cycles / floor right of the phase's bars."""
    names = list(dict.fromkeys(it["name"] for it in items))
    fig, axes = plt.subplots(len(names), 1, figsize=(WIDTH, 1.5 + 2.6 * len(names)),
                             squeeze=False)
    for ax, name in zip(axes[:, 0], names, strict=True):
        rows = [it for it in items if it["name"] == name]
        y = np.arange(len(rows))[::-1]
        ax.barh(y + 0.27, [max(r["baseline"], 1) for r in rows], 0.27, **BASELINE_BAR)
        ax.barh(y, [max(r["optimised"], 1) for r in rows], 0.27,
                color=[PHASE_COLOURS[r["phase"]] for r in rows])
        ax.barh(y - 0.27, [max(r["floor"], 1) for r in rows], 0.27, **FLOOR_BAR)
        for yi, r in zip(y, rows, strict=True):
            if r["ratio"] is not None:
                right = max(r["baseline"], r["optimised"], r["floor"])  # clear of all three
                ax.annotate(f"{r['ratio']:.2f}", (right, yi),
                            xytext=(4, 0), textcoords="offset points", va="center")
        ax.set_yticks(y, [PHASE_LABELS[r["phase"]] for r in rows])
        ax.set_xscale("log")
        ax.xaxis.set_minor_formatter(NullFormatter())
        low = min(max(v, 1) for r in rows for v in (r["baseline"], r["optimised"], r["floor"]))
        high = max(max(r["baseline"], r["optimised"], r["floor"]) for r in rows)
        ax.set_xlim(low / 2, high * 3)
        ax.set_xlabel("cycles (log scale)")
        ax.set_title(name)
    fig.legend(handles=[Patch(**BASELINE_BAR, label="baseline"),
                        Patch(color=PHASE_COLOURS["max"], label="optimised (its phase's colour)"),
                        Patch(**FLOOR_BAR, label="optimised: floor")],
               loc="lower center", ncol=3, frameon=False)
    fig.suptitle(title)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    return fig
