"""Chapter 1, *Algorithm and semantics*: goodness-of-fit checks of the reference sampler."""

import numpy as np
from scipy import stats

from rslab.reference import LOG2E, rejection_sample, target_probs
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


# ----------------------------------------------------------------- what the sampler rejects

def _sampler_case(logits=None, q=None, ids=None, **kw):
    """A call of ``rejection_sample`` on the two-token example, with some inputs replaced."""
    l0 = np.zeros((1, 2, 4), np.float32)
    q0 = np.full((1, 1, 4), 0.25, np.float32)
    ids0 = np.zeros((1, 1), np.int64)
    return lambda: rejection_sample(l0 if logits is None else logits, q0 if q is None else q,
                                    ids0 if ids is None else ids, **kw)


SAMPLER_REJECTS = (
    ("bonus row of four logits 1e7", "the noise cannot resolve its scores (shift invariance)",
     _sampler_case(logits=np.full((1, 2, 4), 1e7, np.float32))),
    ("a NaN logit", "no probability to give it", _sampler_case(
        logits=np.array([[[0, np.nan, 0, 0]] * 2], np.float32))),
    ("a +inf logit", "softmax undefined", _sampler_case(
        logits=np.array([[[0, np.inf, 0, 0]] * 2], np.float32))),
    ("a row of −inf logits", "no token to emit", _sampler_case(
        logits=np.full((1, 2, 4), -np.inf, np.float32))),
    ("float64 logits", "the float32 semantics are the contract", _sampler_case(
        logits=np.zeros((1, 2, 4)))),
    ("draft row summing to 0.5", "q must be a distribution", _sampler_case(
        q=np.full((1, 1, 4), 0.125, np.float32))),
    ("a negative draft probability", "q must be a distribution", _sampler_case(
        q=np.array([[[0.5, 0.75, -0.25, 0]]], np.float32))),
    ("draft id 4 with V = 4", "no such token", _sampler_case(ids=np.full((1, 1), 4))),
    ("noise div(1e-50)", "the divisor is 0 in float32: the noise would be NaN",
     _sampler_case(path="fast", noise="div(1e-50)")),
    ("seed −1", "seeds are 64-bit words", _sampler_case(seed=-1)),
)
"""(input, why it is rejected, the call) for each kind of input ``rejection_sample`` rejects."""


def rejection_rows(cases=SAMPLER_REJECTS) -> list[tuple[str, str, str, str]]:
    """(input, why, error type, message) for each case: the message is the one the code
    raises on that input (a case that is accepted raises an AssertionError here)."""
    rows = []
    for label, why, call in cases:
        try:
            call()
        except ValueError as exc:
            rows.append((label, why, type(exc).__name__, str(exc)))
        else:
            raise AssertionError(f"{label}: accepted")
    return rows


def raw_bonus_frequencies(value: float, requests: int, path: str = "exact", V: int = 4,
                          seed: int = 0) -> np.ndarray:
    """Token frequencies of the raw-logit bonus draw ``argmax(fl(l·LOG2E) + g)`` over V equal
    logits ``value`` — what the sampler would emit if it did not reject the row (the noise
    rows are the reference's own)."""
    from rslab.reference import BONUS, gumbel_noise, sample_scores

    g = gumbel_noise(path, seed, np.arange(requests), 0, BONUS, np.arange(V))
    with np.errstate(over="ignore"):
        x = np.full((requests, V), value, np.float32) * LOG2E
    tokens = sample_scores(x, g).argmax(axis=-1)
    return np.bincount(tokens, minlength=V) / requests


# ----------------------------------------------------------------- the 24-bit lattice's bias

def runs_target(name: str, probs):
    """A row of probabilities as a ``Target``: runs of equal float32 weights, heaviest first
    (the law of each run; the row's order only moves ties between runs)."""
    from rslab.numerics.targets import Target

    vals, counts = np.unique(np.asarray(probs, np.float32), return_counts=True)
    return Target(name, counts[::-1].astype(np.int64), vals[::-1].copy())


def lattice_laws(targets: dict, noise: str = "div8") -> dict:
    """``{(target, path): Discrepancy}``: the exact token law of the Exact path's and the
    Fast path's (``noise``) Gumbel-max on each target, both over the 2^24-point lattice of
    uniforms (``rslab.numerics.token_law``)."""
    from rslab.numerics.token_law import token_law

    return {(name, path): token_law(t, "gumbel", noise, path=path)
            for name, t in targets.items() for path in ("exact", "fast")}


def power_at(lam: float, samples: int, df: int) -> float:
    """The power of a level-``detect.ALPHA`` χ² test with ``df`` degrees of freedom at
    ``samples`` draws, for a law at χ² divergence ``lam`` from the target."""
    from rslab.numerics.detect import ALPHA

    crit = stats.chi2.ppf(1 - ALPHA, df)
    return float(stats.ncx2.sf(crit, df, samples * lam))


def fastlog_worst_error(fastlog) -> tuple[float, float]:
    """(x, |fastlog(x) − log2 x|) at the largest absolute error over every float32 x in
    [0.5, 2), the plateau near 1 included (``error_bound`` leaves it out)."""
    bits = np.arange((126 << 23), (128 << 23), dtype=np.uint32)
    x = bits.view(np.float32)
    err = np.abs(fastlog(x).astype(np.float64) - np.log2(x.astype(np.float64)))
    i = int(np.argmax(err))
    return float(x[i]), float(err[i])
