"""Figures of the "Div14 search" chapter: χ² growth, the bin edges' shifts, the exact
landscape, the tail and the knob frames; the selection tables.

Every figure is at most ``WIDTH`` inches wide with no text below 10 pt, so that it stays
legible at the width of a page.
"""

from __future__ import annotations

import functools

import matplotlib.pyplot as plt
import numpy as np
from scipy import stats as sps

from rslab.numerics import search, tails
from rslab.numerics.fastlog import FastLog2
from rslab.numerics.stats import check_fpc

N_DF = 63
WIDTH = 7.0
"""The widest figure of the chapter, in inches (a page shows about 7)."""
SMALL = 10
"""The smallest font size, in points (legends, annotations)."""


def chi2_band(lam: float, ns, alpha: float = 1e-3, fpc: float = 1.0):
    """Mean, 5–95 % band of the predicted χ² at each N, the critical value and the power;
    ``fpc``: the seeds' finite-population factor (``stats.chi2_law``)."""
    ns = np.asarray(ns, dtype=np.float64)
    fpc = check_fpc(fpc)
    law = sps.ncx2(N_DF, ns * lam / fpc, scale=fpc)
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


def plot_chi2_growth(laws: dict, sampled: dict, note=None, alpha: float = 1e-3,
                     fpc: float = 1.0):
    """Predicted χ² (mean and 5–95 % band, with the seeds' finite-population factor ``fpc``)
    against N per pipeline, sampled points on top."""
    ns = np.logspace(4, 11, 200)
    fig, ax = plt.subplots(figsize=(WIDTH, 4.2))
    for i, (name, lam) in enumerate(laws.items()):
        mean, lo, hi, crit, _ = chi2_band(lam, ns, alpha, fpc)
        color = f"C{i}"
        ax.plot(ns, mean, color=color, label=f"{name}: predicted (exact λ)")
        ax.fill_between(ns, lo, hi, color=color, alpha=0.2)
        if name in sampled:
            n, chi = sampled[name]
            ax.plot(n, chi, "o", color=color, ms=5, label=f"{name}: sampled here")
    ax.axhline(crit, color="k", ls="--", lw=1, label=f"critical value, α = {alpha:g}")
    if note is not None:
        ax.plot(*note, "k*", ms=11, label="the note's Div8 at 10⁹")
    ax.set(xscale="log", yscale="log", xlabel="samples N", ylabel="64-bin χ²",
           title="When does a χ² test see the bias?")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=SMALL, loc="upper left")
    fig.tight_layout()
    return fig


def plot_edge_shifts(mechanisms: dict):
    """What a divisor changes (``div14.edge_mechanism`` per divisor). Top: the second log's
    shift of P(g < e) at each of the 63 bin edges, exact (dots) and predicted from the fast
    log's error at the edge's t/k (line). Bottom: λ summed over the bins up to j, for the
    first layer alone (an exact second log) and for each divisor."""
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(WIDTH, 6.4))
    first = next(iter(mechanisms.values()))
    bins = np.arange(first["deviation"].size)
    ax2.step(bins, np.cumsum(first["first_contribution"]) * 1e7, where="mid", color="0.5",
             lw=2, label="first log alone")
    for i, (name, m) in enumerate(mechanisms.items()):
        color = f"C{i}"
        ax1.plot(m["edges"], m["shift"] * 1e6, "o", ms=4, color=color, label=f"{name}: exact")
        ax1.plot(m["edges"], m["predicted"] * 1e6, "-", lw=1, color=color,
                 label=f"{name}: from ε(t_e/k)")
        ax2.step(bins, np.cumsum(m["contribution"]) * 1e7, where="mid", color=color,
                 label=name)
    low = min(float(m["shift"].min()) for m in mechanisms.values()) * 1e6
    ax1.set(xlabel="bin edge e (a value of g)", ylabel="shift of P(g < e) (×10⁻⁶)",
            title="the second log's shift at each bin edge", ylim=(1.6 * low, 0.1 * abs(low)))
    ax2.set(xlabel="bin j", ylabel="λ over bins 0…j (×10⁻⁷)",
            title="λ accumulated over the 64 bins")
    for ax in (ax1, ax2):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=SMALL, ncol=2 if ax is ax1 else 1,
                  loc="lower center" if ax is ax1 else "upper left")
    fig.tight_layout()
    return fig


def plot_landscape(rows, samples: float, note_best: float = 14.0):
    """Exact E[χ²] at ``samples`` and exact KS against the divisor, Pareto front marked."""
    k = np.array([r["divisor"] for r in rows])
    chi = 63 + samples * np.array([r["lam"] for r in rows])
    ks = np.array([r["exact_ks"] for r in rows])
    front = np.array([r["pareto"] for r in rows])
    integer = k == np.round(k)
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(WIDTH, 6.0), sharex=True)
    for ax, y, label in ((ax1, chi, f"E[χ²] at N = {samples:.0e}"),
                         (ax2, ks, "KS distance (exact)")):
        ax.plot(k, y, "-", color="0.6", lw=0.8)
        ax.plot(k[integer], y[integer], "o", color="C0", ms=4, label="integer divisors")
        ax.plot(k[front], y[front], "s", mfc="none", color="C3", ms=8, label="Pareto front")
        ax.axvline(note_best, color="k", ls=":", lw=1, label="the note's choice (14)")
        ax.set(ylabel=label, yscale="log")
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=SMALL)
    ax2.set(xlabel="divisor k")
    fig.tight_layout()
    return fig


def plot_pareto(rows, samples: float):
    """The two criteria against each other; the front in red."""
    lam = np.array([r["lam"] for r in rows])
    ks = np.array([r["exact_ks"] for r in rows])
    front = np.array([r["pareto"] for r in rows])
    fig, ax = plt.subplots(figsize=(WIDTH, 4.2))
    chi = 63 + samples * lam
    ax.plot(chi, ks, "o", color="0.6", ms=3, label="other divisors")
    idx = np.flatnonzero(front)
    idx = idx[np.argsort(lam[idx])]
    ax.plot(chi[idx], ks[idx], "s-", color="C3", ms=5, label="Pareto front")
    for n, i in enumerate(idx):  # labels alternate above and below the front
        ax.annotate(rows[i]["name"], (chi[i], ks[i]), fontsize=SMALL, textcoords="offset points",
                    xytext=(4, 6 if n % 2 == 0 else -14))
    # the front's neighbourhood: divisors far off it (a heavy atom on a bin edge) are cut
    ax.set(xscale="log", yscale="log", xlabel=f"E[χ²] at N = {samples:.0e} (exact)",
           ylabel="KS distance (exact)", title="two criteria, one front (near the front)",
           xlim=(0.9 * chi[idx].min(), 1.5 * chi[idx].max()),
           ylim=(0.7 * ks[idx].min(), 2.0 * ks[idx].max()))
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=SMALL)
    fig.tight_layout()
    return fig


def plot_tail(laws: dict, deltas, wins: dict, m: int = tails.VOCAB - 1):
    """P(g > y) against the ideal law, and the chance a tail token wins against Δ (``wins``:
    per law, that chance at each of ``deltas``, as ``div14.tail_wins`` computes it)."""
    ys = np.linspace(4, 24, 300)
    deltas = np.asarray(deltas, dtype=np.float64)
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(WIDTH, 6.4))
    ax1.plot(ys, tails.ideal_sf(ys), "k:", lw=1.5, label="ideal law")
    ax2.plot(deltas, tails.ideal_tail_token_win(deltas, m), "k:", lw=1.5, label="ideal law")
    for i, (name, law) in enumerate(laws.items()):  # later curves thinner, dashed: equal ones show
        style = {"color": f"C{i}", "lw": max(3.5 - 1.2 * i, 1.0), "ls": "-" if i < 2 else "--"}
        ax1.plot(ys, tails.law_sf(law, ys), label=name, **style)
        ax2.plot(deltas, wins[name], label=name, **style)
    ax1.set(yscale="log", xlabel="y", ylabel="P(g > y)", title="upper tail (exact)",
            ylim=(1e-9, 1))
    ax2.set(yscale="log", xlabel="Δ = log2(p_top / p_token)", ylim=(1e-12, 1),
            ylabel="P(a tail token wins)", title=f"{m:,} tail tokens, each 2^-Δ below the top")
    for ax in (ax1, ax2):
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=SMALL)
    fig.tight_layout()
    return fig


@functools.lru_cache(maxsize=32)
def knob_landscape(log2: FastLog2, divisors: tuple) -> np.ndarray:
    """Exact λ for each divisor under one emulator config (cached per config, read-only)."""
    lam = search.lambda_by_divisor(divisors, log2)
    lam.flags.writeable = False
    return lam


def draw_knob_frame(log2: FastLog2, divisors: tuple, label: str, samples: float = 1e9):
    """Slider frame: exact E[χ²] at ``samples`` per divisor under one emulator config."""
    lam = knob_landscape(log2, divisors)
    chi = 63 + samples * lam
    best = int(np.argmin(lam))
    fig, ax = plt.subplots(figsize=(WIDTH, 3.6))
    ax.plot(divisors, chi, "o-", ms=4)
    name = search.divisor_name(divisors[best])
    ax.plot(divisors[best], chi[best], "r*", ms=14, label=f"smallest λ: {name}")
    ax.set(yscale="log", xlabel="divisor k", ylabel=f"E[χ²] at N = {samples:.0e}",
           title=label)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=SMALL)
    fig.tight_layout()
    return fig
