"""Chapter 1, *Algorithm and semantics*: goodness-of-fit checks of the reference sampler."""

import numpy as np
from scipy import stats

from rslab import memo
from rslab.numerics.gumbel import get_noise
from rslab.numerics.rng import all_uniforms
from rslab.numerics.stats import bin_counts
from rslab.reference import rejection_sample, softmax_numerators, target_probs
from rslab.viz import sampling_plots as sp
from rslab.viz.controls import float_control
from rslab.viz.tables import markdown_table

MISMATCH_FRAMES = (0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0)


def p_text(p: float) -> str:
    """A p-value for prose: three digits, or "below 1e-300" where float64 gives 0."""
    return f"{p:.3g}" if p > 0 else "below 1e-300"


def chi2_pvalue(counts, probs) -> float:
    """χ² goodness of fit of ``counts`` to ``probs`` over the tokens with probs > 0."""
    keep = probs > 0
    if counts[~keep].sum() != 0:
        raise ValueError("counts: a token of probability 0 was emitted")
    expected = counts.sum() * probs[keep] / probs[keep].sum()
    return stats.chisquare(counts[keep], expected).pvalue


MIN_EXPECTED = 5
"""The expected count below which a χ² cell is merged with its neighbour."""


def merged_cells(probs, samples: int, min_expected: float = MIN_EXPECTED) -> np.ndarray:
    """The cell of each bin when adjacent bins (in order) are merged until each cell expects
    at least ``min_expected`` of ``samples``; a short last cell joins the one before it."""
    cells, cell, held = np.zeros(len(probs), np.int64), 0, 0.0
    for i, p in enumerate(probs):
        cells[i] = cell
        held += p * samples
        if held >= min_expected and i < len(probs) - 1:
            cell, held = cell + 1, 0.0
    if held < min_expected and cell > 0:
        cells[cells == cell] = cell - 1
    return cells


def merged_chi2_pvalue(counts, probs, samples: int) -> tuple[float, int]:
    """(χ² p-value, number of cells) of ``counts`` against ``probs`` over the cells of
    :func:`merged_cells` (p-value 1 where a single cell is left: no test)."""
    cells = merged_cells(probs, samples)
    n = cells.max() + 1
    merged_counts = np.bincount(cells, weights=counts, minlength=n)
    merged_probs = np.bincount(cells, weights=probs, minlength=n)
    return (chi2_pvalue(merged_counts, merged_probs) if n > 1 else 1.0), int(n)


def lightest_cell(bin_probs, samples: int, edges=sp.LOG2P_EDGES) -> tuple[int, int, float]:
    """The lightest χ² cell of :func:`merged_cells` over the log2-p bins of ``edges``: the
    log2 p below which it holds every token, how many bins it folds together, and the samples
    it expects of ``samples``."""
    cells = merged_cells(bin_probs, samples)
    folded = int(np.sum(cells == 0))
    if folded > len(edges):
        raise ValueError("bin_probs: a single cell is left, with no edge above it")
    return edges[folded - 1], folded, float(samples * np.sum(bin_probs[cells == 0]))


def vocab_check(logits_row, samplers: dict, requests: int, seed: int = 0):
    """Emitted-token mass per log2-p bin for several ``{label: (path, noise)}`` samplers
    sampling the bonus row ``logits_row`` (shape (1, 1, V)) ``requests`` times, the target's
    mass per bin, and each sampler's χ² p-value over the bins merged to expect at least
    ``MIN_EXPECTED`` samples each (:func:`merged_chi2_pvalue`)."""
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
        pvals[label], _ = merged_chi2_pvalue(np.bincount(bins[tok], minlength=nb), p_bins,
                                             requests)
    return freqs, p_bins, pvals


@memo.cached
def noise_range(name: str) -> tuple[float, float]:
    """(smallest, largest) value of the noise pipeline ``name`` over every uniform of the
    2^24-point lattice."""
    g = get_noise(name)(all_uniforms())
    return float(g.min()), float(g.max())


def never_drawn(logits, spread: float) -> tuple[int, float]:
    """(count, mass under p) of the tokens of a row of ``logits`` that a Gumbel-max draw whose
    noise spans ``spread`` (largest − smallest value) can never draw: their base-2 score lies
    more than ``spread`` below the top token's, so the top token beats them whatever the noise
    (by a margin that covers the float32 rounding of the two scores)."""
    x = np.asarray(logits, np.float32).astype(np.float64) * np.log2(np.e)
    rounding = 2 * float(np.spacing(np.float32(np.abs(x).max() + spread)))
    lost = x.max() - x > spread + rounding
    return int(lost.sum()), float(target_probs(np.asarray(logits, np.float32))[lost].sum(
        dtype=np.float64))


def reciprocal_shares(logits) -> tuple[bool, np.ndarray, np.ndarray]:
    """Whether the reference's probabilities of the rows of ``logits`` are ``e · (1/s)``, bit
    for bit; per row, the share of them that differ from ``e / s`` (``s`` the float32 sum of
    the row's ``e``), and the relative rounding error ``|s · fl(1/s) − 1|`` of its reciprocal."""
    logits = np.asarray(logits, np.float32)
    e = softmax_numerators(logits)
    s = e.sum(axis=-1, dtype=np.float32, keepdims=True)
    p = target_probs(logits)
    recip = np.float32(1) / s
    error = np.abs(s.astype(np.float64) * recip.astype(np.float64) - 1)[..., 0]
    return bool(np.array_equal(p, e * recip)), np.mean(p != e / s, axis=-1), error


def shortfall_from(ys, tail, ideal, short: float = 0.05) -> float:
    """The smallest y of ``ys`` from which on ``tail`` stays more than ``short`` (relative)
    below the ``ideal`` tail at every y (``inf`` where the last y is not short)."""
    ok = np.flatnonzero(np.asarray(tail) >= (1 - short) * np.asarray(ideal))
    last = ok[-1] if ok.size else -1
    return float(ys[last + 1]) if last + 1 < len(ys) else np.inf


def close_until(ys, tail, ideal, tol: float = 0.01) -> float:
    """The largest y of ``ys`` up to which ``tail`` stays within ``tol`` (relative) of the
    ``ideal`` tail at every y."""
    far = np.flatnonzero(np.abs(np.asarray(tail) / np.asarray(ideal) - 1) > tol)
    return float(ys[far[0] - 1]) if far.size else float(ys[-1])


def best_below_zero(probs, name: str) -> float:
    """P(max_i(log2 p_i + g_i) < 0) for independent noises of the pipeline ``name`` over the
    2^24-point lattice, in exact arithmetic on its values: the product over tokens of
    P(g < −log2 p_i). (The ideal noise gives ½ for every normalised ``p``.)"""
    g = np.sort(get_noise(name)(all_uniforms()).astype(np.float64))
    p = np.asarray(probs, np.float64)
    below = np.searchsorted(g, -np.log2(p[p > 0]), side="left") / g.size
    with np.errstate(divide="ignore"):
        return float(np.exp(np.sum(np.log(below))))


def share_won(probs, name: str, below: float, step: float = 0.02, *,
              values=None) -> tuple[float, float]:
    """Bounds (lower, upper) on the share of the draws that the tokens of p < ``below`` win,
    with independent noises of the pipeline ``name`` over the 2^24-point lattice (or the
    noise ``values`` given, one per point), in exact arithmetic on its values. Both groups'
    best-score laws are exact products of the noise's distribution function; only the grid
    of ``step`` over which they are compared brackets the answer. (The ideal noise gives
    those tokens' mass.)"""
    g = get_noise(name)(all_uniforms()) if values is None else values
    g = np.sort(np.asarray(g, np.float64))
    p = np.asarray(probs, np.float64)
    logs, counts = np.unique(np.log2(p[p > 0]), return_counts=True)
    light = logs < np.log2(below)
    v = np.arange(logs[0] + g[0] - step, logs[-1] + g[-1] + 2 * step, step)

    def best_at_most(group):
        total = np.zeros(v.size)
        with np.errstate(divide="ignore"):
            for a, n in zip(logs[group], counts[group], strict=True):
                total += n * np.log(np.searchsorted(g, v - a, side="right") / g.size)
        return np.exp(total)

    light_cdf, heavy_cdf = best_at_most(light), best_at_most(~light)
    rises = np.diff(light_cdf)
    return (float(np.sum(rises * heavy_cdf[:-1])),
            float(light_cdf[0] + np.sum(rises * heavy_cdf[1:])))


def infinite_share(name: str) -> float:
    """The share of the lattice's uniforms for which the noise pipeline ``name`` is +inf."""
    return float(np.mean(np.isposinf(get_noise(name)(all_uniforms()))))


NOTE_BINS = 64
"""The note's χ² validation of the noise: bins of g that the ideal law fills equally."""


def top_bin_start(bins: int = NOTE_BINS) -> float:
    """Where the top one of ``bins`` bins that the ideal base-2 Gumbel law fills equally
    starts: the g with P(g ≤ g) = (bins − 1)/bins."""
    return float(-np.log2(-np.log2((bins - 1) / bins)))


@memo.cached
def bin_lambdas(name: str, bins: int = NOTE_BINS) -> tuple[np.ndarray, np.ndarray]:
    """Each of ``bins`` bins that the ideal law fills equally, under the noise pipeline
    ``name`` (exact over the 2^24-point lattice): its probability as a share of the ideal
    ``1/bins``, and its part ``bins · (P_bin − 1/bins)²`` of the noncentrality. n samples'
    expected χ² (bins − 1 degrees of freedom) gains n times the sum; one bin's deviation in
    standard deviations is the root of n times its part."""
    u = all_uniforms()
    probs = bin_counts(get_noise(name)(u), bins) / u.size
    return probs * bins, bins * (probs - 1 / bins) ** 2


PATH_LABELS = {"exact": "Exact", "div8": "Fast, div8"}
"""The noise pipelines of the cap table, by the path that draws with them."""


def cap_rows(targets: dict, ranges: dict) -> list[dict]:
    """Per target (``{name: logits row}``) and noise (``{name: (g_min, g_max)}``): the tokens
    the noise can never draw (:func:`never_drawn`), their mass, and the samples at which the
    appearance test on them (it rejects the noise's law when one of them appears) misses p
    with probability ALPHA: p shows none of them in n samples with probability (1 − mass)^n."""
    from rslab.numerics.detect import ALPHA

    rows = []
    for target, logits in targets.items():
        for noise, (lo, hi) in ranges.items():
            count, mass = never_drawn(logits, hi - lo)
            aimed = np.log(1 / ALPHA) / -np.log1p(-mass) if mass > 0 else np.inf
            rows.append({"target": target, "path": noise, "g_min": lo, "g_max": hi,
                         "tokens": count, "mass": mass, "aimed": float(aimed)})
    return rows


def cap_table(rows) -> str:
    """Markdown: :func:`cap_rows` with human headers."""
    from rslab.numerics.detect import ALPHA

    return markdown_table([{
        "target": r["target"], "path": PATH_LABELS.get(r["path"], r["path"]),
        "noise g from … to": f"{r['g_min']:.2f} … {r['g_max']:.2f}",
        "tokens never drawn": f"{r['tokens']:,}",
        "their mass under p": f"{r['mass']:.2g}",
        f"samples for an appearance test to miss p at most {ALPHA:g} of the time":
            _samples(r["aimed"])} for r in rows])


def _samples(n: float) -> str:
    """A sample count for a table: whole below a million, two digits above."""
    if not np.isfinite(n):
        return "no such test"
    return f"{n:,.0f}" if n < 1e6 else f"{n:.2g}"


def mass_quantile(probs, q: float = 0.5) -> float:
    """log2 of the probability p of the token at which the cumulative mass, counted from the
    lightest token up, reaches ``q`` (the mass-weighted ``q``-quantile of log2 p)."""
    p = np.sort(np.asarray(probs, np.float64))
    return float(np.log2(p[np.searchsorted(np.cumsum(p), q * p.sum())]))


def mismatch_control(value: float = 1.0):
    """The draft/target mismatch σ: any value in [0, 5] live, ``MISMATCH_FRAMES`` static."""
    return float_control("mismatch", 0.0, 5.0, step=0.05, frames=MISMATCH_FRAMES, value=value,
                         label="mismatch σ")
