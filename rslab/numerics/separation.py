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
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats as sps

from rslab.numerics.stats import check_fpc, chi2_law

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
