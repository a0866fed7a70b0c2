"""The fixed-point inverse CDF: exact quantisation, its law against every uniform, the bound,
and its place in the reference."""

import numpy as np
import pytest

from rslab import reference as ref
from rslab.draws import draw_tokens
from rslab.fixtures import first_reject_inputs
from rslab.numerics import fixed_invcdf as fx
from rslab.randomness import BONUS, RESIDUAL, random_words


def _row(v, seed, zeros=0.3, power=6, scale=1.0):
    rng = np.random.default_rng(seed)
    w = (rng.random(v) ** power).astype(np.float32)
    w[rng.random(v) < zeros] = 0
    w[rng.integers(v)] = np.float32(1.0)
    return (w * np.float32(scale)).astype(np.float32)


@pytest.mark.parametrize("scale", [1.0, 2.0**-140, 2.0**100, 3.0])
def test_the_cores_quantisation_is_the_floor(scale):
    w = np.concatenate([_row(4096, 1, power=30, scale=scale),
                        np.array([0, 2.0**-149, 2.0**-126, 0.75], np.float32)])
    hi, lo = fx.quantise_words(w)
    q = fx.quantise(w)
    assert np.array_equal((hi.astype(np.uint64) << np.uint64(32)) | lo.astype(np.uint64), q)
    assert q.max() >= 2**62 and q.max() < 2**63


def _brute_force(w, fbits, ubits):
    """Every pair of narrow uniforms, the row's token of each, by the module's rule."""
    drawn = np.zeros(w.size, np.int64)
    for u1 in range(1 << ubits):
        for u2 in range(1 << ubits):
            drawn[fx.row_token(w, u1, u2, fbits, ubits)] += 1
    return drawn


@pytest.mark.parametrize("seed", [0, 1])
def test_exact_law_counts_every_uniform(seed):
    """A narrow draw (F = 6, b = 7 per level) on three blocks: all 2^14 uniform pairs."""
    w = _row(300, seed, power=4)
    w[:128] *= np.float32(2.0**-5)  # a light block: a level with values near the floor
    counts, scale = fx.exact_counts(w, 6, 7)
    drawn = _brute_force(w, 6, 7)
    assert np.array_equal(drawn, counts.astype(np.int64)) and drawn.sum() == scale
    assert np.all(drawn[w == 0] == 0)


@pytest.mark.parametrize("bits", [(14, 20), (30, 40), (62, 96)])
@pytest.mark.parametrize("shape", ["steep", "tiny tail", "subnormal"])
def test_chi2_within_the_bound(bits, shape):
    w = {"steep": _row(2000, 5, power=12),
         "tiny tail": np.where(np.arange(1500) == 7, 1, 1e-30).astype(np.float32),
         "subnormal": _row(700, 3, power=2, scale=2.0**-140)}[shape]
    chi2 = fx.exact_chi2(w, *bits)
    assert 0 < chi2 <= fx.chi2_bound(w.size, *bits)


def test_the_guarantee_at_the_largest_row():
    assert fx.GUARANTEE == fx.chi2_bound(154_880) and 1.8e-13 < fx.GUARANTEE < 1.9e-13
    assert fx.level_bound(10, 5.0) == float("inf")


def test_tokens_follow_the_uniforms():
    """The lowest uniforms give the first positive token, the top ones the last."""
    w = np.zeros((1, 300), np.float32)
    w[0, [3, 140, 290]] = [0.5, 1e-20, 2.0]
    low = np.zeros((1, 6), np.uint32)
    top = np.full((1, 6), 2**32 - 1, np.uint32)
    assert fx.fixed_tokens(w, low)[0] == 3 and fx.fixed_tokens(w, top)[0] == 290
    assert fx.fixed_tokens(np.zeros((1, 4), np.float32), low)[0] == fx.EMPTY


@pytest.mark.parametrize("bad", [np.float32([[-1.0]]), np.float32([[np.inf]]),
                                 np.float32([[np.nan]]), np.float64([[0.5]]),
                                 np.float32([[2.0**121]])])
def test_bad_weights_raise(bad):
    with pytest.raises(ValueError, match="w must"):
        fx.fixed_tokens(bad, np.zeros((1, 6), np.uint32))


def test_words_are_checked():
    with pytest.raises(ValueError, match="words must"):
        fx.fixed_tokens(np.ones((1, 4), np.float32), np.zeros((1, 3), np.uint32))


def test_reference_residual_and_bonus_rows():
    """A forced first rejection draws the residual max(p − q, 0) with the row's six words;
    an S = 0 request draws its bonus row from the softmax numerators."""
    l, q, ids = first_reject_inputs(R=2, S=2, V=700, seed=1)
    out = ref.rejection_sample(l, q, ids, path="fast", seed=9, method="fixed")
    p = ref.target_probs(l[:, 0], "fast")
    w = np.maximum(p - q[:, 0], np.float32(0))
    words = random_words("fast", 9, np.arange(2), 0, RESIDUAL, np.arange(6))
    assert np.array_equal(out.tokens[:, 0], fx.fixed_tokens(w, words))
    assert np.array_equal(out.tokens[:, 0], draw_tokens("fixed", "u96", 9, np.arange(2), 0,
                                                        RESIDUAL, w))
    logits = np.random.default_rng(0).standard_normal((3, 1, 500)).astype(np.float32)
    bonus = ref.rejection_sample(logits, np.zeros((3, 0, 500), np.float32),
                                 np.zeros((3, 0), np.int64), path="fast", seed=2, method="fixed")
    e = ref.softmax_numerators(logits[:, 0], "fast")
    words = random_words("fast", 2, np.arange(3), 0, BONUS, np.arange(6))
    assert np.array_equal(bonus.tokens[:, 0], fx.fixed_tokens(e, words))


def test_the_fixed_draw_is_fast_path_only():
    l, q, ids = first_reject_inputs(R=1, S=1, V=64, seed=1)
    with pytest.raises(ValueError, match="method"):
        ref.rejection_sample(l, q, ids, path="exact", method="fixed")
    with pytest.raises(ValueError, match="noise"):
        ref.rejection_sample(l, q, ids, path="fast", method="fixed", noise="wide48")
