"""Exact token laws of the Fast path's draws on a target row, and how far they are from it.

For a target (:mod:`rslab.numerics.targets`) used as a residual row of weights
``w``, :func:`token_law` gives the exact probability that each token is drawn:

* ``gumbel`` and ``race``: :func:`rslab.numerics.argmax_law.argmax_law` over the
  noise's lattice law (``g`` of the pipeline, or ``R = rcp(E)`` of the race), with
  the scores the reference computes: ``fl(fl_log2(w) + g)`` and ``fl(w · R)``;
* ``invcdf``: :func:`rslab.numerics.invcdf.exact_law` (every lattice uniform counted);
* ``fixed``: :func:`rslab.numerics.fixed_invcdf.exact_probs` (every uniform pair counted).

:func:`token_bounds` gives the law of any Fast draw on any weight row (each draw's
``law`` in :mod:`rslab.numerics.methods`) as certified bounds per token
(:class:`TokenBounds`), :func:`exact_token_probs` their midpoint. Where the law is
exact and where it is bounded:

* the inverse CDFs: exact (``lo = hi``);
* an argmax draw on a row of at most ``MAX_RUNS`` distinct positive weights whose runs
  hold at most ``EXACT_EVENTS`` window events (memory): today's :func:`run_law`, exact but
  for two omissions that ``hi`` adds back (score values below its cut-off, at most
  ``truncated ≤ MAX_TRUNCATED`` in all, and per token at most ``MIN_WIN`` per atom of the
  noise); if the row has more than ``MAX_RUNS`` runs the tokens of each weight are made
  adjacent, which changes nothing unless tokens of two weights can draw one score (their
  ranges of scores overlap): then the order of their ties is lost and ``[lo, hi]`` is the
  bracket below (widened to hold the midpoint);
* an argmax draw on any other row: :func:`rslab.numerics.argmax_bounds.bounds`,
  certified brackets about ``resolution`` wide relative to the larger of a token's
  probability and its target (ties between tokens of different weights at one float32
  score and the cells of the grid are what they bracket).

The law assumes what the hardware RNG is built to give: each token's (or row's)
word an independent, uniform 32-bit word. ``path="exact"`` is the Exact path's
Gumbel-max for comparison (correctly rounded logs, the same 24-bit lattice).

:class:`Discrepancy` summarises a law against the target: total variation, KL,
the χ² noncentralities over tokens and over the target's runs, the worst relative
error and where it sits, and the samples a χ² test needs to see the bias
(:mod:`rslab.numerics.detect`; NaN where the test's approximation does not hold, a bias
carried by tokens too rare for it).
"""

from __future__ import annotations

import functools
import time
from dataclasses import asdict, dataclass, field

import numpy as np

from rslab.numerics import argmax_bounds, fixed_invcdf, invcdf
from rslab.numerics.appearance import samples_to_see
from rslab.numerics.argmax_law import MIN_WIN, NoiseAtoms, argmax_law, score
from rslab.numerics.detect import approximation_holds, samples_to_detect
from rslab.numerics.fastlog import DEFAULT_FASTLOG2, precise_log2
from rslab.numerics.methods import draw, resolve_noise, variant_name
from rslab.numerics.targets import Target

TRUNCATION = 40.0
"""Scores below the value where the ideal law gives ``P(all below) = e^-40`` are left out."""
MAX_TRUNCATED = 1e-15
MAX_RUNS = 256
"""An argmax draw's exact law (:func:`run_law`) is computed over at most this many distinct
weights: a run of few tokens holds its whole window of noise atoms (hundreds of megabytes at
V = 154,880); rows of more are bounded (:func:`argmax_row_law`)."""
EXACT_EVENTS = 20_000_000
"""Nor on rows whose runs would hold more than this many window events at once (about 120
bytes each: rows of many heavy runs at small V would take tens of gigabytes)."""
MAX_VOCAB = 154_880
RESOLUTION = argmax_bounds.RESOLUTION


@functools.lru_cache(maxsize=12)
def noise_atoms(method: str, noise: str, path: str = "fast") -> NoiseAtoms:
    """The lattice law of an argmax draw's per-token noise (its ``lattice_noise``): ``g``
    (gumbel) or ``R = rcp(E)`` (race); ``path="exact"``: the Exact path's Gumbel noise.
    (Cached by the arguments as passed: callers pass all three.)"""
    name = "exact" if path == "exact" else noise
    return NoiseAtoms.of(f"{method}-{name}", draw(method).resolve("lattice_noise")(name))


@dataclass(frozen=True)
class TokenBounds:
    """A draw's token law on a row as certified bounds ``lo ≤ P ≤ hi`` (float64 [V]) and
    ``mid``, the value :func:`exact_token_probs` gives (the exact law where ``lo == hi``)."""

    lo: np.ndarray
    hi: np.ndarray
    mid: np.ndarray

    @classmethod
    def exact(cls, probs) -> TokenBounds:
        p = np.asarray(probs, np.float64)
        return cls(p, p, p)

    @classmethod
    def between(cls, lo, hi) -> TokenBounds:
        return cls(lo, hi, (lo + hi) / 2)

    @property
    def is_exact(self) -> bool:
        return bool(np.array_equal(self.lo, self.hi))

    def rel_half_width(self, target) -> float:
        """The largest half-width relative to the larger of a token's midpoint and its
        ``target`` probability (what a χ² over the tokens sees)."""
        scale = np.maximum(self.mid, np.asarray(target, np.float64))
        live = scale > 0
        return float(np.max((self.hi - self.lo)[live] / (2 * scale[live]), initial=0.0))


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
    detect_appear: float = float("nan")
    """The samples at which an appearance test over the tokens sees the bias half the time
    (exact, :func:`rslab.numerics.appearance.samples_to_see`)."""

    @property
    def detect_seen(self) -> float:
        """The fewest samples at which one of the tests above sees the bias half the time:
        the blind χ² (where its approximation holds) or the appearance test."""
        return float(np.nanmin([self.detect_blind, self.detect_appear]))

    def to_dict(self) -> dict:
        return asdict(self) | {"detect_seen": self.detect_seen}


def _detect(d: dict, target: Target):
    """(blind, aimed): the samples the blind χ² tests (over the tokens, over the runs) and
    the aimed one need, each NaN where its approximation does not hold at its figure
    (:func:`rslab.numerics.detect.approximation_holds`); blind is the smaller of the two."""
    runs_p = target.counts * target.run_probs

    def fig(lam, df, terms, p):
        n = samples_to_detect(lam, df)
        return n if approximation_holds(terms, p, n) else float("nan")

    blind = [fig(d["lam_tokens"], target.vocab - 1, d["token_terms"], target.run_probs)]
    if target.levels > 1:
        blind.append(fig(d["lam_runs"], target.levels - 1, d["run_terms"], runs_p))
    blind = min((b for b in blind if not np.isnan(b)), default=float("nan"))
    return blind, fig(d["lam_tokens"], 1, d["token_terms"], target.run_probs)


def _mass_above(target: Target, p: float) -> float:
    larger = target.run_probs > p
    return float(np.dot(target.counts[larger], target.run_probs[larger]))


def _v_lo(kind: str, target: Target, params) -> float:
    """Where ``P(every score < v) = e^-TRUNCATION`` under the ideal law of the scores."""
    n = target.counts.astype(np.float64)
    if kind == "mul":  # P(w·R ≤ v) = 2^(−w/v)
        return float(np.log(2) * np.dot(n, target.weights) / TRUNCATION)
    mass = np.dot(n, np.exp2(np.asarray(params, np.float64)))  # P(a + g ≤ v) = 2^(−2^(a−v))
    return float(np.log2(np.log(2) * mass / TRUNCATION))


def score_params(kind: str, weights, path: str = "fast") -> np.ndarray:
    """Each weight's score parameter (float32): its log2 (the path's) for a draw that adds the
    noise, the weight itself for one that multiplies (−inf or 0: the token never wins)."""
    if kind == "mul":
        return weights
    return (precise_log2 if path == "exact" else DEFAULT_FASTLOG2)(weights)


def run_law(target: Target, method: str, noise: str, path: str = "fast"):
    """The exact :class:`~rslab.numerics.argmax_law.RunLaw` of an argmax draw on ``target``
    (the cut-off lowered until the left-out mass is below ``MAX_TRUNCATED``): a draw that
    scores ``mul`` multiplies the weight by its noise, ``add`` adds the fast log2 weight."""
    return atoms_law(target, noise_atoms(method, noise, path), draw(method).score, path)


def atoms_law(target: Target, atoms: NoiseAtoms, kind: str = "add", path: str = "fast"):
    """The exact :class:`~rslab.numerics.argmax_law.RunLaw` of an argmax draw whose per-token
    noise has the lattice law ``atoms``, scored ``kind`` with the ``path``'s log2 (the cut-off
    lowered until the left-out mass is below ``MAX_TRUNCATED``)."""
    params = score_params(kind, target.weights, path)
    v_lo = _v_lo(kind, target, params)
    while True:
        law = argmax_law(target.counts, params, atoms, kind, v_lo, target.run_probs)
        if law.truncated <= MAX_TRUNCATED:
            return law
        v_lo -= 0.5 if kind == "add" else 0.25 * v_lo


def check_row(weights) -> np.ndarray:
    """``weights`` as one float32 row [V] of finite non-negative weights with a positive total,
    else ``ValueError`` naming the argument."""
    w = np.asarray(weights)
    if w.dtype != np.float32 or w.ndim != 1 or not 1 <= w.size <= MAX_VOCAB:
        raise ValueError(f"weights must be a float32 row [V] with V ≤ {MAX_VOCAB:,}, got "
                         f"{w.dtype} {w.shape}")
    if not np.all(np.isfinite(w) & (w >= 0)) or not np.any(w > 0):
        raise ValueError("weights must be finite, non-negative and not all zero")
    return w


def _argmax_runs(w) -> tuple[Target, np.ndarray, bool] | None:
    """The positive tokens of ``w`` as runs of equal weights (a Target), the token of each
    position of the runs, and whether that order is the row's own (else: the tokens of each
    weight made adjacent, in order, the weights in their first token's order); None for a
    row of more than ``MAX_RUNS`` distinct weights."""
    live = np.flatnonzero(w > 0)
    x = w[live]
    edges = np.flatnonzero(x[1:] != x[:-1]) + 1
    if edges.size < MAX_RUNS:
        counts = np.diff(np.concatenate([[0], edges, [x.size]]))
        return Target("row", counts, x[np.concatenate([[0], edges])]), live, True
    values, first, inverse, counts = np.unique(x, return_index=True, return_inverse=True,
                                               return_counts=True)
    if values.size > MAX_RUNS:
        return None
    rank = np.argsort(np.argsort(first))  # each weight's place by its first token
    order = np.argsort(rank[inverse], kind="stable")
    by_first = np.argsort(first)
    return Target("row", counts[by_first], values[by_first]), live[order], False


def argmax_row_law(weights, method: str, noise: str,
                   resolution: float = RESOLUTION) -> TokenBounds:
    """An argmax draw's law on a row: :func:`run_law` over its runs of equal weights where it
    has at most ``MAX_RUNS`` distinct weights and they hold at most ``EXACT_EVENTS`` window
    events, else the brackets of :func:`rslab.numerics.argmax_bounds.bounds` (see the
    module docstring)."""
    w = check_row(weights)
    kind = draw(method).score
    params = score_params(kind, w)
    live = (params > 0) if kind == "mul" else np.isfinite(params)
    if not live.any():
        raise ValueError("weights: the Gumbel draw sees no weight of at least the smallest "
                         "normal float32 (the sampler draws such a row from p)")
    atoms = noise_atoms(method, noise, "fast")
    runs = _argmax_runs(w)
    if runs is None or window_events(runs[0], atoms, kind) > EXACT_EVENTS:
        return TokenBounds.between(*argmax_bounds.bounds(params, live, atoms, kind, resolution))
    target, tokens, in_order = runs
    law = run_law(target, method, noise)
    P = np.zeros(w.size)
    P[tokens] = law.tokens
    if in_order or not _ties_across(params[live], atoms, kind):
        return TokenBounds(P, P + (law.truncated + MIN_WIN * atoms.values.size) * live, P)
    lo, hi = argmax_bounds.bounds(params, live, atoms, kind, resolution)
    return TokenBounds(np.minimum(lo, P), np.maximum(hi, P), P)


def window_events(target: Target, atoms: NoiseAtoms, kind: str) -> int:
    """About how many (run, score value) events :func:`run_law` holds at once: each run's
    atoms scoring above the first cut-off (more than a one-token run keeps)."""
    params = score_params(kind, target.weights).astype(np.float64)
    with np.errstate(all="ignore"):
        y = argmax_bounds.KINDS[kind].inverse(_v_lo(kind, target, params), params)
    return int(np.sum(atoms.values.size - np.searchsorted(atoms.values, y.astype(np.float32))))


def _ties_across(params, atoms: NoiseAtoms, kind: str) -> bool:
    """Whether tokens of two different score parameters can draw one score: their ranges of
    scores overlap (else the order of their tokens does not matter)."""
    a = np.unique(params)
    return bool(np.any(score(kind, a[:-1], atoms.values[-1]) >= score(kind, a[1:],
                                                                      atoms.values[0])))


def invcdf_row_law(weights, method: str, noise: str, resolution=None) -> TokenBounds:
    """The float32 inverse CDF's law (exact: every lattice uniform counted)."""
    return TokenBounds.exact(invcdf.exact_law(check_row(weights), noise).probs)


def fixed_row_law(weights, method: str, noise: str, resolution=None) -> TokenBounds:
    """The fixed-point inverse CDF's law (exact counts over 2^192, rounded once each)."""
    w = check_row(weights)
    if w.max() > fixed_invcdf.MAX_WEIGHT:
        raise ValueError(f"weights: the fixed-point draw takes weights up to 2^120, got "
                         f"{w.max():g}")
    return TokenBounds.exact(fixed_invcdf.exact_probs(w))


def token_bounds(weights, method: str, noise=None, *,
                 resolution: float = RESOLUTION) -> TokenBounds:
    """The law (:class:`TokenBounds`) of the Fast draw ``method``/``noise`` on one row of float32
    weights ``weights`` [V] (V ≤ 154,880): the inverse CDFs exact in about a second, the
    argmax draws exact or bracketed (module docstring; ``resolution`` the target of a
    bracket's relative width), seconds to minutes."""
    noise = resolve_noise(method, noise)
    return draw(method).resolve("law")(weights, method, noise, resolution)


def exact_token_probs(weights, method: str, noise=None, *,
                      resolution: float = RESOLUTION) -> np.ndarray:
    """The per-token law (float64 [V]) of a Fast draw on one row: the midpoint of
    :func:`token_bounds` (exact for the inverse CDFs, and for the argmax draws where the
    module docstring says; else within brackets of relative width about ``resolution``)."""
    return token_bounds(weights, method, noise, resolution=resolution).mid


def _discrepancy(target: Target, P) -> dict:
    p = target.probs()
    rel = np.abs(P / p - 1)
    i = int(np.argmax(rel))
    runs_P = np.add.reduceat(P, target.starts)
    runs_p = target.counts * target.run_probs
    with np.errstate(divide="ignore", invalid="ignore"):
        kl = float(np.where(P > 0, P * np.log(P / p), 0.0).sum())
    terms = (P - p) ** 2 / p
    return {"tv": 0.5 * float(np.abs(P - p).sum()), "kl": kl, "lam_tokens": float(terms.sum()),
            "token_terms": np.add.reduceat(terms, target.starts),
            "run_terms": (runs_P - runs_p) ** 2 / runs_p,
            "lam_runs": float(((runs_P - runs_p) ** 2 / runs_p).sum()),
            "worst_rel": float(rel[i]), "worst_token": i, "worst_p": float(p[i]),
            "truncated": 0.0, "run_rel": runs_P / runs_p - 1,
            "first_rel": P[target.starts] / target.run_probs - 1, "cells": (P, p)}


def _argmax_discrepancy(target: Target, method: str, noise: str, path: str):
    law = run_law(target, method, noise, path)
    p = target.run_probs
    j = int(np.argmax(law.worst))
    runs = target.counts * p
    return {"tv": 0.5 * law.abs_dev.sum(), "kl": law.kl.sum(), "lam_tokens": law.chi2.sum(),
            "token_terms": law.chi2, "run_terms": (law.total - runs) ** 2 / runs,
            "lam_runs": float(((law.total - runs) ** 2 / runs).sum()),
            "worst_rel": float(law.worst[j]),
            "worst_token": int(target.starts[j] + law.worst_at[j]), "worst_p": float(p[j]),
            "truncated": law.truncated, "run_rel": law.total / runs - 1,
            "first_rel": law.first / p - 1, "cells": (law.tokens, target.probs())}


def token_law(target: Target, method: str, noise=None, *, path: str = "fast") -> Discrepancy:
    """The exact law of ``method`` (with ``noise``) on ``target``, against the target."""
    if not isinstance(target, Target):
        raise ValueError(f"target must be a Target, got {type(target).__name__}")
    if path not in ("fast", "exact"):
        raise ValueError(f"path must be 'fast' or 'exact', got {path!r}")
    noise = resolve_noise(method, noise)
    d_ = draw(method)
    if path == "exact" and d_.score != "add":
        raise ValueError("method: the Exact path draws with Gumbel-max only")
    start = time.perf_counter()
    if d_.score is None:
        d = _discrepancy(target, exact_token_probs(target.row(), method, noise))
    else:
        d = _argmax_discrepancy(target, method, noise, path)
    blind, aimed = _detect(d, target)
    name = "exact path" if path == "exact" else variant_name(method, noise)
    return Discrepancy(name, target.name, d["tv"], d["kl"], d["lam_tokens"], d["lam_runs"],
                       d["worst_rel"], d["worst_token"], d["worst_p"],
                       _mass_above(target, d["worst_p"]), blind, aimed, d["truncated"],
                       time.perf_counter() - start, d["run_rel"], d["first_rel"],
                       samples_to_see(*d["cells"])["samples"])
