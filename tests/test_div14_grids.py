"""The third review of the Div14 chapter: what a coarse grid leaves out (the quick grid has
no odd integer, the zoom's quarter step leaves out 14 + 1/16), a paired test that separated
a pair its power rarely does, and the finite-population factor in the χ² growth band."""

import numpy as np

from rslab.chapters import div14
from rslab.numerics import montecarlo as mc
from rslab.numerics import search
from rslab.numerics.fastlog import DEFAULT_FASTLOG2 as FL
from rslab.viz import search_plots as sp


def _row(k, lam):
    return {"name": search.divisor_name(k), "divisor": k, "lam": lam,
            "expected_chi2": div14.expected_chi2(lam)}


def test_the_quick_grid_has_no_odd_integer_and_div9_off_it_beats_div14():
    grid = search.search_config("quick").grid
    assert not any(k % 2 for k in grid)
    lam9, lam14 = (search.divisor_lambda(k, FL) for k in (9.0, 14.0))
    assert lam9 < lam14
    ranking = [_row(9.0, lam9), _row(14.0, lam14)] + [_row(float(k), 1.0) for k in
                                                       range(2, 17) if k not in (9, 14)]
    text = div14.grid_gap_text(grid, _row(14.0, lam14), ranking)
    assert "has no odd integer" in text and "div9's" in text
    assert div14.grid_gap_text(search.search_config("book").grid, _row(9.0, lam9), ranking) == ""


def test_the_zooms_quarter_step_leaves_out_a_smaller_lambda_beside_14():
    lam = {k: search.divisor_lambda(k, FL) for k in (14.0, 14.0625)}
    assert lam[14.0625] < lam[14.0]


def test_a_separation_the_power_rarely_gives_is_said_only_when_drawn():
    pairs = {"div11": {"power": 0.04}, "div(10.5)": {"power": 0.22}, "div8": {"power": 0.88}}
    p = {"div11": 0.57, "div(10.5)": 0.0053, "div8": 0.0005}
    text = div14.rare_separation_text(pairs, p)
    assert "div(10.5) (p = 0.0053)" in text and "22 %" in text and "div8" not in text
    assert div14.rare_separation_text(pairs, {**p, "div(10.5)": 0.3}) == ""


def test_the_growth_band_carries_the_seeds_finite_population_factor():
    lam, n = 8e-7, 10**9
    fpc = mc.stream_fpc(10**8)
    _, lo, hi, _, _ = sp.chi2_band(lam, [n], fpc=fpc)
    want = mc.predicted_chi2(lam, n, fpc=fpc).ppf([0.05, 0.95])
    assert np.allclose([lo[0], hi[0]], want)
    _, lo1, hi1, _, _ = sp.chi2_band(lam, [n])
    assert hi[0] < hi1[0]
