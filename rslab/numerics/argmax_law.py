"""The exact token law of an argmax draw (Gumbel-max or the race) for targets of few weight runs.

Every token i draws its own noise atom from a lattice law (each of the 2^24
lattice uniforms equally likely, independently per token) and scores
``s_i = score_j(noise)``, a nondecreasing float32 function of the noise for the
run j the token belongs to: ``fl(a_j + g)`` for Gumbel-max (``a_j`` the fast
log of the run's weight, ``g`` the noise), ``fl(w_j · R)`` for the race. The
sample is the highest score, ties to the lowest index.

Let ``F_j(v) = P(s ≤ v)`` and ``F⁻_j(v) = P(s < v)`` for a token of run j.
A token of run j wins at the score value v iff its score is v, every token
before it scores below v and every token after it at most v. For the r-th of
the ``n_j`` tokens of run j (runs in token order)::

    P_r = Σ_v P_j(v) · A_j(v) · F⁻_j(v)^r · F_j(v)^(n_j − 1 − r),
    A_j(v) = Π_{j' < j} F⁻_{j'}(v)^{n_{j'}} · Π_{j' > j} F_{j'}(v)^{n_{j'}},

and the run's total is ``Σ_v A_j(v)·(F_j^{n_j} − F⁻_j^{n_j})``. One sweep over
the score values of all runs, sorted, gives ``log Π_j F_j(v)^{n_j}`` (summed from
the top, where it is 0, so the logs of values near 1 keep their precision) and
the corrections for runs tied at exactly v. Per-token values come from
``P_r = Σ_v c_v ρ_v^r`` (``ρ = F⁻/F``) as matrix products, r in chunks.

Score values below ``v_lo`` are left out: together they carry at most
``P(every score < v_lo)``, which is returned as ``truncated`` (the caller picks
``v_lo`` so that this is below 10^-15). Atoms of a one-token run above every
other run's largest score win for sure and are summed in closed form.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from rslab.numerics.rng import UNIFORM_BITS

LATTICE = float(2**UNIFORM_BITS)
KIND = ("add", "mul")
MIN_WIN = 1e-24
"""Score values whose total win mass is below this are dropped from the per-token sums."""


@dataclass(frozen=True)
class NoiseAtoms:
    """A lattice law: sorted distinct float32 ``values`` and their lattice ``counts`` (int64)."""

    name: str
    values: np.ndarray
    counts: np.ndarray
    below: np.ndarray = field(init=False, repr=False)
    """Lattice points below each value, and ``2^24`` last (one more entry than the values)."""
    cumulative: np.ndarray = field(init=False, repr=False)
    """Lattice points at or below each value (a view of ``below``)."""

    def __post_init__(self):
        object.__setattr__(self, "below", np.concatenate([[0], np.cumsum(self.counts)]))
        object.__setattr__(self, "cumulative", self.below[1:])

    @classmethod
    def of(cls, name: str, outputs) -> NoiseAtoms:
        """The atoms of a noise evaluated on every lattice uniform (NaN not allowed)."""
        out = np.asarray(outputs, np.float32)
        if out.size != 2**UNIFORM_BITS or np.isnan(out).any():
            raise ValueError(f"{name}: need the 2^24 lattice outputs without NaN")
        out = np.sort(out, kind="stable")  # fast: a noise is nearly monotone in u already
        starts = np.flatnonzero(np.append(True, out[1:] != out[:-1]))
        counts = np.diff(np.append(starts, out.size))
        return cls(name, out[starts], counts.astype(np.int64))


@dataclass
class RunLaw:
    """Per run: total probability, the first and last token's, and per-token sums against the
    target probability ``p`` of one token: Σ|P_r − p|, Σ P_r ln(P_r/p), Σ (P_r − p)²/p and
    the largest |P_r/p − 1| with its position r in the run."""

    total: np.ndarray
    first: np.ndarray
    last: np.ndarray
    abs_dev: np.ndarray
    kl: np.ndarray
    chi2: np.ndarray
    worst: np.ndarray
    worst_at: np.ndarray
    truncated: float
    tokens: np.ndarray = field(repr=False, default=None)
    """Every token's probability, runs in order (float64)."""


def score(kind, param, values):
    """The float32 scores ``fl(param + values)`` (``add``) or ``fl(param · values)`` (``mul``)."""
    with np.errstate(over="ignore", invalid="ignore"):
        if kind == "add":
            return param + values
        return param * values


def _top(kind, param, atoms: NoiseAtoms, v_lo) -> float:
    """A run's largest window value (its score of the largest atom), −inf if its window is
    empty."""
    top = score(kind, np.float32(param), atoms.values[-1])
    return float(top) if top >= np.float32(v_lo) else -np.inf


def _run_atoms(kind, param, atoms: NoiseAtoms, v_lo, ceiling=np.inf):
    """Window atoms (v_lo ≤ score ≤ ceiling) of one run: values, P, P(score > v),
    P(score ≥ v); and P(score ≥ the first window value above the ceiling), None if there
    is none (only the atoms up to just above the ceiling are scored)."""
    empty = tuple(np.zeros(0) for _ in range(4))
    if _top(kind, param, atoms, v_lo) == -np.inf:
        return empty, None
    lo = np.float32(v_lo)
    first = _first_candidate(kind, np.float32(param), atoms.values, v_lo)
    end = _end_candidate(kind, np.float32(param), atoms.values, max(ceiling, float(lo)))
    scores = score(kind, np.float32(param), atoms.values[first:end])
    start = int(np.searchsorted(scores, lo, side="left"))
    stop = max(start, int(np.searchsorted(scores, np.float32(ceiling), side="right")))
    s = scores[start:stop]
    above = stop < scores.size or end < atoms.values.size
    start += first
    cum = atoms.cumulative[start:]
    base = atoms.cumulative[start] - atoms.counts[start]
    ends = np.append(np.flatnonzero(s[1:] != s[:-1]), s.size - 1) if s.size else np.zeros(0, int)
    at_most = cum[ends]
    below = np.concatenate([[base], at_most[:-1]])[:at_most.size]
    n = 2**UNIFORM_BITS
    rest = (n - (at_most[-1] if ends.size else base)) / LATTICE if above else None
    return (s[ends].astype(np.float64), (at_most - below) / LATTICE, (n - at_most) / LATTICE,
            (n - below) / LATTICE), rest


def _end_candidate(kind, param, values, v_hi) -> int:
    """An index from which every noise value scores above ``v_hi`` (a safe margin)."""
    with np.errstate(over="ignore", invalid="ignore"):
        if kind == "add":
            bound = (v_hi - float(param)) + 2.0**-10 * (1.0 + abs(v_hi) + abs(float(param)))
        else:
            bound = v_hi / float(param) * (1.0 + 2.0**-10)
        bound = values.dtype.type(bound)
    return min(values.size, int(np.searchsorted(values, bound, side="right")) + 1)


def _first_candidate(kind, param, values, v_lo) -> int:
    """An index below which no noise value can score ≥ ``v_lo`` (a safe margin for rounding)."""
    if kind == "add":
        bound = (v_lo - float(param)) - 2.0**-10 * (1.0 + abs(v_lo) + abs(float(param)))
    else:
        bound = v_lo / float(param) * (1.0 - 2.0**-10)
    with np.errstate(over="ignore"):
        bound = values.dtype.type(bound)
    return max(0, int(np.searchsorted(values, bound, side="left")) - 1)


def _log_cdf(sf):
    with np.errstate(divide="ignore"):
        return np.log1p(-sf)


def argmax_law(counts, params, atoms: NoiseAtoms, kind: str, v_lo: float,
               target_probs) -> RunLaw:
    """The exact law of the argmax over runs (``counts[j]`` tokens scored ``kind`` with
    ``params[j]``), summarised per run against ``target_probs[j]`` (see the module docstring)."""
    if kind not in KIND:
        raise ValueError(f"kind must be one of {KIND}, got {kind!r}")
    counts = np.asarray(counts, np.int64)
    total = np.zeros(counts.size)
    v, p, sf, sfm, win = _events(counts, params, atoms, kind, v_lo, total)
    sizes = np.array([x.size for x in v])
    v, p, sf, sfm, win = (np.concatenate(x) for x in (v, p, sf, sfm, win))
    run = np.repeat(np.arange(counts.size), sizes)
    n = counts[run].astype(np.float64)
    log_f, log_fm = _log_cdf(sf), _log_cdf(sfm)
    del sf, sfm
    delta = n * (log_f - log_fm)
    order = np.argsort(v, kind="stable")  # by value, ties by run (concatenated in run order)
    log_g, corr, truncated = _sweep(v[order], delta[order])
    back = np.empty_like(order)
    back[order] = np.arange(order.size)
    log_w = (log_g - corr)[back]  # log Π over the other runs, with the tie rule, times F_j^n_j
    del log_g, corr, back, order
    with np.errstate(invalid="ignore", over="ignore"):
        mass = np.where(win, np.exp(log_w) * -np.expm1(-delta), 0.0)
    np.add.at(total, run, mass)
    bounds = np.concatenate([[0], np.cumsum(sizes)])
    slices = [slice(bounds[j], bounds[j + 1]) for j in range(counts.size)]
    law = _per_token(counts, slices, p, log_w - n * log_f, log_f, log_fm, mass, total,
                     np.asarray(target_probs, np.float64))
    law.truncated = truncated
    return law


def _events(counts, params, atoms, kind, v_lo, total):
    """Per run: window values, P, P(score > v), P(score ≥ v), and whether it can win. A
    one-token run's atoms above every other run's largest score are added to ``total`` and
    replaced by one lump (they win for sure; the lump keeps the other runs' CDF products)."""
    tops = np.array([_top(kind, p, atoms, v_lo) for p in params])
    out = [[], [], [], [], []]
    for j, param in enumerate(params):
        ceiling = np.inf
        if counts[j] == 1 and counts.size > 1:
            ceiling = np.max(np.delete(tops, j))
        (v, p, sf, sfm), rest = _run_atoms(kind, param, atoms, v_lo, ceiling)
        win = np.ones(v.size, bool)
        if rest is not None:
            total[j] += rest
            v = np.append(v, np.nextafter(ceiling, np.inf))
            p, sf = np.append(p, 0.0), np.append(sf, 0.0)
            sfm, win = np.append(sfm, rest), np.append(win, False)
        for lst, x in zip(out, (v, p, sf, sfm, win), strict=True):
            lst.append(x)
    return out


def _sweep(v, delta):
    """In value order: ``log Π_j F_j(v)^n_j`` (summed from the top), the tie corrections, and
    ``P(every score < the lowest value)``."""
    rev = np.cumsum(delta[::-1])[::-1]
    last = np.append(v[1:] != v[:-1], True)
    group = np.concatenate([[0], np.cumsum(last[:-1])])
    log_g = -np.append(rev[1:], 0.0)[np.flatnonzero(last)][group]
    truncated = float(np.exp(-rev[0])) if rev.size else 1.0
    return log_g, _in_group_exclusive(delta, group), truncated


def _in_group_exclusive(delta, group):
    """Σ of ``delta`` over the earlier events of the same group (runs tied at one value)."""
    corr = np.zeros(delta.size)
    tied = np.flatnonzero(group[1:] == group[:-1]) + 1  # events after the first of a group
    if tied.size == 0:
        return corr
    starts = np.searchsorted(group, group[tied], side="left")
    pos = tied - starts
    for q in range(1, int(pos.max()) + 1):
        at = tied[pos == q]
        corr[at] = corr[at - 1] + delta[at - 1]
    return corr


def _per_token(counts, slices, prob, log_a, log_f, log_fm, mass, total, target) -> RunLaw:
    """First/last token and per-token sums of every run from its score values."""
    L = counts.size
    first, lastp = total.copy(), total.copy()
    abs_dev, kl, chi2 = np.zeros(L), np.zeros(L), np.zeros(L)
    worst, worst_at = np.zeros(L), np.zeros(L, np.int64)
    per_token = []
    for j in range(L):
        n = int(counts[j])
        sl = slices[j]
        keep = mass[sl] >= MIN_WIN
        if n == 1:
            P = total[j:j + 1]
        else:
            with np.errstate(divide="ignore", invalid="ignore"):
                log_c = np.log(prob[sl][keep]) + log_a[sl][keep] + (n - 1) * log_f[sl][keep]
                log_rho = log_fm[sl][keep] - log_f[sl][keep]
            P = power_sums(n, log_c, log_rho)
        per_token.append(P)
        first[j], lastp[j] = P[0], P[-1]
        abs_dev[j], kl[j], chi2[j] = _sums(P, target[j])
        rel = np.abs(P / target[j] - 1)
        worst_at[j] = int(np.argmax(rel))
        worst[j] = rel[worst_at[j]]
    return RunLaw(total, first, lastp, abs_dev, kl, chi2, worst, worst_at, 0.0,
                  np.concatenate(per_token))


def power_sums(n, log_c, log_rho, rows: int = 1 << 14) -> np.ndarray:
    """``P_r = Σ_v exp(log_c_v + r·log_rho_v)`` for r = 0..n−1 (``log_c`` may have leading
    axes, one sum per row): chunks of r of width about √n, each a matrix product with the
    powers ``ρ^b`` of one chunk."""
    log_c = np.asarray(log_c)
    out = np.zeros(log_c.shape[:-1] + (n,))
    width = max(1, min(n, int(np.ceil(np.sqrt(n)))))
    b = np.arange(width)
    for k0 in range(0, log_rho.size, rows):
        lc, lr = log_c[..., k0:k0 + rows], log_rho[k0:k0 + rows]
        with np.errstate(invalid="ignore", over="ignore"):
            powers = np.exp(np.outer(lr, b))
        powers[:, 0] = 1.0
        for r0 in range(0, n, width):
            with np.errstate(invalid="ignore", over="ignore"):
                coef = np.exp(lc + r0 * lr) if r0 else np.exp(lc)
            coef[~np.isfinite(coef)] = 0.0
            w = min(width, n - r0)
            out[..., r0:r0 + w] += coef @ powers[:, :w]
    return out


def _sums(P, p):
    """Σ|P − p|, Σ P ln(P/p), Σ (P − p)²/p over the tokens P of one run."""
    with np.errstate(divide="ignore", invalid="ignore"):
        kl = np.where(P > 0, P * np.log(P / p), 0.0)
    return float(np.abs(P - p).sum()), float(kl.sum()), float(((P - p) ** 2 / p).sum())
