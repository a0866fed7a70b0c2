"""Exact token laws of the Fast path's draws on a target row, and how far they are from it.

For a target (:mod:`rslab.numerics.targets`) used as a residual row of weights
``w``, :func:`token_law` gives the exact probability that each token is drawn:

* ``gumbel`` and ``race``: :func:`rslab.numerics.argmax_law.argmax_law` over the
  noise's lattice law (``g`` of the pipeline, or ``R = rcp(E)`` of the race), with
  the scores the reference computes: ``fl(fl_log2(w) + g)`` and ``fl(w · R)``;
* ``invcdf``: :func:`rslab.numerics.invcdf.exact_law` (every lattice uniform counted).

The law assumes what the hardware RNG is built to give: each token's (or row's)
word an independent, uniform 32-bit word. ``path="exact"`` is the Exact path's
Gumbel-max for comparison (correctly rounded logs, the same 24-bit lattice).

:class:`Discrepancy` summarises a law against the target: total variation, KL,
the χ² noncentralities over tokens and over the target's runs, the worst relative
error and where it sits, and the samples a χ² test needs to see the bias
(:mod:`rslab.numerics.detect`).
"""

from __future__ import annotations

import functools
import time
from dataclasses import asdict, dataclass, field

import numpy as np

from rslab.numerics import invcdf
from rslab.numerics.argmax_law import NoiseAtoms, argmax_law
from rslab.numerics.detect import samples_to_detect
from rslab.numerics.fastlog import DEFAULT_FASTLOG2, precise_log2
from rslab.numerics.gumbel import get_noise
from rslab.numerics.methods import resolve_noise, variant_name
from rslab.numerics.montecarlo import lattice_uniforms
from rslab.numerics.race import race_multiplier
from rslab.numerics.targets import Target

TRUNCATION = 40.0
"""Scores below the value where the ideal law gives ``P(all below) = e^-40`` are left out."""
MAX_TRUNCATED = 1e-15


@functools.lru_cache(maxsize=12)
def noise_atoms(method: str, noise: str, path: str = "fast") -> NoiseAtoms:
    """The lattice law of a method's per-token noise: ``g`` (gumbel) or ``R = rcp(E)`` (race)."""
    u = lattice_uniforms()
    if method == "race":
        return NoiseAtoms.of(f"race-{noise}", race_multiplier(u, noise))
    name = "exact" if path == "exact" else noise
    return NoiseAtoms.of(name, get_noise(name)(u))


@dataclass
class Discrepancy:
    """A token law against its target (all figures exact, float64)."""

    method: str
    target: str
    tv: float
    kl: float
    lam_tokens: float
    lam_runs: float
    worst_rel: float
    worst_token: int
    worst_p: float
    worst_mass_above: float
    detect_blind: float
    detect_aimed: float
    truncated: float
    seconds: float
    run_rel: np.ndarray = field(repr=False, default=None)
    """Per run: its exact probability over the target's, minus 1."""
    first_rel: np.ndarray = field(repr=False, default=None)
    """Per run: its first token's exact probability over the target's, minus 1."""

    def to_dict(self) -> dict:
        return asdict(self)


def _detect(lam_tokens, lam_runs, target: Target):
    blind = samples_to_detect(lam_tokens, target.vocab - 1)
    if target.levels > 1:
        blind = min(blind, samples_to_detect(lam_runs, target.levels - 1))
    return blind, samples_to_detect(lam_tokens, 1)


def _mass_above(target: Target, p: float) -> float:
    larger = target.run_probs > p
    return float(np.dot(target.counts[larger], target.run_probs[larger]))


def _v_lo(method: str, target: Target, params) -> float:
    """Where ``P(every score < v) = e^-TRUNCATION`` under the ideal law of the scores."""
    n = target.counts.astype(np.float64)
    if method == "race":  # P(w·R ≤ v) = 2^(−w/v)
        return float(np.log(2) * np.dot(n, target.weights) / TRUNCATION)
    mass = np.dot(n, np.exp2(np.asarray(params, np.float64)))  # P(a + g ≤ v) = 2^(−2^(a−v))
    return float(np.log2(np.log(2) * mass / TRUNCATION))


def run_law(target: Target, method: str, noise: str, path: str = "fast"):
    """The exact :class:`~rslab.numerics.argmax_law.RunLaw` of a Gumbel or race draw on
    ``target`` (the cut-off lowered until the left-out mass is below ``MAX_TRUNCATED``)."""
    atoms = noise_atoms(method, noise, path)
    if method == "race":
        kind, params = "mul", target.weights
    else:
        log2 = precise_log2 if path == "exact" else DEFAULT_FASTLOG2
        kind, params = "add", log2(target.weights)
    v_lo = _v_lo(method, target, params)
    while True:
        law = argmax_law(target.counts, params, atoms, kind, v_lo, target.run_probs)
        if law.truncated <= MAX_TRUNCATED:
            return law
        v_lo -= 0.5 if kind == "add" else 0.25 * v_lo


def _argmax_discrepancy(target: Target, method: str, noise: str, path: str):
    law = run_law(target, method, noise, path)
    p = target.run_probs
    j = int(np.argmax(law.worst))
    runs = target.counts * p
    return {"tv": 0.5 * law.abs_dev.sum(), "kl": law.kl.sum(), "lam_tokens": law.chi2.sum(),
            "lam_runs": float(((law.total - runs) ** 2 / runs).sum()),
            "worst_rel": float(law.worst[j]),
            "worst_token": int(target.starts[j] + law.worst_at[j]), "worst_p": float(p[j]),
            "truncated": law.truncated, "run_rel": law.total / runs - 1,
            "first_rel": law.first / p - 1}


def _invcdf_discrepancy(target: Target, noise: str):
    P = invcdf.exact_law(target.row(), noise).probs
    p = target.probs()
    rel = np.abs(P / p - 1)
    i = int(np.argmax(rel))
    runs_P = np.add.reduceat(P, target.starts)
    runs_p = target.counts * target.run_probs
    with np.errstate(divide="ignore", invalid="ignore"):
        kl = float(np.where(P > 0, P * np.log(P / p), 0.0).sum())
    return {"tv": 0.5 * float(np.abs(P - p).sum()), "kl": kl,
            "lam_tokens": float(((P - p) ** 2 / p).sum()),
            "lam_runs": float(((runs_P - runs_p) ** 2 / runs_p).sum()),
            "worst_rel": float(rel[i]), "worst_token": i, "worst_p": float(p[i]),
            "truncated": 0.0, "run_rel": runs_P / runs_p - 1,
            "first_rel": P[target.starts] / target.run_probs - 1}


def token_law(target: Target, method: str, noise=None, *, path: str = "fast") -> Discrepancy:
    """The exact law of ``method`` (with ``noise``) on ``target``, against the target."""
    if not isinstance(target, Target):
        raise ValueError(f"target must be a Target, got {type(target).__name__}")
    if path not in ("fast", "exact"):
        raise ValueError(f"path must be 'fast' or 'exact', got {path!r}")
    noise = resolve_noise(method, noise)
    if path == "exact" and method != "gumbel":
        raise ValueError("method: the Exact path draws with Gumbel-max only")
    start = time.perf_counter()
    if method == "invcdf":
        d = _invcdf_discrepancy(target, noise)
    else:
        d = _argmax_discrepancy(target, method, noise, path)
    blind, aimed = _detect(d["lam_tokens"], d["lam_runs"], target)
    name = "exact path" if path == "exact" else variant_name(method, noise)
    return Discrepancy(name, target.name, d["tv"], d["kl"], d["lam_tokens"], d["lam_runs"],
                       d["worst_rel"], d["worst_token"], d["worst_p"],
                       _mass_above(target, d["worst_p"]), blind, aimed, d["truncated"],
                       time.perf_counter() - start, d["run_rel"], d["first_rel"])
