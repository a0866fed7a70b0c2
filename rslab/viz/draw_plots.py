"""Figures of the chapter "Beyond the note": cycles, token errors, tails and the two sliders.

Every function takes the data computed by :mod:`rslab.numerics.draw_comparison`
and :mod:`rslab.chapters.beyond` and returns a matplotlib figure.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from rslab.viz import tables

DETECT_TARGET = 1e10


def plot_cycles(loops: list[dict]):
    """Cycles per packed vector of each draw, bonus and residual rows side by side."""
    names = list(dict.fromkeys(r["draw"] for r in loops))
    by = {(r["draw"], r["kind"]): r["cycles_per_packed"] for r in loops}
    x = np.arange(len(names))
    fig, ax = plt.subplots(figsize=(9, 3.6))
    for i, kind in enumerate(("bonus", "residual")):
        vals = [by[(n, kind)] for n in names]
        ax.bar(x + (i - 0.5) * 0.38, vals, 0.38, label=f"{kind} row", color=f"C{i}")
        ax.axhline(by[("gumbel-div8", kind)], color=f"C{i}", ls=":", lw=1)
    ax.set_xticks(x, names, rotation=20, ha="right", fontsize=8)
    ax.set(ylabel="cycles per packed vector", title="the row loops at II = ResMII "
           "(dotted: Div8)")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def plot_sampler(rows: list[dict]):
    """The whole sampler with each draw at the two test points: cycles (bars), the floor
    (black ticks) and the DMA wait (hatched, inside the bar); dotted: Div8's cycles."""
    names = list(dict.fromkeys(r["draw"] for r in rows))
    by = {(r["draw"], r["name"]): r for r in rows}
    x = np.arange(len(names))
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    for ax, (i, point) in zip(axes, enumerate(("all-accept", "first-reject")), strict=True):
        got = [by[(n, point)] for n in names]
        ax.bar(x, [r["cycles"] for r in got], 0.6, color=f"C{i}", label="cycles")
        ax.bar(x, [r["dma_wait"] for r in got], 0.6, color="none", edgecolor="k",
               hatch="//", lw=0, label="of which DMA wait")
        ax.scatter(x, [r["bound_cycles"] for r in got], marker="_", s=300, color="k",
                   zorder=3, label="floor")
        ax.axhline(by[("gumbel-div8", point)]["cycles"], color="k", ls=":", lw=1)
        ax.set_xticks(x, names, rotation=25, ha="right", fontsize=8)
        ax.set(ylabel="cycles", title=f"{point} (dotted: Div8)")
        ax.grid(axis="y", alpha=0.3)
    axes[0].legend(fontsize=8, loc="lower left")
    fig.tight_layout()
    return fig


def _rel_panel(ax, law, target, title):
    x = target.starts + 1
    ax.plot(x, law["run_rel"], ".-", ms=3, lw=0.8, label="whole run (mean per token)")
    ax.plot(x, law["first_rel"], "x", ms=3, lw=0.8, label="first token of the run")
    ax.axhline(0, color="k", lw=0.6)
    ax.set(xscale="log", xlabel="token index + 1", title=title)
    ax.set_yscale("symlog", linthresh=1e-5)
    ax.grid(alpha=0.3, which="both")


def draw_method_frame(method: str, laws: dict, chosen_targets: dict):
    """Slider frame: the relative error P/p − 1 of one draw on each target, per run."""
    fig, axes = plt.subplots(1, len(chosen_targets), figsize=(11, 3.4), sharey=True)
    for ax, (name, target) in zip(np.atleast_1d(axes), chosen_targets.items(), strict=True):
        law = laws[(method, target.name)]
        _rel_panel(ax, law, target, f"{name}: TV {law['tv']:.2e}")
    np.atleast_1d(axes)[0].set_ylabel("P / p − 1")
    np.atleast_1d(axes)[0].legend(fontsize=7)
    fig.suptitle(method, fontsize=10)
    fig.tight_layout()
    return fig


def draw_tail_frame(tail: float, sweep: dict):
    """Slider frame: samples a blind test needs, per draw, on the peaked target at ``tail``."""
    names = list(sweep)
    vals = [sweep[n]["detect"][sweep[n]["tail"].index(tail)] for n in names]
    fig, ax = plt.subplots(figsize=(8, 3.4))
    finite = [v if np.isfinite(v) else 1e30 for v in vals]
    colors = ["C2" if v > DETECT_TARGET else "C3" for v in finite]
    ax.barh(np.arange(len(names)), finite, color=colors)
    ax.axvline(DETECT_TARGET, color="k", ls="--", lw=1, label="10^10 samples")
    ax.set_yticks(np.arange(len(names)), names, fontsize=8)
    ax.set(xscale="log", xlabel="samples until a χ² test sees the bias",
           title=f"peaked target, tail mass {tail:g}", xlim=(1, 1e16))
    ax.grid(axis="x", alpha=0.3, which="both")
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    return fig


def plot_tail_tv(sweep: dict):
    """Total variation on the peaked target against its tail mass, per draw."""
    fig, ax = plt.subplots(figsize=(7, 3.6))
    for i, (name, s) in enumerate(sweep.items()):
        ax.plot(s["tail"], s["tv"], "o-", ms=4, color=f"C{i}", label=name)
    ax.plot(s["tail"], s["tail"], "k:", lw=1, label="the whole tail")
    ax.set(xscale="log", yscale="log", xlabel="tail mass of the peaked target",
           ylabel="total variation", title="exact TV against the tail mass")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def plot_quantisation(q: dict):
    """The tail tokens' chances under the one-word and the two-word inverse CDF."""
    fig, ax = plt.subplots(figsize=(8, 3.4))
    p = q["token_p"]
    for i, noise in enumerate(n for n in q if isinstance(q[n], dict)):
        vals, counts = np.unique(q[noise]["probs"], return_counts=True)
        ax.plot(vals / p, counts, "osd"[i % 3], color=f"C{i}", ms=5, alpha=0.8,
                label=f"{noise}: {len(vals)} distinct values")
    ax.axvline(1, color="k", lw=0.8, ls=":", label="the target")
    ax.set(xscale="symlog", yscale="log", xlabel="P(token) / p(token)",
           ylabel="tail tokens", title=f"tail tokens of p = {p:.2e} < 2^-24 = "
           f"{q['lattice_step']:.2e}")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def plot_worst_cases(worst: list[dict], target: float = DETECT_TARGET):
    """Per draw, on its worst row: the samples below which no test gains 0.1 (bars), and the
    samples the χ² tests over tokens, vectors of 128 and equal bins need (markers)."""
    names = [w["draw"] for w in worst]
    y = np.arange(len(names))
    fig, ax = plt.subplots(figsize=(8, 0.45 * len(names) + 1.4))
    bound = [min(w["bound_samples"], 1e30) for w in worst]
    ax.barh(y, bound, color=["C2" if b > target else "C3" for b in bound],
            label="bound: no test gains 0.1 below")
    for key, marker, label in (("detect_tokens", "o", "χ² over tokens"),
                               ("detect_vectors", "s", "χ² over vectors of 128"),
                               ("detect_bins", "^", "χ² over 4,096 equal bins")):
        ax.plot([min(w[key], 1e30) for w in worst], y, marker, color="k", ms=4, mfc="none",
                ls="none", label=label)
    ax.axvline(target, color="k", ls="--", lw=1)
    ax.set_yticks(y, [f"{w['draw']}: {w['target']}" for w in worst], fontsize=7)
    ax.set(xscale="log", xlim=(1, 1e30), xlabel="samples (dashed: 10^10)",
           title="each draw on its worst row")
    ax.grid(axis="x", alpha=0.3, which="both")
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    return fig


def plot_guarantee_grid(grid: list[dict], fraction_bits: int, uniform_bits: int):
    """The fixed-point draw's χ² bound against the uniform's width, one curve per fixed-point
    width; the draw's own widths marked."""
    fig, ax = plt.subplots(figsize=(7, 3.6))
    widths = sorted({g["fraction_bits"] for g in grid})
    for i, f in enumerate(widths):
        pts = sorted((g["uniform_bits"], g["chi2_bound"]) for g in grid
                     if g["fraction_bits"] == f)
        ax.plot(*zip(*pts, strict=True), "o-", ms=3, color=plt.cm.viridis(i / len(widths)),
                label=f"F = {f}")
    mine = next(g["chi2_bound"] for g in grid if g["fraction_bits"] == fraction_bits
                and g["uniform_bits"] == uniform_bits)
    ax.plot(uniform_bits, mine, "r*", ms=12, label=f"the draw: F = {fraction_bits}, "
            f"b = {uniform_bits}")
    ax.axhline(1e-12, color="k", ls="--", lw=1, label="10^-12")
    ax.set(yscale="log", xlabel="uniform bits b", ylabel="χ² bound, every row",
           title="what the guarantee needs")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    return fig


def table_cell(column: str, value) -> str:
    """Cells of the chapter's tables: floats to 3 significant digits, None and inf as —/∞."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if np.isinf(value):
            return "∞"
        return f"{value:.1f}" if "χ²" in column else f"{value:.3g}"
    return str(value)


def markdown(rows: list[dict], columns: list[str] | None = None) -> str:
    """A Markdown table with :func:`table_cell` formatting."""
    return tables.markdown_table(rows, columns, fmt=table_cell)
