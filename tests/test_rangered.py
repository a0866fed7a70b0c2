"""The range-reduced second log: no plateau, the same t = 2^e · m, registered as ``rangered``."""

import numpy as np
import pytest

from rslab.numerics.gumbel import get_noise
from rslab.numerics.range_reduction import range_reduce
from rslab.numerics.rng import all_uniforms


def test_range_reduction_is_exact_and_keeps_m_away_from_one():
    rng = np.random.default_rng(0)
    t = np.exp2(rng.uniform(-30, 30, 100_000)).astype(np.float32)
    m, neg_e = range_reduce(t)
    assert np.all((m >= 1.5) & (m < 3))
    assert np.all(neg_e == np.round(neg_e))
    assert np.array_equal(np.ldexp(m.astype(np.float64), (-neg_e).astype(np.int64)),
                          t.astype(np.float64))


def test_rangered_has_no_plateau_on_the_lattice():
    pipe = get_noise("rangered")
    trace = pipe.trace(all_uniforms())
    assert pipe.name == "rangered"
    assert np.count_nonzero(trace["l2"] == 0) == 0
    assert np.all(np.isfinite(trace["g"]))
    div8 = get_noise("div8").trace(all_uniforms()[-4096:])
    assert np.array_equal(trace["t"][-4096:], div8["t"])  # the same first layer


def test_unknown_noise_lists_rangered():
    with pytest.raises(ValueError, match="rangered"):
        get_noise("rangedred")
