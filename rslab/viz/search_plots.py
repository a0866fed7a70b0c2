"""Figures of the "Div14 search" chapter: χ² growth, per-segment errors, landscape, tails."""

from __future__ import annotations

import functools

import matplotlib.pyplot as plt
import numpy as np
from scipy import stats as sps

from rslab.numerics import search, tails
from rslab.numerics.fastlog import DEFAULT_FASTLOG2, FastLog2

N_DF = 63


def chi2_band(lam: float, ns, alpha: float = 1e-3):
    """Mean, 5–95 % band of the predicted χ² at each N, the critical value and the power."""
    ns = np.asarray(ns, dtype=np.float64)
    law = sps.ncx2(N_DF, ns * lam)
    crit = sps.chi2.isf(alpha, N_DF)
    return law.mean(), law.ppf(0.05), law.ppf(0.95), crit, law.sf(crit)


def samples_for_power(lam: float, power: float = 0.5, alpha: float = 1e-3) -> float:
    """Smallest N at which a 64-bin χ² test at level ``alpha`` rejects with chance ``power``."""
    crit = sps.chi2.isf(alpha, N_DF)
    lo, hi = 1.0, 1e16
    for _ in range(200):
        mid = np.sqrt(lo * hi)
        lo, hi = (mid, hi) if sps.ncx2(N_DF, mid * lam).sf(crit) < power else (lo, mid)
    return float(hi)


def plot_chi2_growth(laws: dict, sampled: dict, note=None, alpha: float = 1e-3):
    """Predicted χ² (mean and 5–95 % band) against N per pipeline, sampled points on top."""
    ns = np.logspace(4, 11, 200)
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    for i, (name, lam) in enumerate(laws.items()):
        mean, lo, hi, crit, _ = chi2_band(lam, ns, alpha)
        color = f"C{i}"
        ax.plot(ns, mean, color=color, label=f"{name}: predicted mean (exact λ)")
        ax.fill_between(ns, lo, hi, color=color, alpha=0.2)
        if name in sampled:
            n, chi = sampled[name]
            ax.plot(n, chi, "o", color=color, ms=5, label=f"{name}: sampled (this build)")
    ax.axhline(crit, color="k", ls="--", lw=1, label=f"critical value, α = {alpha:g}")
    if note is not None:
        ax.plot(*note, "k*", ms=11, label="the note's Div8 χ² at 10^9")
    ax.set(xscale="log", yscale="log", xlabel="samples N", ylabel="64-bin χ²",
           title="When does a χ² test see the bias?")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def segment_profile(k: float, log2: FastLog2 = DEFAULT_FASTLOG2, stride: int = 16):
    """Per segment of the second log's input t/k: lattice mass and mean signed error of fl.

    Uses every ``stride``-th lattice point (the profile, not a test statistic).
    """
    t = search._first_layer(log2)[::stride]
    x = t / np.float32(k)
    x = x[np.isfinite(x) & (x > 0)]
    err = log2(x).astype(np.float64) - np.log2(x.astype(np.float64))
    seg = (x.view(np.uint32) >> np.uint32(23 - log2.index_bits)) & np.uint32(log2.segments - 1)
    far = np.abs(np.log2(x.astype(np.float64))) > 2 * log2.zero_threshold  # outside the plateau
    mass = np.bincount(seg, minlength=log2.segments) / x.size
    total = np.bincount(seg[far], weights=err[far], minlength=log2.segments)
    n = np.bincount(seg[far], minlength=log2.segments)
    with np.errstate(invalid="ignore", divide="ignore"):
        return mass, total / n


def plot_segment_errors(divisors, log2: FastLog2 = DEFAULT_FASTLOG2):
    """Where t/k lands among the fit segments, and the fast log's mean error there."""
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 3.8))
    for i, k in enumerate(divisors):
        mass, err = segment_profile(k, log2)
        seg = np.arange(mass.size)
        style = dict(color=f"C{i}", lw=1.2, ls="-" if i % 2 == 0 else "--")
        ax1.step(seg, mass, where="mid", label=search.divisor_name(k), **style)
        ax2.step(seg, err * 1e6, where="mid", label=search.divisor_name(k), **style)
    ax1.set(xlabel="segment of t/k (top mantissa bits)", ylabel="share of lattice points",
            title="where the second log's input lands")
    ax2.set(xlabel="segment of t/k", ylabel="mean error of fl (×1e-6)",
            title="the fast log's mean error there")
    for ax in (ax1, ax2):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def plot_landscape(rows, samples: float, note_best: float = 14.0):
    """Exact E[χ²] at ``samples`` and exact KS against the divisor, Pareto front marked."""
    k = np.array([r["divisor"] for r in rows])
    chi = 63 + samples * np.array([r["lam"] for r in rows])
    ks = np.array([r["exact_ks"] for r in rows])
    front = np.array([r["pareto"] for r in rows])
    integer = k == np.round(k)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 3.9))
    for ax, y, label in ((ax1, chi, f"exact E[χ²] at N = {samples:.0e}"),
                         (ax2, ks, "exact KS distance")):
        ax.plot(k, y, "-", color="0.6", lw=0.8)
        ax.plot(k[integer], y[integer], "o", color="C0", ms=4, label="integer divisors")
        ax.plot(k[front], y[front], "s", mfc="none", color="C3", ms=8, label="Pareto front")
        ax.axvline(note_best, color="k", ls=":", lw=1, label="the note's choice (14)")
        ax.set(xlabel="divisor k", ylabel=label, yscale="log")
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def plot_pareto(rows, samples: float):
    """The two criteria against each other; the front in red."""
    lam = np.array([r["lam"] for r in rows])
    ks = np.array([r["exact_ks"] for r in rows])
    front = np.array([r["pareto"] for r in rows])
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    ax.plot(63 + samples * lam, ks, "o", color="0.6", ms=3)
    idx = np.flatnonzero(front)
    idx = idx[np.argsort(lam[idx])]
    ax.plot(63 + samples * lam[idx], ks[idx], "s-", color="C3", ms=5, label="Pareto front")
    for i in idx:
        ax.annotate(rows[i]["name"], (63 + samples * lam[i], ks[i]), fontsize=7,
                    xytext=(3, 3), textcoords="offset points")
    ax.set(xscale="log", yscale="log", xlabel=f"exact E[χ²] at N = {samples:.0e}",
           ylabel="exact KS distance", title="two criteria, one front")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def plot_tail(laws: dict, deltas=tuple(range(10, 31)), m: int = tails.VOCAB - 1):
    """P(g > y) against the ideal law, and the chance a tail token wins against Δ."""
    ys = np.linspace(4, 24, 300)
    deltas = np.asarray(deltas, dtype=np.float64)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 3.9))
    ax1.plot(ys, tails.ideal_sf(ys), "k:", lw=1.2, label="ideal law")
    ax2.plot(deltas, tails.ideal_tail_token_win(deltas, m), "k:", lw=1.2, label="ideal law")
    for i, (name, law) in enumerate(laws.items()):
        ax1.plot(ys, tails.law_sf(law, ys), color=f"C{i}", label=name)
        win = [tails.tail_token_win(law, d, m) for d in deltas]
        ax2.plot(deltas, win, color=f"C{i}", label=name)
    ax1.set(yscale="log", xlabel="y", ylabel="P(g > y)", title="upper tail (exact)",
            ylim=(1e-9, 1))
    ax2.set(yscale="log", xlabel="Δ = log2(p_top / p_token)", ylim=(1e-12, 1),
            ylabel="P(winner is a tail token)", title=f"{m:,} tail tokens, each 2^-Δ below the top")
    for ax in (ax1, ax2):
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def draw_divisor_frame(k: float, log2: FastLog2 = DEFAULT_FASTLOG2, reference: float = 8.0):
    """Slider frame: the segment profile of divisor k next to the reference (Div8)."""
    return plot_segment_errors((reference, k) if k != reference else (reference,), log2)


@functools.lru_cache(maxsize=16)
def knob_landscape(log2: FastLog2, divisors: tuple) -> np.ndarray:
    """Exact λ for each divisor under one emulator config (cached per config)."""
    return search.lambda_by_divisor(divisors, log2)


def draw_knob_frame(log2: FastLog2, divisors: tuple, label: str, samples: float = 1e9):
    """Slider frame: exact E[χ²] at ``samples`` per divisor under one emulator config."""
    lam = knob_landscape(log2, divisors)
    chi = 63 + samples * lam
    best = int(np.argmin(lam))
    fig, ax = plt.subplots(figsize=(7, 3.6))
    ax.plot(divisors, chi, "o-", ms=4)
    name = search.divisor_name(divisors[best])
    ax.plot(divisors[best], chi[best], "r*", ms=14, label=f"smallest λ: {name}")
    ax.set(yscale="log", xlabel="divisor k", ylabel=f"exact E[χ²] at N = {samples:.0e}",
           title=label)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=9)
    fig.tight_layout()
    return fig


def ranking_table(rows) -> str:
    """The screening or finals ranking as a Markdown table, each divisor against Div8."""
    head = "| divisor | mean KS | KS vs Div8 | χ² (pooled) | χ² vs Div8 | p | E[χ²] exact |\n"
    head += "|---|---|---|---|---|---|---|\n"
    return head + "".join(
        f"| {r['name']} | {r['mean_ks']:.3e} | {r['ks_change_pct']:+.2f} % | {r['chi2']:.1f} | "
        f"{r['chi2_change_pct']:+.2f} % | {r['chi2_p']:.1e} | {r['expected_chi2']:.1f} |\n"
        for r in rows)
