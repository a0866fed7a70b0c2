"""How many samples a χ² test needs to see a bias: ``N = λ*(df) / λ``.

A Pearson χ² test over cells with true probabilities ``P`` and null ``p`` has,
at N samples, approximately the noncentral χ² law with ``df`` degrees of
freedom and noncentrality ``N·λ``, ``λ = Σ (P − p)² / p``. It rejects at level
``alpha`` with chance ``power`` once ``N·λ`` reaches ``λ*``, the noncentrality
at which ``ncx2(df, λ*)`` exceeds the central critical value with that chance.
With ``df = 1`` this is the test aimed at the bias itself (a likelihood-ratio
test that knows which cells are off): no test does much better.
"""

from __future__ import annotations

import functools

import numpy as np
from scipy import stats as sps

ALPHA = 1e-3
POWER = 0.5


@functools.lru_cache(maxsize=256)
def critical_noncentrality(df: int, power: float = POWER, alpha: float = ALPHA) -> float:
    """``λ*``: the noncentrality at which the level-``alpha`` χ² test rejects with ``power``."""
    if isinstance(df, bool) or not isinstance(df, (int, np.integer)) or df < 1:
        raise ValueError(f"df must be a positive integer, got {df!r}")
    if not (0 < power < 1 and 0 < alpha < 1):
        raise ValueError("power and alpha must lie in (0, 1)")
    crit = sps.chi2.isf(alpha, df)
    lo, hi = 0.0, 10.0 + 10 * np.sqrt(df)
    while sps.ncx2(df, hi).sf(crit) < power:
        hi *= 2
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if sps.ncx2(df, mid).sf(crit) < power else (lo, mid)
    return float(hi)


def samples_to_detect(lam: float, df: int, power: float = POWER, alpha: float = ALPHA) -> float:
    """Samples at which a ``df``-cell-minus-one χ² test sees the noncentrality ``lam``
    (``inf`` for an unbiased law)."""
    if not np.isfinite(lam) or lam < 0:
        raise ValueError(f"lam must be a finite non-negative number, got {lam!r}")
    return float("inf") if lam == 0 else critical_noncentrality(int(df), power, alpha) / lam
