"""Noise pipelines: names, errors, traces, the plateau effects each pipeline has or removes."""

import numpy as np
import pytest

from rslab.numerics.fastlog import DEFAULT_FASTLOG2
from rslab.numerics.gumbel import (
    first_layer_scale,
    get_noise,
    on_lattice,
    sample_uniforms,
    second_layer,
    second_layer_parts,
)
from rslab.numerics.rng import all_uniforms

TOP = all_uniforms()[-(1 << 18):]  # the uniforms nearest 1, where the first log's plateau sits


def test_names_and_divisor_parsing():
    assert get_noise("div8").divisor == 8.0 == get_noise("div(8)").divisor
    assert get_noise("div(10.5)").divisor == 10.5
    assert get_noise("div14").name == "div14"
    assert get_noise(" Naive ").name == "naive"


@pytest.mark.parametrize("name", ["div(0)", "div(-2)", "div(abc)", "div(inf)", "bogus", "div()"])
def test_bad_names_raise(name):
    with pytest.raises(ValueError):
        get_noise(name)


def test_wrong_dtype_and_bad_log_raise():
    with pytest.raises(ValueError):
        get_noise("div8")(np.array([0.5]))
    with pytest.raises(ValueError):
        get_noise("div8", log2="fast")


def test_naive_pipeline_gives_infinities_from_the_first_plateau():
    g = get_noise("naive")(TOP)
    a, _ = DEFAULT_FASTLOG2.plateau()
    assert np.array_equal(np.isposinf(g), TOP >= np.float32(a))
    assert not np.isnan(g).any()


def test_scaled_first_layer_keeps_t_positive_over_the_whole_lattice():
    pipe = get_noise("scaled")
    tr = pipe.trace(all_uniforms())
    assert np.all(tr["t"] > 0) and np.all(np.isfinite(tr["g"]))
    assert np.all(tr["uc"] < np.float32(DEFAULT_FASTLOG2.plateau()[0]))
    c = first_layer_scale(DEFAULT_FASTLOG2)
    assert 0.5 < c < 1 and (c * 2**10).is_integer()


def test_trace_is_consistent_with_call():
    u = sample_uniforms(10_000, seed=4)
    for name in ("naive", "scaled", "div8", "div(10.5)", "precise", "exact"):
        pipe = get_noise(name)
        tr = pipe.trace(u)
        assert np.array_equal(tr["g"], pipe(u), equal_nan=True)
        assert all(v.dtype == np.float32 for v in tr.values())


def test_second_plateau_zeros_and_their_removal_by_div8():
    u = all_uniforms()[::8]
    scaled = get_noise("scaled").trace(u)
    zeros = scaled["g"] == 0
    a, b = DEFAULT_FASTLOG2.plateau()
    assert np.array_equal(zeros, (scaled["t"] >= np.float32(a)) & (scaled["t"] <= np.float32(b)))
    assert zeros.sum() > 1000
    assert (get_noise("div8")(u) == 0).sum() <= 2


def test_precise_and_exact_pipelines():
    u = sample_uniforms(50_000, seed=9)
    want = (-np.log2(-np.log2(u.astype(np.float64)))).astype(np.float32)
    assert np.array_equal(get_noise("precise")(u), want)
    assert np.max(np.abs(get_noise("exact")(u) - want)) < 1e-4


def test_per_binade_model_div8_equals_scaled():
    per_binade = DEFAULT_FASTLOG2.replace(output_fraction_bits=6, zero_threshold=0.0)
    u = all_uniforms()[::64]
    g_scaled = get_noise("scaled", log2=per_binade)(u)
    g_div8 = get_noise("div8", log2=per_binade)(u)
    assert np.array_equal(g_scaled, g_div8)


def test_sample_uniforms_seeded_and_validated():
    assert np.array_equal(sample_uniforms(1000, seed=1), sample_uniforms(1000, seed=1))
    assert not np.array_equal(sample_uniforms(1000, seed=1), sample_uniforms(1000, seed=2))
    for n in (0, -5, 2.5):
        with pytest.raises(ValueError):
            sample_uniforms(n, seed=1)


@pytest.mark.parametrize("divisor", [None, 8.0, 10.25, 14.0])
def test_second_layer_in_place_gives_the_same_bits(divisor):
    t = get_noise("div8").trace(TOP)["t"]
    out = np.empty_like(t)
    want = second_layer_parts(t, divisor, DEFAULT_FASTLOG2)[2]
    assert second_layer(t, divisor, DEFAULT_FASTLOG2, out=out) is out
    assert np.array_equal(out.view(np.uint32), want.view(np.uint32))
    assert np.array_equal(second_layer(t, divisor, DEFAULT_FASTLOG2).view(np.uint32),
                          want.view(np.uint32))


@pytest.mark.parametrize("name", ["div(10.25)", "naive", "rangered"])
def test_on_lattice_gives_the_pipelines_bits(name):
    pipe = get_noise(name)
    assert np.array_equal(on_lattice(pipe).view(np.uint32),
                          pipe(all_uniforms()).view(np.uint32))
