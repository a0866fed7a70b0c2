"""The inverse-CDF draw of one token from a weight row, with the float32 sums the core computes.

A row of weights ``w ≥ 0`` (float32, V tokens, zero-padded to whole vectors) is
cut into *blocks* of 128 tokens (one float32 vector each) and the blocks into
*groups* of 128 blocks. The core computes, in this order and in float32:

1. ``B_j`` = the cross-lane unit's sum of block j (``vred.add``: a fixed pairwise
   tree, lane l + lane l + 64, then + 32, …);
2. ``G_k`` = the same tree over the block sums of group k (zero-padded);
3. ``D_k = D_{k−1} + G_k`` (scalar adds, ``D_{−1} = 0``); the row total is
   ``Σ = D_{last}``;
4. ``x = u₁·Σ``, and ``x_e = min(x, Σ⁻)`` with ``Σ⁻`` the float32 just below Σ
   (``u₁·Σ`` can round up to Σ itself);
5. the group ``k = #{D ≤ x_e}``, its remainder ``r₁ = x_e − D_{k−1}``;
6. inside group k, the inclusive lane scan ``S`` of its block sums (Hillis–Steele:
   seven steps ``S_l += S_{l−2^i}``); the block is the first lane with
   ``S_l > r₁`` among the positive ones, else the last positive one;
   ``r₂ = r₁ − S_{block−1}`` (``S_{−1} = 0``);
7. inside that block, the lane scan of its weights, and the token is the first
   positive lane with ``S_l > r₂``, else the last positive lane.

``noise=`` selects the uniforms (rows of :mod:`rslab.randomness`):

* ``u24``: one 24-bit uniform ``u₁`` (the row's word of token 0) does all of it,
  as a single inverse CDF: every token's chance is a multiple of 2^-24.
* ``wide``: ``u₁`` chooses the block (steps 1–6) and a second
  uniform ``u₂`` (word of token 1) the token inside it, with
  ``r₂ = u₂ · S_127`` of the block's own scan: the token is resolved to 2^-24 of
  its block's mass instead of the row's (48 random bits in all).
* ``wide48`` (the default): ``u₁`` chooses the block; inside it a 48-bit integer
  ``K = hi·2^24 + lo`` (the top 24 bits of the words of tokens 1 and 2) is read
  from *both* ends of the block around its heaviest lane h: with
  ``a = fl(K·2^-48)``, ``b = fl((2^48 − K)·2^-48)`` (each rounded once) and the
  prefix scan S and suffix scan Q of the block's weights, the token is the first
  positive lane below h with ``S_l > a·S_127`` if ``a·S_127 < S_{h−1}``; else the
  last positive lane above h with ``Q_l > b·S_127`` if ``b·S_127 < Q_{h+1}``; else h
  (falling back to the lane next to h on each side). No sum holds h, so a token is
  resolved against the lanes before it on its side: to its own size when they are
  light, to whole float32 steps of their sum when another heavy lane is among them.

Every step is monotone in ``u``, so each token owns an interval of lattice
uniforms and :func:`exact_law` counts them exactly.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from rslab.numerics.montecarlo import lattice_uniforms
from rslab.numerics.rng import UNIFORM_BITS

LANES = 128
"""Tokens per block (one float32 vector) and blocks per group."""
SCAN_STEPS = 7
INVCDF_NOISES = ("u24", "wide", "wide48")
WIDE_BITS = 48
DEFAULT_INVCDF_NOISE = "wide48"


def check_invcdf_noise(noise) -> str:
    """``noise`` if it names an inverse-CDF variant, else ``ValueError`` naming the argument."""
    if noise not in INVCDF_NOISES:
        raise ValueError(f"noise must be one of {INVCDF_NOISES} for method 'invcdf', "
                         f"got {noise!r}")
    return noise


def words_per_row(noise: str) -> int:
    """Random words the variant reads per row: tokens 0, 1, … of the row's stream."""
    return {"u24": 1, "wide": 2, "wide48": 3}[check_invcdf_noise(noise)]


def tree_sum(x) -> np.ndarray:
    """float32 sum over the last axis (128 lanes) in the cross-lane unit's pairwise order."""
    x = np.array(x, dtype=np.float32)
    n = x.shape[-1]
    while n > 1:
        h = (n + 1) // 2
        x[..., :n - h] += x[..., h:n]
        n = h
    return x[..., 0]


def lane_scan(x) -> np.ndarray:
    """Inclusive float32 prefix over the last axis, Hillis–Steele: ``S_l += S_{l−2^i}``."""
    s = np.array(x, dtype=np.float32)
    for i in range(SCAN_STEPS):
        d = 1 << i
        shifted = s[..., :-d].copy()
        s[..., d:] += shifted
    return s


def blocks_of(w, size: int = LANES) -> np.ndarray:
    """Zero-pad the last axis to a multiple of ``size`` and split it into ``(…, n, size)``
    (``w``'s dtype kept): a row of V tokens as its whole vectors of 128."""
    w = np.asarray(w)
    n = -(-w.shape[-1] // size)
    pad = np.zeros(w.shape[:-1] + (n * size,), w.dtype)
    pad[..., :w.shape[-1]] = w
    return pad.reshape(w.shape[:-1] + (n, size))


@dataclass(frozen=True)
class Prefix:
    """The float32 sums of rows of weights (leading axis: rows)."""

    blocks: np.ndarray  # [R, nb, 128] weights
    block_sums: np.ndarray  # [R, ng, 128] B, zero-padded to whole groups
    group_prefix: np.ndarray  # [R, ng] D

    @property
    def total(self) -> np.ndarray:
        return self.group_prefix[:, -1]


def prefix(w) -> Prefix:
    """Block sums, group sums and the group prefix of rows ``w`` [R, V] (float32, ``w ≥ 0``)."""
    w = np.asarray(w)
    if w.dtype != np.float32 or w.ndim != 2 or w.shape[1] < 1:
        raise ValueError(f"w must be a float32 array [R, V], got {w.dtype} {w.shape}")
    blocks = blocks_of(w)
    sums = blocks_of(tree_sum(blocks))
    return Prefix(blocks, sums, np.cumsum(tree_sum(sums), axis=-1, dtype=np.float32))


def below(total) -> np.ndarray:
    """The float32 just below each (positive) total."""
    return np.nextafter(np.asarray(total, np.float32), np.float32(0))


def _first_past(scan, valid, threshold) -> np.ndarray:
    """Per row: the first lane with ``scan > threshold`` among ``valid`` ones, else the last
    valid lane (rows ``[R, 128]``, thresholds ``[R]``)."""
    lanes = np.arange(scan.shape[-1])
    past = valid & (scan > threshold[:, None])
    last = np.max(np.where(valid, lanes, -1), axis=-1)
    first = np.min(np.where(past, lanes, LANES), axis=-1)
    return np.minimum(first, last)


def _exclusive(scan, lane) -> np.ndarray:
    """``scan[lane − 1]`` per row, 0 for lane 0."""
    at = np.take_along_axis(scan, np.maximum(lane - 1, 0)[:, None], axis=-1)[:, 0]
    return np.where(lane > 0, at, np.float32(0))


def pick_block(p: Prefix, u1) -> tuple[np.ndarray, np.ndarray]:
    """(block index, remainder ``r₂``) per row for the uniforms ``u1`` (steps 4–6)."""
    rows = np.arange(p.group_prefix.shape[0])
    total = p.total
    x = np.minimum(np.asarray(u1, np.float32) * total, below(total))
    k = np.count_nonzero(p.group_prefix <= x[:, None], axis=-1)
    before = np.where(k > 0, p.group_prefix[rows, np.maximum(k - 1, 0)], np.float32(0))
    r1 = x - before
    sums = p.block_sums[rows, k]
    scan = lane_scan(sums)
    j = _first_past(scan, sums > 0, r1)
    return LANES * k + j, r1 - _exclusive(scan, j)


def suffix_scan(x) -> np.ndarray:
    """Inclusive float32 suffix sums over the last axis, Hillis–Steele from the right."""
    return lane_scan(np.asarray(x)[..., ::-1])[..., ::-1].copy()


def wide_integer(w_hi, w_lo) -> np.ndarray:
    """The 48-bit K of ``wide48`` from two 32-bit words: their top 24 bits, high then low."""
    hi = np.asarray(w_hi).astype(np.int64) >> 8
    return (hi << 24) | (np.asarray(w_lo).astype(np.int64) >> 8)


def wide_fractions(k) -> tuple[np.ndarray, np.ndarray]:
    """``a = fl(K·2^-48)`` and ``b = fl((2^48 − K)·2^-48)`` from the 24-bit halves of K, as the
    kernel computes them (two exact terms, one rounding)."""
    k = np.asarray(k, np.int64)
    hi, lo = k >> 24, k & 0xFFFFFF
    a = (hi * 2.0**-24 + lo * 2.0**-48).astype(np.float32)
    b = ((0xFFFFFF - hi) * 2.0**-24 + (0x1000000 - lo) * 2.0**-48).astype(np.float32)
    return a, b


def _sides(w):
    """Per row: prefix and suffix scans, the heaviest lane h, ``S_{h−1}``, ``Q_{h+1}``, and the
    positive lanes below and above h."""
    rows = np.arange(w.shape[0])
    s, q = lane_scan(w), suffix_scan(w)
    h = np.argmax(w, axis=-1)
    pad = np.zeros((w.shape[0], 1), np.float32)
    before = np.concatenate([pad, s], axis=-1)[rows, h]
    after = np.concatenate([q, pad], axis=-1)[rows, h + 1]
    lanes = np.arange(LANES)
    valid = w > 0
    return s, q, h, before, after, valid & (lanes < h[:, None]), valid & (lanes > h[:, None])


def _two_sided(w, k) -> np.ndarray:
    """The lane of each row's block for its 48-bit K (the ``wide48`` rule)."""
    s, q, h, before, after, below, above = _sides(w)
    a, b = wide_fractions(k)
    xa, xb = a * s[:, -1], b * s[:, -1]
    lanes = np.arange(LANES)
    left = np.minimum(np.min(np.where(below & (s > xa[:, None]), lanes, LANES), axis=-1),
                      np.max(np.where(below, lanes, -1), axis=-1))
    right = np.maximum(np.max(np.where(above & (q > xb[:, None]), lanes, -1), axis=-1),
                       np.min(np.where(above, lanes, LANES), axis=-1))
    return np.where(xa < before, left, np.where(xb < after, right, h))


def pick(p: Prefix, noise: str, u1, second=None) -> np.ndarray:
    """The token of each row (int64) for its uniform ``u1`` and, for ``wide``, a second uniform
    ``u₂`` or, for ``wide48``, the 48-bit integer K."""
    check_invcdf_noise(noise)
    rows = np.arange(p.blocks.shape[0])
    block, r2 = pick_block(p, u1)
    w = p.blocks[rows, block]
    if noise != "u24" and second is None:
        raise ValueError(f"second: the {noise} variant needs a second draw per row")
    if noise == "wide48":
        return LANES * block + _two_sided(w, second)
    scan = lane_scan(w)
    if noise == "wide":
        r2 = np.asarray(second, np.float32) * scan[:, -1]
    return LANES * block + _first_past(scan, w > 0, r2)


def _first_k(holds, shape) -> np.ndarray:
    """The first K in [0, 2^48] at which the monotone predicate ``holds(K)`` turns true (2^48
    if never), by bisection for every item of ``shape`` at once."""
    lo = np.zeros(shape, np.int64)
    hi = np.full(shape, 1 << WIDE_BITS, np.int64)
    for _ in range(WIDE_BITS + 1):
        mid = (lo + hi) // 2
        yes = holds(np.minimum(mid, (1 << WIDE_BITS) - 1)) & (mid < (1 << WIDE_BITS))
        hi = np.where(yes, mid, hi)
        lo = np.where(yes, lo, np.minimum(mid + 1, hi))
    return hi


def wide48_lane_counts(w) -> np.ndarray:
    """For blocks ``w`` [n, 128]: how many of the 2^48 values of K give each lane (int64).

    K below ``left_end`` reads the prefix (lanes below h), K from ``right_start`` on the
    suffix (lanes above h), and h takes the K in between; inside each side the lane is
    monotone in K, so its share is found by bisection on running maxima of the scans.
    """
    s, q, h, before, after, below, above = _sides(w)
    n, full = w.shape[0], 1 << WIDE_BITS
    total = s[:, -1]
    lanes = np.arange(LANES)[None, :]

    def xa(k):
        return wide_fractions(k)[0] * (total if k.ndim == 1 else total[:, None])

    def xb(k):
        return wide_fractions(k)[1] * (total if k.ndim == 1 else total[:, None])

    left_end = _first_k(lambda k: xa(k) >= before, (n,))
    right_start = np.maximum(left_end, _first_k(lambda k: xb(k) < after, (n,)))
    m_left = np.maximum.accumulate(np.where(below, s, -np.inf), axis=-1)
    m_right = np.maximum.accumulate(np.where(above, q, -np.inf)[:, ::-1], axis=-1)[:, ::-1]
    last_below = np.max(np.where(below, lanes, -1), axis=-1)[:, None]
    first_above = np.min(np.where(above, lanes, LANES), axis=-1)[:, None]
    cum_left = np.minimum(_first_k(lambda k: xa(k) >= m_left, (n, LANES)), left_end[:, None])
    cum_left = np.where(lanes >= last_below, left_end[:, None], cum_left)
    from_right = np.maximum(right_start[:, None], _first_k(lambda k: xb(k) < m_right,
                                                          (n, LANES)))
    at_least = np.where(lanes <= first_above, full - right_start[:, None], full - from_right)
    at_least = np.where(lanes > h[:, None], at_least, 0)
    counts = np.where(lanes < h[:, None], np.diff(cum_left, axis=-1, prepend=0), 0)
    counts = np.where(lanes > h[:, None],
                      at_least - np.concatenate([at_least[:, 1:], np.zeros((n, 1), np.int64)],
                                                axis=-1), counts)
    counts[np.arange(n), h] = right_start - left_end
    return counts


def _count_below(scale, thresholds, unit=None) -> np.ndarray:
    """``#{k : fl(u_k · scale) < threshold}`` over the lattice, for each (scale, threshold)."""
    u = lattice_uniforms() if unit is None else unit
    lo = np.zeros(np.shape(thresholds), np.int64)
    hi = np.full(np.shape(thresholds), u.size, np.int64)
    for _ in range(UNIFORM_BITS + 1):
        mid = (lo + hi) // 2
        below_t = u[np.minimum(mid, u.size - 1)] * scale < thresholds
        lo = np.where(below_t & (mid < hi), mid + 1, lo)
        hi = np.where(below_t, hi, mid)
    return lo


def _running_max(scan, valid) -> np.ndarray:
    return np.maximum.accumulate(np.where(valid, scan, -np.inf), axis=-1)


def _lane_counts(scan, valid, thresholds_of, total: int) -> np.ndarray:
    """Counts per lane from the cumulative counts ``#{lane ≤ l}``: ``thresholds_of(M)`` gives
    ``#{draws with r < M}`` for the running maxima M; the last valid lane takes the rest."""
    m = _running_max(scan, valid)
    last = np.max(np.where(valid, np.arange(LANES), -1), axis=-1)
    cum = thresholds_of(m)
    lanes = np.arange(LANES)
    cum = np.where(lanes[None, :] >= last[:, None], total, cum)
    return np.diff(cum, axis=-1, prepend=0)


@dataclass(frozen=True)
class InvcdfLaw:
    """The exact token law: ``counts[i] / 2^bits`` (int64 counts, exact)."""

    counts: np.ndarray
    bits: int

    @property
    def probs(self) -> np.ndarray:
        return np.asarray(self.counts, np.float64) / float(2**self.bits)


def exact_law(w, noise: str = DEFAULT_INVCDF_NOISE) -> InvcdfLaw:
    """The exact law of :func:`pick` for one weight row ``w`` [V] over all lattice uniforms."""
    check_invcdf_noise(noise)
    w = np.asarray(w)
    if w.ndim != 1:
        raise ValueError(f"w must be one row [V], got shape {w.shape}")
    p = prefix(w[None, :])
    if not p.total[0] > 0:
        raise ValueError("w must have a positive total")
    u = lattice_uniforms()
    n_lattice = u.size
    choice = BlockChoice.of(p, u)
    block_count = np.diff(choice.starts)
    nb = p.blocks.shape[1]
    weights = p.blocks[0]
    scan = lane_scan(weights)
    live = np.flatnonzero(block_count)
    lanes = np.zeros((nb, LANES), np.int64)
    if noise == "wide48":
        lanes[live] = wide48_lane_counts(weights[live])
        counts = lanes.astype(object) * block_count[:, None].astype(object)
        return InvcdfLaw(counts.reshape(-1)[:w.size].copy(), UNIFORM_BITS + WIDE_BITS)
    if noise == "wide":
        lanes[live] = _lane_counts(scan[live], weights[live] > 0,
                                   lambda m: _count_below(scan[live, -1:], m, u), n_lattice)
        counts = (lanes * block_count[:, None]).reshape(-1)
        return InvcdfLaw(counts[:w.size].copy(), 2 * UNIFORM_BITS)
    lanes[live] = _lane_counts(scan[live], weights[live] > 0,
                               lambda m: choice.drawn_below(live, m), block_count[live, None])
    return InvcdfLaw(lanes.reshape(-1)[:w.size].copy(), UNIFORM_BITS)


@dataclass(frozen=True)
class BlockChoice:
    """Steps 4–6 on the lattice: every step is monotone in u, so the block of the lattice
    uniform ``u_k`` grows with k and each block owns the indices ``starts[b] … starts[b+1]``
    (found by bisection, each candidate computed as :func:`pick_block` does, per group)."""

    u: np.ndarray
    total: np.float32
    before: np.ndarray
    """Per group: ``D_{k−1}`` (0 for the first)."""
    maxima: np.ndarray
    """Per group: the running maxima of its block sums' scan over the positive blocks."""
    last: np.ndarray
    """Per group: its last positive block (−1 if none)."""
    exclusive: np.ndarray
    """Per group: ``S_{j−1}`` of its scan for each block j."""
    starts: np.ndarray

    @classmethod
    def of(cls, p: Prefix, u) -> BlockChoice:
        d = p.group_prefix[0]
        sums = p.block_sums[0]
        scan = lane_scan(sums)
        exclusive = np.concatenate([np.zeros((d.size, 1), np.float32), scan[:, :-1]], axis=1)
        choice = cls(u, p.total[0], np.concatenate([[np.float32(0)], d[:-1]]),
                     _running_max(scan, sums > 0),
                     np.max(np.where(sums > 0, np.arange(LANES), -1), axis=-1), exclusive,
                     np.zeros(0, np.int64))
        b = np.arange(p.blocks.shape[1] + 1)
        return dataclasses.replace(choice, starts=_first_index(
            lambda k: choice.block(k) >= b, b.shape, u.size))

    def _x(self, k) -> np.ndarray:
        return np.minimum(self.u[np.minimum(k, self.u.size - 1)] * self.total, below(self.total))

    def block(self, k) -> np.ndarray:
        """The block of the lattice uniforms ``u_k``."""
        x = self._x(k)
        g = np.searchsorted(self.before[1:], x, side="right")
        r1 = x - self.before[g]
        j = np.minimum(np.count_nonzero(self.maxima[g] <= r1[..., None], axis=-1), self.last[g])
        return LANES * g + j

    def drawn_below(self, blocks, m) -> np.ndarray:
        """For each of ``blocks`` (rows of ``m``): how many of its lattice uniforms have
        ``r₂ < m``."""
        g, j = (blocks // LANES)[:, None], (blocks % LANES)[:, None]
        first, end = self.starts[blocks][:, None], self.starts[blocks + 1][:, None]

        def past(k):
            return ~((self._x(k) - self.before[g]) - self.exclusive[g, j] < m) | (k >= end)

        return _first_index(past, m.shape, self.u.size, first) - first


def _first_index(holds, shape, n: int, lo=0) -> np.ndarray:
    """The first index in [lo, n] at which the monotone predicate ``holds(k)`` turns true
    (``n`` if never), by bisection for every item of ``shape`` at once."""
    lo = np.broadcast_to(np.asarray(lo, np.int64), shape).copy()
    hi = np.full(shape, n, np.int64)
    for _ in range(int(n).bit_length() + 1):
        mid = (lo + hi) // 2
        yes = holds(mid) | (mid >= n)
        hi = np.where(yes, mid, hi)
        lo = np.where(yes, lo, np.minimum(mid + 1, hi))
    return hi
