"""The exponential race's noise: ``E`` from one fast log, ``R = rcp(E)``, and its Gumbel-domain law.

The race draws ``argmax_i w_i · R_i`` with ``R_i = rcp(E_i)`` and ``E_i`` an
exponential variable: in exact arithmetic ``argmax w/E`` with ``E ~ Exp`` is a
sample of ``w / Σw`` (one log per token, no second log). With the fast log
``fl`` and the lattice uniform ``u``, ``noise=`` selects E:

* ``scaled`` (the default): ``E = log2 c − fl(u·c)``, the first layer of the
  ``div`` pipelines (``rslab.numerics.gumbel``): ``c`` keeps ``u·c`` below the
  fast log's zero plateau, so E > 0 on every lattice point;
* ``naive``: ``E = 0 − fl(u)``. On the plateau (u just below 1) ``E = +0``,
  ``R = rcp(0) = +inf`` and the token's score ``w·R`` is +inf: it wins outright
  whatever its weight (the lowest such index when several hit).

Taking logs, ``log2(w·R) = log2 w − log2 E``: the race is Gumbel-max with the
noise ``g = −log2 E`` (``RaceNoise``, computed in float64 and rounded once to
float32, +inf where E = 0), which is what the noise-level statistics measure.
"""

from __future__ import annotations

import numpy as np

from rslab.numerics.fastlog import DEFAULT_FASTLOG2, FastLog2, fast_rcp
from rslab.numerics.gumbel import get_noise, lattice

RACE_NOISES = ("scaled", "naive")
DEFAULT_RACE_NOISE = "scaled"


def check_race_noise(noise) -> str:
    """``noise`` if it names a race variant, else ``ValueError`` naming the argument."""
    if noise not in RACE_NOISES:
        raise ValueError(f"noise must be one of {RACE_NOISES} for method 'race', got {noise!r}")
    return noise


def race_exponential(u, noise: str = DEFAULT_RACE_NOISE, *, log2: FastLog2 | None = None):
    """``E`` (float32) for float32 uniforms ``u``, from the first layer of the ``scaled`` or
    ``naive`` Gumbel pipeline (the same float32 ops; ``0 − fl(u)`` keeps a plateau hit +0)."""
    check_race_noise(noise)
    trace = get_noise(noise, log2=log2 or DEFAULT_FASTLOG2).trace(u)
    return trace["t"] if noise == "scaled" else np.float32(0) - trace["l1"]


def race_multiplier(u, noise: str = DEFAULT_RACE_NOISE, *, log2: FastLog2 | None = None):
    """``R = rcp(E)`` (float32; +inf where E = 0): the factor each token's weight is scaled by."""
    return fast_rcp(race_exponential(u, noise, log2=log2))


def lattice_multiplier(noise: str = DEFAULT_RACE_NOISE) -> np.ndarray:
    """``R`` on every lattice uniform, in lattice order."""
    return race_multiplier(lattice(), noise)


class RaceNoise:
    """The race's Gumbel-domain noise ``u → −log2 E`` (float32): ``race`` or ``race-naive``."""

    def __init__(self, noise: str = DEFAULT_RACE_NOISE, log2: FastLog2 | None = None):
        self.noise = check_race_noise(noise)
        self.log2 = log2 or DEFAULT_FASTLOG2
        self.name = "race" if noise == DEFAULT_RACE_NOISE else f"race-{noise}"

    def __repr__(self):
        return f"RaceNoise({self.noise!r})"

    def __call__(self, u) -> np.ndarray:
        e = race_exponential(u, self.noise, log2=self.log2).astype(np.float64)
        with np.errstate(divide="ignore"):
            return (-np.log2(e)).astype(np.float32)


def plateau_share(u, noise: str = DEFAULT_RACE_NOISE) -> float:
    """Share of the uniforms ``u`` where ``E = 0`` (the fast log's plateau)."""
    return float(np.count_nonzero(race_exponential(u, noise) == 0) / np.size(u))
