"""Inputs for the reference sampler and the kernels: statistics and the note's test points.

* ``sampled_inputs``: random target logits, a draft distribution q at a chosen
  mismatch from the target, and draft tokens actually drawn from q (seeded) —
  the input for statistical checks.
* ``all_accept_inputs`` / ``first_reject_inputs``: inputs that *force* an outcome
  on both paths, for kernel timing: every draft token has ``p(x) ≥ 2·q(x) > 0``
  (so ``u·q(x) < p(x)`` for every u < 1), or the draft at position 0 has
  ``q(x) > 0`` and a logit so low that ``p(x)`` underflows to exactly 0.
* ``empty_residual_inputs``: position 0 rejected with ``p ≤ q`` at every token on
  both paths, so the residual is all zero and the sampler falls back to p.
* ``scenario_inputs(name)``: the note's test points (BF16, V = 154,880, S = 4;
  all-accept R = 8, first-reject R = 2).

Target logits are BF16-representable float32 values (the kernels read BF16):
``round_to_bf16`` checks its input and rounds to nearest-even with the kernels'
own ``rslab.machine.bf16.round_to_bf16``. Every function is
seeded: the same seed gives the same bits.
"""

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from rslab import note
from rslab.machine.bf16 import round_to_bf16 as layout_round_to_bf16
from rslab.reference import target_probs

VOCAB = 154_880
LOGIT_SCALE = 3.0
"""Standard deviation of the synthetic target logits (a peaked but not one-hot p)."""
REJECT_LOGIT = -30000.0
"""Target logit of a forced-reject draft token: exp2 of (REJECT_LOGIT − max)·LOG2E is 0."""


@dataclass(frozen=True)
class Scenario:
    """A kernel test point: ``S`` drafts per request, ``R`` requests, vocabulary ``V``."""

    name: str
    S: int
    R: int
    V: int = VOCAB


TEST_POINTS = {name: Scenario(name, S=s, R=r) for name, (s, r) in note.POINTS.items()}


class SamplerInputs(NamedTuple):
    """The three positional arguments of ``rejection_sample`` (unpack with ``*inputs``)."""

    target_logits: np.ndarray
    draft_probs: np.ndarray
    draft_token_ids: np.ndarray


def round_to_bf16(x) -> np.ndarray:
    """Round float32 values to the nearest BF16 value (ties to even), returned as float32."""
    x = np.asarray(x)
    if x.dtype != np.float32:
        raise ValueError(f"x must be float32, got {x.dtype}")
    if np.isnan(x).any():
        raise ValueError("x contains NaN")
    return layout_round_to_bf16(x)


def is_bf16(x) -> bool:
    """True iff every float32 value of ``x`` has zero low 16 bits (is a BF16 value)."""
    x = np.asarray(x, dtype=np.float32)
    return bool(((x.view(np.uint32) & np.uint32(0xFFFF)) == 0).all())


def _check_sizes(R, S, V):
    for name, value, low in (("R", R, 0), ("S", S, 0), ("V", V, 1)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
            raise ValueError(f"{name} must be an integer ≥ {low}, got {value!r}")


def random_target_logits(R, S, V, *, seed=0, scale=LOGIT_SCALE) -> np.ndarray:
    """BF16-representable float32 logits ``[R, S+1, V]``, i.i.d. normal with std ``scale``."""
    _check_sizes(R, S, V)
    if not np.isfinite(scale) or scale <= 0:
        raise ValueError(f"scale must be positive and finite, got {scale!r}")
    rng = np.random.default_rng([seed, 1])
    l = rng.standard_normal((R, S + 1, V), dtype=np.float32) * np.float32(scale)
    return round_to_bf16(l)


def zipf_target_logits(R, S, V, *, exponent=2.0, seed=0) -> np.ndarray:
    """Peaked, LLM-like logits ``[R, S+1, V]``: p ∝ rank^-exponent, ranks shuffled per row.

    BF16-representable; the token with rank k has logit ``−exponent·ln k``.
    """
    _check_sizes(R, S, V)
    if not np.isfinite(exponent) or exponent <= 0:
        raise ValueError(f"exponent must be positive and finite, got {exponent!r}")
    rng = np.random.default_rng([seed, 4])
    ranks = rng.permuted(np.broadcast_to(np.arange(1, V + 1), (R, S + 1, V)), axis=-1)
    return round_to_bf16((-exponent * np.log(ranks)).astype(np.float32))


def normalise(weights) -> np.ndarray:
    """Rows of non-negative float64 weights → float32 probability rows (normalised in float64)."""
    w = np.asarray(weights, dtype=np.float64)
    return (w / w.sum(axis=-1, keepdims=True)).astype(np.float32)


def draft_probs_near(target_logits, mismatch, *, seed=0) -> np.ndarray:
    """A draft distribution for each of the first S rows: softmax(l + mismatch·N(0, 1)).

    ``mismatch = 0`` gives q equal to the target (up to float32 rounding).
    """
    l = np.asarray(target_logits, dtype=np.float32)[:, :-1].astype(np.float64)
    if not np.isfinite(mismatch) or mismatch < 0:
        raise ValueError(f"mismatch must be ≥ 0 and finite, got {mismatch!r}")
    rng = np.random.default_rng([seed, 2])
    d = l + mismatch * rng.standard_normal(l.shape)
    d -= d.max(axis=-1, keepdims=True)
    return normalise(np.exp(d))


def sample_draft_tokens(draft_probs, *, seed=0) -> np.ndarray:
    """Draft tokens drawn from q (inverse CDF in float64, seeded): int64 ``[R, S]``."""
    q = np.asarray(draft_probs)
    if q.ndim != 3:
        raise ValueError(f"draft_probs must have shape [R, S, V], got {q.shape}")
    rng = np.random.default_rng([seed, 3])
    cdf = np.cumsum(q.astype(np.float64), axis=-1)
    u = (1.0 - rng.random(q.shape[:2])) * cdf[..., -1]  # in (0, total]
    ids = (cdf < u[..., None]).sum(axis=-1)
    return np.minimum(ids, q.shape[2] - 1).astype(np.int64)


def sampled_inputs(R, S, V, *, mismatch=1.0, seed=0, scale=LOGIT_SCALE) -> SamplerInputs:
    """Random target logits, q at ``mismatch`` from the target, drafts sampled from q."""
    _check_sizes(R, S, V)
    l = random_target_logits(R, S, V, seed=seed, scale=scale)
    q = draft_probs_near(l, mismatch, seed=seed)
    return SamplerInputs(l, q, sample_draft_tokens(q, seed=seed))


def all_accept_inputs(R=8, S=4, V=VOCAB, *, seed=0) -> SamplerInputs:
    """Every draft accepted on both paths: x = argmax p, q(x) = p(x)/2, the rest scaled up.

    ``p`` is the Exact path's float32 softmax; the Fast path's p(x) differs from it
    by far less than the factor 2 of margin.
    """
    _check_sizes(R, S, V)
    l = random_target_logits(R, S, V, seed=seed)
    p = target_probs(l[:, :S], "exact").astype(np.float64)
    x = p.argmax(axis=-1)
    px = np.take_along_axis(p, x[..., None], axis=-1)
    rest = 1.0 - px
    with np.errstate(invalid="ignore", divide="ignore"):
        factor = np.where(rest > 0, (rest + px / 2) / rest, 1.0)
    q = p * factor
    np.put_along_axis(q, x[..., None], np.where(rest > 0, px / 2, px), axis=-1)
    return SamplerInputs(l, normalise(q), x.astype(np.int64))


def first_reject_inputs(R=2, S=4, V=VOCAB, *, seed=0) -> SamplerInputs:
    """Position 0 rejected on both paths: q(x) > 0 and p(x) = 0 (logit ``REJECT_LOGIT``).

    Later positions are sampled inputs (never reached). Needs V ≥ 2.
    """
    _check_sizes(R, S, V)
    if S < 1 or V < 2:
        raise ValueError(f"first-reject inputs need S ≥ 1 and V ≥ 2, got S = {S}, V = {V}")
    l, q, ids = sampled_inputs(R, S, V, seed=seed)
    x = ids[:, 0]
    l[np.arange(R), 0, x] = np.float32(REJECT_LOGIT)
    return SamplerInputs(round_to_bf16(l), q, ids)


EMPTY_RESIDUAL_MARGIN = 2.0**-12
"""Relative margin of q over the larger of the two paths' p in ``empty_residual_inputs``."""
EMPTY_RESIDUAL_QX = 2.0**-12
"""q(x) of the rejected draft token in ``empty_residual_inputs``."""


def empty_residual_inputs(R=2, S=4, V=VOCAB, *, seed=0) -> SamplerInputs:
    """Position 0 rejected with an all-zero residual ``max(p − q, 0)`` on both paths.

    The draft token x has p(x) = 0 (logit ``REJECT_LOGIT``) and q(x) =
    ``EMPTY_RESIDUAL_QX``; every other token has q = p·(1 + margin), with p the
    larger of the Fast and Exact softmax. The row sums to 1 within the reference's
    tolerance — this is the float32 rounding case in which the sampler draws from p.
    """
    l, q, ids = first_reject_inputs(R, S, V, seed=seed)
    by_path = {path: target_probs(l[:, :1], path)[:, 0] for path in ("exact", "fast")}
    p = np.maximum(by_path["exact"], by_path["fast"])
    q0 = (p.astype(np.float64) * (1 + EMPTY_RESIDUAL_MARGIN)).astype(np.float32)
    q0 = np.where(q0 < p, np.nextafter(q0, np.float32(np.inf)), q0)
    q0[np.arange(R), ids[:, 0]] = np.float32(EMPTY_RESIDUAL_QX)
    q = q.copy()
    q[:, 0] = q0
    for path, pp in by_path.items():
        if (pp > q0).any():
            raise AssertionError(f"empty_residual_inputs: p > q somewhere on the {path} path")
    return SamplerInputs(l, q, ids)


def scenario_inputs(name, *, seed=0, V=None) -> SamplerInputs:
    """Inputs of the test point ``name`` ("all-accept" or "first-reject")."""
    if name not in TEST_POINTS:
        raise ValueError(f"name must be one of {sorted(TEST_POINTS)}, got {name!r}")
    tp = TEST_POINTS[name]
    V = tp.V if V is None else V
    make = all_accept_inputs if name == "all-accept" else first_reject_inputs
    return make(tp.R, tp.S, V, seed=seed)
