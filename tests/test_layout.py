"""Packed BF16 layout and float32 ↔ BF16 bit helpers."""

import numpy as np
import pytest

from rslab.machine.bf16 import (
    bf16_bits_to_f32,
    element_position,
    f32_to_bf16_bits,
    pack_rows,
    padded_length,
    round_to_bf16,
    unpack_rows,
)


def test_round_to_nearest_even():
    one = np.float32(1.0)
    ulp = np.float32(2.0**-7)                     # BF16 spacing at 1
    cases = np.array([one, one + ulp / 2, one + ulp * 1.5, one + ulp / 2 + 2.0**-20,
                      -one - ulp / 2], np.float32)
    want = np.array([one, one, one + 2 * ulp, one + ulp, -one], np.float32)
    np.testing.assert_array_equal(round_to_bf16(cases), want)


def test_special_values():
    x = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 3.4e38], np.float32)
    b = f32_to_bf16_bits(x)
    assert b[0] == 0x7F80 and b[1] == 0xFF80 and b[2] == 0x7FC0
    assert b[3] == 0 and b[4] == 0x8000 and b[5] == 0x7F80       # rounds up to inf
    assert np.isnan(bf16_bits_to_f32(b[2:3]))[0]


def test_all_bf16_values_round_trip():
    bits = np.arange(2**16, dtype=np.uint32).astype(np.uint16)
    f = bf16_bits_to_f32(bits)
    back = f32_to_bf16_bits(f)
    finite = ~np.isnan(f)
    np.testing.assert_array_equal(back[finite], bits[finite])


def test_pack_layout_lane_i_holds_i_and_i_plus_128():
    v = 300
    row = np.arange(v, dtype=np.float32)
    words = pack_rows(row)
    assert padded_length(v) == 512 and words.shape == (256,)
    assert (words[5] & 0xFFFF) == f32_to_bf16_bits(np.float32(5))
    assert (words[5] >> 16) == f32_to_bf16_bits(np.float32(133))
    assert (words[128 + 3] & 0xFFFF) == f32_to_bf16_bits(np.float32(259))
    assert (words[128 + 3] >> 16) == 0xFF80                      # element 387: padding −inf
    out = unpack_rows(words)
    np.testing.assert_array_equal(out[:v], round_to_bf16(row))
    assert np.isneginf(out[v:]).all()
    small = row[:256]                                             # exactly representable
    np.testing.assert_array_equal(unpack_rows(pack_rows(small), 256), small)
    w, half = element_position(np.array([5, 133, 259, 387]))
    assert w.tolist() == [5, 5, 131, 131] and half.tolist() == [0, 1, 0, 1]


def test_pack_rows_is_batched():
    rows = np.random.default_rng(0).normal(size=(3, 256)).astype(np.float32)
    words = pack_rows(rows)
    assert words.shape == (3, 128)
    np.testing.assert_array_equal(unpack_rows(words), round_to_bf16(rows))


def test_bad_inputs():
    with pytest.raises(ValueError, match="v"):
        padded_length(-1)
    with pytest.raises(ValueError, match="uint32"):
        unpack_rows(np.zeros(128, np.int64))
    with pytest.raises(ValueError, match="multiple of 128"):
        unpack_rows(np.zeros(100, np.uint32))
    with pytest.raises(ValueError, match="v must"):
        unpack_rows(np.zeros(128, np.uint32), 300)
    with pytest.raises(ValueError, match="bit patterns"):
        bf16_bits_to_f32(np.zeros(2, np.float32))
