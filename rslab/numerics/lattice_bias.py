"""Where the Exact path's Gumbel-max bias comes from: the lattice's cell endpoints.

The framework's uniform (:func:`rslab.numerics.rng.uniform_from_index`) maps lattice
index k ∈ [0, 2^24) to ``float32_rtz((k + ½)·2^-24)``. Below ½ that is the centre of the
cell ``[k, k + 1)·2^-24``. From ½ on, float32 steps are 2^-24, so ``(k + ½)·2^-24`` is not
a float32, and rounding toward zero gives the cell's lower *endpoint* ``k·2^-24``. The
largest Gumbel noises come from the uniforms nearest 1, where ``g = −log2(−log2 u) ≈
−log2((1 − u)/ln 2)``. With endpoints, ``1 − u = j·2^-24`` (j = 1, 2, …) instead of the
cells' centres ``(j − ½)·2^-24``, so each of them is pulled down: the chance that g passes
a high value y is short by about half a cell, relative to the cells above y. A token that
must beat a heavy one by many bits wins only through those few cells, and wins too rarely.

:data:`LATTICES` names four ways to give the 2^24 (or 2^23) uniforms, and
:func:`lattice_noise` the Exact path's noise on each:

* ``endpoints``: the framework's uniforms with the Exact path's correctly rounded float32
  logs (the Exact path itself);
* ``endpoints, float64 logs``: the same uniforms, g computed in float64 and rounded once;
* ``centred``: the cells' centres ``(k + ½)·2^-24`` in float64 (the same 24 bits), g in
  float64 rounded once;
* ``centred, 23 bits``: ``(k + ½)·2^-23``, every one a float32, with the Exact path's
  float32 logs (each of the 2^23 values counted twice, so the law is over 2^24 points).

:func:`lattice_atoms` gives each noise's lattice law, :func:`upper_tail` shows the cause
(``P(g > y)`` near the top against the ideal law's), and :func:`lattice_rows` gives the
exact law of the Exact path's Gumbel-max on a target of runs
(:func:`rslab.numerics.token_law.atoms_law`) on each lattice: the probability of each run,
against the target, and the samples a blind χ² test over the runs needs.
"""

from __future__ import annotations

import numpy as np

from rslab.numerics.argmax_law import NoiseAtoms
from rslab.numerics.detect import samples_to_detect_cells
from rslab.numerics.gumbel import get_noise
from rslab.numerics.rng import UNIFORM_BITS, all_uniforms
from rslab.numerics.stats import gumbel2_sf
from rslab.numerics.targets import Target
from rslab.numerics.token_law import atoms_law

LATTICES = ("endpoints", "endpoints, float64 logs", "centred", "centred, 23 bits")
"""The four lattices (see the module docstring); the first is the framework's."""
LATTICE_BITS = {"endpoints": 24, "endpoints, float64 logs": 24, "centred": 24,
                "centred, 23 bits": 23}


def uniforms(lattice: str) -> np.ndarray:
    """The lattice's uniforms in increasing order: float32 for the framework's and the
    23-bit one, float64 for the centred 24-bit cells (most of them are not float32)."""
    if lattice in ("endpoints", "endpoints, float64 logs"):
        return all_uniforms()
    if lattice == "centred":
        return (np.arange(2**UNIFORM_BITS) + 0.5) * 2.0**-UNIFORM_BITS
    if lattice == "centred, 23 bits":
        bits = LATTICE_BITS[lattice]
        return ((np.arange(2**bits) + 0.5) * 2.0**-bits).astype(np.float32)
    raise ValueError(f"lattice must be one of {LATTICES}, got {lattice!r}")


def lattice_noise(lattice: str) -> np.ndarray:
    """The Exact path's noise ``g = −log2(−log2 u)`` on every point of the 2^24-point law
    (float32): float32 logs on float32 uniforms, float64 logs (rounded once) otherwise."""
    u = uniforms(lattice)
    if lattice in ("endpoints", "centred, 23 bits"):
        g = get_noise("exact")(u)
    else:
        precise = get_noise("precise")
        g = precise.neg_log2(precise.neg_log2(u)).astype(np.float32)
    return np.repeat(g, 2 ** UNIFORM_BITS // u.size)


def lattice_atoms(lattices=LATTICES) -> dict:
    """name → the lattice law (:class:`~rslab.numerics.argmax_law.NoiseAtoms`) of
    :func:`lattice_noise` for each of ``lattices``."""
    return {name: NoiseAtoms.of(name, lattice_noise(name)) for name in lattices}


def lattice_rows(target: Target, atoms: dict) -> list[dict]:
    """Per lattice (``atoms``: name → its noise's lattice law, :func:`lattice_atoms`): the
    Exact path's exact law on ``target`` (runs of equal weights), its probability of each run
    and of the runs after the first (the tail), the relative error of the tail, the χ² over
    the runs and the samples a blind χ² test over the runs needs (NaN where its
    approximation does not hold)."""
    runs_p = target.counts * target.run_probs
    out = []
    for name, law_atoms in atoms.items():
        law = atoms_law(target, law_atoms, "add", "exact")
        tail, tail_p = float(law.total[1:].sum()), float(runs_p[1:].sum())
        out.append({"lattice": name, "bits": LATTICE_BITS[name], "runs": law.total,
                    "tail": tail, "tail_target": tail_p, "tail_rel": tail / tail_p - 1,
                    "chi2_runs": float(((law.total - runs_p) ** 2 / runs_p).sum()),
                    "detect_runs": samples_to_detect_cells(law.total, runs_p)})
    return out


def upper_tail(atoms: dict, ys) -> dict:
    """Per lattice (``atoms`` as :func:`lattice_rows`'): ``P(g > y)`` over the ideal law's
    ``1 − 2^(−2^(−y))`` at each ``y``."""
    ys = np.asarray(ys, np.float64)
    out = {}
    for name, a in atoms.items():
        at_most = np.searchsorted(a.values, ys.astype(np.float32), side="right")
        above = a.below[-1] - a.below[at_most]
        out[name] = above / a.below[-1] / gumbel2_sf(ys)
    return out
