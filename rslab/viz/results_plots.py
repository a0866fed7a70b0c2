"""Plots and tables for the chapter "Results": the full sampler, baseline versus optimised."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

PHASE_ORDER = ("max", "sumexp", "acceptance", "residual", "bonus", "dma_wait", "setup")
PHASE_LABELS = {"max": "row max", "sumexp": "sum-exp", "acceptance": "acceptance",
                "residual": "residual Gumbel", "bonus": "bonus Gumbel", "dma_wait": "DMA wait",
                "setup": "setup / drain"}
PHASE_COLOURS = {"max": "#4c72b0", "sumexp": "#55a868", "acceptance": "#8172b2",
                 "residual": "#c44e52", "bonus": "#dd8452", "dma_wait": "#937860",
                 "setup": "#bbbbbb"}


def results_table(rows, note: dict) -> str:
    """Markdown table: our cycles, speedups against every baseline measured, the optimised
    program's floor, beside the design note's figures (labelled as the note's)."""
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


def beyond_table(rows, note: dict) -> str:
    """Markdown table: per test point the baseline, the Div8 sampler and the draw beyond the
    note (rows of :func:`rslab.kernels.sampler.scenarios.run_draws`), each speedup against
    the named baseline, the draw's floor, beside the note's figures (labelled as the
    note's)."""
    by = {(r["draw"], r["name"]): r for r in rows}
    draw = next(r["draw"] for r in rows if r["draw"] != "gumbel-div8")
    lines = [f"| test point | baseline (model) | Div8 optimised (model) | {draw} (model) | "
             f"{draw} / Div8 | floor of {draw} (model) | {draw} / floor | note: optimised | "
             "note: speedup | tokens = reference |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for name in dict.fromkeys(r["name"] for r in rows):
        d8, r = by[("gumbel-div8", name)], by[(draw, name)]
        nb, no = note[name]
        same = "yes" if r["tokens_match_reference"] and d8["tokens_match_reference"] else "NO"
        lines.append(f"| {name} | {r['baseline']}: {r['baseline_cycles']:,} | "
                     f"{d8['cycles']:,} ({d8['speedup']:.2f}×) | {r['cycles']:,} "
                     f"({r['speedup']:.2f}×) | {r['vs_div8']:.2f}× | {r['bound_cycles']:,} | "
                     f"{r['ratio']:.3f} | {no:,} | {nb / no:.2f}× | {same} |")
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
            ratio = f"{f['ratio']:.3f}" if f["ratio"] is not None else "—"
            lines.append(f"| {r['name']} | {PHASE_LABELS[ph]} | {f['achieved']:,} | "
                         f"{f['bound_cycles']:,} | {f['binding']} | {ratio} |")
    return "\n".join(lines)


def phase_bars(rows, *, title: str = "Where the cycles go"):
    """Stacked bars of cycles per phase, baseline and optimised, one panel per test point."""
    fig, axes = plt.subplots(1, len(rows), figsize=(5.2 * len(rows), 4.2), squeeze=False)
    for ax, r in zip(axes[0], rows, strict=True):
        x = np.arange(2)
        bottom = np.zeros(2)
        for ph in PHASE_ORDER:
            vals = np.array([r["baseline_phases"][ph], r["optimized_phases"][ph]], dtype=float)
            if not vals.any():
                continue
            ax.bar(x, vals, bottom=bottom, color=PHASE_COLOURS[ph], label=PHASE_LABELS[ph],
                   width=0.6)
            bottom += vals
        ax.set_xticks(x, [f"baseline\n({r['baseline']})", "optimised"], fontsize=8)
        ax.set_ylabel("cycles")
        ax.set_title(f"{r['name']} (S={r['S']}, R={r['R']}, V={r['vocab']:,}): "
                     f"{r['speedup']:.2f}×", fontsize=10)
        ax.ticklabel_format(axis="y", style="sci", scilimits=(0, 0))
    seen = {}
    for ax in axes[0]:
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            seen.setdefault(lab, h)
    fig.legend(list(seen.values()), list(seen.keys()), loc="lower center",
               ncol=min(7, len(seen)), fontsize=8, frameon=False)
    fig.suptitle(title)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    return fig


def chain_vs_bound(items):
    """Bar pairs per loop: baseline cycles per packed vector vs optimised (II per vector)."""
    fig, ax = plt.subplots(figsize=(7, 3.6))
    names = [it["loop"] for it in items]
    x = np.arange(len(items))
    base = [it["baseline_per_vector"] for it in items]
    opt = [it["optimised_per_vector"] for it in items]
    ax.bar(x - 0.2, base, 0.4, label="baseline: cycles per packed vector (chain latency)",
           color="#c44e52")
    ax.bar(x + 0.2, opt, 0.4, label="optimised: II per packed vector (resource bound)",
           color="#4c72b0")
    for i in range(len(items)):
        ax.text(i, max(base[i], opt[i]) * 1.02, f"{base[i] / opt[i]:.1f}×", ha="center",
                fontsize=9)
    ax.set_xticks(x, names)
    ax.set_ylabel("cycles per packed BF16 vector")
    ax.legend(fontsize=8)
    ax.set_title("Each loop's speedup ≈ dependency-chain latency / resource bound")
    fig.tight_layout()
    return fig


def speedup_vs_vocab(sweep, highlight=None):
    """Speedup of both test points against the vocabulary size, and the phases at ``highlight``.

    ``sweep`` maps V → list of scenario rows (as returned by the kernel benchmark).
    """
    vocab = sorted(sweep)
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(10.5, 4), gridspec_kw={"width_ratios": [3, 2]})
    for name, colour in (("all-accept", "#4c72b0"), ("first-reject", "#c44e52")):
        sp = [next(r for r in sweep[v] if r["name"] == name)["speedup"] for v in vocab]
        ax.plot(vocab, sp, "o-", color=colour, label=name)
    ax.set_xscale("log")
    ax.axhline(1, color="grey", lw=0.8)
    ax.set_xlabel("vocabulary size V")
    ax.set_ylabel("speedup (baseline / optimised)")
    ax.legend(fontsize=8)
    if highlight is not None:
        ax.axvline(highlight, color="k", ls="--", lw=0.8)
        rows = sweep[highlight]
        labels, bottom = [], np.zeros(2 * len(rows))
        cols = []
        for r in rows:
            cols += [r["baseline_phases"], r["optimized_phases"]]
            labels += [f"{r['name']}\nbaseline", f"{r['name']}\noptimised"]
        x = np.arange(len(cols))
        for ph in PHASE_ORDER:
            vals = np.array([c[ph] for c in cols], dtype=float)
            share = vals / np.array([sum(c.values()) for c in cols], dtype=float)
            if share.any():
                bx.bar(x, share, bottom=bottom, color=PHASE_COLOURS[ph], label=PHASE_LABELS[ph])
                bottom += share
        bx.set_xticks(x, labels, fontsize=7)
        bx.set_ylabel("share of cycles")
        bx.set_title(f"phases at V = {highlight:,}", fontsize=10)
        bx.legend(fontsize=6, loc="upper right")
    fig.tight_layout()
    return fig


def exact_vs_fast(fast_rows, exact_rows):
    """Optimised cycles per phase on both paths, per test point."""
    fig, axes = plt.subplots(1, len(fast_rows), figsize=(5.2 * len(fast_rows), 4), squeeze=False)
    for ax, f, e in zip(axes[0], fast_rows, exact_rows, strict=True):
        bottom = np.zeros(2)
        for ph in PHASE_ORDER:
            vals = np.array([f["optimized_phases"][ph], e["optimized_phases"][ph]], dtype=float)
            if vals.any():
                ax.bar([0, 1], vals, bottom=bottom, color=PHASE_COLOURS[ph],
                       label=PHASE_LABELS[ph], width=0.6)
                bottom += vals
        ax.set_xticks([0, 1], ["Fast\n(vrand, fast log, Div8)", "Exact\n(Philox, precise log)"])
        ax.set_title(f"{f['name']}, optimised: Exact / Fast = "
                     f"{e['optimized_cycles'] / f['optimized_cycles']:.2f}×", fontsize=10)
        ax.set_ylabel("cycles")
        ax.ticklabel_format(axis="y", style="sci", scilimits=(0, 0))
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    return fig


def step_bars(rows, *, title: str = "One optimisation at a time (all-accept)"):
    """Stacked cycles per phase for each optimisation step, with the cumulative speedup."""
    phase_key = {"acceptance": "accept"}
    fig, ax = plt.subplots(figsize=(10, 4.6))
    x = np.arange(len(rows))
    bottom = np.zeros(len(rows))
    for ph in PHASE_ORDER:
        vals = np.array([r["phases"][phase_key.get(ph, ph)] for r in rows], dtype=float)
        if not vals.any():
            continue
        ax.bar(x, vals, bottom=bottom, color=PHASE_COLOURS[ph], label=PHASE_LABELS[ph],
               width=0.65)
        bottom += vals
    for xi, r in zip(x, rows, strict=True):
        ax.annotate(f"{r['cycles']:,}\n{r['speedup']:.2f}×", (xi, r["cycles"]),
                    xytext=(0, 3), textcoords="offset points", ha="center", fontsize=8)
    labels = [f"{i}. {r['step']}" for i, r in enumerate(rows)]
    ax.set_xticks(x, [lab.replace(", ", ",\n").replace(" (", "\n(") for lab in labels],
                  fontsize=8)
    ax.set_ylabel("cycles")
    ax.set_ylim(0, 1.15 * max(r["cycles"] for r in rows))
    ax.ticklabel_format(axis="y", style="sci", scilimits=(0, 0))
    ax.legend(fontsize=8, frameon=False, ncol=2)
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


def floor_bars(items, *, title: str = "Achieved against the floor, per phase"):
    """Per test point, per phase: the baseline's and the optimised program's cycles and the
    optimised program's floor (log scale), with achieved / floor above each pair."""
    names = sorted({it["name"] for it in items}, key=[it["name"] for it in items].index)
    fig, axes = plt.subplots(1, len(names), figsize=(5.6 * len(names), 4.2), squeeze=False)
    for ax, name in zip(axes[0], names, strict=True):
        rows = [it for it in items if it["name"] == name]
        x = np.arange(len(rows))
        ax.bar(x - 0.27, [r["baseline"] for r in rows], 0.27, color="#dddddd",
               label="baseline: achieved")
        ax.bar(x, [r["optimised"] for r in rows], 0.27,
               color=[PHASE_COLOURS[r["phase"]] for r in rows], label="optimised: achieved")
        ax.bar(x + 0.27, [max(r["floor"], 1) for r in rows], 0.27, fill=False, hatch="//",
               edgecolor="k", label="optimised: floor")
        for xi, r in zip(x, rows, strict=True):
            if r["ratio"] is not None:
                ax.annotate(f"{r['ratio']:.2f}", (xi + 0.1, max(r["optimised"], r["floor"])),
                            xytext=(0, 3), textcoords="offset points", ha="center", fontsize=7)
        ax.set_xticks(x, [PHASE_LABELS[r["phase"]].replace(" ", "\n", 1) for r in rows],
                      fontsize=7)
        ax.set_yscale("log")
        ax.set_ylabel("cycles (log scale)")
        ax.set_title(name, fontsize=10)
    axes[0][0].legend(fontsize=7, loc="upper right")
    fig.suptitle(title)
    fig.tight_layout()
    return fig
