"""Certified bounds of an argmax draw's law on rows of many distinct weights: against every
combination of atoms on a small lattice law, against the exact run law where both apply,
and on rows of 154,880 tokens."""

import itertools

import numpy as np
import pytest
from scipy import stats as sps

from rslab.numerics import argmax_bounds as ab
from rslab.numerics import divergence_bound as db
from rslab.numerics import targets
from rslab.numerics.argmax_law import NoiseAtoms, score
from rslab.numerics.methods import draw
from rslab.numerics.token_law import noise_atoms, run_law, score_params, token_bounds
from rslab.reference import path_math, residual_draw

N = 2**24
COUNTS = np.array([N // 2, N // 8, N // 8, N // 8, N - N // 2 - 3 * (N // 8)], np.int64)
SMALL = {"add": NoiseAtoms("add", np.array([-1.0, 0.0, 0.5, 1.0, 3.0], np.float32), COUNTS),
         "mul": NoiseAtoms("mul", np.array([0.25, 0.5, 1.0, 2.0, np.inf], np.float32), COUNTS)}


def every_combination(params, atoms: NoiseAtoms, kind: str) -> np.ndarray:
    """Each token's chance to be the first of the highest scores, over every combination of
    atoms (the row's tokens each draw one)."""
    params = np.asarray(params, np.float32)
    prob = atoms.counts / N
    P = np.zeros(params.size)
    for combo in itertools.product(range(atoms.values.size), repeat=params.size):
        c = list(combo)
        P[int(np.argmax(score(kind, params, atoms.values[c])))] += np.prod(prob[c])
    return P


@pytest.mark.parametrize("kind,params", [
    ("add", [0.0, 0.5, -0.5, 0.5, 0.0, 2.0]),    # ties inside groups and across them
    ("add", [-0.5, 0.5, -0.5, 0.5, -0.5, 0.5]),  # two groups interleaved
    ("add", [3.0, 0.5, -0.5, 0.5, -3.5, 1.0]),   # a token alone above, one that never wins
    ("mul", [2.0, 0.5, 1.0, 0.5, 4.0, 1.0]),     # +inf scores: the lowest index wins
    ("mul", [1.0, 1.0, 1.0, 1.0, 1.0, 1.0]),
    ("mul", [3.0, 5.0, 7.0, 11.0, 13.0, 17.0]),  # no two products tie but at +inf
])
def test_bounds_hold_every_combination(kind, params):
    P = every_combination(params, SMALL[kind], kind)
    lo, hi = ab.bounds(np.float32(params), np.ones(len(params), bool), SMALL[kind], kind)
    assert np.all(lo <= P) and np.all(P <= hi) and abs(P.sum() - 1) < 1e-12
    ties = score(kind, np.float32(params)[:, None], SMALL[kind].values[:-1])
    if len(set(params)) == 1 or np.unique(ties).size == ties.size:  # exact by rank and order
        assert np.allclose(lo, P, rtol=1e-6) and np.allclose(hi, P, rtol=1e-6)


def test_tokens_that_do_not_take_part_never_win():
    params = np.float32([0.0, -np.inf, 1.0, 0.5])
    live = np.isfinite(params)
    P = every_combination(params[live], SMALL["add"], "add")
    lo, hi = ab.bounds(params, live, SMALL["add"], "add")
    assert lo[1] == hi[1] == 0
    assert np.all(lo[live] <= P) and np.all(P <= hi[live])


@pytest.mark.parametrize("method,noise", [("gumbel", "div8"), ("race", "scaled")])
def test_bounds_hold_the_exact_run_law(method, noise):
    """Rows where today's exact law applies (runs in order, ties across runs exact): the
    brackets hold it (but for its cut-off) and are about the resolution wide."""
    rng = np.random.default_rng(7)
    weights = np.sort(rng.uniform(0.05, 1, 120).astype(np.float32))[::-1]
    target = targets.Target("runs", rng.integers(1, 40, 120), weights)
    law = run_law(target, method, noise)
    w = target.row()
    kind = "add" if method == "gumbel" else "mul"
    lo, hi = ab.bounds(score_params(kind, w), w > 0, noise_atoms(method, noise, "fast"), kind)
    assert np.all(lo <= law.tokens + law.truncated) and np.all(law.tokens <= hi)
    assert np.max((hi - lo) / law.tokens) < 4 * ab.RESOLUTION


def _distinct_row(vocab: int) -> np.ndarray:
    """Zipf weights (i + 1)^-1.1, every one distinct, shuffled."""
    rng = np.random.default_rng(25)
    return rng.permutation((np.arange(1, vocab + 1, dtype=np.float64) ** -1.1)
                           .astype(np.float32))


def _check_distinct(w, method, resolution):
    b = token_bounds(w, method, resolution=resolution)
    p = w / np.sum(w, dtype=np.float64)
    assert not b.is_exact and np.all(b.lo <= b.mid) and np.all(b.mid <= b.hi)
    assert abs(b.mid.sum() - 1) < resolution and b.rel_half_width(p) < 2 * resolution
    lo, hi = db.chi2_interval(b.lo, b.hi, p)
    assert lo <= db.chi2(b.mid, p) <= hi and hi - lo < 4 * resolution * np.sqrt(hi)


@pytest.mark.parametrize("method", ["gumbel", "race"])
def test_a_row_of_distinct_weights(method):
    _check_distinct(_distinct_row(500), method, 1e-3)


@pytest.mark.heavy
@pytest.mark.parametrize("method,noise", [("gumbel", "div8"), ("gumbel", "div32"),
                                          ("gumbel", "rangered"), ("race", "scaled")])
def test_a_row_of_distinct_weights_at_the_notes_vocabulary(method, noise):
    """154,880 distinct weights, shuffled: brackets of about the default resolution."""
    w = _distinct_row(targets.VOCAB)
    b = token_bounds(w, method, noise)
    p = w / np.sum(w, dtype=np.float64)
    assert b.rel_half_width(p) < 2 * ab.RESOLUTION and abs(b.mid.sum() - 1) < 1e-5


def test_a_tail_that_wins_only_below_the_heads_noise():
    """The tail wins only when the head scores at the bottom of its noise (Λ near −16): its
    bracket is narrow against its target, and a few per cent of its own tiny chance."""
    w = targets.peaked(0.01, 4096).row()
    b = token_bounds(w, "gumbel", "div8", resolution=1e-5)
    lo, hi = ab.bounds(score_params("add", w), w > 0, noise_atoms("gumbel", "div8", "fast"),
                       "add")
    p = w / np.sum(w, dtype=np.float64)
    assert np.all(lo <= b.mid + 1e-15) and np.all(b.mid <= hi)
    assert np.max((hi - lo) / p) < 1e-5 and np.max((hi - lo)[1:] / lo[1:]) < 0.05


def _entries(groups, lat, grid) -> dict:
    """Every entry of the row, sorted by group and cell."""
    parts = list(ab.entry_chunks(groups, lat, grid))
    e = {f: np.concatenate([getattr(p, f) for p in parts])
         for f in ("group", "cell", "q_lo", "q_hi", "single")}
    order = np.lexsort((e["cell"], e["group"]))
    return {f: v[order] for f, v in e.items()}


def test_counting_at_thresholds_and_scoring_atoms_agree(monkeypatch):
    """Each group's entries found by a count at every threshold (dense) and by scoring every
    atom (sparse) are the same; the grid rises to +inf."""
    atoms = noise_atoms("race", "scaled", "fast")
    w = targets.zipf(3000, exponent=2.0).row()
    groups, lat = ab.Groups.of(w, w > 0), ab.Lattice.of(atoms, "mul")
    grid = ab.design_grid(groups, lat, 1e-3)
    assert np.all(np.diff(grid.c) > 0) and grid.c[-1] == np.inf and grid.c[0] > 0
    found = []
    for cost in (0, 10**9):  # every group dense, then every group sparse
        monkeypatch.setattr(ab, "DENSE_COST", cost)
        found.append(_entries(groups, lat, grid))
    for f in found[0]:
        assert np.array_equal(found[0][f], found[1][f]), f


def test_bad_arguments():
    with pytest.raises(ValueError, match="kind"):
        ab.bounds(np.float32([1]), np.ones(1, bool), SMALL["add"], "max")
    with pytest.raises(ValueError, match="resolution"):
        ab.bounds(np.float32([1]), np.ones(1, bool), SMALL["add"], "add", resolution=0)
    with pytest.raises(ValueError, match="weights: the Gumbel draw"):
        token_bounds(np.float32([1e-40, 0, 2e-45]), "gumbel")


@pytest.mark.parametrize("method,noise", [("gumbel", "div8"), ("race", "scaled")])
def test_the_law_agrees_with_the_reference_sampler(method, noise):
    """300 distinct weights, a heavy token and a tail near the noise's cut-off: tokens the
    reference draws (40,000 rows, one request each) agree with the midpoint law, not with
    the target."""
    rng = np.random.default_rng(11)
    w = np.concatenate([[1.0], np.exp2(rng.uniform(-16, -9, 299))]).astype(np.float32)
    P = token_bounds(w, method, noise).mid
    math = path_math("fast", draw(method).pipeline(noise))
    tokens = np.concatenate([
        residual_draw(method, noise, math, 3, req, 0, np.broadcast_to(w, (req.size, w.size)))[0]
        for req in np.array_split(np.arange(40_000), 20)])
    tail = np.argsort(P[1:])[::-1] + 1  # the head alone, the tail in 20 cells of equal mass
    cell = np.zeros(w.size, int)
    cell[tail] = 1 + np.minimum((20 * (np.cumsum(P[tail]) - P[tail]) / P[tail].sum())
                                .astype(int), 19)
    drawn = np.bincount(cell[tokens], minlength=21)
    for law, agrees in ((P, True), (w / np.sum(w, dtype=np.float64), False)):
        expected = tokens.size * np.bincount(cell, law, minlength=21)
        p_value = sps.chisquare(drawn, expected * drawn.sum() / expected.sum()).pvalue
        assert (p_value > 1e-3) == agrees
