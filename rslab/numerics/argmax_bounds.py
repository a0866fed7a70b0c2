"""Certified bounds on an argmax draw's token law, for rows of any number of distinct weights.

The draw (as in :mod:`rslab.numerics.argmax_law`): token i scores ``s_i = fl(a_i ∘ x_i)``,
its noise ``x_i`` drawn independently from the lattice law of a
:class:`~rslab.numerics.argmax_law.NoiseAtoms` (sorted float32 values ``x_k`` with
lattice counts), ``∘`` the draw's ``+`` (Gumbel-max, ``a`` the fast log2 weight) or
``·`` (the race, ``a`` the weight); the highest score wins, ties to the lowest index.
Tokens of one ``a`` share a score law: a *group* j of ``n_j`` tokens, with
``F_j(c) = P(s < c)``, a count of lattice points for any float32 ``c``.

**Cells.** Float32 thresholds ``c_0 < … < c_M = +inf`` cut the scores into cells
``[c_k, c_{k+1})`` (``c_{M+1}`` lies above every score, the last cell is +inf alone).
At each threshold ``Λ_k = Σ_j n_j ln F_j(c_k)``, the log-probability that every score
is below ``c_k``, is exact. A token of group j whose score falls in cell k wins with a
probability that is nondecreasing in its score, between the other tokens' product of
``F(c_k)`` and of ``F(c_{k+1})``; with ``m_jk`` the group's mass in the cell::

    Σ_k m_jk e^{Λ_k} / F_j(c_k)  ≤  P_i  ≤  Σ_k m_jk e^{Λ_{k+1}} / F_j(c_{k+1}) + β_j e^{Λ_0}

(the last term: every score below ``c_0``, where the token can win only with a score of at
least every other group's lowest: ``β_j = P(that ≤ s < c_0) / F_j(c_0)``, 0 for a group
that can never win). Where all of a group's atoms in a cell share
one score value v, the token's own group enters exactly by its rank r among the group's
tokens (the r before it score below v, the others at most v: ``F_j(c_k)^r
F_j(c_{k+1})^{n_j−1−r}``, summed over those cells as powers, :func:`power_sums`), so
ties inside a group are exact; ties with *other* groups at one float32 value stay
bracketed (their share is of the order of a float32 ulp of the score), but at +inf (a
product that overflows, the infinite noise of a plateau), where the first token of the row
to score +inf wins: that term is exact, summed in token order.

**The grid.** A cell's bracket is as wide as ``Λ_{k+1} − Λ_k``, and a token's relative
width is that increase averaged over where it wins (about ``e^Λ dΛ``). Cells equally
spaced in ``e^{Λ/2}``, ``4/resolution`` of them, make the average at most about
``resolution``; cells at most ``MAX_STEP`` apart in Λ serve the tokens that win only
where Λ is low. The design reads Λ from a pilot (the groups merged into ``PILOT_BINS``
bins of ``a``, on ``PILOT_POINTS`` points). The bounds hold whatever the grid; the grid
decides only how wide they are (the widths are reported, never assumed).

**Cost.** A group's counts change only in cells that hold its atoms: each group is
counted at the thresholds of its lower cells (*dense*, one query each) and its atoms above
are scored one by one (*sparse*), split where that costs least. Groups are streamed in
chunks of ``CHUNK`` items; the (group, cell) entries are kept from the first pass (Λ) for
the second (the bounds) when there are at most ``KEEP_ENTRIES`` of them, else computed
again.

**Error model.** Counts are exact integers: a threshold query starts from a float64
estimate and is corrected by the draw's own float32 operation on the neighbouring atoms.
Λ is summed per cell by ``bincount`` (at most 2^18 terms) and across cells in blocks of
``SUM_BLOCK``, all terms of one sign: its error is below ``2^-34.9·|Λ|``; each entry's log
bound moves by ``LOG_SLACK = 2^-33`` times the sum of the magnitudes it is made of, which
covers that and the logs' own roundings. What is left, the exps, the sums of at most 2^24
positive terms of each bound and the powers of the rank terms, stays below ``2^-28``
relative, and every bound is widened by ``SLACK = 2^-26``. Scores below ``c_0``
(``Λ_0 ≤ −TRUNCATION`` by the pilot) enter the upper bound only, as ``β_j e^{Λ_0}``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rslab.numerics.argmax_law import KIND, NoiseAtoms, power_sums, score
from rslab.numerics.rng import UNIFORM_BITS

RESOLUTION = 1e-5
"""The default target of a token's relative bracket width (cells: ``4/RESOLUTION``)."""
TRUNCATION = 36.0
"""The lowest threshold lies where the pilot's ``Λ ≤ −TRUNCATION`` (``e^-36 ≈ 2·10^-16``)."""
PILOT_BINS = 1024
PILOT_OCTAVES = 64.0
"""The pilot merges the groups into ``PILOT_BINS`` bins over the top ``PILOT_OCTAVES`` of
``log2`` score parameter (the ones below into the lowest bin)."""
PILOT_POINTS = 2048
MAX_STEP = 1 / 64
"""No designed cell spans more than this increase of the pilot's Λ."""
CHUNK = 1 << 21
SPLIT_CANDIDATES = 24
DENSE_COST = 2
"""A count at a threshold costs about as much as scoring ``DENSE_COST`` atoms."""
KEEP_ENTRIES = 1 << 25
SUM_BLOCK = 1024
SLACK = 2.0**-26
LOG_SLACK = 2.0**-33
FIXUP_STEPS = 8
N_LATTICE = 2**UNIFORM_BITS
LATTICE_LOG = UNIFORM_BITS * np.log(2.0)


def _same(v):
    return v


@dataclass(frozen=True)
class ScoreKind:
    """What the bounds need of a score ``a ∘ x``: the noise ``inverse(v, a)`` whose score is
    the real v (a float64 estimate), the ``weight`` a parameter stands for, an axis of
    ``octaves`` (and back) on which the groups' laws are shifts of one another and the ideal
    ``P(every score ≤ v) = exp(−ln 2 · Σ n·weight / 2^octaves(v))``, and the ``lowest``
    score that can win."""

    inverse: object
    weight: object
    octaves: object
    from_octaves: object
    lowest: float


KINDS = {"add": ScoreKind(np.subtract, np.exp2, _same, _same, -np.inf),
         "mul": ScoreKind(np.divide, _same, np.log2, np.exp2, 2.0**-149)}
"""``add``: the Gumbel draw's ``log2 w + g``; ``mul``: the race's ``w · R``, where a score
below the smallest positive float32 is 0 and never wins."""


@dataclass(frozen=True)
class Groups:
    """A row's live tokens grouped by score parameter: ``params`` (float32, ascending) and
    ``counts`` per group; per live token (in index order) its ``group`` and ``rank`` in it."""

    params: np.ndarray
    counts: np.ndarray
    tokens: np.ndarray
    group: np.ndarray
    rank: np.ndarray

    @classmethod
    def of(cls, params, live) -> Groups:
        tokens = np.flatnonzero(live)
        values, group, counts = np.unique(params[tokens], return_inverse=True,
                                          return_counts=True)
        order = np.argsort(group, kind="stable")
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        rank = np.empty(tokens.size, np.int64)
        rank[order] = np.arange(tokens.size) - np.repeat(starts, counts)
        return cls(values.astype(np.float32), counts.astype(np.int64), tokens, group, rank)


@dataclass(frozen=True)
class Lattice:
    """The noise atoms ``x`` (float32, ascending) with ``below[k]``, the lattice points of the
    atoms before k (``below[K] = 2^24``), scored by ``kind``."""

    kind: str
    x: np.ndarray
    below: np.ndarray

    @classmethod
    def of(cls, atoms: NoiseAtoms, kind: str) -> Lattice:
        return cls(kind, atoms.values, atoms.below)

    @property
    def rule(self) -> ScoreKind:
        return KINDS[self.kind]

    def score(self, a, x):
        return score(self.kind, a, x)

    def count(self, a, c, edge) -> np.ndarray:
        """How many atoms score ``fl(a ∘ x_k) < c`` for each (``a``, threshold ``c`` with its
        rounding ``edge``): a float64 estimate, corrected on the neighbouring atoms."""
        with np.errstate(all="ignore"):
            y = self.rule.inverse(edge, np.float64(a) if np.ndim(a) == 0 else
                                  a.astype(np.float64)).astype(np.float32)
        k = np.searchsorted(self.x, y, side="left")
        last = self.x.size - 1
        for _ in range(FIXUP_STEPS):
            too_far = (k > 0) & ~(self.score(a, self.x[np.maximum(k - 1, 0)]) < c)
            too_near = (k <= last) & (self.score(a, self.x[np.minimum(k, last)]) < c)
            if not (too_far.any() or too_near.any()):
                return k
            k = k + too_near - too_far.astype(k.dtype)
        raise RuntimeError("Lattice.count: the threshold estimate did not converge")


@dataclass(frozen=True)
class Grid:
    """Float32 thresholds ``c`` (ascending, the last +inf; cell t is ``[c_t, c_{t+1})``, the
    last cell +inf alone, threshold ``t = c.size`` above every score) and the float64
    rounding ``edge`` below each: a real rounds to a float32 below ``c_t`` iff it is below
    the edge (or on it, rounding down)."""

    c: np.ndarray
    edge: np.ndarray
    """(:func:`rounding_edge`)"""

    @classmethod
    def of(cls, c) -> Grid:
        c = np.asarray(c, np.float32)
        return cls(c, rounding_edge(c))

    @property
    def size(self) -> int:
        return self.c.size

def rounding_edge(c) -> np.ndarray:
    """The float64 midpoint below each float32 ``c``: a real rounds to a float32 below ``c``
    iff it is below the midpoint (or on it, rounding down)."""
    below = np.nextafter(c, np.float32(-np.inf)).astype(np.float64)
    return (below + np.where(np.isinf(c), 2.0**128, c.astype(np.float64))) / 2


@dataclass
class Entries:
    """(group, cell) pairs where the group has atoms: the lattice points of the group below
    the cell's lower and upper threshold, and whether those atoms share one score value."""

    group: np.ndarray
    cell: np.ndarray
    q_lo: np.ndarray
    q_hi: np.ndarray
    single: np.ndarray

    def __len__(self) -> int:
        return self.group.size


def _lattice_log(q) -> np.ndarray:
    """``ln(q / 2^24)`` (−inf at 0)."""
    with np.errstate(divide="ignore"):
        return np.log(np.asarray(q, np.float64)) - LATTICE_LOG


def _pilot(groups: Groups, lat: Lattice):
    """``Λ(v)`` estimated with the groups merged into the pilot's bins (a function of v)."""
    a = groups.params.astype(np.float64)
    n = groups.counts.astype(np.float64)
    if a.size > PILOT_BINS:
        z = lat.rule.octaves(a)
        edges = z[-1] - PILOT_OCTAVES + np.arange(PILOT_BINS) * (PILOT_OCTAVES / PILOT_BINS)
        b = np.maximum(np.searchsorted(edges, z, side="right") - 1, 0)
        a = np.maximum.reduceat(a, np.flatnonzero(np.diff(b, prepend=-1)))
        n = np.bincount(b, n)[np.unique(b)]

    def log_all_below(v):
        with np.errstate(all="ignore"):
            y = lat.rule.inverse(np.asarray(v, np.float64)[:, None], a[None, :])
            y = y.astype(np.float32)
        return _lattice_log(lat.below[np.searchsorted(lat.x, y, side="left")]) @ n

    return log_all_below


def _bottom(groups: Groups, kind: ScoreKind, log_all_below, top: float) -> float:
    """A score below which all scores lie with probability at most ``e^-TRUNCATION``: from
    the ideal law, lowered an octave at a time until the pilot agrees."""
    total = np.dot(groups.counts, kind.weight(groups.params.astype(np.float64)))
    z = min(np.log2(np.log(2) * total / TRUNCATION), kind.octaves(top))
    for _ in range(256):
        v = max(kind.from_octaves(z), kind.lowest)
        if not log_all_below([v])[0] > -TRUNCATION or v <= kind.lowest:
            break
        z -= 1.0
    return v


def design_grid(groups: Groups, lat: Lattice, resolution: float = RESOLUTION) -> Grid:
    """Thresholds equally spaced in ``e^{Λ/2}`` by ``resolution/4`` and in Λ by ``MAX_STEP``
    under the pilot's Λ, from where it is below ``−TRUNCATION`` to the top score."""
    a_top = groups.params[-1]
    finite = lat.x[np.isfinite(lat.score(a_top, lat.x))]
    top = float(lat.score(a_top, finite[-1])) if finite.size else float(a_top)
    log_all_below = _pilot(groups, lat)
    rule = lat.rule
    bottom = _bottom(groups, rule, log_all_below, top)
    z = np.linspace(rule.octaves(bottom), rule.octaves(top), PILOT_POINTS)
    lam = np.maximum.accumulate(log_all_below(rule.from_octaves(z)))
    v = [bottom, top]
    for level, step in ((np.exp(lam / 2), resolution / 4), (lam, MAX_STEP)):
        ok = np.isfinite(level)
        level, first = np.unique(level[ok], return_index=True)
        if level.size > 1:
            steps = np.arange(level[0], level[-1], step)
            v.append(rule.from_octaves(np.interp(steps, level, z[ok][first])))
    c = np.unique(np.concatenate([np.atleast_1d(x) for x in v]).astype(np.float32))
    return Grid.of(np.append(c[np.isfinite(c) & (c >= rule.lowest)], np.float32(np.inf)))


@dataclass(frozen=True)
class Plan:
    """How each group's entries are found: counts at the thresholds ``first … split`` (dense;
    ``first`` the cell of its lowest atom at or above ``c_0``), then its atoms from
    ``k_split`` on scored one by one (sparse), whichever mix costs least."""

    first: np.ndarray
    split: np.ndarray
    k_split: np.ndarray

    @classmethod
    def of(cls, groups: Groups, lat: Lattice, grid: Grid) -> Plan:
        a, x, K = groups.params, lat.x, lat.x.size
        k0 = lat.count(a, grid.c[0], grid.edge[0])
        lowest = lat.score(a, x[np.minimum(k0, K - 1)])
        first = np.where(k0 < K, np.searchsorted(grid.c, lowest, side="right") - 1, 0)
        last = np.where(k0 < K, np.searchsorted(grid.c, lat.score(a, x[-1]), "right") - 1, -1)
        t = np.unique(np.geomspace(1, grid.size, SPLIT_CANDIDATES).astype(np.int64))
        t = np.clip(t[None, :], first[:, None], last[:, None] + 1)
        g = np.repeat(np.arange(a.size), t.shape[1])
        k = np.maximum(_thresholds_count(g, t.ravel(), groups, lat, grid).reshape(t.shape),
                       k0[:, None])
        cost = DENSE_COST * (t - first[:, None]) + (K - k)
        best = np.argmin(cost, axis=1)
        rows = np.arange(a.size)
        return cls(first, t[rows, best], k[rows, best])


def _batches(work, chunk: int = CHUNK):
    """Consecutive slices of items whose ``work`` adds up to about ``chunk`` each."""
    if work.size == 0:
        return []
    ends = np.searchsorted(np.cumsum(work), np.arange(chunk, work.sum() + chunk, chunk),
                           side="left") + 1
    bounds = np.unique(np.concatenate([[0], np.minimum(ends, work.size)]))
    return [slice(s, e) for s, e in zip(bounds[:-1], bounds[1:], strict=True)]


def _ranges(starts, lengths) -> np.ndarray:
    """The concatenated integer ranges ``[s, s + n)``."""
    offsets = np.repeat(starts - np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths)
    return np.arange(int(lengths.sum())) + offsets


def _sparse_entries(js, groups: Groups, lat: Lattice, grid: Grid, k0) -> Entries:
    """Entries of groups ``js`` from the score of each of their atoms at or above ``c_0``."""
    lengths = lat.x.size - k0[js]
    idx = _ranges(k0[js], lengths)
    g = np.repeat(js, lengths)
    s = lat.score(groups.params[g], lat.x[idx])
    cell = np.searchsorted(grid.c, s, side="right") - 1
    start = np.flatnonzero(np.diff(g, prepend=-1) | np.diff(cell, prepend=-1))
    end = np.append(start[1:], idx.size) - 1
    return Entries(g[start], cell[start], lat.below[idx[start]], lat.below[idx[end] + 1],
                   s[start] == s[end])


def _counted_entries(seg, g, t, k, groups: Groups, lat: Lattice) -> Entries:
    """Entries from the atom counts ``k`` of groups ``g`` at thresholds ``t`` (ascending
    within each segment ``seg``): one per consecutive pair of a segment where it grows."""
    q = lat.below[k]
    at = np.flatnonzero((seg[1:] == seg[:-1]) & (q[1:] > q[:-1]))
    a = groups.params[g[at]]
    single = lat.score(a, lat.x[k[at]]) == lat.score(a, lat.x[k[at + 1] - 1])
    return Entries(g[at], t[at], q[at], q[at + 1], single)


def _thresholds_count(g, t, groups: Groups, lat: Lattice, grid: Grid) -> np.ndarray:
    """Atoms of group ``g`` scoring below threshold ``t`` (all of them above the grid)."""
    top = t >= grid.size
    tt = np.minimum(t, grid.size - 1)
    k = lat.count(groups.params[g], grid.c[tt], grid.edge[tt])
    return np.where(top, lat.x.size, k)


def _dense_entries(js, groups: Groups, lat: Lattice, grid: Grid, plan: Plan) -> Entries:
    """Entries of groups ``js`` from a count at each of their thresholds ``first … split``."""
    n = plan.split[js] - plan.first[js] + 1
    t = _ranges(plan.first[js], n)
    g = np.repeat(js, n)
    return _counted_entries(g, g, t, _thresholds_count(g, t, groups, lat, grid), groups, lat)


def entry_chunks(groups: Groups, lat: Lattice, grid: Grid):
    """Every (group, cell) entry of the row on ``grid``, a chunk at a time."""
    plan = Plan.of(groups, lat, grid)
    sparse = np.flatnonzero(plan.k_split < lat.x.size)
    for sl in _batches(lat.x.size - plan.k_split[sparse]):
        yield _sparse_entries(sparse[sl], groups, lat, grid, plan.k_split)
    dense = np.flatnonzero(plan.split > plan.first)
    for sl in _batches(plan.split[dense] - plan.first[dense] + 1):
        yield _dense_entries(dense[sl], groups, lat, grid, plan)


def _suffix_sum(d) -> np.ndarray:
    """``out[t] = Σ_{k ≥ t} d[k]`` with ``out[len(d)] = 0``, summed in blocks (a short
    sequential chain in each block and across the blocks)."""
    r = np.concatenate([d[::-1], np.zeros(-d.size % SUM_BLOCK)]).reshape(-1, SUM_BLOCK)
    inner = np.cumsum(r, axis=1)
    outer = np.concatenate([[0.0], np.cumsum(inner[:, -1])[:-1]])
    return np.concatenate([[0.0], (inner + outer[:, None]).ravel()[:d.size]])[::-1]


@dataclass(frozen=True)
class AllBelow:
    """``Λ`` at every threshold (and above every score) as a finite part ``s`` and the number
    ``zeros`` of groups that cannot score below it: ``Λ = s`` if there are none, else −inf."""

    s: np.ndarray
    zeros: np.ndarray


def all_below(chunks, counts, cells: int) -> AllBelow:
    """Λ at the thresholds of a grid of ``cells`` cells, from its entries."""
    ds, dz = np.zeros(cells), np.zeros(cells)
    for e in chunks:
        with np.errstate(divide="ignore"):
            step = np.where(e.q_lo > 0, np.log1p((e.q_hi - e.q_lo) / np.maximum(e.q_lo, 1)),
                            _lattice_log(e.q_hi))
        ds += np.bincount(e.cell, counts[e.group] * step, minlength=cells)
        dz += np.bincount(e.cell, e.q_lo == 0, minlength=cells)
    return AllBelow(-_suffix_sum(ds), _suffix_sum(dz))


def _exp_if(log_value, zeros) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):
        return np.where(zeros == 0, np.exp(log_value), 0.0)


@dataclass
class EntryBounds:
    """Per entry its bracket ``lo``, ``hi`` (0 for the entries that enter by rank); the entries
    that enter by rank (``rank``, their indices), with log coefficients ``c`` (lower,
    upper) and ``log_rho``."""

    lo: np.ndarray
    hi: np.ndarray
    rank: np.ndarray
    c: np.ndarray
    log_rho: np.ndarray


def entry_bounds(e: Entries, counts, lam: AllBelow, threshold: float) -> EntryBounds:
    """Each entry's bracket (see the module docstring); an entry enters by rank where the
    group's atoms in its cell share one value and the group's own jump there exceeds
    ``threshold``."""
    n = counts[e.group]
    pos = e.q_lo > 0
    ln_lo, ln_hi = _lattice_log(e.q_lo), _lattice_log(e.q_hi)
    ln_m = _lattice_log(e.q_hi - e.q_lo)
    s_lo, s_hi = lam.s[e.cell], lam.s[e.cell + 1]
    z_lo, z_hi = lam.zeros[e.cell] - ~pos, lam.zeros[e.cell + 1]
    slack = LOG_SLACK * (np.abs(s_lo) + np.abs(s_hi) + np.abs(ln_m) + 1
                         + n * (np.where(pos, -ln_lo, 0.0) - ln_hi))
    with np.errstate(invalid="ignore"):
        c_hi = ln_m + s_hi - ln_hi + slack
        lo = _exp_if(np.where(pos, ln_m + s_lo - ln_lo, np.where(n > 1, -np.inf, ln_m + s_lo))
                     - slack, z_lo)
        top = e.cell == lam.s.size - 2  # the +inf cell: exact by token order, infinite_terms
        rank = np.flatnonzero(e.single & (n > 1) & ((n - 1) * (ln_hi - ln_lo) > threshold)
                              & ~top)
    hi = _exp_if(c_hi, z_hi)
    lo[top], hi[top] = 0.0, 0.0
    r_lo, r_hi, nr = ln_lo[rank], ln_hi[rank], n[rank]
    with np.errstate(invalid="ignore"):
        c_lo = (ln_m[rank] + s_lo[rank] - np.where(pos[rank], nr * r_lo, 0.0) + (nr - 1) * r_hi
                - slack[rank])
    c = np.stack([np.where(z_lo[rank] == 0, c_lo, -np.inf),
                  np.where(z_hi[rank] == 0, c_hi[rank], -np.inf)])
    lo[rank], hi[rank] = 0.0, 0.0
    return EntryBounds(lo, hi, rank, c, r_lo - r_hi)


@dataclass
class GroupBounds:
    """Per group the bounds its tokens share, and per group entered by rank its tokens'
    rank terms [2, n] (lower, upper), indexed by rank."""

    lo: np.ndarray
    hi: np.ndarray
    by_rank: dict


def group_bounds(parts, groups: Groups) -> GroupBounds:
    """Every group's bounds from its (entries, :func:`entry_bounds`) parts (the rank terms
    by :func:`power_sums`)."""
    G = groups.counts.size
    lo, hi = np.zeros(G), np.zeros(G)
    ranked = []
    for e, b in parts:
        lo += np.bincount(e.group, b.lo, minlength=G)
        hi += np.bincount(e.group, b.hi, minlength=G)
        ranked.append((e.group[b.rank], b.c, b.log_rho))
    by_rank = {}
    if ranked:
        g = np.concatenate([r[0] for r in ranked])
        c = np.concatenate([r[1] for r in ranked], axis=1)
        log_rho = np.concatenate([r[2] for r in ranked])
        order = np.argsort(g, kind="stable")
        g, c, log_rho = g[order], c[:, order], log_rho[order]
        for j, s, t in zip(*_runs(g), strict=True):
            by_rank[int(j)] = power_sums(int(groups.counts[j]), c[:, s:t], log_rho[s:t])
    return GroupBounds(lo, hi, by_rank)


def _runs(g):
    """The distinct values of sorted ``g`` with where each starts and ends."""
    start = np.flatnonzero(np.diff(g, prepend=-1))
    return g[start], start, np.append(start[1:], g.size)[:start.size]


def below_shares(groups: Groups, lat: Lattice, grid: Grid) -> np.ndarray:
    """Per group: ``P(L_j ≤ s < c_0) / P(s < c_0)``, with ``L_j`` the largest lowest score of
    the other groups, below which its tokens never win (0 if they never score there)."""
    a = groups.params
    lowest = lat.score(a, lat.x[0])
    order = np.argsort(lowest)
    others = np.full(a.size, lowest[order[-1]])
    if a.size > 1:
        others[order[-1]] = lowest[order[-2]]
    else:
        others[:] = -np.inf
    at_c0 = lat.below[lat.count(a, grid.c[0], grid.edge[0])]
    at_l = lat.below[lat.count(a, others, rounding_edge(others))]
    return np.where((at_c0 > 0) & (others < grid.c[0]),
                    (at_c0 - np.minimum(at_l, at_c0)) / np.maximum(at_c0, 1), 0.0)


def infinite_terms(groups: Groups, lat: Lattice) -> tuple[np.ndarray, np.ndarray]:
    """Each live token's chance to win with the score +inf (an overflowed product, a plateau's
    infinite noise), bounds: its own chance of +inf times every earlier token's chance of a
    finite score (the first +inf wins), summed in token order."""
    a = groups.params
    inf = np.full(a.size, np.float32(np.inf))
    finite = lat.below[lat.count(a, inf, rounding_edge(inf))]
    with np.errstate(divide="ignore"):
        log_f = _lattice_log(finite)[groups.group]
    before = np.concatenate([[0.0], np.cumsum(log_f)[:-1]])
    m = ((N_LATTICE - finite) / N_LATTICE)[groups.group]
    slack = LOG_SLACK * (1 - np.where(np.isfinite(before), before, 0.0))
    return m * np.exp(before - slack), m * np.exp(before + slack)


def token_bounds(groups: Groups, gb: GroupBounds, lam: AllBelow, below, lat: Lattice,
                 vocab: int):
    """Lower and upper bounds of every token (float64 [vocab]; 0 for a token not live);
    ``below`` (:func:`below_shares`) bounds each group's share of ``e^{Λ_0}``, and the
    +inf scores enter exactly (:func:`infinite_terms`)."""
    lo, hi = np.zeros(vocab), np.zeros(vocab)
    inf_lo, inf_hi = infinite_terms(groups, lat)
    lo[groups.tokens] = gb.lo[groups.group] + inf_lo
    under = _exp_if(lam.s[0] + LOG_SLACK * (abs(lam.s[0]) + 1), lam.zeros[0]) * below
    hi[groups.tokens] = gb.hi[groups.group] + under[groups.group] + inf_hi
    for j, p in gb.by_rank.items():
        mine = groups.group == j
        lo[groups.tokens[mine]] += p[0, groups.rank[mine]]
        hi[groups.tokens[mine]] += p[1, groups.rank[mine]]
    return lo * (1 - SLACK), hi * (1 + SLACK)


def _keeping(chunks, kept: list):
    """``chunks``, appended to ``kept`` while they hold at most ``KEEP_ENTRIES`` entries in
    all (beyond that ``kept`` is emptied)."""
    size = 0
    for e in chunks:
        size += len(e)
        if size <= KEEP_ENTRIES:
            kept.append(e)
        else:
            kept.clear()
        yield e


def bounds(params, live, atoms: NoiseAtoms, kind: str, resolution: float = RESOLUTION):
    """Certified lower and upper bounds (float64 [V]) of the argmax law of tokens scored
    ``fl(params[i] ∘ x)`` (``live`` marks the tokens that take part; see the module
    docstring), on cells designed for a relative width of about ``resolution``."""
    if kind not in KIND:
        raise ValueError(f"kind must be one of {KIND}, got {kind!r}")
    if not 0 < resolution < 1:
        raise ValueError(f"resolution must lie in (0, 1), got {resolution!r}")
    groups = Groups.of(np.asarray(params, np.float32), live)
    lat = Lattice.of(atoms, kind)
    grid = design_grid(groups, lat, resolution)
    below = below_shares(groups, lat, grid)
    threshold = resolution / 8
    kept = []
    lam = all_below(_keeping(entry_chunks(groups, lat, grid), kept), groups.counts, grid.size)
    chunks = kept or entry_chunks(groups, lat, grid)
    gb = group_bounds(((e, entry_bounds(e, groups.counts, lam, threshold)) for e in chunks),
                      groups)
    return token_bounds(groups, gb, lam, below, lat, np.size(params))
