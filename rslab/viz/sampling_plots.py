"""Figures of the "Algorithm and semantics" chapter: output law, chain law, mismatch slider."""

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure

from rslab.fixtures import draft_probs_near, round_to_bf16, sample_draft_tokens
from rslab.numerics.gumbel import get_noise
from rslab.numerics.rng import all_uniforms
from rslab.reference import (
    acceptance_probability,
    rejection_sample,
    residual_weights,
    target_probs,
)

P_COLOR, Q_COLOR, EMP_COLOR, RES_COLOR = "tab:blue", "tab:orange", "tab:green", "tab:red"
MISMATCH_REQUESTS = 20_000
"""Requests the mismatch slider's sampler runs per frame."""
LEGEND = 10
"""Legend font size (points): the figures are at most 7 in wide, shown at their size."""


def toy_rows(V=8, S=3, *, mismatch=1.0, seed=0):
    """Small shared rows: BF16 target logits ``[S+1, V]`` and a draft ``q`` ``[S, V]`` near them."""
    rng = np.random.default_rng([seed, 10])
    l = round_to_bf16((1.2 * rng.standard_normal((1, S + 1, V))).astype(np.float32))
    q = draft_probs_near(l, mismatch, seed=seed)
    return l[0], q[0]


def run_shared_rows(l, q, R, *, path="exact", seed=0, noise="div8"):
    """``rejection_sample`` on R requests that share the rows ``l``, ``q``; drafts drawn from q."""
    logits = np.broadcast_to(l, (R, *l.shape))
    draft = np.broadcast_to(q, (R, *q.shape))
    ids = sample_draft_tokens(draft, seed=seed)
    return rejection_sample(logits, draft, ids, path=path, seed=seed, noise=noise)


def emitted_counts(result, V):
    """Per position s: (token counts among requests that reached s, number that reached s)."""
    out = []
    for s in range(result.tokens.shape[1]):
        reached = result.num_accepted >= s
        out.append((np.bincount(result.tokens[reached, s], minlength=V), int(reached.sum())))
    return out


def plot_emitted_vs_p(counts, p, *, title=None) -> Figure:
    """One panel per position (two per row): emitted-token frequencies (±2σ) against p."""
    n = len(counts)
    rows = -(-n // 2)
    fig, axes = plt.subplots(rows, 2, figsize=(7, 2.6 * rows + 0.4), sharey=True,
                             squeeze=False)
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    for s, ax in enumerate(axes.flat[:n]):
        c, reached = counts[s]
        V = c.size
        x = np.arange(V)
        f = c / max(reached, 1)
        err = 2 * np.sqrt(np.maximum(p[s] * (1 - p[s]), 1e-12) / max(reached, 1))
        ax.bar(x, p[s], color=P_COLOR, alpha=0.35, label="target p")
        ax.errorbar(x, f, yerr=err, fmt="o", ms=3.5, color=EMP_COLOR, label="emitted (±2σ)")
        kind = "bonus" if s == n - 1 else f"position {s}"
        ax.set(title=f"{kind}: {reached:,} reached", xlabel="token", xticks=x)
    for ax in axes[:, 0]:
        ax.set_ylabel("probability")
    axes[0, 0].legend(fontsize=LEGEND, loc="upper right")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


def plot_chain_law(counts, law, *, title="accepted drafts per request") -> Figure:
    """Histogram of ``num_accepted`` against the chain law α_0⋯α_{k−1}(1 − α_k)."""
    fig, ax = plt.subplots(figsize=(4.6, 3.0))
    k = np.arange(law.size)
    n = counts.sum()
    ax.bar(k, law, color=P_COLOR, alpha=0.35, label="chain law")
    ax.errorbar(k, counts / n, yerr=2 * np.sqrt(law * (1 - law) / n), fmt="o", ms=4,
                color=EMP_COLOR, label="measured (±2σ)")
    ax.set(xlabel="accepted drafts k", ylabel="P(num_accepted = k)", xticks=k, title=title)
    ax.legend(fontsize=LEGEND)
    fig.tight_layout()
    return fig


def mismatch_frame(mismatch, *, V=10, R=MISMATCH_REQUESTS, seed=0):
    """p, q, the residual and measured vs theoretical acceptance for one mismatch value."""
    l, q = toy_rows(V, 1, mismatch=mismatch, seed=seed)
    p = target_probs(l[:1])[0]
    res = run_shared_rows(l, q, R, seed=seed)
    raw = np.maximum(p - q[0], np.float32(0))
    w = residual_weights(p[None], q)[0].astype(np.float64)
    alpha = float(acceptance_probability(p, q[0]))
    return {"p": p, "q": q[0], "residual": w / w.sum(), "alpha": alpha,
            "measured": float((res.num_accepted > 0).mean()), "R": R,
            "residual_mass": float(raw.sum(dtype=np.float64)), "fallback": not (raw > 0).any()}


EMPTY_RESIDUAL = 1e-6
"""Residual mass below which the mismatch figure draws the residual as empty: what is left
is float32 rounding of p against q, and a rejection happens about that rarely."""


def draw_mismatch(mismatch, *, V=10, R=MISMATCH_REQUESTS, seed=0) -> Figure:
    """Slider frame: p against q (overlap = acceptance) and the normalised residual."""
    d = mismatch_frame(mismatch, V=V, R=R, seed=seed)
    x = np.arange(V)
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(7, 5.4), sharex=True)
    ax1.bar(x - 0.2, d["p"], 0.4, color=P_COLOR, label="target p")
    ax1.bar(x + 0.2, d["q"], 0.4, color=Q_COLOR, label="draft q")
    ax1.step(x, np.minimum(d["p"], d["q"]), where="mid", color="k", lw=1.2, label="min(p, q)")
    ax1.set(ylabel="probability", xticks=x,
            title=f"acceptance: Σ min(p, q) = {d['alpha']:.3f}, measured {d['measured']:.3f}")
    ax1.legend(fontsize=LEGEND)
    empty = not d["fallback"] and d["residual_mass"] < EMPTY_RESIDUAL
    if empty:
        title = f"residual max(0, p − q): mass {d['residual_mass']:.1g} (rounding), not drawn"
        ax2.set_ylim(0, 1)
    else:
        title = ("residual is all zero: sample from p" if d["fallback"] else
                 f"residual max(0, p − q) (mass {d['residual_mass']:.3f}), normalised")
        ax2.bar(x, d["residual"], color=RES_COLOR, alpha=0.7)
    ax2.set(xlabel="token", ylabel="probability", xticks=x, title=title)
    fig.suptitle(f"draft/target mismatch σ = {mismatch:g}  (R = {d['R']:,} requests)")
    fig.tight_layout()
    return fig


LOG2P_EDGES = (-18, -16, -14, -12, -10, -6)


def log2p_bins(p, edges=LOG2P_EDGES):
    """Bin of each token by log2 p(token): below edges[0], [edges[0], edges[1]), …, ≥ edges[-1]."""
    with np.errstate(divide="ignore"):
        return np.searchsorted(np.asarray(edges, np.float64), np.log2(p.astype(np.float64)),
                               side="right")


def log2p_bin_labels(edges=LOG2P_EDGES):
    """Labels of :func:`log2p_bins`."""
    inner = [f"[2^{a}, 2^{b})" for a, b in zip(edges[:-1], edges[1:], strict=True)]
    return [f"< 2^{edges[0]}", *inner, f"≥ 2^{edges[-1]}"]


def bin_masses(tokens, p, bins, nbins):
    """(emitted frequency per bin, p's mass per bin) for emitted ``tokens``."""
    emitted = np.bincount(bins[tokens], minlength=nbins) / max(tokens.size, 1)
    return emitted, np.bincount(bins, weights=p.astype(np.float64), minlength=nbins)


SAMPLER_COLORS = ("tab:blue", "tab:orange", "tab:red", "tab:purple")


def plot_bin_masses(freqs: dict, p_bins, labels, *, title=None) -> Figure:
    """Emitted-token mass per rank bin for several samplers, against p's mass per bin."""
    fig, ax = plt.subplots(figsize=(7, 3.6))
    x = np.arange(len(labels))
    width = 0.8 / (len(freqs) + 1)
    ax.bar(x - 0.4 + width / 2, p_bins, width, color="#b0b0b0", label="target p")
    for j, (name, f) in enumerate(freqs.items(), start=1):
        ax.bar(x - 0.4 + width * (j + 0.5), f, width, label=name, color=SAMPLER_COLORS[j - 1])
    ax.set_xticks(x, labels, rotation=20)
    ax.set(xlabel="p of the emitted token", ylabel="probability mass", title=title)
    ax.legend(fontsize=LEGEND)
    fig.tight_layout()
    return fig


def noise_tail(names, ys, *, stride=1) -> tuple[dict, dict]:
    """Exact P(g > y) of each noise pipeline over the 2^24 lattice uniforms (every
    ``stride``-th one), and the ideal base-2 Gumbel law ``1 − 2^(−2^(−y))``; and each
    pipeline's (smallest, largest) value over the uniforms counted."""
    u = all_uniforms()[::stride]
    y = np.asarray(ys, np.float64)
    tails, ranges = {"ideal": -np.expm1(-np.log(2) * 2.0**-y)}, {}
    for name in names:
        g = np.sort(get_noise(name)(u))
        tails[name] = (u.size - np.searchsorted(g, y.astype(np.float32), side="right")) / u.size
        ranges[name] = (float(g[0]), float(g[-1]))
    return tails, ranges


def plot_noise_tail(ys, tails: dict, *, title="upper tail of the noise g") -> Figure:
    """P(g > y) on a log scale for each pipeline; a curve that stops never reaches y."""
    fig, ax = plt.subplots(figsize=(6, 3.2))
    for name, t in tails.items():
        style = {"color": "k", "ls": ":", "lw": 1} if name == "ideal" else {"marker": "."}
        ax.semilogy(ys, np.where(t > 0, t, np.nan), label=name, **style)
    ax.set(xlabel="y", ylabel="P(g > y)", title=title)
    ax.legend(fontsize=LEGEND)
    fig.tight_layout()
    return fig
