"""Philox4x32-10 known-answer vectors (Random123 kat_vectors) and the uniform lattice."""

import numpy as np
import pytest

from rslab.numerics.rng import (
    all_uniforms,
    hw_random_words,
    philox4x32,
    uniform_from_index,
    uniform_from_words,
)

# Random123 kat_vectors: "philox4x32 10" counter, key -> output
KATS = [
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF,) * 4, (0xFFFFFFFF, 0xFFFFFFFF), (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
]


@pytest.mark.parametrize("ctr,key,expected", KATS)
def test_philox4x32_10_known_answers(ctr, key, expected):
    out = philox4x32(np.array(ctr, np.uint32), np.array(key, np.uint32))
    assert out.dtype == np.uint32
    assert [int(v) for v in out] == list(expected)


def test_philox_vectorised_matches_scalar_calls():
    ctrs = np.array([k[0] for k in KATS], np.uint32)
    keys = np.array([k[1] for k in KATS], np.uint32)
    out = philox4x32(ctrs, keys)
    assert out.tolist() == [list(k[2]) for k in KATS]


def test_philox_rejects_bad_arguments():
    with pytest.raises(ValueError):
        philox4x32(np.zeros(4, np.float32), np.zeros(2, np.uint32))
    with pytest.raises(ValueError):
        philox4x32(np.zeros(3, np.uint32), np.zeros(2, np.uint32))
    with pytest.raises(ValueError):
        philox4x32(np.zeros(4, np.uint32), np.zeros(2, np.uint32), rounds=0)


def test_lattice_has_2_pow_24_distinct_increasing_values_inside_unit_interval():
    u = all_uniforms()
    assert u.dtype == np.float32 and u.size == 2**24
    assert np.all(np.diff(u) > 0)
    assert u[0] > 0 and u[-1] < 1


def test_every_lattice_uniform_is_k_plus_a_half_over_2_pow_24_below_a_half():
    k = np.arange(2**24, dtype=np.int64)
    exact = (k + np.where(k < 2**23, 0.5, 0.0)) * 2.0**-24  # float64: exact
    u = all_uniforms()
    assert np.array_equal(u.astype(np.float64), exact)
    assert np.array_equal(uniform_from_index(k[::-7].astype(np.uint32)), u[::-7])


def test_uniform_from_words_uses_top_24_bits():
    w = np.array([0, 0xFF, 0x100, 0xFFFFFFFF, 0x80000000], np.uint32)
    u = uniform_from_words(w)
    assert u[0] == u[1] == uniform_from_index(0)
    assert u[2] == uniform_from_index(1)
    assert u[3] == all_uniforms()[-1]
    assert u[4] == np.float32(0.5)


def test_hw_random_words_reproducible_and_broadcasting():
    a = hw_random_words(np.uint32(7), np.arange(1000, dtype=np.uint32))
    b = hw_random_words(np.uint32(7), np.arange(1000, dtype=np.uint32))
    assert np.array_equal(a, b) and np.unique(a).size > 990
    with pytest.raises(ValueError):
        hw_random_words(np.float64(7), np.arange(3, dtype=np.uint32))
