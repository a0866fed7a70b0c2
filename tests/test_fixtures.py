"""Input fixtures: BF16 rounding, draft sampling, and the forced test-point outcomes."""

import numpy as np
import pytest
from scipy import stats

from rslab.fixtures import (
    REJECT_LOGIT,
    TEST_POINTS,
    all_accept_inputs,
    first_reject_inputs,
    is_bf16,
    round_to_bf16,
    sample_draft_tokens,
    sampled_inputs,
    scenario_inputs,
    zipf_target_logits,
)
from rslab.reference import DRAFT_SUM_TOL, rejection_sample, target_probs


def test_round_to_bf16_known_values():
    x = np.array([1.0, 1 + 2**-8, 1 + 2**-8 + 2**-10, 1 + 2**-7 + 2**-8, -2.5, 0.0, -np.inf,
                  3.0e38], np.float32)
    expected = np.array([1.0, 1.0, 1 + 2**-7, 1 + 2**-6, -2.5, 0.0, -np.inf,
                         2.9969e38], np.float32)
    out = round_to_bf16(x)
    np.testing.assert_array_equal(out[:7], expected[:7])
    assert is_bf16(out) and not is_bf16(np.float32([1 + 2**-9]))
    assert abs(out[7] / 3.0e38 - 1) < 2**-8
    with pytest.raises(ValueError, match="float32"):
        round_to_bf16(np.ones(2))


def test_round_to_bf16_is_nearest():
    x = np.random.default_rng(0).standard_normal(10_000).astype(np.float32) * 7
    r = round_to_bf16(x)
    step = np.float32(2.0) ** (np.floor(np.log2(np.abs(r))) - 7)
    assert (np.abs(r - x) <= step / 2).all()
    np.testing.assert_array_equal(round_to_bf16(r), r)


def test_sampled_inputs_are_valid_bf16_and_seeded():
    a = sampled_inputs(6, 3, 300, mismatch=0.5, seed=4)
    b = sampled_inputs(6, 3, 300, mismatch=0.5, seed=4)
    c = sampled_inputs(6, 3, 300, mismatch=0.5, seed=5)
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)
    assert (a.target_logits != c.target_logits).any()
    assert a.target_logits.dtype == np.float32 and is_bf16(a.target_logits)
    assert a.draft_probs.dtype == np.float32
    assert (np.abs(a.draft_probs.sum(-1, dtype=np.float64) - 1) < DRAFT_SUM_TOL).all()
    assert a.draft_token_ids.shape == (6, 3)
    assert is_bf16(zipf_target_logits(2, 1, 50))


def test_draft_tokens_are_drawn_from_q():
    q = np.broadcast_to(np.array([0.1, 0.0, 0.6, 0.3], np.float32), (40_000, 1, 4))
    ids = sample_draft_tokens(q, seed=1)
    counts = np.bincount(ids[:, 0], minlength=4)
    assert counts[1] == 0
    keep = [0, 2, 3]
    assert stats.chisquare(counts[keep], 40_000 * q[0, 0, keep]).pvalue > 1e-3


@pytest.mark.parametrize("V", [1, 3, 1000])
def test_all_accept_small_vocabularies(V):
    inputs = all_accept_inputs(R=50, S=3, V=V, seed=2)
    for path in ("exact", "fast"):
        res = rejection_sample(*inputs, path=path, seed=9)
        assert (res.num_accepted == 3).all()


def test_first_reject_small_vocabulary():
    l, q, ids = first_reject_inputs(R=50, S=2, V=40, seed=2)
    assert (q[np.arange(50), 0, ids[:, 0]] > 0).all()
    assert (l[np.arange(50), 0, ids[:, 0]] == round_to_bf16(np.float32([REJECT_LOGIT]))).all()
    for path in ("exact", "fast"):
        res = rejection_sample(l, q, ids, path=path, seed=3)
        assert (res.num_accepted == 0).all()


@pytest.mark.parametrize("name", sorted(TEST_POINTS))
def test_design_test_points_force_their_outcome(name):
    tp = TEST_POINTS[name]
    l, q, ids = scenario_inputs(name, seed=1)
    assert l.shape == (tp.R, tp.S + 1, 154_880) and is_bf16(l)
    expected = tp.S if name == "all-accept" else 0
    for path in ("exact", "fast"):
        for seed in (0, 1):
            res = rejection_sample(l, q, ids, path=path, seed=seed)
            assert (res.num_accepted == expected).all()
    if name == "first-reject":
        p0 = target_probs(l[:, 0], "fast")
        assert (p0[np.arange(tp.R), ids[:, 0]] == 0).all()


@pytest.mark.parametrize(("call", "arg"), [
    (lambda: sampled_inputs(-1, 2, 3), "R"), (lambda: sampled_inputs(2, 2, 0), "V"),
    (lambda: sampled_inputs(2, 1.5, 3), "S"), (lambda: sampled_inputs(2, 2, 3, mismatch=-1),
                                                "mismatch"),
    (lambda: first_reject_inputs(2, 0, 10), "S"), (lambda: scenario_inputs("fast"), "name"),
    (lambda: zipf_target_logits(1, 1, 5, exponent=0), "exponent"),
])
def test_fixture_arguments_are_checked(call, arg):
    with pytest.raises(ValueError, match=arg):
        call()
