"""The Monte Carlo engine: streams, lattice counts, the lattice shortcut against per-sample
evaluation, reproducibility, chunk and process independence, exact vs sampled χ², bad input."""

import numpy as np
import pytest

from rslab.numerics import montecarlo as mc
from rslab.numerics import stats
from rslab.numerics.gumbel import get_noise
from rslab.numerics.rng import hw_random_words, philox4x32, uniform_from_words


@pytest.fixture(scope="module")
def div8():
    pipe = get_noise("div8")
    return pipe, mc.LatticeLaw.of("div8", pipe)


@pytest.fixture(scope="module")
def naive():
    pipe = get_noise("naive")
    return pipe, mc.LatticeLaw.of("naive", pipe)


def test_hw_stream_is_the_hardware_rng():
    idx = np.arange(1000, 3000, dtype=np.uint32)
    assert np.array_equal(mc.stream_words(7, 1000, 3000, "hw"), hw_random_words(7, idx))


def test_philox_stream_is_philox_and_slices_agree():
    ctr = np.zeros((8, 4), np.uint32)
    ctr[:, 0] = np.arange(8)
    ref = philox4x32(ctr, np.array([5, 0], np.uint32)).reshape(-1)
    assert np.array_equal(mc.stream_words(5, 0, 32, "philox"), ref)
    parts = [mc.stream_words(5, a, b, "philox") for a, b in ((0, 3), (3, 17), (17, 32))]
    assert np.array_equal(np.concatenate(parts), ref)


def test_counts_are_reproducible_and_seed_dependent():
    a = mc.lattice_counts(3, 50_000, chunk=8192)
    b = mc.lattice_counts(3, 50_000, chunk=8192)
    c = mc.lattice_counts(4, 50_000, chunk=8192)
    assert a.sum() == 50_000 and np.array_equal(a, b)
    assert not np.array_equal(a, c)


@pytest.mark.parametrize("rng", ["hw", "philox"])
def test_counts_do_not_depend_on_chunk_size(rng):
    ref = mc.lattice_counts(11, 40_001, rng=rng, chunk=40_001)
    for chunk in (999, 4096, 2**16):
        assert np.array_equal(mc.lattice_counts(11, 40_001, rng=rng, chunk=chunk), ref)
    one_by_one = mc.lattice_counts(11, 500, rng=rng, chunk=1)
    assert np.array_equal(one_by_one, mc.lattice_counts(11, 500, rng=rng, chunk=500))


def test_counts_are_the_lattice_indices_of_the_words():
    words = hw_random_words(9, np.arange(5000, dtype=np.uint32))
    want = np.bincount(words >> 8, minlength=mc.LATTICE_SIZE)
    assert np.array_equal(mc.lattice_counts(9, 5000), want)


@pytest.mark.parametrize("which", ["div8", "naive"])
def test_shortcut_equals_per_sample_evaluation_bit_for_bit(which, div8, naive):
    pipe, law = {"div8": div8, "naive": naive}[which]
    n = 200_000
    bins_fast, ks_fast = law.sample_stats(mc.lattice_counts(21, n, chunk=65536))
    bins_slow, ks_slow = mc.per_sample_stats(pipe, 21, n, chunk=30_000)
    assert np.array_equal(bins_fast, bins_slow)
    assert ks_fast == ks_slow  # identical bits, not merely close
    g = pipe(mc.lattice_uniforms()[mc.stream_words(21, 0, n) >> np.uint32(8)])
    assert np.array_equal(bins_fast, stats.bin_counts(g))
    assert ks_fast == pytest.approx(stats.ks_statistic(g), rel=1e-12, abs=1e-15)


def test_exact_law_matches_the_stats_module(div8):
    pipe, law = div8
    ref = stats.exact_stats(pipe, errors=False)
    assert np.array_equal(law.bin_probabilities(), ref.probs)
    assert law.noncentrality() == pytest.approx(ref.lam, rel=1e-12)
    assert law.exact_ks() == pytest.approx(ref.ks, rel=1e-12)
    values, probs = law.atoms()
    assert probs.sum() == pytest.approx(1.0) and np.all(np.diff(values) > 0)


def test_run_is_independent_of_processes_and_chunks():
    pipes = {"div8": get_noise("div8"), "div14": get_noise("div14")}
    a = mc.run(pipes, [1, 2], 30_000, processes=1, chunk=30_000, progress=False)
    b = mc.run(pipes, [1, 2], 30_000, processes=2, chunk=7_001, progress=False)
    for name in pipes:
        assert np.array_equal(a[name].bin_counts, b[name].bin_counts)
        assert np.array_equal(a[name].ks, b[name].ks)
        assert a[name].bin_counts.sum() == 60_000
    assert a["div8"].lam == b["div8"].lam
    assert a.samples == 60_000


@pytest.mark.parametrize("name", ["div2", "div8"])
def test_sampled_chi2_follows_the_law_predicted_by_the_exact_lambda(name):
    pipe = get_noise(name)
    seeds, n = [31, 32, 33, 34], 2**19
    res = mc.run({name: pipe}, seeds, n, processes=2, progress=False)[name]
    law = mc.predicted_chi2(res.lam, res.total_samples)
    lo, hi = law.ppf([1e-4, 1 - 1e-4])
    assert lo <= res.chi2 <= hi, (res.chi2, lo, hi, law.mean())
    # per seed too: the mean of the per-seed χ² against the per-seed law's mean
    per_seed = mc.predicted_chi2(res.lam, n)
    assert abs(res.chi2_per_seed.mean() - per_seed.mean()) < 5 * per_seed.std() / 2


def test_the_predicted_law_narrows_with_the_finite_population_factor():
    law, narrow = mc.predicted_chi2(1e-6, 10**8), mc.predicted_chi2(1e-6, 10**8, fpc=0.5)
    assert narrow.mean() == pytest.approx(0.5 * 63 + 100) and law.mean() == pytest.approx(163)
    assert narrow.std() < law.std()


def test_ks_of_sample_agrees_with_scipy():
    from scipy import stats as sps

    g = get_noise("precise")(uniform_from_words(mc.stream_words(1, 0, 5000)))
    ref = sps.kstest(g.astype(np.float64), stats.gumbel2_cdf).statistic
    assert mc.ks_of_sample(g) == pytest.approx(ref, rel=1e-9)


@pytest.mark.parametrize("call, match", [
    (lambda: mc.lattice_counts(-1, 10), "seed"),
    (lambda: mc.lattice_counts(2**32, 10), "seed"),
    (lambda: mc.lattice_counts(1.5, 10), "seed"),
    (lambda: mc.lattice_counts(1, 0), "samples"),
    (lambda: mc.lattice_counts(1, 2**32 + 1), "samples"),
    (lambda: mc.lattice_counts(1, 10, chunk=0), "chunk"),
    (lambda: mc.lattice_counts(1, 10, rng="mt19937"), "rng"),
    (lambda: mc.stream_words(1, 5, 2), "start"),
    (lambda: mc.run({"p": get_noise("precise")}, [1, 1], 10), "distinct"),
    (lambda: mc.run({"p": get_noise("precise")}, [], 10), "seeds"),
    (lambda: mc.run({"p": get_noise("precise")}, [1], 10, processes=0), "processes"),
    (lambda: mc.run({}, [1], 10), "pipelines"),
    (lambda: mc.run({"p": 3}, [1], 10, progress=False), "callable"),
    (lambda: mc.LatticeLaw.build("x", np.zeros(10, np.float32)), "2\\^24"),
    (lambda: mc.LatticeLaw.build("x", np.full(mc.LATTICE_SIZE, np.nan, np.float32)), "NaN"),
    (lambda: mc.predicted_chi2(-1.0, 10), "lam"),
    (lambda: mc.predicted_chi2(1e-6, 10, fpc=1.5), "fpc"),
    (lambda: mc.predicted_chi2(1e-6, 0), "n"),
    (lambda: mc.ks_from_atoms([1.0], [0]), "at least one"),
])
def test_bad_input_raises_value_error(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_counts_of_the_wrong_shape_are_rejected(div8):
    _, law = div8
    with pytest.raises(ValueError, match="lattice point"):
        law.sample_stats(np.zeros(100, np.uint32))
