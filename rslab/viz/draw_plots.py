"""Figures of the chapters "Beyond the note" and "An exact draw in integers".

Cycles, token errors, tails, the two sliders, the lattice's upper tail, the inverse CDF's
two-sided scan, the fixed-point draw's two levels and its widths. Every function takes the
data computed by :mod:`rslab.numerics` and the chapters' modules and returns a matplotlib
figure at most ``WIDTH`` inches wide with text of at least 10 pt (:func:`readable`), so
that the page shows it at its size.
"""

from __future__ import annotations

import functools

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import FancyArrowPatch, Rectangle

DETECT_TARGET = 1e10
WIDTH = 7.0
"""The widest figure, in inches: the page shows a figure at most about 7 in wide."""
TEXT = {"font.size": 10, "axes.titlesize": 11, "axes.labelsize": 10, "xtick.labelsize": 10,
        "ytick.labelsize": 10, "legend.fontsize": 10, "figure.titlesize": 11}


def readable(fn):
    """Draw ``fn``'s figure with text of at least 10 pt (``TEXT``). Only those settings are
    set and restored (``rc_context`` would restore the backend too, and a notebook's inline
    backend would stop showing figures)."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        before = {key: plt.rcParams[key] for key in TEXT}
        plt.rcParams.update(TEXT)
        try:
            return fn(*args, **kwargs)
        finally:
            plt.rcParams.update(before)
    return wrapper


@readable
def plot_cycles(loops: list[dict]):
    """Cycles per packed vector of each draw, bonus and residual rows side by side."""
    names = list(dict.fromkeys(r["draw"] for r in loops))
    by = {(r["draw"], r["kind"]): r["cycles_per_packed"] for r in loops}
    y = np.arange(len(names))
    fig, ax = plt.subplots(figsize=(WIDTH, 0.42 * len(names) + 1.3))
    for i, kind in enumerate(("bonus", "residual")):
        ax.barh(y + (i - 0.5) * 0.38, [by[(n, kind)] for n in names], 0.38,
                label=f"{kind} row", color=f"C{i}")
        ax.axvline(by[("gumbel-div8", kind)], color=f"C{i}", ls=":", lw=1)
    ax.set_yticks(y, names)
    ax.invert_yaxis()
    ax.set(xlabel="cycles per packed vector (256 tokens)", title="the row loops (dotted: Div8)")
    ax.grid(axis="x", alpha=0.3)
    ax.legend(loc="lower right")
    fig.tight_layout()
    return fig


@readable
def plot_sampler(rows: list[dict]):
    """The whole sampler with each draw at the two test points: cycles (bars), the floor
    (black ticks) and the DMA wait (hatched, inside the bar); dotted: Div8's cycles."""
    names = list(dict.fromkeys(r["draw"] for r in rows))
    by = {(r["draw"], r["name"]): r for r in rows}
    y = np.arange(len(names))
    fig, axes = plt.subplots(1, 2, figsize=(WIDTH, 0.4 * len(names) + 1.6), sharey=True)
    for ax, (i, point) in zip(axes, enumerate(("all-accept", "first-reject")), strict=True):
        got = [by[(n, point)] for n in names]
        ax.barh(y, [r["cycles"] for r in got], 0.6, color=f"C{i}", label="cycles")
        ax.barh(y, [r["dma_wait"] for r in got], 0.6, color="none", edgecolor="k",
                hatch="//", lw=0, label="of which DMA wait")
        ax.scatter([r["bound_cycles"] for r in got], y, marker="|", s=200, color="k",
                   zorder=3, label="floor")
        ax.axvline(by[("gumbel-div8", point)]["cycles"], color="k", ls=":", lw=1)
        ax.set(xlabel="cycles", title=f"{point} (dotted: Div8)")
        ax.ticklabel_format(axis="x", style="sci", scilimits=(3, 3))
        ax.grid(axis="x", alpha=0.3)
    axes[0].set_yticks(y, names)
    axes[0].invert_yaxis()
    fig.legend(*axes[0].get_legend_handles_labels(), loc="lower center", ncol=3,
               bbox_to_anchor=(0.5, 0.0), frameon=False)
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    return fig


def _rel_panel(ax, law, target, title):
    x = target.starts + 1
    ax.plot(x, law["run_rel"], ".-", ms=3, lw=0.8, label="whole run (mean per token)")
    ax.plot(x, law["first_rel"], "x", ms=3, lw=0.8, label="first token of the run")
    ax.axhline(0, color="k", lw=0.6)
    ax.set(xscale="log", title=title)
    ax.set_yscale("symlog", linthresh=1e-5)
    ax.grid(alpha=0.3, which="both")


@readable
def draw_method_frame(method: str, laws: dict, chosen_targets: dict):
    """Slider frame: the relative error P/p − 1 of one draw on each target, per run."""
    n = len(chosen_targets)
    fig, axes = plt.subplots(n, 1, figsize=(WIDTH, 2.3 * n + 0.6), sharex=True)
    for ax, (name, target) in zip(np.atleast_1d(axes), chosen_targets.items(), strict=True):
        law = laws[(method, target.name)]
        _rel_panel(ax, law, target, f"{name}: TV {law['tv']:.2e}")
        ax.set_ylabel("P / p − 1")
    np.atleast_1d(axes)[0].legend(loc="best")
    np.atleast_1d(axes)[-1].set_xlabel("token index + 1")
    fig.suptitle(method)
    fig.tight_layout()
    return fig


@readable
def draw_tail_frame(tail: float, sweep: dict):
    """Slider frame: the samples at which a test sees each draw's bias on the peaked target at
    ``tail`` (a draw with no bias to see: a bar to the axis's end)."""
    names = list(sweep)
    vals = [sweep[n]["detect"][sweep[n]["tail"].index(tail)] for n in names]
    fig, ax = plt.subplots(figsize=(WIDTH, 0.45 * len(names) + 1.4))
    shown = [v if np.isfinite(v) else 1e30 for v in vals]
    colors = ["C2" if v > DETECT_TARGET else "C3" for v in shown]
    ax.barh(np.arange(len(names)), shown, color=colors)
    ax.axvline(DETECT_TARGET, color="k", ls="--", lw=1, label="10¹⁰ samples")
    ax.set_yticks(np.arange(len(names)), names)
    ax.set(xscale="log", xlabel="samples until a test sees the bias half the time",
           title=f"peaked target, tail mass {tail:g}", xlim=(1, 1e18))
    ax.grid(axis="x", alpha=0.3, which="both")
    ax.legend(loc="lower right")
    fig.tight_layout()
    return fig


@readable
def plot_tail_tv(sweep: dict):
    """Total variation on the peaked target against its tail mass, per draw."""
    fig, ax = plt.subplots(figsize=(WIDTH, 3.8))
    for i, (name, s) in enumerate(sweep.items()):
        ax.plot(s["tail"], s["tv"], "o-", ms=4, color=f"C{i}", label=name)
    ax.plot(s["tail"], s["tail"], "k:", lw=1, label="the whole tail")
    ax.set(xscale="log", yscale="log", xlabel="tail mass of the peaked target",
           ylabel="total variation", title="exact TV against the tail mass")
    ax.grid(alpha=0.3, which="both")
    ax.legend(loc="center left", bbox_to_anchor=(1.0, 0.5), frameon=False)
    fig.tight_layout()
    return fig


@readable
def plot_quantisation(q: dict):
    """The tail tokens' chances under the one-word and the two-word inverse CDF."""
    fig, ax = plt.subplots(figsize=(WIDTH, 3.4))
    p = q["token_p"]
    for i, noise in enumerate(n for n in q if isinstance(q[n], dict)):
        vals, counts = np.unique(q[noise]["probs"], return_counts=True)
        ax.plot(vals / p, counts, "osd"[i % 3], color=f"C{i}", ms=5, alpha=0.8,
                label=f"{noise}: {len(vals)} distinct values")
    ax.axvline(1, color="k", lw=0.8, ls=":", label="the target")
    ax.set(xscale="symlog", yscale="log", xlabel="P(token) / p(token)",
           ylabel="tail tokens", title=f"tail tokens of p = {p:.2e}, below 2⁻²⁴")
    ax.grid(alpha=0.3, which="both")
    ax.legend()
    fig.tight_layout()
    return fig


@readable
def plot_worst_cases(worst: list[dict], target: float = DETECT_TARGET):
    """Per draw, on its worst row: the samples below which no test gains 0.1 (bars), and the
    samples at which a χ² test (where its approximation holds) or the appearance test sees
    the bias half the time (markers; none where no such figure exists)."""
    y = np.arange(len(worst))
    fig, ax = plt.subplots(figsize=(WIDTH, 0.5 * len(worst) + 1.8))
    bound = [min(w["bound_samples"], 1e30) for w in worst]
    ax.barh(y, bound, color=["C2" if b > target else "C3" for b in bound],
            label="no test gains 0.1 below")
    for key, marker, label in (("detect_tokens", "o", "χ² over tokens"),
                               ("detect_vectors", "s", "χ² over vectors of 128"),
                               ("detect_appear", "^", "appearance test")):
        ax.plot([w[key] if np.isfinite(w[key]) else np.nan for w in worst], y, marker,
                color="k", ms=6, mfc="none", ls="none", label=label)
    ax.axvline(target, color="k", ls="--", lw=1)
    ax.set_yticks(y, [w["draw"] for w in worst])
    ax.invert_yaxis()
    ax.set(xscale="log", xlim=(1, 1e30), xlabel="samples (dashed: 10¹⁰)",
           title="each draw on its worst row")
    ax.grid(axis="x", alpha=0.3, which="both")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.25), ncol=2, frameon=False)
    fig.tight_layout()
    return fig


@readable
def plot_guarantee_grid(grid: list[dict], fraction_bits: int, uniform_bits: int):
    """The fixed-point draw's χ² bound against the uniform's width, one curve per fixed-point
    width; the draw's own widths marked."""
    fig, ax = plt.subplots(figsize=(WIDTH, 3.8))
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
    ax.axhline(1e-12, color="k", ls="--", lw=1, label="10⁻¹²")
    ax.set(yscale="log", xlabel="uniform bits b", ylabel="χ² bound, every row",
           title="what the guarantee needs")
    ax.grid(alpha=0.3, which="both")
    ax.legend(loc="center left", bbox_to_anchor=(1.0, 0.5), frameon=False)
    fig.tight_layout()
    return fig


@readable
def plot_lattice_tail(tails: dict, ys, window: int = 81):
    """The Exact path's noise near its top: ``P(g > y)`` over the ideal law's, minus 1, per
    lattice (``tails``: lattice → that ratio at ``ys``): thin, as computed (a sawtooth of
    whole cells); bold, its mean over ``window`` points of y."""
    fig, ax = plt.subplots(figsize=(WIDTH, 3.8))
    kernel = np.ones(window) / window
    for i, (name, ratio) in enumerate(tails.items()):
        excess = 100 * (np.asarray(ratio) - 1)
        ax.plot(ys, excess, "-", lw=0.5, alpha=0.45, color=f"C{i}")
        mean = np.convolve(excess, kernel, mode="valid")
        ax.plot(ys[window // 2: window // 2 + mean.size], mean, "-", lw=2.2, color=f"C{i}",
                label=f"{name} (mean)")
    ax.axhline(0, color="k", lw=0.8)
    ax.set(xlabel="y (bits)", ylabel="P(g > y) against the ideal (%)",
           title="the noise's upper tail: whole cells above y")
    ax.grid(alpha=0.3)
    ax.legend(loc="lower left")
    fig.tight_layout()
    return fig


def _lane_boxes(ax, y, widths, colors, labels):
    """Boxes of ``widths`` side by side at height ``y``, labelled under them."""
    x = 0.0
    for w, c, label in zip(widths, colors, labels, strict=True):
        ax.add_patch(Rectangle((x, y), w, 0.5, facecolor=c, edgecolor="k", lw=0.8))
        ax.text(x + w / 2, y + 0.25, label, ha="center", va="center")
        x += w
    return x


def _arrow(ax, start, end, text, y_text):
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=12, lw=1.2))
    ax.text((start[0] + end[0]) / 2, y_text, text, ha="center", va="center")


@readable
def plot_two_sided_scan(lanes: int = 8, heavy: int = 3):
    """A diagram of one block under the float32 inverse CDF: ``wide`` scans it from the left,
    so the lanes after the heavy one are summed on top of it; ``wide48`` scans the lanes
    before it from the left and those after it from the right (not to scale: the heavy lane
    is shortened)."""
    widths = [1.0] * lanes
    widths[heavy] = 3.0
    colors = ["#cfe2f3"] * lanes
    colors[heavy] = "#f4cccc"
    labels = [f"{i}" for i in range(lanes)]
    labels[heavy] = f"{heavy} = h, heavy"
    fig, axes = plt.subplots(2, 1, figsize=(WIDTH, 4.6))
    fig.suptitle("one block of the float32 inverse CDF (not to scale)")
    for ax in axes:
        end = _lane_boxes(ax, 0.0, widths, colors, labels)
        ax.set(xlim=(-0.3, end + 0.3), ylim=(-0.9, 1.7))
        ax.axis("off")
    start_h = sum(widths[:heavy])
    end_h = start_h + widths[heavy]
    top = axes[0]
    top.set_title("wide: one scan from the left, compared with u₂·Σ")
    _arrow(top, (0, 0.85), (sum(widths), 0.85), "prefix sums S₀, S₁, …, S₇", 1.25)
    top.text(end_h + 2.5, -0.55, "after h, S = heavy + light: float32 resolves it to\n"
             "2⁻²⁴ of the heavy lane, not of the light lanes", ha="center", va="center")
    bottom = axes[1]
    bottom.set_title("wide48: the lanes before h from the left, those after h from the right")
    _arrow(bottom, (0, 0.85), (start_h, 0.85), "prefix sums vs a·Σ", 1.3)
    _arrow(bottom, (sum(widths), 0.85), (end_h, 0.85), "suffix sums vs b·Σ", 1.3)
    bottom.text((start_h + end_h) / 2, -0.55, "h takes the K in between; no sum on\n"
                "either side holds the heavy lane", ha="center", va="center")
    fig.tight_layout()
    return fig


NARROW = 0.15
"""A bar narrower than this share of the uniforms is named in its level's title instead."""


@readable
def plot_two_levels(example: dict):
    """The worked example's two levels: the 2^b uniforms of level one cut into blocks, and
    each block's 2^b uniforms cut into its lanes (counts N written in; a value too narrow to
    write in, or never drawn, named in the title with its quanta c)."""
    levels = example["levels"]
    fig, axes = plt.subplots(len(levels), 1, figsize=(WIDTH, 1.1 * len(levels) + 0.8))
    span = 2 ** example["uniform_bits"]
    for ax, level in zip(axes, levels, strict=True):
        x, aside = 0, []
        for i, (name, n, c) in enumerate(zip(level["names"], level["counts"],
                                             level["quantised"], strict=True)):
            ax.add_patch(Rectangle((x, 0), n, 1, facecolor=f"C{i}", alpha=0.35, edgecolor="k"))
            if n >= NARROW * span:
                ax.text(x + n / 2, 0.5, f"{name}: {n}", ha="center", va="center")
            else:  # too narrow to write in: named in the title with its quanta
                aside.append(f"{name}: c = {c}, " + (f"N = {n}" if n else "no uniform"))
            x += n
        title = level["title"] + (f" ({'; '.join(aside)})" if aside else "")
        ax.set(xlim=(0, span), ylim=(0, 1), yticks=[], title=title)
        ax.set_xticks([0, span // 4, span // 2, 3 * span // 4, span])
    axes[-1].set_xlabel(f"the uniform U, 0 … {span - 1} (F = {example['fraction_bits']})")
    fig.tight_layout()
    return fig
