"""The fast log2 emulator: bit-exact datapath, determinism, plateau, error bound, variants."""

import struct

import numpy as np
import pytest

from rslab.numerics.calibration import calibrate_threshold, coefficients
from rslab.numerics.fastlog import (
    DEFAULT_FASTLOG2,
    FastLog2,
    fast_exp2,
    fast_rcp,
    precise_exp2,
    precise_log2,
)

CONFIGS = [
    DEFAULT_FASTLOG2,
    FastLog2(),
    DEFAULT_FASTLOG2.replace(product_rounding="nearest", output_rounding="toward_zero"),
    DEFAULT_FASTLOG2.replace(index_bits=4, degree=1, product_bits=22, c0_bits=20, c1_bits=18,
                             zero_threshold=0.0),
    DEFAULT_FASTLOG2.replace(output_fraction_bits=10, coeff_rounding="truncate"),
]


def _f32(v: float) -> float:
    return struct.unpack("<f", struct.pack("<f", v))[0]


def scalar_reference(cfg: FastLog2, x: float) -> float:
    """The documented datapath, one value at a time, in Python integers."""
    bits = struct.unpack("<I", struct.pack("<f", x))[0]
    e = ((bits >> 23) & 0xFF) - 127
    s, p = cfg.index_bits, cfg.product_bits
    seg = (bits >> (23 - s)) & ((1 << s) - 1)
    d = bits & ((1 << (23 - s)) - 1)
    c0, c1, c2 = (int(t[seg]) for t in cfg.tables())

    def cut(v, shift):
        if cfg.product_rounding == "nearest":
            v += 1 << (shift - 1)
        return v >> shift  # Python >> floors, like two's-complement truncation

    acc = (c0 << (p - cfg.c0_bits)) + cut(c1 * d, cfg.c1_bits + 23 - p)
    if cfg.degree == 2:
        sq = (d * d) >> (46 - cfg.square_bits)
        acc += cut(c2 * sq, cfg.c2_bits + cfg.square_bits - p)
    if cfg.output_fraction_bits is not None:
        drop = p - cfg.output_fraction_bits
        acc = ((acc + (1 << (drop - 1))) >> drop) << drop
    y = (e << p) + acc
    if abs(y) * 2.0**-p < cfg.zero_threshold:
        return 0.0
    v = y * 2.0**-p
    r = _f32(v)
    if cfg.output_rounding == "toward_zero" and abs(r) > abs(v):
        r = float(np.nextafter(np.float32(r), np.float32(0)))
    return r


@pytest.mark.parametrize("cfg", CONFIGS)
def test_matches_scalar_reference_bit_for_bit(cfg):
    rng = np.random.default_rng(3)
    x = np.concatenate([
        rng.uniform(0.5, 2.0, 1500), np.exp2(rng.uniform(-25, 5, 1500)),
        1 + rng.uniform(-0.03, 0.03, 500),
    ]).astype(np.float32)
    got = cfg(x)
    want = np.array([scalar_reference(cfg, float(v)) for v in x], np.float32)
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))


def test_deterministic_and_independent_of_shape_and_chunking():
    rng = np.random.default_rng(1)
    x = np.exp2(rng.uniform(-24, 4, 300_000)).astype(np.float32)
    a = DEFAULT_FASTLOG2(x)
    b = DEFAULT_FASTLOG2(x.reshape(600, 500)).reshape(-1)
    c = np.concatenate([DEFAULT_FASTLOG2(x[:12345]), DEFAULT_FASTLOG2(x[12345:])])
    assert a.dtype == np.float32
    assert np.array_equal(a.view(np.uint32), b.view(np.uint32))
    assert np.array_equal(a.view(np.uint32), c.view(np.uint32))


def test_special_inputs():
    x = np.array([0.0, -0.0, 1e-40, -1.0, np.inf, -np.inf, np.nan, 1.0, 2.0, 0.5], np.float32)
    y = DEFAULT_FASTLOG2(x)
    assert list(y[:3]) == [-np.inf] * 3
    assert np.isnan(y[3]) and y[4] == np.inf and np.isnan(y[5]) and np.isnan(y[6])
    assert list(y[7:]) == [0.0, 1.0, -1.0]


def test_error_bound_over_half_to_two_outside_plateau():
    x = np.linspace(0.5, 2.0, 400_001, dtype=np.float64).astype(np.float32)
    exact = np.log2(x.astype(np.float64))
    keep = np.abs(exact) > 2 * DEFAULT_FASTLOG2.zero_threshold
    err = np.abs(DEFAULT_FASTLOG2(x)[keep] - exact[keep])
    assert err.max() <= 2.0**-12.5
    assert err.max() > 2.0**-16  # the calibrated model is deliberately coarse


def test_plateau_is_an_interval_of_exact_zeros_around_one():
    a, b = DEFAULT_FASTLOG2.plateau()
    assert a < 1 < b
    lo = np.float32(a) - np.float32(0.002)
    hi = np.float32(b) + np.float32(0.002)
    xs = np.arange(lo.view(np.uint32), hi.view(np.uint32) + 1, dtype=np.uint32).view(np.float32)
    zero = DEFAULT_FASTLOG2(xs) == 0
    assert np.array_equal(zero, (xs >= np.float32(a)) & (xs <= np.float32(b)))
    # absolute, not per binade: no zeros near 2 or 1/2 (no plateau at other powers of two)
    assert np.all(DEFAULT_FASTLOG2(xs * np.float32(8)) != 0)


def test_per_binade_variant_makes_power_of_two_divisor_bit_identical():
    cfg = DEFAULT_FASTLOG2.replace(output_fraction_bits=6, zero_threshold=0.0)
    x = np.exp2(np.random.default_rng(5).uniform(-3, 5, 100_000)).astype(np.float32)
    direct = cfg(x)
    divided = cfg(x / np.float32(8)) + np.float32(3)
    assert np.array_equal(direct, divided)
    default_div = DEFAULT_FASTLOG2(x / np.float32(8)) + np.float32(3)
    assert not np.array_equal(DEFAULT_FASTLOG2(x), default_div)


@pytest.mark.parametrize("changes", [
    {"index_bits": 0}, {"degree": 3}, {"product_bits": 2}, {"c0_bits": 30},
    {"coeff_rounding": "up"}, {"output_rounding": "nearest_away"}, {"zero_threshold": -1.0},
    {"zero_threshold": float("nan")}, {"output_fraction_bits": 0},
])
def test_invalid_config_raises(changes):
    with pytest.raises(ValueError):
        DEFAULT_FASTLOG2.replace(**changes)


@pytest.mark.parametrize("fn", [DEFAULT_FASTLOG2, precise_log2, precise_exp2, fast_exp2, fast_rcp])
def test_wrong_dtype_raises(fn):
    with pytest.raises(ValueError):
        fn(np.array([1.0, 2.0]))


def test_precise_log2_is_correctly_rounded_float32():
    x = np.exp2(np.random.default_rng(2).uniform(-30, 30, 200_000)).astype(np.float32)
    y = precise_log2(x)
    ld = np.log2(x.astype(np.longdouble))
    # the float32 result is the nearest float32 to the extended-precision value
    up = np.nextafter(y, np.float32(np.inf)).astype(np.longdouble)
    dn = np.nextafter(y, np.float32(-np.inf)).astype(np.longdouble)
    d = np.abs(ld - y.astype(np.longdouble))
    assert np.all(d <= np.abs(ld - up)) and np.all(d <= np.abs(ld - dn))
    assert precise_log2(np.array([1, 2, 0.25], np.float32)).tolist() == [0.0, 1.0, -2.0]


def test_exp2_models():
    x = np.linspace(-30, 10, 100_001).astype(np.float32)
    p, f = precise_exp2(x), fast_exp2(x)
    exact = np.exp2(x.astype(np.float64))
    assert np.max(np.abs(p / exact - 1)) <= 2.0**-24
    assert np.max(np.abs(f / exact - 1)) <= 2.0**-20
    assert fast_exp2(np.array([0, 1, -1, -200, 200], np.float32)).tolist() == [1, 2, 0.5, 0, np.inf]
    assert fast_rcp(np.array([4.0], np.float32))[0] == np.float32(0.25)


def test_exp2_is_elementwise_whatever_else_the_batch_holds():
    # a batch within [−126, 128) takes the unmasked path; NaN, ±inf or one value out of
    # range send it through the masked one: every element's bits are the same either way
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.uniform(-130, 130, 5000), -np.exp2(rng.uniform(-60, 0, 500)),
                        [-126.0, 127.99999, 0.0, -0.0]]).astype(np.float32)
    alone = np.concatenate([fast_exp2(x[i:i + 1]) for i in range(x.size)])
    inside = (x >= -126) & (x < 128)
    assert np.array_equal(fast_exp2(x).view(np.uint32), alone.view(np.uint32))
    assert np.array_equal(fast_exp2(x[inside]).view(np.uint32), alone[inside].view(np.uint32))
    odd = np.array([np.nan, np.inf, -np.inf, 500.0], np.float32)
    for v in odd:
        got = fast_exp2(np.append(x[inside][:100], v))
        assert np.array_equal(got[:100].view(np.uint32), alone[inside][:100].view(np.uint32))


def test_default_threshold_is_the_calibrated_one():
    cfg = coefficients(DEFAULT_FASTLOG2.c0_bits, DEFAULT_FASTLOG2.c1_bits)
    assert calibrate_threshold(cfg) == DEFAULT_FASTLOG2
