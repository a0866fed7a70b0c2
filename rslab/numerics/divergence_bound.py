"""How many samples no test at all can use: a divergence bound, beside what χ² tests need.

For a draw with law P and its target p on V tokens, and n independent samples,
every test of "the samples come from p" against "from P" (any statistic, any
cells, any level) has an advantage — power minus size — at most the total
variation of the n-sample laws, and

    TV(Pⁿ, pⁿ) ≤ √(KL(Pⁿ ‖ pⁿ)/2) = √(n·KL(P ‖ p)/2) ≤ √(n·χ²(P ‖ p)/2)

(Pinsker's inequality; KL is additive over independent samples; and
``KL ≤ log(1 + χ²) ≤ χ²`` by Jensen, ``χ² = Σ (P_i − p_i)²/p_i``), and also
``TV(Pⁿ, pⁿ) ≤ n·TV(P, p)`` (a union bound over the n samples of a coupling). So below

    n* = max(2·a² / χ²(P ‖ p), a / TV(P, p))        (``a = ADVANTAGE = 0.1``)

samples no test gains more than a = 0.1 over guessing (:func:`samples_no_test_sees` of
each divergence; the KL form, ``2a²/KL``, is a little larger than the χ² one and is
reported too). Each form is a sufficient condition for invisibility: where the χ² form
falls below one sample it says nothing, and the TV form still does. Beside it, the
samples a level-10^-3 χ² test with power ½ needs
(:func:`rslab.numerics.detect.samples_to_detect_cells`, NaN where its approximation fails)
on four partitions of the tokens: the tokens, the vectors of 128 tokens (the core's
blocks), 4,096 equal bins of consecutive tokens, and the 128 lanes (token id mod 128).

Where a law is known as bounds ``lo ≤ P ≤ hi`` per token (an argmax draw on a row of
many weights, :func:`rslab.numerics.token_law.token_bounds`), :func:`chi2_interval`
bounds χ² over every such law: each token's distance to its interval, tightened with
``ΣP ≤ 1`` (the slack ``S = 1 − Σlo`` shared by all tokens).
"""

from __future__ import annotations

import numpy as np

from rslab.numerics.detect import samples_to_detect_cells

ADVANTAGE = 0.1
"""The advantage (power minus size) the bound's sample size keeps every test below."""
VECTOR = 128
EQUAL_BINS = 4096
CELLS = ("tokens", "vectors", "bins", "lanes")


def chi2(P, p) -> float:
    """``Σ (P_i − p_i)²/p_i`` over the target's support (``inf`` if P puts mass off it)."""
    P, p = np.asarray(P, np.float64), np.asarray(p, np.float64)
    live = p > 0
    if np.any(P[~live] > 0):
        return float("inf")
    return float(np.sum((P[live] - p[live]) ** 2 / p[live]))


def chi2_interval(lo, hi, p) -> tuple[float, float]:
    """The smallest and largest ``χ²(P ‖ p)`` over the laws P with ``lo ≤ P ≤ hi`` and
    ``ΣP ≤ 1`` (bounds: the box of intervals, and ``χ²(lo)`` moved by the slack ``S``)."""
    lo, hi, p = (np.asarray(a, np.float64) for a in (lo, hi, p))
    live = p > 0
    if np.any(lo[~live] > 0):
        return float("inf"), float("inf")
    top = float("inf") if np.any(hi[~live] > 0) else None
    lo, hi, p = lo[live], hi[live], p[live]
    base = float(np.sum((lo - p) ** 2 / p))
    box_lo = float(np.sum(np.maximum.reduce([lo - p, p - hi, 0 * p]) ** 2 / p))
    box_hi = float(np.sum(np.maximum((lo - p) ** 2, (hi - p) ** 2) / p))
    slack = max(0.0, 1.0 - float(np.sum(lo)))
    loose = hi > lo
    up = base + slack * float(np.max((2 * np.maximum(lo / p - 1, 0) + np.minimum(
        hi - lo, slack) / p)[loose], initial=0.0))
    down = base - 2 * slack * float(np.max(np.maximum(1 - lo / p, 0)[loose], initial=0.0))
    return max(box_lo, down), top if top is not None else min(box_hi, up)


def kl(P, p) -> float:
    """``Σ P_i ln(P_i/p_i)`` (``inf`` if P puts mass off the target's support)."""
    P, p = np.asarray(P, np.float64), np.asarray(p, np.float64)
    if np.any(P[p == 0] > 0):
        return float("inf")
    live = P > 0
    return max(0.0, float(np.sum(P[live] * np.log(P[live] / p[live]))))


def samples_no_test_sees(divergence: float, advantage: float = ADVANTAGE) -> float:
    """``2a²/divergence`` (χ² or KL): below it no test's advantage exceeds ``a``."""
    _check(divergence, advantage)
    return float("inf") if divergence == 0 else 2 * advantage**2 / divergence


def samples_no_test_sees_tv(tv: float, advantage: float = ADVANTAGE) -> float:
    """``a/TV``: below it no test's advantage exceeds ``a`` (``TV(Pⁿ, pⁿ) ≤ n·TV``)."""
    _check(tv, advantage)
    return float("inf") if tv == 0 else advantage / tv


def _check(divergence, advantage) -> None:
    if not 0 < advantage < 1:
        raise ValueError(f"advantage must lie in (0, 1), got {advantage!r}")
    if not divergence >= 0:
        raise ValueError(f"divergence must be non-negative, got {divergence!r}")


def cells(vocab: int, partition: str) -> np.ndarray:
    """Each token's cell under ``partition`` (one of ``CELLS``)."""
    i = np.arange(vocab)
    parts = {"tokens": lambda: i, "vectors": lambda: i // VECTOR,
             "bins": lambda: i * min(EQUAL_BINS, vocab) // vocab, "lanes": lambda: i % VECTOR}
    if partition not in parts:
        raise ValueError(f"partition must be one of {CELLS}, got {partition!r}")
    return parts[partition]()


def cell_test(P, p, partition: str) -> dict:
    """χ² of the cell masses and the samples a χ² test over those cells needs (NaN where the
    test's approximation does not hold)."""
    c = cells(len(p), partition)
    n = int(c.max()) + 1
    Pc, pc = np.bincount(c, P, minlength=n), np.bincount(c, p, minlength=n)
    return {"chi2": chi2(Pc, pc), "detect": samples_to_detect_cells(Pc, pc)}


def figures(P, p) -> dict:
    """The bound and the tests of one law against its target (plain floats): ``bound_samples``
    the larger of the χ² and the TV forms (``bound_samples_chi2``, ``bound_samples_tv``)."""
    c2, k = chi2(P, p), kl(P, p)
    tv = 0.5 * float(np.abs(np.asarray(P) - p).sum())
    by_chi2, by_tv = samples_no_test_sees(c2), samples_no_test_sees_tv(tv)
    out = {"chi2": c2, "kl": k, "tv": tv, "bound_samples": max(by_chi2, by_tv),
           "bound_samples_chi2": by_chi2, "bound_samples_tv": by_tv,
           "bound_samples_kl": samples_no_test_sees(k)}
    for part in CELLS:
        t = cell_test(P, p, part)
        out[f"chi2_{part}"], out[f"detect_{part}"] = t["chi2"], t["detect"]
    return out
