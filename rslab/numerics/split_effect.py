"""How often the order of a split row's float32 sum changes a token: exactly, per row.

A split row (:mod:`rslab.numerics.split_sum`) draws its bonus token as one core does (the
row max and the fixed-point draw's integer sums merge exactly), but its acceptance test and
its residual weights go through the float32 sum ``s``, whose value depends on the order of
the additions. Two orders give two samplers that read the *same* random words; this module
counts, exactly, the words on which they emit different outcomes at one position (draft
token x, its q row, the target's logits):

* **the decision**: ``accept = q(x) > 0 and fl(u·q(x)) < p(x)``, u on the lattice of
  2^24 uniforms (:func:`rslab.numerics.rng.uniform_from_index`); ``fl(u·q)`` rises with u,
  so each p accepts a prefix of the lattice and the decisions differ on
  ``|A(p₁) − A(p₂)|`` of its points (:func:`acceptance_flips`);
* **the residual token**, when both reject: the fixed-point inverse CDF
  (:mod:`rslab.numerics.fixed_invcdf`) gives value i of a level to the uniforms of one
  interval of integers, so two rows draw the same token on
  ``Σ_b |I_b ∩ I'_b| · Σ_l |J_bl ∩ J'_bl|`` of the 2^192 uniform pairs (blocks b, lanes l;
  :func:`residual_same`), in exact integers. An empty residual row (no positive block sum)
  draws from p, as the sampler does.

:func:`change` combines them: the probability that the two orders emit different outcomes
at the position (a flipped decision, or the same rejection with different tokens), exact
for the row; over random rows it is a mean of exact values.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from rslab.numerics import fixed_invcdf as fx
from rslab.numerics.fastlog import LOG2E
from rslab.numerics.invcdf import tree_sum
from rslab.numerics.rng import UNIFORM_BITS, uniform_from_index
from rslab.numerics.split_sum import even_split, split_softmax

LATTICE = 1 << UNIFORM_BITS


def accepted(qx, px) -> int:
    """How many lattice uniforms accept: ``fl(u·qx) < px`` (``qx > 0``), a prefix."""
    q, p = np.float32(qx), np.float32(px)
    lo, hi = 0, LATTICE  # the first index that rejects lies in [lo, hi]
    while lo < hi:
        mid = (lo + hi) // 2
        if uniform_from_index(np.array([mid]))[0] * q < p:
            lo = mid + 1
        else:
            hi = mid
    return lo


def acceptance_flips(qx, p1, p2) -> int:
    """Lattice uniforms on which ``p1`` and ``p2`` decide differently (0 when q(x) = 0)."""
    if not np.float32(qx) > 0:
        return 0
    return abs(accepted(qx, p1) - accepted(qx, p2))


def _overlaps(a, b) -> np.ndarray:
    """Per value, the uniforms both interval families give it (bounds as from
    :func:`~rslab.numerics.fixed_invcdf.level_bounds`)."""
    lo = np.maximum(np.concatenate([[0], a[:-1]]), np.concatenate([[0], b[:-1]]))
    return np.maximum(np.minimum(a, b) - lo, 0)


def _residual(p, q) -> np.ndarray:
    """The fixed draw's residual weights, or p for a row it sees empty."""
    w = np.maximum(p - q, np.float32(0))
    return w if tree_sum(fx.blocks(w)).max() > 0 else p


def residual_same(w1, w2) -> Fraction:
    """The probability that the fixed draw gives the same token on rows ``w1`` and ``w2``
    with the same uniforms (both rows non-empty)."""
    b1, b2 = fx.blocks(w1), fx.blocks(w2)
    same = _overlaps(fx.level_bounds(tree_sum(b1)), fx.level_bounds(tree_sum(b2)))
    total = 0
    for b in np.flatnonzero(same != 0):
        if np.array_equal(b1[b], b2[b]):
            total += same[b] << fx.UNIFORM_BITS
            continue
        lanes = _overlaps(fx.level_bounds(b1[b]), fx.level_bounds(b2[b]))
        total += same[b] * int(sum(lanes))
    return Fraction(int(total), 1 << (2 * fx.UNIFORM_BITS))


def change(px1, px2, qx, p1, p2, q) -> dict:
    """The probability that two orders (``px``: the draft token's p, ``p``: the row's) emit
    different outcomes at one position: ``decision`` (the lattice share of flipped
    decisions), ``residual`` (given both reject, the share of different tokens) and their
    combination ``total``."""
    flips = acceptance_flips(qx, px1, px2)
    both = max(accepted(qx, px1), accepted(qx, px2)) if np.float32(qx) > 0 else 0
    reject = LATTICE - both
    differ = 1 - residual_same(_residual(p1, q), _residual(p2, q))
    return {"decision": flips / LATTICE, "residual": float(differ),
            "total": float(Fraction(flips, LATTICE) + Fraction(reject, LATTICE) * differ)}


def order_probs(logits, exp2, order) -> tuple:
    """``(p, e·(1/s))`` of one logits row summed in ``order``: a
    :class:`~rslab.numerics.split_sum.SplitSum`, or None for NumPy's float32 sum (the
    reference's default)."""
    row = np.asarray(logits, np.float32)[None]
    if order is None:
        m = row.max(axis=-1, keepdims=True)
        with np.errstate(invalid="ignore", over="ignore"):
            z = (row - m) * LOG2E
        e = exp2(z)
        e[z == -np.inf] = 0
        p = e * (np.float32(1) / e.sum(axis=-1, dtype=np.float32, keepdims=True))
        return p[0], p[0]
    _, s, p, e = split_softmax(row, exp2, order)
    return p[0], (e * (np.float32(1) / s))[0]


def row_change(logits, q, x: int, exp2, first, second) -> dict:
    """:func:`change` at one position (target ``logits`` [V], draft ``q`` [V], draft token
    ``x``) between two orders of the sum (:func:`order_probs`)."""
    p1, pe1 = order_probs(logits, exp2, first)
    p2, pe2 = order_probs(logits, exp2, second)
    q = np.asarray(q, np.float32)
    return change(pe1[x], pe2[x], q[x], p1, p2, q)


def order_changes(inputs, orders: dict, base, exp2, positions: int) -> dict:
    """Per named order of ``orders``, how it changes the outcome against ``base`` over the
    first ``positions`` positions (r, s) of ``inputs`` (target logits, draft q, draft ids):
    the mean and largest exact probability, the positions it can change at all, the mean
    probability of a flipped decision, and the probability at each position (``per_position``)."""
    l, q, ids = inputs
    R, S = np.shape(ids)
    where = [(r, s) for r in range(R) for s in range(S)][:positions]
    out = {}
    for name, order in orders.items():
        c = [row_change(l[r, s], q[r, s], int(ids[r, s]), exp2, base, order) for r, s in where]
        total = np.array([x["total"] for x in c])
        out[name] = {"mean": float(total.mean()), "max": float(total.max()),
                     "positions_changed": int((total > 0).sum()), "positions": len(c),
                     "decision_mean": float(np.mean([x["decision"] for x in c])),
                     "per_position": total.tolist()}
    return out


def merge_orders(vocab: int) -> dict:
    """The orders of the sum compared with one core's: NumPy's (the reference's default), a
    row split over 16 cores (max-first, online) and over 64."""
    return {"numpy": None, "split16": even_split(vocab, 16),
            "split16-online": even_split(vocab, 16, merge="online"),
            "split64": even_split(vocab, 64)}
