"""The chapter's plotting helpers: they run and report what the sampler measured."""

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from rslab.viz import sampling_plots as sp  # noqa: E402


def test_mismatch_frame_measures_the_overlap():
    d = sp.mismatch_frame(1.0, R=20_000)
    assert abs(d["measured"] - d["alpha"]) < 4 * np.sqrt(d["alpha"] * (1 - d["alpha"]) / 20_000)
    assert np.isclose(d["residual"].sum(), 1) and np.isclose(d["residual_mass"], 1 - d["alpha"],
                                                             atol=1e-5)
    assert isinstance(sp.draw_mismatch(0.0, R=2_000), Figure)


def test_the_rounding_residual_at_no_mismatch_is_drawn_empty():
    """At σ = 0 the residual is float32 rounding (mass ~1.7e-8): the lower panel draws no
    bars, where its normalised form would show bars of 0.11 and 0.89."""
    assert sp.mismatch_frame(0.0, R=2_000)["residual_mass"] < sp.EMPTY_RESIDUAL
    empty = sp.draw_mismatch(0.0, R=2_000).axes[1]
    assert not empty.patches and "not drawn" in empty.get_title()
    drawn = sp.draw_mismatch(1.0, R=2_000).axes[1]
    assert len(drawn.patches) == 10 and "normalised" in drawn.get_title()


def test_log2p_bins_and_masses():
    p = np.array([0.5, 2.0**-11, 2.0**-17, 2.0**-20, 0.0])
    bins = sp.log2p_bins(p)
    np.testing.assert_array_equal(bins, [6, 4, 1, 0, 0])
    assert len(sp.log2p_bin_labels()) == len(sp.LOG2P_EDGES) + 1
    emitted, mass = sp.bin_masses(np.array([0, 0, 1, 2]), p, bins, 7)
    np.testing.assert_allclose(emitted[[1, 4, 6]], [0.25, 0.25, 0.5])
    np.testing.assert_allclose(mass.sum(), p.sum())


def test_noise_tail_is_exact_for_the_exact_pipeline():
    ys = np.array([0.0, 4.0, 8.0])
    tails, ranges = sp.noise_tail(["exact"], ys, stride=64)
    np.testing.assert_allclose(tails["exact"], tails["ideal"], rtol=0.02)
    lo, hi = ranges["exact"]
    assert lo < 0 < hi and tails["exact"][-1] > 0
