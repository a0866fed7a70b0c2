"""The upper tail of g, exactly: how far a pipeline's noise reaches and what that costs an argmax.

The lattice has a largest uniform (1 − 2^-24 up to rounding), so every pipeline
has a largest finite g. The ideal law F(x) = 2^(-2^(-x)) puts mass
P(g > y) = 1 − 2^(-2^(-y)) ≈ ln2 · 2^(-y) beyond any y; a pipeline puts none
beyond its maximum (or piles it on +inf). All figures here are exact over the
2^24 lattice points (``LatticeLaw.atoms``), not sampled.

In a Gumbel-max argmax, token i with weight 2^(-Δ) relative to the top token
wins only if its noise exceeds the top token's by more than Δ. With m such
tokens (a vocabulary's long tail), the ideal chance that the winner is one of
them is m·2^(-Δ) / (1 + m·2^(-Δ)). ``tail_token_win`` gives the pipeline's
exact chance, ``P = Σ_x P(g_top = x) · (1 − (1 − S(x + Δ))^m)`` with
S(y) = P(g > y): once Δ exceeds (largest g) − (smallest g) the tail can
never win, however large m is.
"""

from __future__ import annotations

import numpy as np

from rslab.numerics.montecarlo import LATTICE_SIZE, LatticeLaw
from rslab.numerics.stats import gumbel2_sf

VOCAB = 154_880
"""The vocabulary size of the design note's model."""


def _check_law(law):
    if not isinstance(law, LatticeLaw):
        raise ValueError(f"law must be a LatticeLaw, got {type(law).__name__}")


def ideal_sf(y) -> np.ndarray:
    """P(g > y) under the ideal law, 1 − 2^(-2^(-y)), accurate far into the tail."""
    return gumbel2_sf(y)


def law_sf(law: LatticeLaw, y) -> np.ndarray:
    """P(g > y) under the pipeline's exact law (counts +inf as above every y)."""
    _check_law(law)
    return (LATTICE_SIZE - law.lattice_at_most(y)) / LATTICE_SIZE


def largest_finite(law: LatticeLaw) -> float:
    """The largest finite g the pipeline produces on the lattice."""
    _check_law(law)
    values = law.atom_values
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        raise ValueError(f"{law.name}: no finite output")
    return float(finite.max())


def tail_summary(law: LatticeLaw, ys=(8.0, 12.0, 16.0, 20.0)) -> dict:
    """Largest finite g, mass at +inf, ideal mass beyond that maximum, and P(g > y) ratios."""
    _check_law(law)
    ys = np.asarray(ys, dtype=np.float64)
    g_max = largest_finite(law)
    law_p = law_sf(law, ys)
    ideal_p = ideal_sf(ys)
    return {
        "g_max": g_max,
        "p_inf": float(law_sf(law, np.finfo(np.float64).max)[()]),
        "p_top_atom": float(law_sf(law, np.nextafter(np.float32(g_max), np.float32(-np.inf)))
                            - law_sf(law, g_max)),
        "ideal_beyond_max": float(ideal_sf(g_max)),
        "tail_y": ys.tolist(),
        "tail_ratio": (law_p / ideal_p).tolist(),
    }


def tail_token_win(law: LatticeLaw, delta: float, m: int = VOCAB - 1) -> float:
    """Exact chance that one of ``m`` tokens, each 2^(-delta) below the top token, wins the argmax.

    Noise is compared in exact arithmetic (ties go to the top token).
    """
    _check_law(law)
    if not np.isfinite(delta):
        raise ValueError(f"delta must be finite, got {delta}")
    if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or m < 1:
        raise ValueError(f"m must be a positive integer, got {m!r}")
    _, probs = law.atoms()
    values = law.atom_values64
    reach = values[-1] if np.isposinf(values[-1]) else largest_finite(law)
    # only top-token noise x with x + delta below the tail's reach can lose
    live = values + delta < reach
    x, p = values[live], probs[live]
    s = law_sf(law, x + delta)
    lose_each = -np.expm1(m * np.log1p(-s))  # 1 − (1 − s)^m, accurate for tiny s
    return float(np.sum(p * lose_each))


def ideal_tail_token_win(delta, m: int = VOCAB - 1) -> np.ndarray:
    """The ideal chance: m·2^(-Δ) / (1 + m·2^(-Δ))."""
    r = m * np.exp2(-np.asarray(delta, dtype=np.float64))
    return r / (1.0 + r)
