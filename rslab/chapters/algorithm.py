"""Chapter 1, *Algorithm and semantics*: goodness-of-fit checks of the reference sampler."""

import numpy as np
from scipy import stats

from rslab.reference import rejection_sample, target_probs
from rslab.viz import sampling_plots as sp
from rslab.viz.controls import float_control

MISMATCH_FRAMES = (0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0)


def chi2_pvalue(counts, probs) -> float:
    """χ² goodness of fit of ``counts`` to ``probs`` over the tokens with probs > 0."""
    keep = probs > 0
    if counts[~keep].sum() != 0:
        raise ValueError("counts: a token of probability 0 was emitted")
    expected = counts.sum() * probs[keep] / probs[keep].sum()
    return stats.chisquare(counts[keep], expected).pvalue


def vocab_check(logits_row, samplers: dict, requests: int, seed: int = 0):
    """Emitted-token mass per log2-p bin for several ``{label: (path, noise)}`` samplers
    sampling the bonus row ``logits_row`` (shape (1, 1, V)) ``requests`` times, the target's
    mass per bin, and each sampler's χ² p-value."""
    vocab = logits_row.shape[-1]
    logits = np.broadcast_to(logits_row, (requests, 1, vocab))
    q0 = np.zeros((requests, 0, vocab), np.float32)
    ids0 = np.zeros((requests, 0), np.int64)
    p = target_probs(logits_row[0, 0]).astype(np.float64)
    bins, nb = sp.log2p_bins(p), len(sp.LOG2P_EDGES) + 1
    freqs, pvals = {}, {}
    for label, (path, noise) in samplers.items():
        tok = rejection_sample(logits, q0, ids0, path=path, noise=noise, seed=seed).tokens[:, 0]
        freqs[label], p_bins = sp.bin_masses(tok, p, bins, nb)
        pvals[label] = chi2_pvalue(np.bincount(bins[tok], minlength=nb), p_bins)
    return freqs, p_bins, pvals


def mismatch_control(value: float = 1.0):
    """The draft/target mismatch σ: any value in [0, 5] live, ``MISMATCH_FRAMES`` static."""
    return float_control("mismatch", 0.0, 5.0, step=0.05, frames=MISMATCH_FRAMES, value=value,
                         label="mismatch σ")
