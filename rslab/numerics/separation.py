"""Whether a sampled selection separates its candidates: each statistic against its null
law, and two candidates against each other.

Error model: the KS half uses the asymptotic Kolmogorov law of ``√N·D`` (mean
``√(π/2)·ln 2 ≈ 0.8687``, standard deviation ``√(π²/12 − (π/2)·ln² 2) ≈ 0.2603``), and the
mean of ``S`` independent seeds as normal (``S ≥ 3`` in every search preset); a sample of
``N`` draws from the 2^24-point lattice follows it while the law's exact KS distance is
small next to ``1/√N``. The χ² half uses the noncentral χ² law ``ncx2(df, nc)`` with
``nc`` estimated as ``max(χ² − df, 0)``, and, for two candidates run on the same seeds
(common random numbers), a paired t-test over the seeds' χ², which needs no model of
their correlation. Draws of one seed's hardware stream are made without replacement
(``montecarlo.stream_fpc``): with ``fpc = 1 − n/2^32`` the null KS scales by ``√fpc`` and a
χ² follows ``fpc · ncx2(df, nc/fpc)``; every function takes that ``fpc`` (1: independent
draws).

When a law's own KS distance is not small next to ``1/√N``, ``sample_ks`` gives the KS
distance a sample of it shows: ``F_N − F = (F_N − G) + (G − F)``, the first term the
Brownian bridge ``B(G(x))/√N`` of the empirical CDF around the law's own ``G``, the second
the law's exact distance from the ideal ``F``, simulated on the sorted lattice outputs.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats as sps

from rslab.numerics.stats import check_fpc, chi2_law, gumbel2_cdf

KS_NULL_MEAN = math.sqrt(math.pi / 2) * math.log(2)
"""Mean of the Kolmogorov law of ``√N·D`` (unbiased noise, large N)."""
KS_NULL_SD = math.sqrt(math.pi**2 / 12 - math.pi / 2 * math.log(2) ** 2)
"""Standard deviation of the Kolmogorov law of ``√N·D``."""
LEVEL = 0.01
"""A difference counts as resolved when its two-sided p-value is below this."""


def _check_positive(n, name: str) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"{name} must be a positive integer, got {n!r}")
    return int(n)


def ks_null_mean(n: int) -> float:
    """Expected KS distance of ``n`` draws of unbiased noise: ``0.8687/√n``."""
    return KS_NULL_MEAN / math.sqrt(_check_positive(n, "n"))


def ks_against_null(mean_ks: float, n: int, seeds: int, fpc: float = 1.0) -> dict:
    """The mean over ``seeds`` seeds of ``n`` draws each against the null law: the null mean,
    ``z`` and the two-sided p-value."""
    n, seeds = _check_positive(n, "n"), _check_positive(seeds, "seeds")
    if not math.isfinite(mean_ks) or mean_ks < 0:
        raise ValueError(f"mean_ks must be a finite non-negative number, got {mean_ks!r}")
    root = math.sqrt(check_fpc(fpc))
    z = (math.sqrt(n) * mean_ks - root * KS_NULL_MEAN) / (root * KS_NULL_SD / math.sqrt(seeds))
    return {"null": root * ks_null_mean(n), "z": z, "p": float(2 * sps.norm.sf(abs(z)))}


def chi2_band(chi2: float, df: int = 63, level: float = 0.99,
              fpc: float = 1.0) -> tuple[float, float]:
    """The central ``level`` band of the noncentral χ² law whose noncentrality the sampled
    ``chi2`` estimates (``max(chi2 − fpc·df, 0)``)."""
    if not math.isfinite(chi2) or chi2 < 0:
        raise ValueError(f"chi2 must be a finite non-negative number, got {chi2!r}")
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    law = chi2_law(df, max(chi2 - fpc * df, 0.0), fpc)
    lo, hi = law.ppf([(1 - level) / 2, (1 + level) / 2])
    return float(lo), float(hi)


def paired_p(a, b) -> float:
    """Two-sided p-value that two candidates' per-seed statistics on the same seeds have the
    same mean (paired t-test)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1 or a.size < 2:
        raise ValueError("need two 1-d arrays of the same length ≥ 2 (one value per seed)")
    d = b - a
    if np.all(d == d[0]):
        return 0.0 if d[0] else 1.0
    return float(sps.ttest_rel(a, b).pvalue)


def compare(winner: dict, other: dict, df: int = 63, level: float = 0.99,
            fpc: float = 1.0) -> dict:
    """Two rows of a sampled stage (``chi2``, ``chi2_per_seed``): the χ² bands, whether each
    sampled χ² lies inside the other's band, the paired p-value and whether the difference is
    resolved (p below ``LEVEL``)."""
    band_w, band_o = (chi2_band(winner["chi2"], df, level, fpc),
                      chi2_band(other["chi2"], df, level, fpc))
    p = paired_p(winner["chi2_per_seed"], other["chi2_per_seed"])
    return {"winner": winner["name"], "other": other["name"], "band_winner": band_w,
            "band_other": band_o,
            "inside_each_other": (band_o[0] <= winner["chi2"] <= band_o[1]
                                  and band_w[0] <= other["chi2"] <= band_w[1]),
            "p": p, "resolved": p < LEVEL}


def chi2_difference(dev_a, dev_b, n: int, fpc: float = 1.0) -> tuple[float, float]:
    """Mean and standard deviation of ``χ²_b − χ²_a``, the 64-bin χ² of law ``b`` minus that
    of law ``a`` on the same ``n`` draws (common random numbers); ``dev_*`` are the bins'
    probabilities minus 1/64. To leading order both share the multinomial noise ``W`` and
    the difference is ``n(λ_b − λ_a) + 2√n Σ_j (p_b − p_a)_j W_j / q``: mean ``n·Δλ``,
    variance ``4n·fpc·λ_d`` with ``λ_d = Σ (p_b − p_a)²/q`` (the draws whose bin the two laws
    disagree on add a smaller term this leaves out)."""
    a, b = np.asarray(dev_a, np.float64), np.asarray(dev_b, np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError("dev_a and dev_b must be 1-d arrays of the same length (one per bin)")
    n = _check_positive(n, "n")
    q = 1 / a.size
    lam = lambda d: float((d**2).sum() / q)  # noqa: E731
    return n * (lam(b) - lam(a)), 2 * math.sqrt(n * check_fpc(fpc) * lam(b - a))


def paired_power(mean: float, sd: float, seeds: int, level: float = LEVEL) -> float:
    """The chance that the paired t-test over ``seeds`` seeds resolves (p below ``level``) a
    per-seed difference of normal law ``(mean, sd)``: the noncentral t law's two tails."""
    seeds = _check_positive(seeds, "seeds")
    if seeds < 2 or not sd > 0:
        raise ValueError(f"need seeds ≥ 2 and sd > 0, got seeds={seeds}, sd={sd!r}")
    df, nc = seeds - 1, math.sqrt(seeds) * mean / sd
    crit = sps.t.ppf(1 - level / 2, df)
    return float(sps.nct.sf(crit, df, nc) + sps.nct.cdf(-crit, df, nc))


KS_GRID = 1 << 16
"""Points of the bridge's grid in ``sample_ks`` (every lattice atom's two ends besides): the
grid's maximum falls short of the continuous one by well under 1 %."""


def _ks_points(sorted_g: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct values of the sorted outputs where the KS maximum can be (a regular subsample
    and both ends of every atom heavier than the subsample's step): G just below and at each,
    and F there."""
    size = sorted_g.size
    step = max(size // KS_GRID, 1)
    change = np.flatnonzero(np.diff(sorted_g) != 0)
    ends = np.concatenate([change, [size - 1]])
    runs = np.diff(np.concatenate([[-1], ends]))
    pos = np.unique(np.concatenate([np.arange(step - 1, size, step), ends[runs > step]]))
    x = sorted_g[pos]
    below = np.searchsorted(sorted_g, x, side="left") / size
    at = np.searchsorted(sorted_g, x, side="right") / size
    return below, at, gumbel2_cdf(x.astype(np.float64))


def sample_ks(sorted_g, n: int, sims: int = 400, seed: int = 0, fpc: float = 1.0) -> np.ndarray:
    """``sims`` draws of the KS distance that ``n`` samples of the law of ``sorted_g`` (a
    lattice's sorted outputs, each equally likely, no NaN) show against the ideal law: the
    supremum over x of ``|B(G(x))·√(fpc/n) + G(x) − F(x)|`` and the same just below x, with
    ``B`` a Brownian bridge (seeded)."""
    n = _check_positive(n, "n")
    sims = _check_positive(sims, "sims")
    root = math.sqrt(check_fpc(fpc) / n)
    g = np.asarray(sorted_g)
    if g.ndim != 1 or g.size < 2 or np.isnan(g).any() or np.any(np.diff(g) < 0):
        raise ValueError("sorted_g must be sorted lattice outputs without NaN")
    below, at, f = _ks_points(g)
    grid, back = np.unique(np.concatenate([below, at]), return_inverse=True)
    gaps = np.sqrt(np.diff(np.concatenate([[0.0], grid])))
    shift = np.concatenate([below, at]) - np.concatenate([f, f])
    rng = np.random.default_rng(seed)
    out = np.empty(sims)
    for i in range(sims):
        w = np.cumsum(rng.standard_normal(grid.size) * gaps)
        end = w[-1] + rng.standard_normal() * math.sqrt(max(1.0 - grid[-1], 0.0))
        bridge = w - grid * end
        out[i] = np.abs(bridge[back] * root + shift).max()
    return out
