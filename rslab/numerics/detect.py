"""How many samples a χ² test needs to see a bias: ``N = λ*(df) / λ``.

A Pearson χ² test over cells with true probabilities ``P`` and null ``p`` has,
at N samples, approximately the noncentral χ² law with ``df`` degrees of
freedom and noncentrality ``N·λ``, ``λ = Σ (P − p)² / p``. It rejects at level
``alpha`` with chance ``power`` once ``N·λ`` reaches ``λ*``, the noncentrality
at which ``ncx2(df, λ*)`` exceeds the central critical value with that chance.
With ``df = 1`` this is the test aimed at the bias itself (a likelihood-ratio
test that knows which cells are off).

The approximation needs expected counts of about 5 or more where the bias lies: at the
figure N, the cells whose expected count ``N·p`` reaches ``MIN_EXPECTED`` must carry at
least ``CARRIED`` of λ (:func:`approximation_holds`). A bias carried by tokens the target
almost never draws has no such cells — a χ² over tokens cannot reject before one of them
appears — and :func:`samples_to_detect_cells` gives no figure for it (NaN); the exact
chance that a test sees it is :mod:`rslab.numerics.appearance`'s.
"""

from __future__ import annotations

import functools

import numpy as np
from scipy import stats as sps

ALPHA = 1e-3
POWER = 0.5
MIN_EXPECTED = 5.0
"""The expected count per cell the noncentral-χ² approximation needs."""
CARRIED = 0.9
"""The share of λ that cells of at least ``MIN_EXPECTED`` expected counts must carry."""


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


def approximation_holds(terms, p_cells, samples: float) -> bool:
    """Whether the noncentral-χ² figure ``samples`` can be trusted: the cells with expected
    count ``samples·p ≥ MIN_EXPECTED`` carry at least ``CARRIED`` of ``λ = Σ terms``
    (``terms``: each cell's ``(P − p)²/p``; ``p_cells``: its null probability)."""
    terms, p_cells = np.asarray(terms, np.float64), np.asarray(p_cells, np.float64)
    lam = float(terms.sum())
    if not np.isfinite(samples) or lam == 0:
        return True
    if not np.isfinite(lam):
        return False
    return float(terms[samples * p_cells >= MIN_EXPECTED].sum()) >= CARRIED * lam


def samples_to_detect_cells(P, p, df: int | None = None) -> float:
    """:func:`samples_to_detect` of ``λ = χ²(P ‖ p)`` over these cells (``df``: cells − 1 by
    default), ``inf`` for no bias, NaN where :func:`approximation_holds` fails at that figure
    (a bias carried by cells too rare for the approximation, or mass where p has none)."""
    P, p = np.asarray(P, np.float64), np.asarray(p, np.float64)
    if np.any(P[p == 0] > 0):
        return float("nan")
    live = p > 0
    terms = (P[live] - p[live]) ** 2 / p[live]
    lam = float(terms.sum())
    n = samples_to_detect(lam, df if df is not None else max(1, int(live.sum()) - 1))
    return n if approximation_holds(terms, p[live], n) else float("nan")
