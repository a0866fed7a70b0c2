"""Figures of the "Div8 diagnosis" chapter: the fast log's error, tails, plateau mass, sliders.

Every figure is at most ``WIDTH`` inches wide with no text below ``SMALL`` points, so that it
stays legible at the width of a page."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from rslab import note
from rslab.numerics.fastlog import FastLog2
from rslab.viz.tables import markdown_table  # noqa: F401  (the pages call npl.markdown_table)

WIDTH = 7.0
"""The widest figure of the chapter, in inches (a page shows about 7)."""
SMALL = 10
"""The smallest font size, in points (legends)."""


def log_error_curves(log2: FastLog2, n: int = 60_001):
    """``x`` on [0.5, 2] (float32) and ``fl(x) − log2 x`` (float64)."""
    x = np.linspace(0.5, 2.0, n).astype(np.float32)
    return x, log2(x).astype(np.float64) - np.log2(x.astype(np.float64))


def plot_log_error(configs: dict, near: float = 0.03):
    """Error over [0.5, 2] on the scale of the error bound, the band ``|log2 x| < 2τ`` it
    leaves out shaded (off scale there), and, near 1, the output against ``log2 x`` (one
    curve per config)."""
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(WIDTH, 5.6))
    top = 2.5 * max(cfg.error_bound() for cfg in configs.values())
    for label, cfg in configs.items():
        x, err = log_error_curves(cfg)
        ax1.plot(x, err, lw=0.6, label=label)
        band = 2 * cfg.zero_threshold
        ax1.axvspan(2.0**-band, 2.0**band, color="r", alpha=0.2,
                    label="|log2 x| < 2τ (off scale)")
        xs = np.linspace(1 - near, 1 + near, 4001).astype(np.float32)
        ax2.plot(xs, cfg(xs), lw=1.0, label=label)
    xs = np.linspace(1 - near, 1 + near, 4001)
    ax2.plot(xs, np.log2(xs), "k:", lw=1, label="log2 x (float64)")
    ax1.set(xlabel="x", ylabel="fl(x) − log2(x)", ylim=(-top, top),
            title="absolute error on [0.5, 2]")
    ax2.set(xlabel="x", ylabel="fl(x)", title="near 1: the zero plateau")
    for ax in (ax1, ax2):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=SMALL, loc="upper left")
    fig.tight_layout()
    return fig


def plot_token_index(samples: dict, top: int = 2000):
    """Histogram of sampled token indices (first ``top`` indices) for each sampler."""
    fig, ax = plt.subplots(figsize=(WIDTH, 3.2))
    bins = np.linspace(0, top, 41)
    for label, idx in samples.items():
        ax.hist(np.minimum(idx, top), bins=bins, histtype="step", lw=1.5, label=label,
                density=False)
    ax.set(xlabel=f"sampled token index (values ≥ {top} in the last bar)", ylabel="rows",
           title="which token the argmax picks")
    ax.legend(fontsize=SMALL, loc="upper right")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


def plot_tails(ys, tails: dict, ideal):
    """Exact tail exceedance ``P(g > y)`` for several pipelines against the ideal law; where
    a pipeline's tail ends inside the range (``P = 0`` beyond, off a log axis), a vertical drop
    to the axis and a triangle mark the end (the first pipeline drawn dashed, on top)."""
    fig, ax = plt.subplots(figsize=(WIDTH, 3.4))
    ax.semilogy(ys, ideal, "k:", lw=1.5, label="ideal 1 − F(y)")
    floor = 0.2 * min(float(np.min(t[t > 0])) for t in [np.asarray(ideal), *tails.values()])
    for i, (label, t) in enumerate(tails.items()):
        t = np.asarray(t)
        style = {"ls": "--", "lw": 2.0, "zorder": 3} if i == 0 else {"lw": 1.2}
        (line,) = ax.semilogy(ys, np.where(t > 0, t, np.nan), label=label, **style)
        last = int(np.flatnonzero(t > 0)[-1])
        if last < t.size - 1:
            ax.vlines(ys[last], floor, t[last], color=line.get_color(), lw=style["lw"],
                      ls=style.get("ls", "-"), zorder=style.get("zorder", 2))
            ax.plot([ys[last]], [floor], "v", color=line.get_color(), ms=8, clip_on=False)
    ax.set_ylim(bottom=floor)
    ax.set(xlabel="y", ylabel="P(g > y)", title="upper tail (exact, all 2^24 uniforms)")
    ax.legend(fontsize=SMALL, loc="lower left")
    ax.grid(alpha=0.3, which="both")
    fig.tight_layout()
    return fig


def plot_plateau_mass(ks, ideal, lattice, n: int = note.SAMPLES, stride: int = 1):
    """Expected plateau hits of the second log, ``n·P(fl(t/k) = 0)``, against the divisor ``k``
    (``lattice`` counted over every ``stride``-th lattice point); a divisor with no lattice
    hit (0, off a log axis) gets a triangle on the axis."""
    fig, ax = plt.subplots(figsize=(WIDTH, 3.4))
    ideal, lattice = np.asarray(ideal) * n, np.asarray(lattice) * n
    ax.semilogy(ks, ideal, "-", label="ideal law of t")
    (dots,) = ax.semilogy(ks, np.where(lattice > 0, lattice, np.nan), "o",
                          label="2^24 lattice (exact)" if stride == 1 else
                          f"every {stride}th lattice point (exact)")
    none = lattice == 0
    if none.any():
        floor = 0.2 * float(np.min(np.concatenate([ideal[ideal > 0], lattice[lattice > 0]])))
        ax.plot(np.asarray(ks)[none], np.full(none.sum(), floor), "v", color=dots.get_color(),
                ms=8, clip_on=False, label="no lattice draw hits it (0)")
        ax.set_ylim(bottom=floor)
    ax.set(xlabel="divisor k", ylabel=f"plateau hits per {n:,} draws",
           title="the second log's plateau: moved to t ≈ k and made light")
    ax.legend(fontsize=SMALL, loc="upper right")
    ax.grid(alpha=0.3, which="both")
    fig.tight_layout()
    return fig


def plot_divisor_profile(d: dict, xlim=(1e-3, 40.0), ylim=(1e-6, 20.0)):
    """The ``divisor_error_profile`` of one divisor, counts in the title, on fixed axes (the
    same for every frame of a slider)."""
    fig, ax = plt.subplots(figsize=(WIDTH, 3.4))
    ax.loglog(d["t"], np.where(d["worst"] > 0, d["worst"], np.nan), lw=1)
    ax.axvspan(*d["plateau"], color="r", alpha=0.2, label="plateau of fl(t/k)")
    ax.set(xlabel="t (second-layer input)", ylabel="largest |g − g_precise|",
           xlim=xlim, ylim=ylim, title=f"k = {d['k']:g}: {d['zeros']:,.1f} zeros, "
           f"{d['hits']:,.1f} plateau hits per 2^20")
    ax.legend(fontsize=SMALL, loc="upper right")
    ax.grid(alpha=0.3, which="both")
    fig.tight_layout()
    return fig


def plot_plateau_frame(cfg: FastLog2, taus, zeros, here: float, xlim=None, ylim=None):
    """A plateau-width frame: the log ``cfg`` near 1 against log2, and the exact zero count of
    the scaled pipeline at each threshold of ``taus`` with ``cfg``'s own marked, on the
    limits ``xlim``/``ylim`` when given (the same for every frame of a slider)."""
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(WIDTH, 3.4))
    xs = np.linspace(0.94, 1.06, 3001).astype(np.float32)
    ax1.plot(xs, cfg(xs), lw=1, label="fl(x)")
    ax1.plot(xs, np.log2(xs.astype(np.float64)), "k:", lw=1, label="log2 x")
    ax1.set(xlabel="x", ylim=(-0.09, 0.09), title=f"threshold τ = {cfg.zero_threshold:.4f}")
    ax1.legend(fontsize=SMALL, loc="upper left")
    ax1.grid(alpha=0.3)
    ax2.plot(taus, zeros, "o-", color="0.6")
    ax2.plot([cfg.zero_threshold], [here], "ro")
    ax2.set(xlabel="τ", ylabel="zeros per 2^20 (scaled)",
            title=f"exact zeros: {here:,.0f}", xlim=xlim, ylim=ylim)
    ax2.grid(alpha=0.3)
    fig.tight_layout()
    return fig
