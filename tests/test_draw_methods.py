"""The Fast path's race and inverse-CDF draws in the reference: semantics, randomness, errors."""

import numpy as np
import pytest

from rslab import reference as ref
from rslab.draws import draw_tokens, race_scores
from rslab.fixtures import first_reject_inputs, sampled_inputs
from rslab.numerics import invcdf
from rslab.numerics.methods import DEFAULT_NOISE, resolve_noise, variant_name
from rslab.numerics.race import RaceNoise, race_exponential, race_multiplier
from rslab.numerics.rng import all_uniforms
from rslab.randomness import BONUS, RESIDUAL, random_uniforms, random_words

V = 1024


@pytest.fixture(scope="module")
def inputs():
    return sampled_inputs(R=6, S=3, V=V, mismatch=2.0, seed=3)


def test_gumbel_is_the_default_and_unchanged(inputs):
    base = ref.rejection_sample(*inputs, path="fast", seed=5)
    explicit = ref.rejection_sample(*inputs, path="fast", seed=5, method="gumbel", noise="div8")
    assert np.array_equal(base.tokens, explicit.tokens)
    assert resolve_noise("gumbel") == "div8" and DEFAULT_NOISE["race"] == "scaled"


@pytest.mark.parametrize("method", ["race", "invcdf"])
def test_rows_are_drawn_by_the_method(method):
    """A forced first rejection: every request's token is the method's residual draw."""
    l, q, ids = first_reject_inputs(R=2, S=2, V=V, seed=1)
    out = ref.rejection_sample(l, q, ids, path="fast", seed=9, method=method)
    p = ref.target_probs(l[:, 0], "fast")
    w = ref.residual_weights(p, q[:, 0])
    expected = draw_tokens(method, None, 9, np.arange(2), 0, RESIDUAL, w)
    assert np.array_equal(out.num_accepted, [0, 0])
    assert np.array_equal(out.tokens[:, 0], expected)


@pytest.mark.parametrize("method", ["gumbel", "race", "invcdf"])
def test_diagnostics_keep_the_tokens_and_the_score_is_gumbel_only(inputs, method):
    plain = ref.rejection_sample(*inputs, path="fast", seed=4, method=method)
    diag = ref.rejection_sample(*inputs, path="fast", seed=4, method=method, diagnostics=True)
    assert np.array_equal(plain.tokens, diag.tokens)
    assert np.array_equal(plain.num_accepted, diag.num_accepted)
    assert not np.isnan(diag.diagnostics["m"][:, 0]).any()
    score = diag.diagnostics["score"]
    assert np.isnan(score).all() == (method != "gumbel")
    assert np.isfinite(score).all() == (method == "gumbel")


@pytest.mark.parametrize("method", ["race", "invcdf"])
def test_bonus_row_draws_from_the_softmax_numerators(method):
    rng = np.random.default_rng(0)
    logits = rng.standard_normal((3, 1, V)).astype(np.float32)
    out = ref.rejection_sample(logits, np.zeros((3, 0, V), np.float32),
                               np.zeros((3, 0), np.int64), path="fast", seed=2, method=method)
    w = ref.softmax_numerators(logits[:, 0], "fast")
    assert np.array_equal(out.tokens[:, 0], draw_tokens(method, None, 2, np.arange(3), 0,
                                                       BONUS, w))


@pytest.mark.parametrize("method,noise", [("race", "scaled"), ("race", "naive"),
                                          ("invcdf", "u24"), ("invcdf", "wide"),
                                          ("invcdf", "wide48")])
def test_same_seed_same_bits_other_seed_other_tokens(inputs, method, noise):
    a = ref.rejection_sample(*inputs, path="fast", seed=1, method=method, noise=noise)
    b = ref.rejection_sample(*inputs, path="fast", seed=1, method=method, noise=noise)
    c = ref.rejection_sample(*inputs, path="fast", seed=2, method=method, noise=noise)
    assert np.array_equal(a.tokens, b.tokens)
    assert not np.array_equal(a.tokens, c.tokens)


@pytest.mark.parametrize("kwargs,match", [
    ({"method": "argmax"}, "method must be one of"),
    ({"method": "race", "noise": "div8"}, "noise must be one of .* 'race'"),
    ({"method": "invcdf", "noise": "scaled"}, "noise must be one of .* 'invcdf'"),
    ({"method": "race", "path": "exact"}, "method: the 'exact' path"),
    ({"method": "gumbel", "noise": "div(-1)"}, "noise"),
    ({"method": "invcdf", "noise": 3}, "noise must be a noise-variant name"),
])
def test_bad_arguments_name_the_argument(inputs, kwargs, match):
    kw = {"path": "fast", **kwargs}
    with pytest.raises(ValueError, match=match):
        ref.rejection_sample(*inputs, **kw)


def test_variant_names():
    assert variant_name("race") == "race-scaled"
    assert variant_name("invcdf", "u24") == "invcdf-u24"
    assert variant_name("gumbel", "div(8.0)") == "gumbel-div8"


def test_naive_race_plateau_hit_wins_outright():
    """E = 0 on the plateau: rcp gives +inf and that token beats a weight 10^30 times larger."""
    u = random_uniforms("fast", 4, 0, 0, RESIDUAL, np.arange(4096))[0]
    hits = np.flatnonzero(race_exponential(u, "naive") == 0)
    assert hits.size > 0
    w = np.full(4096, 1e-30, np.float32)
    w[0] = 1.0
    w[hits[-1]] = 1e-30
    tok = draw_tokens("race", "naive", 4, [0], 0, RESIDUAL, w[None])[0]
    assert tok == hits[0] and tok != 0
    assert draw_tokens("race", "scaled", 4, [0], 0, RESIDUAL, w[None])[0] == 0


def test_scaled_race_has_no_zero_exponential_and_naive_has_the_plateau():
    u = all_uniforms()
    naive = race_exponential(u, "naive")
    assert np.count_nonzero(race_exponential(u, "scaled") <= 0) == 0
    assert np.all(np.signbit(naive[naive == 0]) == 0)  # +0, so rcp is +inf
    assert np.all(race_multiplier(u[naive == 0], "naive") == np.inf)
    g = RaceNoise("naive")(u[-8:])
    assert np.isposinf(g).all()


def test_race_scores_never_nan_and_zero_weights_lose():
    u = random_uniforms("fast", 0, 0, 0, RESIDUAL, np.arange(512))
    w = np.zeros((1, 512), np.float32)
    w[0, 100:] = 1.0
    s = race_scores(w, u, "naive")
    assert not np.isnan(s).any() and np.all(s[0, :100] == -np.inf)
    assert draw_tokens("race", "naive", 0, [0], 0, RESIDUAL, w)[0] >= 100


@pytest.mark.parametrize("noise", invcdf.INVCDF_NOISES)
def test_invcdf_never_draws_a_zero_weight(noise):
    rng = np.random.default_rng(5)
    w = rng.random((64, 700)).astype(np.float32)
    w[rng.random(w.shape) < 0.7] = 0
    w[:, 699] = 1e-3
    tok = draw_tokens("invcdf", noise, 1, np.arange(64), 0, RESIDUAL, w)
    assert np.all(w[np.arange(64), tok] > 0)
    one = np.zeros((1, 700), np.float32)
    one[0, 333] = 2.0
    assert draw_tokens("invcdf", noise, 1, [0], 0, RESIDUAL, one)[0] == 333


def test_invcdf_reads_tokens_zero_one_and_two_of_the_row():
    w = np.ones((1, 300), np.float32)
    words = random_words("fast", 8, 2, 1, BONUS, [0, 1, 2])
    u = random_uniforms("fast", 8, 2, 1, BONUS, [0, 1])
    p = invcdf.prefix(w)
    assert draw_tokens("invcdf", "wide", 8, [2], 1, BONUS, w)[0] == \
        invcdf.pick(p, "wide", u[:, 0], u[:, 1])[0]
    assert draw_tokens("invcdf", "u24", 8, [2], 1, BONUS, w)[0] == invcdf.pick(p, "u24", u[:, 0])[0]
    k = (words[:, 1].astype(np.int64) >> 8 << 24) | (words[:, 2].astype(np.int64) >> 8)
    assert draw_tokens("invcdf", "wide48", 8, [2], 1, BONUS, w)[0] == \
        invcdf.pick(p, "wide48", u[:, 0], k)[0]
    with pytest.raises(ValueError, match="second"):
        invcdf.pick(p, "wide48", u[:, 0])
