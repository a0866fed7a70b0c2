"""The reference sampler's output law, acceptance rate and chain law (seeded, so deterministic)."""

import numpy as np
import pytest
from scipy import stats

from rslab.fixtures import normalise, sample_draft_tokens, zipf_target_logits
from rslab.reference import (
    acceptance_probability,
    accepted_count_law,
    gumbel_noise,
    rejection_sample,
    target_probs,
)

R, S, V = 120_000, 3, 5
P_MIN = 1e-3  # a correct sampler passes every χ² at this level for these fixed seeds


def _broadcast_inputs(path):
    """One target row per position (shared by all requests) and q far from p; drafts from q."""
    l = np.array([[2.0, 1.0, 0.0, -1.0, -np.inf],
                  [0.0, 0.0, 0.5, 3.0, 1.0],
                  [-2.0, 1.0, 1.0, 0.0, 0.5],
                  [1.0, -1.0, 0.0, 2.0, 0.0]], np.float32)
    q = normalise([[1, 2, 3, 4, 5], [5, 1, 1, 1, 1], [0, 1, 3, 1, 2]])
    logits = np.broadcast_to(l, (R, S + 1, V))
    draft = np.broadcast_to(q, (R, S, V))
    ids = sample_draft_tokens(draft, seed=21)
    p = target_probs(l, path).astype(np.float64)
    return logits, draft, ids, p, q.astype(np.float64)


@pytest.fixture(scope="module", params=["exact", "fast"])
def run(request):
    path = request.param
    logits, draft, ids, p, q = _broadcast_inputs(path)
    res = rejection_sample(logits, draft, ids, path=path, seed=123)
    return res, p, q


def _chi2_pvalue(counts, probs):
    keep = probs > 0
    assert counts[~keep].sum() == 0
    return stats.chisquare(counts[keep], counts.sum() * probs[keep] / probs[keep].sum()).pvalue


def test_every_emitted_position_follows_p(run):
    res, p, q = run
    for s in range(S + 1):
        reached = res.num_accepted >= s
        counts = np.bincount(res.tokens[reached, s], minlength=V)
        assert _chi2_pvalue(counts, p[s]) > P_MIN, s
        if s < S:  # the test has power: the same counts are far from q's law
            assert _chi2_pvalue(counts, q[s] + 1e-12) < 1e-12


def test_acceptance_rate_is_sum_of_min_p_q(run):
    res, p, q = run
    for s in range(S):
        reached = res.num_accepted >= s
        accepted = res.num_accepted[reached] > s
        alpha = np.minimum(p[s], q[s]).sum()
        sigma = np.sqrt(alpha * (1 - alpha) / reached.sum())
        assert abs(accepted.mean() - alpha) < 4 * sigma, (s, accepted.mean(), alpha)


def test_number_of_emitted_tokens_follows_the_chain_law(run):
    res, p, q = run
    alpha = np.minimum(p[:S], q).sum(axis=1)
    reach = np.concatenate([[1.0], np.cumprod(alpha)])
    law = reach * np.concatenate([1 - alpha, [1.0]])
    np.testing.assert_allclose(accepted_count_law(acceptance_probability(p[:S], q)), law)
    counts = np.bincount(res.num_accepted, minlength=S + 1)
    assert np.isclose(law.sum(), 1)
    assert _chi2_pvalue(counts, law) > P_MIN


def test_s_zero_bonus_follows_p():
    l = np.broadcast_to(np.array([[0.5, -1.0, 2.0, 0.0, -np.inf, 1.0]], np.float32),
                        (50_000, 1, 6))
    res = rejection_sample(l, np.zeros((50_000, 0, 6), np.float32), np.zeros((50_000, 0), int),
                           seed=8)
    counts = np.bincount(res.tokens[:, 0], minlength=6)
    assert _chi2_pvalue(counts, target_probs(l[0, 0]).astype(np.float64)) > P_MIN


def _rank_bins(p):
    """Token → bin by its rank in p: rank 1, 2–4, 5–16, 17 and beyond."""
    rank = np.empty(p.size, np.int64)
    rank[np.argsort(-p, kind="stable")] = np.arange(1, p.size + 1)
    return np.searchsorted([1, 4, 16], rank, side="left")


def test_fast_naive_noise_is_measurably_wrong_without_nan():
    """Realistic vocabulary and a peaked (Zipf) target: naive noise has +inf values that win."""
    Rn, Vn = 200, 154_880
    l = zipf_target_logits(1, 0, Vn, exponent=2.0, seed=5)
    logits = np.broadcast_to(l, (Rn, 1, Vn))
    q = np.zeros((Rn, 0, Vn), np.float32)
    ids = np.zeros((Rn, 0), np.int64)
    p = target_probs(l[0, 0], "fast").astype(np.float64)
    bins = _rank_bins(p)
    bin_p = np.bincount(bins, weights=p, minlength=4)
    pvalues = {}
    for noise in ("div8", "naive"):
        g = gumbel_noise("fast", 0, np.arange(8), 0, 2, np.arange(Vn), noise=noise)
        assert not np.isnan(g).any()
        tokens = rejection_sample(logits, q, ids, path="fast", noise=noise, seed=0).tokens[:, 0]
        assert ((tokens >= 0) & (tokens < Vn)).all()
        pvalues[noise] = _chi2_pvalue(np.bincount(bins[tokens], minlength=4), bin_p)
    assert np.isposinf(g).any()  # the naive pipeline's plateau: t = 0, g = +inf
    assert pvalues["div8"] > P_MIN
    assert pvalues["naive"] < 1e-10
