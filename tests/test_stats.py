"""Statistics: agreement with scipy.stats, exact-vs-sampled agreement, argument checks."""

import numpy as np
import pytest
from scipy import stats as sps

from rslab.numerics.gumbel import get_noise, sample_uniforms
from rslab.numerics.stats import (
    LATTICE,
    abs_errors,
    bin_counts,
    bin_edges,
    chi2_from_counts,
    error_percentiles,
    exact_stats,
    gumbel2_cdf,
    gumbel2_sf,
    ks_all,
    ks_from_counts,
    ks_pvalue,
    ks_sorted,
    ks_statistic,
    ks_test,
    search_sorted,
    sorted_special_counts,
    special_counts,
    validate_sample,
)


@pytest.fixture(scope="module")
def div8_exact():
    return exact_stats(get_noise("div8"), errors=False)


def test_edges_are_equiprobable_and_match_scipy_gumbel():
    e = bin_edges(64)
    assert e.size == 63 and np.all(np.diff(e) > 0)
    assert np.allclose(gumbel2_cdf(e), np.arange(1, 64) / 64, rtol=0, atol=1e-14)
    # g = (G + ln ln 2)/ln 2 with G standard Gumbel
    x = np.linspace(-3, 12, 50)
    assert np.allclose(gumbel2_cdf(x), sps.gumbel_r.cdf(x * np.log(2) - np.log(np.log(2))))
    assert np.allclose(gumbel2_sf(x), sps.gumbel_r.sf(x * np.log(2) - np.log(np.log(2))))


def test_bin_counts_match_numpy_histogram():
    g = get_noise("precise")(sample_uniforms(100_000, seed=1))
    edges = np.concatenate([[-np.inf], bin_edges(), [np.inf]])
    want, _ = np.histogram(g.astype(np.float64), edges)
    assert np.array_equal(bin_counts(g), want)
    assert bin_counts(np.array([np.inf, -np.inf], np.float32)).tolist() == [1] + [0] * 62 + [1]


def test_chi2_matches_scipy():
    counts = np.random.default_rng(0).multinomial(10_000, np.full(64, 1 / 64))
    res = chi2_from_counts(counts)
    ref = sps.chisquare(counts)
    assert res.statistic == pytest.approx(ref.statistic) and res.pvalue == pytest.approx(ref.pvalue)
    assert res.df == 63 and res.n == 10_000


def test_ks_matches_scipy_for_continuous_sample():
    g = get_noise("precise")(sample_uniforms(20_000, seed=3)).astype(np.float64)
    g = np.unique(g)  # scipy assumes no ties
    ref = sps.kstest(g, gumbel2_cdf)
    ours = ks_test(g)
    assert ours.statistic == pytest.approx(ref.statistic, rel=1e-12)
    assert ours.pvalue == pytest.approx(ref.pvalue, rel=1e-6)


def test_ks_with_ties_equals_expanded_sample_and_brute_force():
    values = np.array([0.0, 1.0, -0.5, 3.0], np.float64)
    counts = np.array([5, 2, 1, 3])
    sample = np.repeat(values, counts)
    d = ks_from_counts(values, counts)
    assert d == pytest.approx(ks_statistic(sample))
    xs = np.sort(values)
    emp_le = np.array([np.mean(sample <= x) for x in xs])
    emp_lt = np.array([np.mean(sample < x) for x in xs])
    brute = max(np.max(np.abs(emp_le - gumbel2_cdf(xs))), np.max(np.abs(emp_lt - gumbel2_cdf(xs))))
    assert d == pytest.approx(brute)


def test_special_counts_and_error_percentiles():
    g = np.array([0, 0, np.inf, -np.inf, np.nan, 1.5], np.float32)
    assert special_counts(g) == {"zeros": 2, "pos_inf": 1, "neg_inf": 1, "nan": 1}
    ref = np.array([0, 1, np.inf, 0, 0, 1.0], np.float32)
    err = abs_errors(g, ref)
    assert err.tolist() == [0, 1, 0, np.inf, np.inf, 0.5]
    x = np.random.default_rng(1).normal(size=10_001).astype(np.float32)
    p = error_percentiles(x, np.zeros_like(x))
    assert p["P50"] == pytest.approx(np.percentile(np.abs(x), 50, method="inverted_cdf"))
    assert p["max"] == np.abs(x).max()


def _same_float(a, b):
    return np.float64(a).tobytes() == np.float64(b).tobytes()


@pytest.mark.parametrize("name", ["div8", "precise"])
def test_ks_sorted_gives_the_bits_of_every_term_on_the_lattice(name):
    # div8 leaves a few blocks to evaluate; precise (within 1/n of F) evaluates all of them
    s = exact_stats(get_noise(name), errors=False).sorted_g
    assert _same_float(ks_sorted(s, LATTICE), ks_all(s, LATTICE))


@pytest.mark.parametrize("n", [1, 63, 64, 65, 1000, 100_003])
def test_ks_sorted_gives_the_bits_of_every_term_on_samples(n):
    rng = np.random.default_rng(n)
    x = np.sort(rng.gumbel(size=n) / np.log(2) + 0.05)
    ties = np.sort(np.round(x * 4) / 4).astype(np.float32)
    for s in (x, ties, np.r_[-np.inf, x, np.inf]):
        for total in (s.size, s.size + 7):
            assert _same_float(ks_sorted(s, total), ks_all(s, total))


def test_search_sorted_matches_numpy_on_the_float64_copy():
    tiny = float(np.finfo(np.float32).smallest_subnormal)
    big = float(np.finfo(np.float32).max)
    s = np.sort(np.array([-np.inf, -big, -1.5, -0.0, 0.0, 0.0, tiny, 0.1, 0.1, 1.0, big, np.inf,
                          np.nan], np.float32))
    x = np.array([-np.inf, -1e300, -big, -1.5, -1.4999999, -0.0, 0.0, tiny / 3, tiny, 0.1,
                  float(np.float32(0.1)), 0.10000001, 1.0, np.nextafter(1.0, 2), big, 1e39,
                  1e300, np.inf, np.nan])
    for side in ("left", "right"):
        want = np.searchsorted(s.astype(np.float64), x, side=side)
        assert np.array_equal(search_sorted(s, x, side=side), want)
        assert np.array_equal(search_sorted(s.astype(np.float64), x, side=side), want)
        assert search_sorted(s, 0.1, side=side) == want[9]


def test_sorted_special_counts_match_special_counts():
    g = np.random.default_rng(2).permutation(
        np.array([0, -0.0, 0, np.inf, np.inf, -np.inf, np.nan, np.nan, 1.5, -2.0], np.float32))
    assert sorted_special_counts(np.sort(g)) == special_counts(g)
    assert sorted_special_counts(np.sort(g.astype(np.float64))) == special_counts(g)


def test_exact_and_sampled_statistics_agree(div8_exact):
    ex = div8_exact
    assert ex.probs.sum() == pytest.approx(1.0) and ex.k == 64
    n = 1 << 18
    g = get_noise("div8")(sample_uniforms(n, seed=11))
    counts = bin_counts(g)
    # the sample's bins follow the exact bin probabilities (not a fixed outcome: a p-value)
    assert chi2_from_counts(counts, ex.probs).pvalue > 1e-4
    # its χ² against the ideal law is a plausible draw from the predicted law
    stat = chi2_from_counts(counts).statistic
    law = ex.chi2_law(n)
    assert 1e-4 < law.cdf(stat) < 1 - 1e-4
    # KS distance of the sample from F is within sampling error of the exact distance
    assert abs(ks_statistic(g) - ex.ks) < 3 * 1.36 / np.sqrt(n)
    # the exact tail matches the ideal law in the bulk
    y = np.array([0.0, 2.0, 5.0])
    assert np.allclose(ex.tail(y), gumbel2_sf(y), atol=3e-4)


def test_exact_chi2_mean_and_lambda(div8_exact):
    ex = div8_exact
    n = 10**9
    assert ex.expected_chi2(n) == pytest.approx(63 + n * ex.lam, rel=1e-3)
    assert ex.chi2_law(n).mean() == pytest.approx(63 + n * ex.lam)
    q = 1 / 64
    assert ex.lam == pytest.approx(np.sum((ex.probs - q) ** 2 / q))


def test_exact_precise_pipeline_is_nearly_ideal():
    ex = exact_stats(get_noise("precise"), errors=True)
    assert ex.lam < 1e-9 and ex.ks < 1e-5
    assert ex.errors["max"] == 0.0
    assert ex.special["zeros"] <= 2 and ex.special["pos_inf"] == 0
    assert ex.sorted_g.size == LATTICE


def test_validate_sample_row():
    u = sample_uniforms(1 << 16, seed=5)
    row = validate_sample(get_noise("div8")(u), get_noise("precise")(u))
    assert row["n"] == 1 << 16 and row["nan"] == 0
    assert 0 <= row["ks_p"] <= 1 and 0 <= row["chi2_p"] <= 1 and row["P99.9"] >= row["P50"]


@pytest.mark.parametrize("call", [
    lambda: bin_counts(np.array([1, 2])),
    lambda: bin_counts(np.array([np.nan], np.float32)),
    lambda: bin_counts(np.zeros(3, np.float32), k=1),
    lambda: chi2_from_counts(np.zeros(64, np.int64)),
    lambda: chi2_from_counts(np.ones(64)),
    lambda: ks_pvalue(0.1, 0),
    lambda: ks_test(np.array([], np.float32)),
    lambda: exact_stats(get_noise("precise"), k=1),
])
def test_invalid_arguments_raise(call):
    with pytest.raises(ValueError):
        call()


def test_invalid_n_for_laws_raises(div8_exact):
    for bad in (0, -1):
        with pytest.raises(ValueError):
            div8_exact.chi2_law(bad)
        with pytest.raises(ValueError):
            div8_exact.expected_chi2(bad)
