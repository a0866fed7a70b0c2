"""The softmax's float32 sum as a row split over cores computes it: its order, stated.

A kernel sums ``s = Σ exp2((l − m)·LOG2E)`` in its own order, and a float32 sum depends
on the order. :class:`SplitSum` states the order of the chip's split-row kernels
(:mod:`rslab.kernels.sampler.chip_program`), and :func:`split_softmax` computes, in that
order and bit for bit, what they compute, so that the reference
(``rejection_sample(..., split=)``) can draw the kernels' tokens:

1. **a part** (one core's slice of the row, elements ``bounds[k]`` … ``bounds[k+1] − 1``)
   is read as float32 vectors of 128 lanes; vector j goes to accumulator ``j mod workers``,
   each accumulator adds its vectors in order, lane by lane (the sum-exp loop's
   loop-carried sums); the accumulators are added pairwise, level by level
   (``(A0 + A1) + (A2 + A3)``), and the lanes of the result by the cross-lane unit's
   tree (:func:`rslab.numerics.invcdf.tree_sum`): the part's ``s_k``;
2. **the merge** over the parts, whose partial values sit in the lanes of one vector of the
   exchange (lane k: part k):

   * ``max-first``: the row max m is merged first (exact: a max is a max in any order), every
     part computes its ``e`` with it, and ``s = tree_sum(s_0, s_1, …)``;
   * ``online``: every part computes its own max ``m_k`` (``−FLT_MAX`` for a part of −∞
     logits) and its ``s_k`` with it, in one pass; then ``m = max m_k``, ``f_k =
     exp2((m_k − m)·LOG2E)`` (the path's exp2), ``s = tree_sum(f_k·s_k)``; a part's
     probabilities are its own ``e`` times ``f_k·(1/s)`` (one rounding more than
     ``e·(1/s)``).

``1/s`` is the SFU's reciprocal, correctly rounded, as everywhere. The acceptance
probability of the draft token is ``exp2((l_x − m)·LOG2E)·(1/s)`` in both merges (every core
computes it from the merged m and s).

A single part (``bounds = (0, V)``) is the one-core sampler's own order: the reference can
state that too.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rslab.numerics.fastlog import LOG2E
from rslab.numerics.invcdf import LANES, tree_sum

MERGES = ("max-first", "online")
FLT_LOWEST = np.float32(np.finfo(np.float32).min)


@dataclass(frozen=True)
class SplitSum:
    """A row split into parts at ``bounds`` (0 = bounds[0] < … < bounds[-1] = V, every inner
    bound a multiple of 128), summed with ``workers`` accumulators each, merged ``merge``."""

    bounds: tuple
    merge: str = "max-first"
    workers: int = 4

    def __post_init__(self):
        b = tuple(int(x) for x in self.bounds)
        object.__setattr__(self, "bounds", b)
        if len(b) < 2 or b[0] != 0 or any(y <= x for x, y in zip(b, b[1:], strict=False)):
            raise ValueError(f"bounds must rise from 0 to V, got {self.bounds!r}")
        if any(x % LANES for x in b[1:-1]):
            raise ValueError(f"bounds: every inner bound must be a multiple of {LANES}, "
                             f"got {self.bounds!r}")
        if len(b) - 1 > LANES:
            raise ValueError(f"bounds: at most {LANES} parts (one exchange vector), "
                             f"got {len(b) - 1}")
        if self.merge not in MERGES:
            raise ValueError(f"merge must be one of {MERGES}, got {self.merge!r}")
        if not isinstance(self.workers, int) or self.workers < 1:
            raise ValueError(f"workers must be a positive integer, got {self.workers!r}")

    @property
    def parts(self) -> int:
        return len(self.bounds) - 1

    @property
    def vocab(self) -> int:
        return self.bounds[-1]


def even_split(vocab: int, parts: int, unit: int = 512, merge: str = "max-first") -> SplitSum:
    """``vocab`` in ``parts`` slices of whole ``unit``s as even as can be (the first ones a unit
    longer), the last ending at ``vocab`` (an empty part is left out)."""
    units = -(-vocab // unit)
    sizes = [units // parts + (k < units % parts) for k in range(parts)]
    bounds = [0]
    for n in sizes:
        if n:
            bounds.append(min(vocab, bounds[-1] + n * unit))
    return SplitSum(tuple(bounds), merge)


def part_sum(e, workers: int) -> np.ndarray:
    """One part's float32 sum of ``e`` [n, width] (rows), in the kernel's order (step 1)."""
    n, width = e.shape
    vectors = -(-width // LANES)
    padded = np.zeros((n, vectors * LANES), np.float32)
    padded[:, :width] = e
    padded = padded.reshape(n, vectors, LANES)
    acc = np.zeros((n, workers, LANES), np.float32)
    for j in range(vectors):
        acc[:, j % workers] += padded[:, j]
    level = [acc[:, w] for w in range(workers)]
    while len(level) > 1:
        nxt = [level[i] + level[i + 1] for i in range(0, len(level) - 1, 2)]
        level = nxt + ([level[-1]] if len(level) % 2 else [])
    return tree_sum(level[0])


def _exp(logits, m, exp2) -> np.ndarray:
    """``exp2((l − m)·LOG2E)``, 0 where that is −∞ (as the reference's)."""
    with np.errstate(invalid="ignore", over="ignore"):
        z = (logits - m) * LOG2E
    e = exp2(z)
    e[z == -np.inf] = 0
    return e


def split_softmax(logits, exp2, split: SplitSum) -> tuple:
    """``(m, s, p, e)`` of float32 rows ``logits`` [n, V] as the split kernel computes them:
    the row max and the sum ([n, 1]), the probabilities a part computes for its own
    elements, and the numerators with the merged max (``e[x]·(1/s)`` is the draft token's
    acceptance probability)."""
    l = np.asarray(logits, np.float32)
    if l.ndim != 2 or l.shape[1] != split.vocab:
        raise ValueError(f"logits must be rows [n, {split.vocab}], got shape {l.shape}")
    b = split.bounds
    m = l.max(axis=-1, keepdims=True)
    e = _exp(l, m, exp2)
    if split.merge == "max-first":
        partial = np.stack([part_sum(e[:, lo:hi], split.workers)
                            for lo, hi in zip(b, b[1:], strict=False)], axis=-1)
        s = tree_sum(_lanes(partial))[:, None]
        return m, s, e * (np.float32(1) / s), e
    local = [np.maximum(l[:, lo:hi].max(axis=-1, keepdims=True), FLT_LOWEST)
             for lo, hi in zip(b, b[1:], strict=False)]
    es = [_exp(l[:, lo:hi], mk, exp2) for (lo, hi), mk in zip(zip(b, b[1:], strict=False),
                                                               local, strict=True)]
    sums = np.stack([part_sum(ek, split.workers) for ek in es], axis=-1)
    mk = np.concatenate(local, axis=-1)
    with np.errstate(invalid="ignore", over="ignore"):
        f = exp2((mk - m) * LOG2E)
    s = tree_sum(_lanes(f * sums))[:, None]
    rinv = np.float32(1) / s
    p = np.concatenate([ek * (f[:, k:k + 1] * rinv) for k, ek in enumerate(es)], axis=-1)
    return m, s, p, e


def _lanes(values) -> np.ndarray:
    """Per-part values [n, parts] in the first lanes of a 128-lane vector, zeros after."""
    out = np.zeros((values.shape[0], LANES), np.float32)
    out[:, :values.shape[1]] = values
    return out
