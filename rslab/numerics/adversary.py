"""The worst target of each draw: an adversarial search over families of weight rows.

:func:`family_rows` builds the rows (float32 weights, V tokens): one-hot tokens with
a flat tail of mass 10^-9…0.5 (the peaked target), Zipf laws ``(i + 256)^-s`` for
s = 0.8…2.5 (log-weights on a 1/24-octave grid, as :func:`rslab.numerics.targets.zipf`),
combs (every k-th token at 1, the others at 2^-20; k = 2 and 128 are aligned to the
128 lanes, 100 and 129 are not, and one with the light lanes the first half of each
vector), the same rows in shuffled orders, rows of BF16 logits (normal draws of
scale σ truncated to BF16, weights ``exp2((l − max l)·LOG2E)`` with the SFU's exp2), and
the rounding row (:func:`rounding_row`), whose float32 block sums err as far as the
cross-lane tree allows, down and up in turn: the term that dominates the fixed-point
draw's bound.
:func:`search` computes each draw's law on every row
(:func:`rslab.numerics.token_law.token_bounds`: exact for the inverse CDFs and for the
argmax draws on rows of few distinct weights, else certified brackets of relative
width about ``SEARCH_RESOLUTION``) and keeps, per draw, the row of the largest χ² (of
the midpoint) with the figures of :mod:`rslab.numerics.divergence_bound`, the samples at
which an appearance test sees it (:mod:`rslab.numerics.appearance`) and the interval of χ²
its bounds allow.

:func:`weights_error` is the other error, the weights' own: χ² of the SFU-exp2
weights of a BF16 logit row against the exact softmax of those logits.
:func:`block_choice_cause` splits the inverse CDF's bias at the vector level into
its two candidate causes (see its docstring).
"""

from __future__ import annotations

import time

import numpy as np

from rslab.executors import Serial
from rslab.numerics import divergence_bound as db
from rslab.numerics import invcdf, targets
from rslab.numerics.appearance import samples_to_see
from rslab.numerics.fastlog import LOG2E, fast_exp2
from rslab.numerics.methods import draw
from rslab.numerics.montecarlo import lattice_uniforms
from rslab.numerics.token_law import exact_token_probs, noise_atoms, token_bounds

TAILS = (1e-9, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.1, 0.5)
ZIPF_EXPONENTS = (0.8, 1.1, 1.5, 2.0, 2.5)
COMB_STRIDES = (2, 100, 128, 129)
COMB_LIGHT = 2.0**-20
BF16_SCALES = (2.0, 4.0, 8.0)
SHUFFLED = ("peaked(tail=0.001)", "zipf(s=1.1)")
ROUNDING = "rounding(ties down, rounds up)"
TREE_PARTNERS = (64, 32, 16, 8, 4, 2, 1)
"""The lanes the cross-lane tree adds to lane 0, in order (:func:`invcdf.tree_sum`)."""
SEED = 25
SEARCH_RESOLUTION = 3e-4
"""The argmax draws' brackets in the search: relative width about 3·10^-4, which leaves a
row's χ² known to about 10^-3 of itself, far finer than the verdict needs (each row
reports its interval)."""


def bf16_logits(vocab: int, scale: float, seed: int = SEED) -> np.ndarray:
    """``vocab`` normal logits of scale ``scale``, truncated to BF16 (float32 values)."""
    x = (np.random.default_rng(seed).standard_normal(vocab) * scale).astype(np.float32)
    return (x.view(np.uint32) & np.uint32(0xFFFF0000)).view(np.float32)


def logit_weights(logits) -> np.ndarray:
    """``exp2((l − max l)·LOG2E)`` with the SFU's exp2 (the Fast path's bonus weights)."""
    return fast_exp2((logits - logits.max()) * LOG2E)


def family_rows(vocab: int = targets.VOCAB, *, shuffled: bool = True) -> dict:
    """name → float32 row of every family (see the module docstring)."""
    rows = {targets.peaked(t, vocab).name: targets.peaked(t, vocab).row() for t in TAILS}
    for s in ZIPF_EXPONENTS:
        rows[f"zipf(s={s:g})"] = targets.zipf(vocab, exponent=s).row()
    i = np.arange(vocab)
    for k in COMB_STRIDES:
        rows[f"comb(every {k})"] = np.where(i % k == 0, 1, COMB_LIGHT).astype(np.float32)
    rows["comb(half vectors)"] = np.where(i % 128 < 64, 1, COMB_LIGHT).astype(np.float32)
    if shuffled:
        rng = np.random.default_rng(SEED)
        for name in SHUFFLED:
            rows[f"shuffled {name}"] = rng.permutation(rows[name])
    for s in BF16_SCALES:
        rows[f"bf16 logits(σ={s:g})"] = logit_weights(bf16_logits(vocab, s))
    rows[ROUNDING] = rounding_row(vocab)
    return rows


def rounding_row(vocab: int = targets.VOCAB) -> np.ndarray:
    """Blocks of 128 whose float32 tree sums err by about −7u and +7u in turn (u = 2^-24):
    lane 0 holds 1 and lanes 64, 32, …, 1 hold u, so every add of the tree is a tie that
    rounds to even, down (``1 + u → 1``); in the next block they hold ``u·(1 + 2^-23)``, so
    every add rounds up. The two blocks' shares of the row are then off by ``∓7u``, the
    most the tree's seven adds allow, and the block choice's χ² is about ``(7u)²``."""
    u = 2.0**-24
    pair = np.zeros((2, invcdf.LANES))
    pair[:, 0] = 1.0
    pair[0, list(TREE_PARTNERS)] = u
    pair[1, list(TREE_PARTNERS)] = u * (1 + 2.0**-23)
    return np.resize(pair.astype(np.float32).reshape(-1), vocab)


def target_of(w) -> np.ndarray:
    """``w / Σw`` in float64 (the sum of float32 weights in float64, near exact)."""
    w = np.asarray(w, np.float64)
    return w / np.sum(w)


def _row_figures(task, rows) -> dict:
    method, noise, name = task
    w = rows[name]
    start = time.perf_counter()
    b = token_bounds(w, method, noise, resolution=SEARCH_RESOLUTION)
    p = target_of(w)
    lo, hi = db.chi2_interval(b.lo, b.hi, p)
    return db.figures(b.mid, p) | {"target": name, "chi2_lo": lo, "chi2_hi": hi,
                                   "detect_appear": samples_to_see(b.mid, p)["samples"],
                                   "rel_half_width": b.rel_half_width(p),
                                   "seconds": time.perf_counter() - start}


def _cost(task, rows) -> float:
    """A task's rough cost, to start the long ones first: an argmax draw on a row of many
    distinct weights is the longest."""
    method, _, name = task
    return np.unique(rows[name]).size if draw(method).score else 0


def search(draws, vocab: int = targets.VOCAB, rows: dict | None = None, *, executor=None,
           progress: bool = False) -> list[dict]:
    """Per draw: the figures of its worst row (largest χ²), that row's name, the rows tried
    (``rows``, and every row's figures in ``tried``), the largest relative half-width of its
    bounds over them and the seconds its laws took
    (tasks: one law each, on ``executor``, default serial, the longest first; the argmax
    draws' noise atoms are built first, so that forked workers share them). A draw given
    twice is searched once."""
    from tqdm.auto import tqdm

    rows = family_rows(vocab) if rows is None else rows
    draws = tuple(dict.fromkeys(draws))
    for method, noise in draws:
        if draw(method).score:
            noise_atoms(method, noise, "fast")
    tasks = sorted(((m, n, name) for m, n in draws for name in rows),
                   key=lambda t: -_cost(t, rows))
    with tqdm(total=len(tasks), desc="worst targets", disable=not progress, leave=False) as bar:
        done = (executor or Serial()).map(_row_figures, tasks, shared=rows,
                                          on_done=lambda _: bar.update())
    out = []
    for method, noise in draws:
        mine = [f for t, f in zip(tasks, done, strict=True) if t[:2] == (method, noise)]
        worst = max(mine, key=lambda f: f["chi2"])
        out.append({"draw": f"{method}-{noise}", "rows": len(mine), **worst,
                    "seconds": sum(f["seconds"] for f in mine),
                    "max_rel_half_width": max(f["rel_half_width"] for f in mine),
                    "tried": mine})
    return out


def weights_error(vocab: int = targets.VOCAB, scales=BF16_SCALES) -> list[dict]:
    """χ² (and the bound's samples) of the SFU-exp2 weights of BF16 logit rows against the
    exact softmax of the same logits: the weights' own error, apart from any draw's."""
    out = []
    for s in scales:
        logits = bf16_logits(vocab, s)
        exact = np.exp(logits.astype(np.float64) - float(logits.max()))
        f = db.figures(target_of(logit_weights(logits)), exact / exact.sum())
        out.append({"row": f"bf16 logits(σ={s:g})", "chi2": f["chi2"],
                    "bound_samples": f["bound_samples"], "tv": f["tv"]})
    return out


def block_choice_cause(w, noise: str = "wide48") -> dict:
    """Vector-level χ² of the float32 inverse CDF on row ``w``, and of its two causes alone:

    * ``draw``: the variant as the core runs it (its law summed per vector of 128);
    * ``lattice_only``: exact block sums, and the block chosen by the same 24-bit uniform
      (block b gets the lattice points u with ``u·W`` in its exact interval): every block's
      chance a multiple of 2^-24;
    * ``sums_only``: the core's float32 sums (group prefix, block scan, its running maxima)
      with a continuous uniform: each block's chance the real length of its float32
      interval over Σ.
    """
    w = np.asarray(w, np.float32)
    p_vec = np.bincount(np.arange(w.size) // db.VECTOR, target_of(w))
    P = exact_token_probs(w, "invcdf", noise)
    draw_vec = np.bincount(np.arange(w.size) // db.VECTOR, P)
    blocks = invcdf.prefix(w[None, :])
    exact = np.array([np.sum(b, dtype=np.float64) for b in blocks.blocks[0]])
    edges = np.concatenate([[0.0], np.cumsum(exact)]) / exact.sum()
    u = lattice_uniforms().astype(np.float64)
    lattice = np.diff(np.searchsorted(u, edges, side="left")) / u.size
    return {"draw": db.chi2(draw_vec, p_vec), "lattice_only": db.chi2(lattice, p_vec),
            "sums_only": db.chi2(_float32_block_masses(blocks), p_vec)}


def _float32_block_masses(p: invcdf.Prefix) -> np.ndarray:
    """Each block's share of a continuous uniform under the float32 prefix: group k owns
    ``[D_{k−1}, D_k)``, its blocks the running maxima of their float32 scan (the last
    positive block the rest of the group)."""
    d = np.concatenate([[0.0], p.group_prefix[0].astype(np.float64)])
    out = []
    for k in range(p.block_sums.shape[1]):
        sums = p.block_sums[0, k]
        span = d[k + 1] - d[k]
        m = np.maximum.accumulate(np.where(sums > 0, invcdf.lane_scan(sums), 0)).astype(float)
        ends = np.minimum(m, span)
        last = np.max(np.flatnonzero(sums > 0), initial=-1)
        if last >= 0:
            ends[last:] = span
        out.append(np.diff(np.concatenate([[0.0], ends])))
    return np.concatenate(out)[:p.blocks.shape[1]] / d[-1]
