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


def _aligned_row(vocab: int, fraction_bits: int, uniform_bits: int) -> np.ndarray:
    """A row whose block sums make the lattice of a narrow uniform cost the most: blocks of
    quantised value ⌊1.9·2^F⌋, a tuning block in [2^23, 2^24) and a floor block of value 1,
    in turn, each tuning block chosen so that one lattice uniform lands exactly on the floor
    block (its one quantum then holds a whole uniform); the rest of the mass in the last
    blocks. Every weight is one lane's, so a block's float32 sum is that weight."""
    n_blocks, span = -(-vocab // fx.LANES), 1 << uniform_bits
    triples, tune = (n_blocks - 1) // 3, 3 << 22
    c = [int(np.float32(1.9) * np.float64(2.0**fraction_bits)), tune, 1] * triples
    c += [tune] * (n_blocks - len(c))
    total, prefix = sum(c), 0
    for t in range(triples):
        prefix += c[3 * t]
        u = ((prefix + tune) * span) // total
        x = (u * total) >> uniform_bits
        if x < prefix + (1 << 23):
            x = ((u + 1) * total) >> uniform_bits
        c[3 * t + 1], prefix = x - prefix, x + 1
    rest, sinks = total - prefix, n_blocks - 3 * triples
    c[3 * triples:] = [rest // sinks] * (sinks - 1) + [rest - rest // sinks * (sinks - 1)]
    w = np.zeros(n_blocks * fx.LANES, np.float32)
    w[::fx.LANES] = np.float32(np.array(c, np.float64) * 2.0**-fraction_bits)
    assert [int(v) for v in fx.quantise(fx.tree_sum(fx.blocks(w)), fraction_bits)] == c
    return w[:vocab]


@pytest.mark.parametrize("bits", [(62, 57), (56, 56), (62, 64)])
def test_a_narrow_uniform_is_bounded_at_the_worst_quanta(bits):
    """The row's quanta are near n·2^(F+1), far above 2^b: the bound at S = 2^F alone
    (the smallest quanta) is exceeded at (62, 57) and (56, 56); the bound at the worst S
    holds."""
    vocab, (f, b) = 154_880, bits
    chi2 = fx.exact_chi2(_aligned_row(vocab, f, b), f, b)
    assert chi2 <= fx.chi2_bound(vocab, f, b)
    g = fx.TREE_DEPTH * fx.UNIT_ROUNDOFF / (1 - fx.TREE_DEPTH * fx.UNIT_ROUNDOFF)
    k1, k2 = (fx.level_bound(n, 2.0**f, b) for n in (-(-vocab // fx.LANES), fx.LANES))
    chi1 = (np.sqrt((1 + g) / (1 - g) * k1) + g / (1 - g)) ** 2
    assert (chi2 > chi1 + k2 + chi1 * k2) == (b < 64)
    assert fx.chi2_bound(vocab) == fx.GUARANTEE == fx.chi2_bound(vocab, 62, 96)


@pytest.mark.parametrize("fraction_bits, n", [(62, 1210), (56, 1210), (48, 1210), (40, 128)])
def test_the_worst_quanta_follow_the_crossover_not_the_uniforms_width(fraction_bits, n):
    """Review 3, finding 4: the top end of S is the worse end while b < F + (log2 n + 1)/2,
    the smallest S from about there on, even where 2^b is still below the top end's quanta."""
    from rslab.numerics import fixed_invcdf as fi

    lo, top = fi.quanta_range(n, fraction_bits)
    cross = fraction_bits + (np.log2(n) + 1) / 2
    for b in range(fraction_bits + 1, fraction_bits + 40):
        top_worse = fi.level_bound(n, top, b) > fi.level_bound(n, lo, b)
        if abs(b - cross) > 1:
            assert top_worse == (b < cross), b
    b = int(np.ceil(cross)) + 1  # past the crossover, the uniform narrower than the top end
    assert 2.0**b < top and fi.level_bound(n, lo, b) > fi.level_bound(n, top, b)
