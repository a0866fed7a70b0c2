"""Calibration of the ``FastLog2`` defaults against the design note's *observations*.

The chip is proprietary; the emulator's free knobs are chosen so that the model
reproduces what the note measured, and this module is the visible record of how:

1. **Zero plateau** (``zero_threshold``). With the scaled first layer and no
   divisor, the note counted 8,627 exact zeros in 2^20 samples and predicted
   8,609 from the plateau interval. The threshold is an integer number ``T`` of
   accumulator LSBs (``τ = T·2^-product_bits``); ``calibrate_threshold`` picks the
   ``T`` whose plateau interval ``[a, b]`` gives the prediction
   ``2^20·P(a ≤ t ≤ b) = 2^20·(2^-a − 2^-b)`` (ideal law of ``t``) closest to 8,609.
   The exact zero count over the lattice is then a result, compared with 8,627.
2. **Coefficient widths** (``c0_bits``, ``c1_bits``; the coefficients are truncated,
   so each segment carries its own offset and slope error). The note's 64-bin χ²
   at 10^9 samples was ≈851.50 with Div8. For each candidate of ``COEFF_GRID``
   the exact noncentrality ``λ`` of the ``div8`` pipeline is computed by
   enumerating the lattice, and the candidate whose ``E[χ²] = 63 + 10^9·λ`` is
   closest to 851.50 (in log ratio) is chosen.

Only the note's observations of the *scaled* and *Div8* pipelines are used;
no other divisor is ever evaluated here, so what a later divisor search finds
is a result of the model, not a target.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from rslab import note
from rslab.numerics.fastlog import DEFAULT_FASTLOG2, FastLog2
from rslab.numerics.gumbel import get_noise
from rslab.numerics.rng import all_uniforms
from rslab.numerics.stats import N_BINS, bin_counts

COEFF_GRID = tuple((w0, w1) for w0 in (13, 14, 15) for w1 in (9, 11, 13, 15))
"""Candidates ``(c0_bits, c1_bits)`` searched by ``calibrate``."""
BASE = FastLog2(index_bits=6, degree=2, c2_bits=10, square_bits=22, product_bits=22,
                coeff_rounding="truncate", product_rounding="truncate", output_rounding="nearest")
"""The fixed (not calibrated) part of the model: 64 segments, quadratic, a 22-bit datapath,
truncated coefficients and products."""


def coefficients(c0_bits: int, c1_bits: int, base: FastLog2 = BASE) -> FastLog2:
    """A config with the given coefficient widths."""
    return base.replace(c0_bits=c0_bits, c1_bits=c1_bits)


def plateau_prediction(log2: FastLog2, n: int = note.SAMPLES) -> float:
    """Expected zeros of ``−fl(t)`` among ``n`` draws if ``t`` followed its ideal law.

    ``t = −log2 U`` has ``P(t > y) = 2^-y``, so ``P(a ≤ t ≤ b) = 2^-a − 2^-b`` for the
    plateau interval ``[a, b]`` of ``log2``.
    """
    a, b = log2.plateau()
    if np.isnan(a):
        return 0.0
    return n * (2.0**-a - 2.0**-b)


def exact_zero_count(log2: FastLog2, name: str = "scaled", n: int = note.SAMPLES,
                     stride: int = 1) -> float:
    """Expected exact zeros of pipeline ``name`` among ``n`` samples, by enumerating the lattice."""
    u = all_uniforms()[::stride]
    g = get_noise(name, log2=log2)(u)
    return float(n * np.count_nonzero(g == 0) / u.size)


def calibrate_threshold(log2: FastLog2, target: float = note.PLATEAU_PREDICTION,
                        n: int = note.SAMPLES) -> FastLog2:
    """``log2`` with ``zero_threshold = T·2^-product_bits``, ``T`` chosen so that
    ``plateau_prediction`` is closest to ``target`` (bisection; the prediction grows with T)."""
    lsb = 2.0**-log2.product_bits
    # first guess from the ideal plateau [2^-τ, 2^τ]: P ≈ 2^-2^-τ − 2^-2^τ
    tau = _solve_ideal_tau(target / n)
    lo, hi = max(1, int(tau / lsb * 0.8)), int(tau / lsb * 1.25) + 2

    def pred(t):
        return plateau_prediction(log2.replace(zero_threshold=t * lsb), n)

    while hi - lo > 1:
        mid = (lo + hi) // 2
        if pred(mid) <= target:
            lo = mid
        else:
            hi = mid
    best = min((lo, hi), key=lambda t: abs(pred(t) - target))
    return log2.replace(zero_threshold=best * lsb)


def _solve_ideal_tau(p: float) -> float:
    lo, hi = 0.0, 0.5
    for _ in range(60):
        mid = (lo + hi) / 2
        if 2.0 ** -(2.0**-mid) - 2.0 ** -(2.0**mid) < p:
            lo = mid
        else:
            hi = mid
    return lo


def div8_lambda(log2: FastLog2, stride: int = 1, k: int = N_BINS) -> float:
    """Exact (``stride = 1``) 64-bin noncentrality ``λ`` of the ``div8`` pipeline over the lattice.

    ``stride > 1`` uses every ``stride``-th lattice point (a quick approximation).
    """
    u = all_uniforms()[::stride]
    g = get_noise("div8", log2=log2)(u)
    if np.isnan(g).any():
        raise ValueError("div8 produced NaN for this config")
    p = bin_counts(g, k) / u.size
    return float(np.sum((p - 1.0 / k) ** 2) * k)


@dataclass
class Calibration:
    """The outcome of ``calibrate``: every candidate's figures and the chosen config."""

    rows: list = field(default_factory=list)
    chosen: FastLog2 | None = None
    stride: int = 1

    def chosen_row(self) -> dict:
        return next(r for r in self.rows if r["config"] == self.chosen)


def calibrate(grid=COEFF_GRID, base: FastLog2 = BASE, stride: int = 1,
              target_chi2: float = note.CHI2_DIV8, n_chi2: int = note.CHI2_SAMPLES,
              progress=None) -> Calibration:
    """Search ``grid`` of ``(c0_bits, c1_bits)``: for each, calibrate the threshold
    (plateau prediction → 8,609), then compute Div8's ``E[χ²]`` at ``n_chi2`` samples;
    choose the candidate closest to ``target_chi2`` in log ratio."""
    if not isinstance(stride, int) or stride < 1:
        raise ValueError(f"stride must be a positive integer, got {stride!r}")
    out = Calibration(stride=stride)
    for w0, w1 in grid:
        cfg = calibrate_threshold(coefficients(w0, w1, base))
        lam = div8_lambda(cfg, stride)
        e = (N_BINS - 1) + n_chi2 * lam
        out.rows.append({"c0_bits": w0, "c1_bits": w1,
                         "zero_threshold": cfg.zero_threshold,
                         "plateau_prediction": plateau_prediction(cfg),
                         "lambda_div8": lam, "expected_chi2": e,
                         "log_ratio": abs(math.log(e / target_chi2)),
                         "error_bound": cfg.error_bound(512), "config": cfg})
        if progress:
            progress(out.rows[-1])
    out.chosen = min(out.rows, key=lambda r: r["log_ratio"])["config"]
    return out


def default_summary(log2: FastLog2 = DEFAULT_FASTLOG2) -> dict:
    """The calibration targets evaluated exactly for ``log2`` (the defaults), beside the note's."""
    lam = div8_lambda(log2)
    return {
        "zero_threshold": log2.zero_threshold,
        "plateau": log2.plateau(),
        "plateau_prediction": plateau_prediction(log2),
        "note_plateau_prediction": note.PLATEAU_PREDICTION,
        "exact_zeros": exact_zero_count(log2), "note_zeros": note.ZEROS_SCALED,
        "lambda_div8": lam, "expected_chi2": (N_BINS - 1) + note.CHI2_SAMPLES * lam,
        "note_chi2": note.CHI2_DIV8,
    }
