"""The reference sampler: contract, edge cases, random-number layout, validation."""

import numpy as np
import pytest

from rslab import reference
from rslab.fixtures import normalise, sampled_inputs
from rslab.numerics.rng import hw_random_words, philox4x32, uniform_from_words
from rslab.reference import (
    ACCEPT,
    BONUS,
    DRAFT_SUM_TOL,
    LOG2E,
    RESIDUAL,
    fast_key,
    gumbel_noise,
    path_math,
    random_uniforms,
    random_words,
    rejection_sample,
    residual_weights,
    target_probs,
)

PATHS = ("exact", "fast")


def _inputs(R=40, S=3, V=37, mismatch=1.5, seed=0):
    return sampled_inputs(R, S, V, mismatch=mismatch, seed=seed)


def _scalar_sample(l, q, ids, path, seed, noise="div8"):
    """One request at a time, straight from the documented layout and float32 rules."""
    math = path_math(path, noise)
    R, S1, V = l.shape
    out = np.full((R, S1), -1, np.int64)
    vocab = np.arange(V)
    for r in range(R):
        for s in range(S1):
            if s == S1 - 1:
                g = gumbel_noise(math, seed, r, s, BONUS, vocab)[0]
                score = np.where(l[r, s] == -np.inf, -np.inf, l[r, s] * LOG2E + g)
                out[r, s] = int(np.argmax(score))
                break
            p = target_probs(l[r, s], math)
            x = ids[r, s]
            u = random_uniforms(path, seed, r, s, ACCEPT, [0])[0, 0]
            if q[r, s, x] > 0 and np.float32(u * q[r, s, x]) < p[x]:
                out[r, s] = x
                continue
            w = np.maximum(p - q[r, s], np.float32(0))
            if not (w > 0).any():
                w = p
            with np.errstate(divide="ignore"):
                lw = math.log2(w)
            g = gumbel_noise(math, seed, r, s, RESIDUAL, vocab)[0]
            with np.errstate(invalid="ignore"):
                score = np.where(lw == -np.inf, -np.inf, lw + g)
            out[r, s] = int(np.argmax(score))
            break
    return out


@pytest.mark.parametrize("path", PATHS)
def test_matches_scalar_implementation_of_the_documented_layout(path):
    inputs = _inputs()
    res = rejection_sample(*inputs, path=path, seed=11)
    expected = _scalar_sample(*inputs, path, 11)
    assert 0 < res.num_accepted.mean() < 3  # the inputs exercise accept, reject and bonus
    np.testing.assert_array_equal(res.tokens, expected)


@pytest.mark.parametrize("path", PATHS)
def test_output_shape_fill_and_counts(path):
    l, q, ids = _inputs(R=200)
    res = rejection_sample(l, q, ids, path=path, seed=1)
    assert res.tokens.dtype == np.int64 and res.num_accepted.dtype == np.int64
    assert res.tokens.shape == (200, 4) and res.num_accepted.shape == (200,)
    n = res.num_accepted
    pos = np.arange(4)[None, :]
    assert ((res.tokens >= 0) == (pos <= n[:, None])).all()
    assert (res.tokens[pos < n[:, None]] == ids[pos[:, :3] < n[:, None]]).all()
    np.testing.assert_array_equal(res.num_emitted, n + 1)


def test_same_seed_same_tokens_and_seed_matters():
    inputs = _inputs(R=300)
    for path in PATHS:
        a = rejection_sample(*inputs, path=path, seed=5)
        b = rejection_sample(*inputs, path=path, seed=5)
        c = rejection_sample(*inputs, path=path, seed=6)
        np.testing.assert_array_equal(a.tokens, b.tokens)
        assert (a.tokens != c.tokens).any()


def test_large_seed_uses_both_key_words():
    inputs = _inputs(R=100)
    a = rejection_sample(*inputs, seed=7)
    b = rejection_sample(*inputs, seed=7 + 2**32)
    assert (a.tokens != b.tokens).any()
    np.testing.assert_array_equal(reference.philox_key(7 + 2**32), [7, 1])


@pytest.mark.parametrize("path", PATHS)
def test_rows_do_not_depend_on_batch_mates_or_chunking(path, monkeypatch):
    l, q, ids = _inputs(R=30)
    base = rejection_sample(l, q, ids, path=path, seed=2)
    l2, q2, ids2 = _inputs(R=30, seed=9)
    mates = np.arange(30) != 17
    l2[~mates], q2[~mates], ids2[~mates] = l[~mates], q[~mates], ids[~mates]
    other = rejection_sample(l2, q2, ids2, path=path, seed=2)
    np.testing.assert_array_equal(other.tokens[17], base.tokens[17])
    assert (other.tokens[mates] != base.tokens[mates]).any()
    monkeypatch.setattr(reference, "CHUNK_ELEMENTS", 2 * l.shape[2])
    np.testing.assert_array_equal(rejection_sample(l, q, ids, path=path, seed=2).tokens,
                                  base.tokens)


@pytest.mark.parametrize("path", PATHS)
def test_p_equal_q_always_accepts(path):
    l, _, _ = _inputs(R=500, V=11)
    q = target_probs(l[:, :3], path)
    ids = sampled_inputs(500, 3, 11, seed=3).draft_token_ids
    res = rejection_sample(l, q, ids, path=path, seed=0)
    assert (res.num_accepted == 3).all()
    np.testing.assert_array_equal(res.tokens[:, :3], ids)


def test_disjoint_supports_always_reject_and_resample_from_p():
    R, V = 4000, 6
    l = np.full((R, 2, V), -np.inf, np.float32)
    l[:, :, :3] = np.array([0.0, 1.0, 2.0], np.float32)
    q = np.zeros((R, 1, V), np.float32)
    q[:, 0, 3:] = np.float32(1 / 3)
    ids = np.full((R, 1), 4)
    res = rejection_sample(l, q, ids, seed=1)
    assert (res.num_accepted == 0).all()
    freq = np.bincount(res.tokens[:, 0], minlength=V) / R
    p = target_probs(l[0, 0])
    assert freq[3:].sum() == 0
    np.testing.assert_allclose(freq, p, atol=0.03)


@pytest.mark.parametrize("path", PATHS)
def test_one_hot_target_emits_only_the_hot_token(path):
    R, S, V = 300, 3, 9
    l = np.full((R, S + 1, V), -np.inf, np.float32)
    l[:, :, 4] = 1.5
    _, q, ids = _inputs(R=R, S=S, V=V)
    res = rejection_sample(l, q, ids, path=path, seed=0)
    emitted = res.tokens[res.tokens >= 0]
    assert (emitted == 4).all()
    assert (res.num_accepted == (ids == 4).cumprod(axis=1).sum(axis=1)).all()


@pytest.mark.parametrize("path", PATHS)
def test_draft_token_with_zero_q_is_always_rejected(path):
    R, V = 500, 5
    l = np.zeros((R, 2, V), np.float32)
    q = np.tile(normalise([[0, 1, 1, 1, 1]]), (R, 1, 1))
    ids = np.zeros((R, 1), np.int64)
    res = rejection_sample(l, q, ids, path=path, seed=0)
    assert (res.num_accepted == 0).all()
    assert (res.tokens[:, 0] == 0).all()  # the residual max(p − q, 0) sits on token 0 only


@pytest.mark.parametrize("path", PATHS)
def test_draft_token_with_zero_p_is_always_rejected(path):
    R, V = 500, 5
    l = np.zeros((R, 2, V), np.float32)
    l[:, 0, 2] = -np.inf
    q = np.tile(normalise([[1, 1, 1, 1, 1]]), (R, 1, 1))
    ids = np.full((R, 1), 2)
    res = rejection_sample(l, q, ids, path=path, seed=0)
    assert (res.num_accepted == 0).all()
    assert not (res.tokens[:, 0] == 2).any()


def test_residual_all_zero_falls_back_to_p():
    p = np.array([[0.5, 0.25, 0.25, 0.0]], np.float32)
    q = p.copy()
    q[0, 3] = 5e-4
    np.testing.assert_array_equal(residual_weights(p, q), p)
    w = residual_weights(p, normalise([[1, 1, 1, 1]]))
    np.testing.assert_array_equal(w, np.maximum(p - np.float32(0.25), 0))


@pytest.mark.parametrize("path", PATHS)
def test_residual_that_rounds_to_all_zero_samples_from_p(path):
    R, V = 6000, 4
    l = np.tile(np.array([0.0, -0.7, 0.4, -np.inf], np.float32), (R, 2, 1))
    p = target_probs(l[:1, 0], path)
    q = p.copy()
    q[0, 3] = np.float32(DRAFT_SUM_TOL / 2)  # q ≥ p everywhere: max(p − q, 0) = 0
    q = np.tile(q[None], (R, 1, 1))
    ids = np.full((R, 1), 3)
    res = rejection_sample(l, q, ids, path=path, seed=4)
    assert (res.num_accepted == 0).all()
    freq = np.bincount(res.tokens[:, 0], minlength=V) / R
    assert freq[3] == 0
    np.testing.assert_allclose(freq, p[0], atol=0.025)


@pytest.mark.parametrize("path", PATHS)
def test_minus_inf_logits_are_never_emitted(path):
    l, q, ids = _inputs(R=400, V=20)
    l[:, :, ::3] = -np.inf
    res = rejection_sample(l, q, ids, path=path, seed=0)
    assert (ids % 3 == 0).any() and (res.num_accepted < 3).any()
    assert (res.tokens[res.tokens >= 0] % 3 != 0).all()


@pytest.mark.parametrize("V", [1, 2, 300, 1000])
def test_vocabularies_not_multiple_of_256(V):
    inputs = _inputs(R=50, V=V)
    for path in PATHS:
        res = rejection_sample(*inputs, path=path, seed=3)
        assert ((res.tokens >= -1) & (res.tokens < V)).all()


def test_noise_of_a_token_does_not_depend_on_vocabulary_size():
    for path in PATHS:
        short = gumbel_noise(path, 1, [0, 3], 2, RESIDUAL, np.arange(300))
        long = gumbel_noise(path, 1, [0, 3], 2, RESIDUAL, np.arange(1000))
        np.testing.assert_array_equal(short, long[:, :300])


def test_s_zero_emits_only_the_bonus():
    l, _, _ = _inputs(R=100, S=0)
    q = np.zeros((100, 0, 37), np.float32)
    ids = np.zeros((100, 0), np.int64)
    res = rejection_sample(l, q, ids, seed=0)
    assert res.tokens.shape == (100, 1) and (res.num_accepted == 0).all()
    assert (res.tokens >= 0).all()


def test_empty_batch():
    res = rejection_sample(np.zeros((0, 3, 5), np.float32), np.zeros((0, 2, 5), np.float32),
                           np.zeros((0, 2), np.int64))
    assert res.tokens.shape == (0, 3) and res.num_accepted.shape == (0,)


def test_exact_layout_is_philox_at_the_documented_counters():
    seed, r, s = 0x1234_5678_9ABC, 5, 2
    key = np.array([seed & 0xFFFFFFFF, seed >> 32], np.uint32)
    tokens = np.arange(1100)
    words = random_words("exact", seed, r, s, RESIDUAL, tokens)[0]
    for i in (0, 1, 127, 128, 255, 256, 383, 384, 511, 512, 700, 1099):
        c0 = (i // 512) * 128 + i % 128
        block = philox4x32(np.array([c0, s, r, RESIDUAL], np.uint32), key)
        assert words[i] == block[(i // 128) % 4]
    acc = random_words("exact", seed, r, s, ACCEPT, [0])[0, 0]
    assert acc == philox4x32(np.array([0, s, r, ACCEPT], np.uint32), key)[0]
    assert np.unique(words).size == words.size


def test_fast_layout_is_the_hardware_rng_with_host_keys():
    seed, r, s = 99, 7, 4
    words = random_words("fast", seed, r, s, BONUS, np.arange(10))[0]
    key = fast_key(seed, r, s, BONUS)
    np.testing.assert_array_equal(words, hw_random_words(key, np.arange(10, dtype=np.uint32)))
    keys = {int(fast_key(seed, rr, ss, pp)[0]) for rr in range(4) for ss in range(4)
            for pp in (ACCEPT, RESIDUAL, BONUS)}
    assert len(keys) == 48
    u = random_uniforms("fast", seed, r, s, BONUS, np.arange(10))[0]
    np.testing.assert_array_equal(u, uniform_from_words(words))


def test_exact_noise_is_precise_float32_gumbel():
    u = random_uniforms("exact", 3, 0, 0, BONUS, np.arange(2000))
    g = gumbel_noise("exact", 3, 0, 0, BONUS, np.arange(2000))
    ideal = -np.log2(-np.log2(u.astype(np.float64)))
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, ideal, rtol=1e-5, atol=1e-6)


# --- validation -------------------------------------------------------------------------


def _valid():
    l, q, ids = _inputs(R=4, S=2, V=8)
    return {"target_logits": l, "draft_probs": q, "draft_token_ids": ids}


def _bad(name, fn):
    def make():
        args = _valid()
        args[name] = fn(args[name])
        return args
    return make


def _set(index, value):
    def fn(a):
        a = a.copy()
        a[index] = value
        return a
    return fn


BAD_INPUTS = [
    ("target_logits", _bad("target_logits", _set((0, 1, 3), np.nan))),
    ("target_logits", _bad("target_logits", _set((1, 0, 0), np.inf))),
    ("target_logits", _bad("target_logits", _set((2, 2), -np.inf))),
    ("target_logits", _bad("target_logits", lambda a: a.astype(np.float64))),
    ("target_logits", _bad("target_logits", lambda a: a[0])),
    ("target_logits", _bad("target_logits", lambda a: a.tolist())),
    ("draft_probs", _bad("draft_probs", lambda a: a.astype(np.float16))),
    ("draft_probs", _bad("draft_probs", _set((0, 0, 0), -1e-6))),
    ("draft_probs", _bad("draft_probs", _set((0, 0, 0), np.nan))),
    ("draft_probs", _bad("draft_probs", lambda a: a * np.float32(1 + 3 * DRAFT_SUM_TOL))),
    ("draft_probs", _bad("draft_probs", lambda a: a[:, :1])),
    ("draft_probs", _bad("draft_probs", lambda a: a[:3])),
    ("draft_probs", _bad("draft_probs", lambda a: a[..., :7])),
    ("draft_token_ids", _bad("draft_token_ids", _set((1, 1), 8))),
    ("draft_token_ids", _bad("draft_token_ids", _set((1, 1), -1))),
    ("draft_token_ids", _bad("draft_token_ids", lambda a: a.astype(np.float32))),
    ("draft_token_ids", _bad("draft_token_ids", lambda a: a.astype(bool))),
    ("draft_token_ids", _bad("draft_token_ids", lambda a: a[:, :1])),
    ("draft_token_ids", _bad("draft_token_ids", lambda a: a[:2])),
    ("draft_token_ids", _bad("draft_token_ids", lambda a: a[:, :, None])),
]


@pytest.mark.parametrize(("name", "make"), BAD_INPUTS)
def test_invalid_inputs_name_the_argument(name, make):
    with pytest.raises(ValueError, match=name):
        rejection_sample(**make())


def test_draft_sum_within_tolerance_is_accepted():
    args = _valid()
    args["draft_probs"] = args["draft_probs"] * np.float32(1 + DRAFT_SUM_TOL / 2)
    rejection_sample(**args)


@pytest.mark.parametrize(("kw", "name"), [
    ({"path": "slow"}, "path"), ({"path": None}, "path"),
    ({"noise": "div0"}, "noise"), ({"noise": "bogus"}, "noise"), ({"noise": 8}, "noise"),
    ({"seed": -1}, "seed"), ({"seed": 2**64}, "seed"), ({"seed": 1.5}, "seed"),
    ({"seed": True}, "seed"), ({"seed": "1"}, "seed"),
])
def test_invalid_options_name_the_option(kw, name):
    with pytest.raises(ValueError, match=name):
        rejection_sample(**_valid(), **kw)


def test_inputs_are_not_modified():
    args = _valid()
    copies = {k: v.copy() for k, v in args.items()}
    rejection_sample(**args, path="fast")
    for k, v in args.items():
        np.testing.assert_array_equal(v, copies[k])


@pytest.mark.parametrize("path", PATHS)
def test_diagnostics_are_the_float32_intermediates_of_the_checked_positions(path):
    l, q, ids = _inputs(R=12, S=3, V=40)
    plain = rejection_sample(l, q, ids, path=path, seed=3)
    out = rejection_sample(l, q, ids, path=path, seed=3, diagnostics=True)
    assert plain.diagnostics is None
    assert np.array_equal(out.tokens, plain.tokens)
    d = out.diagnostics
    assert set(d) == set(reference.DIAGNOSTICS)
    math = path_math(path)
    for r in range(l.shape[0]):
        checked = min(3, int(out.num_accepted[r]) + 1)
        for s in range(3):
            if s >= checked:
                assert np.isnan(d["m"][r, s]) and np.isnan(d["u"][r, s])
                continue
            p = target_probs(l[r, s][None], math)[0]
            assert d["m"][r, s] == l[r, s].max() and d["px"][r, s] == p[ids[r, s]]
            u = random_uniforms(path, 3, [r], s, ACCEPT, [0])[0, 0]
            assert d["u"][r, s] == u
    assert not np.isnan(d["score"]).any()


def test_diagnostics_must_be_a_bool():
    with pytest.raises(ValueError, match="diagnostics"):
        rejection_sample(*_inputs(R=2), diagnostics="yes")
