"""Exact laws of any row, the divergence bound, the adversarial families and the fixed-point
draw's guarantee on random rows."""

import numpy as np
import pytest
from fuzzing import examples
from hypothesis import given
from hypothesis import strategies as st

from rslab.numerics import adversary, fixed_invcdf, invcdf, targets
from rslab.numerics import divergence_bound as db
from rslab.numerics.token_law import RESOLUTION, exact_token_probs, run_law, token_bounds

V = 1024


def test_exact_token_probs_of_each_draw_sum_to_one():
    w = targets.peaked(0.01, V).row()
    for method, noise in (("gumbel", "div8"), ("race", "scaled"), ("invcdf", "wide48"),
                          ("fixed", "u96")):
        P = exact_token_probs(w, method, noise)
        assert P.shape == (V,) and abs(P.sum() - 1) < 1e-9 and np.all(P >= 0)


def test_argmax_row_law_is_the_run_law():
    t = targets.peaked(0.01, V)
    P = exact_token_probs(t.row(), "gumbel", "div8")
    law = run_law(t, "gumbel", "div8")
    assert P[0] == law.first[0] and np.isclose(P[1:].sum(), law.total[1], rtol=1e-12)


def test_argmax_law_of_a_permuted_row_is_permuted():
    """Zero weights never win; a shuffled comb (two weights, 1,024 runs) is drawn as each
    weight's tokens made adjacent: the law per weight is the same."""
    i = np.arange(V)
    comb = np.where(i % 2 == 0, 1, 2.0**-3).astype(np.float32)
    comb[5] = 0
    perm = np.random.default_rng(1).permutation(V)
    P, Q = exact_token_probs(comb, "race", "scaled"), exact_token_probs(comb[perm], "race",
                                                                       "scaled")
    assert P[5] == 0 and Q[np.flatnonzero(perm == 5)[0]] == 0
    for value in (1, 2.0**-3):
        assert np.isclose(P[comb == value].sum(), Q[comb[perm] == value].sum(), rtol=1e-9)


def test_inverse_cdf_laws_are_the_modules():
    w = targets.peaked(1e-3, V).row()
    assert np.array_equal(exact_token_probs(w, "invcdf", "u24"), invcdf.exact_law(w, "u24").probs)
    assert np.array_equal(exact_token_probs(w, "fixed"), fixed_invcdf.exact_probs(w))


@pytest.mark.parametrize("bad", [np.zeros(4, np.float32), np.float32([1, -1]),
                                 np.float32([[1, 2]]), np.float64([1, 2]),
                                 np.float32([1, np.inf])])
def test_rows_are_checked(bad):
    with pytest.raises(ValueError, match="weights must"):
        exact_token_probs(bad, "invcdf")


def test_the_fixed_draws_domain_is_checked():
    with pytest.raises(ValueError, match="weights: the fixed-point draw"):
        exact_token_probs(np.float32([1, 2.0**121]), "fixed")


def test_an_argmax_law_of_many_distinct_weights_is_bounded():
    """399 distinct weights: brackets about the resolution wide hold the midpoint; the same
    row with few distinct weights (and its runs in order) is today's exact law."""
    w = np.arange(1, 400, dtype=np.float32)
    b = token_bounds(w, "gumbel")
    p = adversary.target_of(w)
    assert not b.is_exact and 0 < b.rel_half_width(p) < 2 * RESOLUTION
    few = np.repeat(np.float32([4, 2, 1]), 100)
    exact = token_bounds(few, "gumbel")
    assert np.array_equal(exact.lo, exact.mid) and np.all(exact.hi - exact.lo <= 2e-15)


def test_the_chi2_interval():
    rng = np.random.default_rng(2)
    p = rng.dirichlet(np.ones(50))
    P = p * (1 + 0.1 * rng.standard_normal(50))
    P /= P.sum()
    lo, hi = P * (1 - 1e-3), P * (1 + 1e-3)
    c_lo, c_hi = db.chi2_interval(lo, hi, p)
    assert c_lo <= db.chi2(P, p) <= c_hi and c_hi - c_lo < 0.05 * c_hi
    for _ in range(20):  # any law in the box with ΣP ≤ 1
        Q = rng.uniform(lo, hi)
        Q *= min(1.0, 1 / Q.sum())
        Q = np.maximum(Q, lo)
        if Q.sum() <= 1:
            assert c_lo <= db.chi2(Q, p) <= c_hi
    assert db.chi2_interval(P, P, p) == pytest.approx((db.chi2(P, p),) * 2)
    assert db.chi2_interval([0.5, 0.5], [0.5, 0.5], [1.0, 0.0])[0] == float("inf")


def test_the_bound_and_the_cells():
    assert db.samples_no_test_sees(1e-12) == pytest.approx(2e10)
    assert db.samples_no_test_sees_tv(1e-5) == pytest.approx(1e4)
    assert db.samples_no_test_sees_tv(0.0) == float("inf")
    assert db.samples_no_test_sees(0.0) == float("inf")
    with pytest.raises(ValueError, match="advantage"):
        db.samples_no_test_sees(1.0, 1.5)
    p = np.full(256, 1 / 256)
    P = p.copy()
    P[:128] *= 1.01
    P[128:] *= 0.99
    f = db.figures(P, p)
    assert f["chi2"] == pytest.approx(1e-4) and f["chi2_vectors"] == pytest.approx(1e-4)
    assert f["chi2_lanes"] == pytest.approx(0, abs=1e-20) and f["detect_lanes"] == float("inf")
    assert f["kl"] <= np.log1p(f["chi2"]) and f["bound_samples_kl"] >= f["bound_samples_chi2"]
    assert f["bound_samples"] == max(f["bound_samples_chi2"], f["bound_samples_tv"])


def test_families_and_the_worst_row():
    rows = adversary.family_rows(V)
    assert len(rows) == 24 and all(w.dtype == np.float32 and w.size == V for w in rows.values())
    picked = {k: rows[k] for k in ("peaked(tail=1e-06)", "comb(every 128)", "zipf(s=2.5)")}
    worst = adversary.search([("invcdf", "u24"), ("fixed", "u96")], V, picked)
    assert [w["draw"] for w in worst] == ["invcdf-u24", "fixed-u96"]
    assert worst[1]["chi2"] <= fixed_invcdf.chi2_bound(V) < worst[0]["chi2"]


@pytest.mark.parametrize("vocab", [256, 16_384, targets.VOCAB])
def test_the_rounding_row_reaches_nine_tenths_of_the_bound(vocab):
    """The family that makes the float32 block sums err by −7u and +7u in turn: its exact χ²
    is at least 90 % of the fixed-point draw's bound (99.7 % at 256 tokens), the block sums'
    term (γ/(1−γ))² itself."""
    row = adversary.family_rows(vocab)[adversary.ROUNDING]
    chi2 = fixed_invcdf.exact_chi2(row)
    assert 0.9 * fixed_invcdf.chi2_bound(vocab) <= chi2 <= fixed_invcdf.chi2_bound(vocab)
    gamma = 7 * 2.0**-24 / (1 - 7 * 2.0**-24)
    assert chi2 == pytest.approx((gamma / (1 - gamma)) ** 2, rel=1e-4)
    if vocab == 256:
        assert chi2 >= 0.99 * fixed_invcdf.chi2_bound(vocab)


def test_the_search_finds_the_rounding_row_as_the_fixed_draws_worst():
    worst = adversary.search([("fixed", "u96")], V)[0]
    assert worst["target"] == adversary.ROUNDING and worst["rows"] == 24
    assert worst["chi2"] >= 0.9 * fixed_invcdf.chi2_bound(V)


def test_the_block_choice_is_the_cause():
    """Exact sums with the same 24-bit block choice keep the bias; float32 sums with an exact
    uniform do not."""
    c = adversary.block_choice_cause(targets.peaked(0.1).row())
    assert c["lattice_only"] == pytest.approx(c["draw"], rel=1e-6)
    assert c["sums_only"] < 0.2 * c["draw"]


def test_weights_error_is_apart_from_the_draw():
    e = adversary.weights_error(V, (4.0,))
    assert 0 < e[0]["chi2"] < 1e-10


def test_the_search_covers_the_argmax_draws_on_rows_of_many_weights():
    rows = {k: w for k, w in adversary.family_rows(V).items()
            if k in ("bf16 logits(σ=2)", "shuffled zipf(s=1.1)", "peaked(tail=0.01)")}
    worst = adversary.search([("race", "scaled"), ("race", "scaled")], V, rows)
    assert len(worst) == 1 and worst[0]["rows"] == 3
    assert worst[0]["chi2_lo"] <= worst[0]["chi2"] <= worst[0]["chi2_hi"]
    assert 0 < worst[0]["max_rel_half_width"] < 1e-3


def test_fixed_draw_meets_its_bound_on_every_family():
    for name, w in adversary.family_rows(V).items():
        P = exact_token_probs(w, "fixed")
        assert db.chi2(P, adversary.target_of(w)) <= fixed_invcdf.chi2_bound(V), name


SHAPES = ("random", "tiny tail", "subnormal", "single", "huge range")
_ROW = st.tuples(st.sampled_from(SHAPES), st.integers(1, 700), st.integers(0, 2**32 - 1),
                 st.floats(0.5, 40), st.sampled_from([1.0, 2.0**-100, 2.0**60]),
                 st.floats(0, 0.9), st.integers(6, 44))


def adversarial_row(shape, v, seed, power, scale, zeros, digits) -> np.ndarray:
    """A float32 row [v] of one of ``SHAPES``: random powers of uniforms at a scale; one
    token with a tail of mass 10^-digits; subnormal weights only; one positive weight; weights
    spread over the whole range the fixed-point draw takes (2^-149 … 2^120)."""
    rng = np.random.default_rng(seed)
    u = rng.random(v)
    w = {"random": lambda: u**power * scale,
         "tiny tail": lambda: np.where(np.arange(v) == seed % v, 1.0,
                                       u * 10.0**-digits / max(v - 1, 1)),
         "subnormal": lambda: u**power * 2.0**-127,
         "single": lambda: np.where(np.arange(v) == seed % v, scale * u[seed % v] ** power, 0),
         "huge range": lambda: np.exp2(rng.uniform(-149, 120, v))}[shape]()
    w = w.astype(np.float32)
    w[rng.random(v) < zeros * (shape != "single")] = 0
    if not w.max() > 0:
        w[seed % v] = np.float32(2.0**-149)
    return w


@examples("numerics")
@given(case=_ROW)
def test_fixed_draw_meets_its_bound_on_random_rows(case):
    w = adversarial_row(*case)
    P = exact_token_probs(w, "fixed")
    assert db.chi2(P, adversary.target_of(w)) <= fixed_invcdf.chi2_bound(w.size) * (1 + 1e-6)
    assert fixed_invcdf.exact_chi2(w) <= fixed_invcdf.chi2_bound(w.size)


@pytest.mark.heavy
def test_fixed_draw_meets_its_bound_on_every_family_at_the_notes_vocabulary():
    for name, w in adversary.family_rows().items():
        assert fixed_invcdf.exact_chi2(w) <= fixed_invcdf.GUARANTEE, name
