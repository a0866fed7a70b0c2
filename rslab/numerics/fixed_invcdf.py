"""The inverse CDF over exact fixed-point sums: a Fast-path draw with a χ² bound on every row.

The draw (``method="fixed"``, ``noise="u96"``)
----------------------------------------------
A row of float32 weights ``w_i ≥ 0`` (V tokens, zero-padded to blocks of 128,
the sampler's vectors) is drawn in two levels, each an exact inverse CDF:

1. **the block.** ``B_b`` = the core's float32 sum of block b, the cross-lane
   unit's pairwise tree (:func:`rslab.numerics.invcdf.tree_sum`, what the
   inverse CDF's pass already stores). With E the exponent of ``max_b B_b``
   (``max ∈ [2^E, 2^(E+1))``) each is quantised to ``c_b = ⌊B_b·2^(F−E)⌋``
   (``F = FRACTION_BITS = 62``, so ``c_b < 2^63``, the largest ``≥ 2^62``);
   ``U₁`` = the row's words of tokens 0, 1, 2 as ``w₀·2^64 + w₁·2^32 + w₂``; the
   block is the first b whose exact prefix ``C_b = c_0 + … + c_b`` exceeds
   ``X₁ = ⌊U₁·Q₁/2^96⌋`` (``Q₁ = Σ c_b``);
2. **the token.** Inside that block the same rule on its own weights: E the
   exponent of the block's largest weight, ``t_l = ⌊w_l·2^(F−E)⌋``, ``U₂`` from
   the words of tokens 3, 4, 5, the lane is the first whose prefix exceeds
   ``⌊U₂·Q₂/2^96⌋``.

A block or a lane whose quantised value is 0 owns no X and is never drawn; a row
of zeros is empty (:data:`EMPTY`; the sampler then draws from p). Everything
after the float32 block sums is integer arithmetic, so any exact way of summing
(16-bit limbs under ``vred.add``, words with carries) gives the same token. The
quantisation on the core, for ``x ≤ 2^E·2`` (:func:`quantise_words`):
``y = x·2^(30−E)`` (one or two exact power-of-two multiplies), ``hi = f2u(y)``,
``lo = f2u((y − u2f(hi))·2^32)``, ``c = hi·2^32 + lo``, every step exact.

Error model and guarantee
-------------------------
Write ``p_i = w_i/W``, ``π_b = W_b/W`` (exact block masses), ``ρ_l = w_l/W_b``.

* The float32 block sums: the tree has depth 7 and adds non-negative terms, so
  ``B_b = W_b(1 + η_b)`` with ``|η_b| ≤ γ = 7u/(1 − 7u)``, ``u = 2^-24`` (each add
  rounds once, relatively; a subnormal add is exact). Then
  ``π'_b = B_b/ΣB = π_b(1 + η_b)/(1 + η̄)`` and ``χ²(π' ‖ π) = Var_π(η)/(1 + η̄)² ≤ (γ/(1−γ))²``.
* One exact fixed-point level over n values with ``S = s·W`` quanta in all (s the
  scale) and a b-bit uniform, ``L = 2^b``: the law is exactly
  ``N_i/L``, ``N_i = ⌈C_i·L/Q⌉ − ⌈C_{i−1}·L/Q⌉``, with ``|N_i/L − c_i/Q| < 1/L``
  (lattice) and ``c_i = x_i·s − ε_i``, ``ε_i ∈ [0, 1)``, ``Q = S − E``, ``E < n``,
  so ``|c_i/Q − p_i| = |p_i·E − ε_i|/Q < max(p_i·n, 1)/Q``. Above the floor
  ``φ = 1/S`` (``c_i ≥ 1``): ``|P_i − p_i| < α·p_i + β``, ``α = n/Q``,
  ``β = 1/Q + 1/L`` — a relative error below ``α + β/p_i``; below it the
  values are never drawn and hold less than ``n₀/S`` of the mass. With
  ``1/p_i ≤ S`` above the floor and ``β > 1/S``:
  ``χ² < n₀/S + β²·n₁·S + α² + 2αβ·n₁ ≤ K(n, S) = β²·n·S + α² + 2αβ·n``
  (:func:`level_bound`).
* The quanta of a level lie in ``2^F ≤ S < n·2^(F+1)`` (the largest value alone; every
  value just below ``2^(F+1)``). K is convex in S for S > n (its terms in ``1/(S − n)``
  are convex there, the lattice's ``n·S/L²`` is linear), so over that range it is largest
  at one end:
  ``K*(n) = max(K(n, 2^F), K(n, n·2^(F+1)))`` (:func:`worst_level_bound`). The smallest
  S is the worse end once ``b ≥ F + (log2(n) + 1)/2`` (where the lattice's term at the top
  end, ``n·S_top/2^(2b)``, falls below the quantisation's at the smallest): at F = 62 and
  b = 96, for every n below 2^67; a narrower uniform puts the worst at the top end.
* The block level: χ² is a squared norm, ``‖x‖²_π = Σ x_b²/π_b``, so with
  ``π'/π ≤ (1+γ)/(1−γ)``: ``√χ²(π̂ ‖ π) ≤ √((1+γ)/(1−γ)·K*(n_b)) + γ/(1−γ)``.
* The two levels: ``1 + χ²(P ‖ p) = Σ_b (π̂_b²/π_b)(1 + χ²(ρ̂_b ‖ ρ_b))``, so
  ``χ² ≤ χ²₁ + K₂ + χ²₁·K₂`` with ``K₂ = K*(128)`` (:func:`chi2_bound`).

For V = 154,880 (1,210 blocks): ``χ² ≤ 1.88·10^-13`` for **every** row of the draw's
domain — weights in [0, 2^120] (:data:`MAX_WEIGHT`: above it a block's float32 sum could
overflow; :func:`check_weights` refuses such a row) with a positive total — whatever its
scale inside that range, its order or its tail (:data:`GUARANTEE`). The float32 block
sums' term ``(γ/(1−γ))²`` is 93 % of it, and a row whose block sums round down and up in
turn attains that term (:func:`rslab.numerics.adversary.rounding_row`). The target is
``w/Σw`` of the float32 weights the core computed: their own error (the SFU's exp2) is not
the draw's.

``fraction_bits`` and ``uniform_bits`` are parameters so that the tests can
enumerate every uniform of a narrow version of the same draw.
"""

from __future__ import annotations

import math

import numpy as np

from rslab.numerics.invcdf import LANES, tree_sum

FRACTION_BITS = 62
"""F: the largest value of a level becomes an integer in [2^62, 2^63)."""
UNIFORM_WORDS = 3
UNIFORM_BITS = 32 * UNIFORM_WORDS
"""b: each level's uniform, three of the row's words (more than log2 Q + 14)."""
WORDS_PER_ROW = 2 * UNIFORM_WORDS
"""The row's words of tokens 0–2 choose the block, 3–5 the lane."""
MAX_WEIGHT = 2.0**120
"""Weights above this could make a block's float32 sum overflow."""
TREE_DEPTH = 7
UNIT_ROUNDOFF = 2.0**-24
EMPTY = -1
"""The token of a row of zeros (as :data:`rslab.draws.EMPTY`)."""
_WORD = (1 << 32) - 1


def check_weights(w) -> np.ndarray:
    """``w`` as a float32 array [V] or [R, V] of finite weights in [0, 2^120], else
    ``ValueError`` naming it."""
    w = np.asarray(w)
    if w.dtype != np.float32 or w.ndim not in (1, 2) or w.shape[-1] < 1:
        raise ValueError(f"w must be a float32 array [V] or [R, V], got {w.dtype} {w.shape}")
    if not np.all((w >= 0) & (w <= MAX_WEIGHT)):
        raise ValueError("w must hold weights in [0, 2^120] (no NaN, no inf)")
    return w


def max_exponent(x) -> int:
    """E with ``max(x) ∈ [2^E, 2^(E+1))`` (x float32, not all zero)."""
    return int(np.frexp(np.float64(np.max(x)))[1]) - 1


def quantise(x, fraction_bits: int = FRACTION_BITS, exponent: int | None = None) -> np.ndarray:
    """``⌊x·2^(F−E)⌋`` as uint64 (exact: in float64 the product and its floor are exact); E is
    ``exponent`` if given (a split row's cores share the row's E, that of the largest block
    sum, whose exponent is at least each of ``x``'s), else :func:`max_exponent` of ``x``."""
    if not 1 <= fraction_bits <= FRACTION_BITS:
        raise ValueError(f"fraction_bits must lie in [1, {FRACTION_BITS}], got {fraction_bits}")
    x = np.asarray(x, np.float32)
    e = max_exponent(x) if exponent is None else exponent
    if exponent is not None and np.any(x) and exponent < max_exponent(x):
        raise ValueError(f"exponent {exponent} is below the exponent of max(x)")
    return np.floor(x.astype(np.float64) * 2.0 ** (fraction_bits - e)).astype(np.uint64)


def quantise_words(x) -> tuple[np.ndarray, np.ndarray]:
    """The core's route to :func:`quantise` (F = 62) in float32 and uint32 steps: ``y =
    x·2^(30−E)`` in two exact multiplies, ``hi = f2u(y)``, ``lo = f2u((y − u2f(hi))·2^32)``.
    Below 2^24, ``hi`` converts back exactly and the difference is y's fraction; from 2^24
    on, y is an integer."""
    x = np.asarray(x, np.float32)
    k = 30 - max_exponent(x)
    first = min(k, 127)
    y = x * np.float32(2.0**first) * np.float32(2.0 ** (k - first))
    hi = np.trunc(y).astype(np.uint32)
    frac = (y - hi.astype(np.float32)) * np.float32(2.0**32)
    return hi, np.trunc(frac).astype(np.uint32)


def uniform_integers(words) -> list[tuple[int, int]]:
    """``(U₁, U₂)`` per row of ``words`` [R, 6] (uint32): words 0–2 and 3–5, high first."""
    words = np.asarray(words)
    if words.ndim != 2 or words.shape[1] != WORDS_PER_ROW or words.dtype != np.uint32:
        raise ValueError(f"words must be uint32 [R, {WORDS_PER_ROW}], got "
                         f"{words.dtype} {words.shape}")
    out = []
    for row in words:
        a, b, c, d, e, f = (int(x) for x in row)
        out.append(((a << 64) | (b << 32) | c, (d << 64) | (e << 32) | f))
    return out


def prefix_words(c) -> tuple[np.ndarray, np.ndarray]:
    """The exact prefix sums ``C_i = A_i·2^32 + B_i`` (``B_i < 2^32``) of uint64 values."""
    hi = np.cumsum(c >> np.uint64(32), dtype=np.uint64)
    lo = np.cumsum(c & np.uint64(_WORD), dtype=np.uint64)
    return hi + (lo >> np.uint64(32)), lo & np.uint64(_WORD)


def total(c) -> int:
    """``Q = Σ c`` exactly."""
    c = np.asarray(c, np.uint64)
    return (int(np.sum(c >> np.uint64(32), dtype=np.uint64)) << 32) + int(
        np.sum(c & np.uint64(_WORD), dtype=np.uint64))


def pick(c, u: int, uniform_bits: int = UNIFORM_BITS) -> int:
    """The first i with ``C_i > ⌊u·Q/2^b⌋`` for uint64 values ``c`` (``Q > 0``)."""
    x = (u * total(c)) >> uniform_bits
    a, b = prefix_words(c)
    xa, xb = np.uint64(x >> 32), np.uint64(x & _WORD)
    i1 = int(np.searchsorted(a, xa, side="left"))
    i2 = int(np.searchsorted(a, xa, side="right"))
    return i1 + int(np.searchsorted(b[i1:i2], xb, side="right"))


def blocks(w) -> np.ndarray:
    """One row [V] as its blocks [nb, 128], zero-padded."""
    nb = -(-w.size // LANES)
    out = np.zeros(nb * LANES, np.float32)
    out[:w.size] = w
    return out.reshape(nb, LANES)


def row_token(w, u1: int, u2: int, fraction_bits: int = FRACTION_BITS,
              uniform_bits: int = UNIFORM_BITS) -> int:
    """The token of one row ``w`` [V] for the level uniforms ``u1, u2 ∈ [0, 2^b)``."""
    blk = blocks(w)
    sums = tree_sum(blk)
    if not sums.max() > 0:
        return EMPTY
    b = pick(quantise(sums, fraction_bits), u1, uniform_bits)
    return LANES * b + pick(quantise(blk[b], fraction_bits), u2, uniform_bits)


def fixed_tokens(w, words) -> np.ndarray:
    """The draw's token per row of ``w`` [R, V] for the row's words [R, 6]."""
    w = check_weights(w)
    if w.ndim != 2:
        raise ValueError(f"w must be rows [R, V], got shape {w.shape}")
    us = uniform_integers(words)
    if len(us) != w.shape[0]:
        raise ValueError(f"words must have one row per row of w ({w.shape[0]}), got {len(us)}")
    return np.array([row_token(w[r], *us[r]) for r in range(w.shape[0])], np.int64)


def level_bounds(x, fraction_bits: int = FRACTION_BITS,
                 uniform_bits: int = UNIFORM_BITS) -> np.ndarray:
    """``⌈C_i·2^b/Q⌉`` for each value i of ``x`` (object ints): the uniforms ``U`` below it
    give a value up to i, so value i takes the uniforms from the bound before it to its own."""
    c = quantise(x, fraction_bits)
    big_q = total(c)
    a, b = prefix_words(c)
    prefix = a.astype(object) * (1 << 32) + b.astype(object)
    return -((-prefix * (1 << uniform_bits)) // big_q)


def level_counts(x, fraction_bits: int = FRACTION_BITS,
                 uniform_bits: int = UNIFORM_BITS) -> np.ndarray:
    """How many of the 2^b uniforms give each of the values ``x`` (object ints):
    ``N_i = ⌈C_i·2^b/Q⌉ − ⌈C_{i−1}·2^b/Q⌉``, since ``U`` gives a value before i iff
    ``U·Q < C_{i−1}·2^b``."""
    return np.diff(level_bounds(x, fraction_bits, uniform_bits), prepend=0)


def exact_counts(w, fraction_bits: int = FRACTION_BITS,
                 uniform_bits: int = UNIFORM_BITS) -> tuple[np.ndarray, int]:
    """``(N, 2^(2b))``: how many of the uniform pairs give each token of one row ``w`` [V]."""
    w = check_weights(w)
    if w.ndim != 1:
        raise ValueError(f"w must be one row [V], got shape {w.shape}")
    blk = blocks(w)
    sums = tree_sum(blk)
    if not sums.max() > 0:
        raise ValueError("w: the row has no positive weight (the draw sees it empty)")
    per_block = level_counts(sums, fraction_bits, uniform_bits)
    counts = np.zeros(blk.shape, object)
    for b in np.flatnonzero(per_block != 0):
        counts[b] = per_block[b] * level_counts(blk[b], fraction_bits, uniform_bits)
    return counts.reshape(-1)[:w.size], 1 << (2 * uniform_bits)


def exact_probs(w) -> np.ndarray:
    """The draw's exact law on one row (float64, each count over 2^192 rounded once)."""
    counts, scale = exact_counts(w)
    return np.array([n / scale for n in counts], np.float64)


def exact_chi2(w, fraction_bits: int = FRACTION_BITS, uniform_bits: int = UNIFORM_BITS) -> float:
    """χ²(P ‖ w/Σw) of one row: each term ``(N_i·W − w_i·L)²/w_i`` in exact integers (weights
    scaled by 2^200), one correctly rounded division per token, an exact-sum of the terms."""
    counts, scale = exact_counts(w, fraction_bits, uniform_bits)
    m, e = np.frexp(w.astype(np.float64))  # w = m·2^e, m·2^24 an integer
    wi = [int(mm * 2**24) << int(ee + 176) if mm else 0 for mm, ee in zip(m, e, strict=True)]
    big_w = sum(wi)
    terms = [(n * big_w - x * scale) ** 2 / x for n, x in zip(counts, wi, strict=True) if x]
    return math.fsum(terms) / scale / scale / big_w


def level_bound(n: int, quanta: float, uniform_bits: int = UNIFORM_BITS) -> float:
    """``K(n, S)``: one exact level's χ² bound for n positive values and S quanta in all
    (``inf`` where ``S ≤ n``, beyond the bound's reach)."""
    if quanta <= n:
        return float("inf")
    q_lo = quanta - n
    alpha, beta = n / q_lo, 1 / q_lo + 2.0**-uniform_bits
    return beta**2 * n * quanta + alpha**2 + 2 * alpha * beta * n


def quanta_range(n: int, fraction_bits: int = FRACTION_BITS) -> tuple[float, float]:
    """The range of a level's quanta S over n values: from ``2^F`` (the largest value alone)
    to ``n·2^(F+1)`` (every value just below ``2^(F+1)``, not reached)."""
    return 2.0**fraction_bits, n * 2.0 ** (fraction_bits + 1)


def worst_level_bound(n: int, fraction_bits: int = FRACTION_BITS,
                      uniform_bits: int = UNIFORM_BITS) -> float:
    """``K*(n)``: :func:`level_bound` at the worst S of :func:`quanta_range` (K is convex in
    S, so the worst is one of its ends)."""
    return max(level_bound(n, s, uniform_bits) for s in quanta_range(n, fraction_bits))


def chi2_bound(vocab: int, fraction_bits: int = FRACTION_BITS,
               uniform_bits: int = UNIFORM_BITS) -> float:
    """The bound on χ²(P ‖ w/Σw) for every row of ``vocab`` tokens (module docstring)."""
    n_blocks = -(-int(vocab) // LANES)
    g = TREE_DEPTH * UNIT_ROUNDOFF / (1 - TREE_DEPTH * UNIT_ROUNDOFF)
    k1 = worst_level_bound(n_blocks, fraction_bits, uniform_bits)
    chi1 = (math.sqrt((1 + g) / (1 - g) * k1) + g / (1 - g)) ** 2
    k2 = worst_level_bound(min(LANES, int(vocab)), fraction_bits, uniform_bits)
    return chi1 + k2 + chi1 * k2


GUARANTEE = chi2_bound(154_880)
"""The bound at the note's vocabulary, 1.88·10^-13."""
