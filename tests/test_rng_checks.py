"""The hardware RNG's model against the two tests of its words (rslab.numerics.rng_checks)."""

import numpy as np
import pytest

from rslab.numerics import rng_checks
from rslab.numerics.rng import HW_WEYL, hw_random_words, mix32


def test_the_model_in_use_passes_and_the_first_model_fails_on_every_key():
    rows = rng_checks.stream_checks(n=1 << 22, keys=(1, 2, 3))
    first = [r for r in rows if r["model"] != "this model"]
    mine = [r for r in rows if r["model"] == "this model"]
    assert rng_checks.smallest_p(mine) > 1e-3
    assert all(r["top 8 bits"]["p"] < 1e-6 and r["lag-128 pairs"]["p"] < 1e-6 for r in first)


def test_the_words_are_a_hash_of_a_weyl_sequence():
    c = np.arange(300, dtype=np.uint32)
    with np.errstate(over="ignore"):
        expected = mix32(c * HW_WEYL + mix32(np.uint32(5) ^ np.uint32(0x5EED1234)))
    assert np.array_equal(hw_random_words(5, c), expected)
    assert np.unique(hw_random_words(5, np.arange(1 << 16, dtype=np.uint32))).size == 1 << 16


def test_checks_name_their_bad_arguments():
    w = hw_random_words(1, np.arange(1000, dtype=np.uint32))
    with pytest.raises(ValueError, match="bits"):
        rng_checks.top_bits(w, 0)
    with pytest.raises(ValueError, match="lag"):
        rng_checks.pairs(w, 4, 1000)
    with pytest.raises(ValueError, match="words"):
        rng_checks.top_bits(w.astype(np.int64))
