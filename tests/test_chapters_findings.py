"""The review's findings on the pipelining, Div8, Div14 and results chapters, one test each:
the figure each chapter's corrected sentence rests on, computed by its chapter module."""

from types import SimpleNamespace

import numpy as np
import pytest

from rslab.chapters import div8, div14, pipelining
from rslab.numerics import montecarlo as mc
from rslab.numerics import separation
from rslab.numerics.fastlog import DEFAULT_FASTLOG2 as FL


def test_powers_of_two_differ_away_from_the_plateaus_through_the_logs_rounding():
    for a, b in ((8.0, 16.0), (4.0, 8.0)):
        d = div14.power_of_two_differences(a, b)
        assert d["far"] > 0.9 * d["differ"] > 0
        # float32 holds the fit's 22-fractional-bit sum exactly below 4: the far differences
        # lie where the two results are in different binades and one is at least 4
        assert d["exact_below"] == 4.0 and d["far_elsewhere"] == 0
        assert 0.25 < d["differ_rounded"] / d["rounded"] < 0.75
    with pytest.raises(ValueError, match="power of two"):
        div14.power_of_two_differences(8.0, 14.0)


def test_the_scaled_tail_stops_short_of_the_lattice_and_merges_its_top():
    r = div8.tail_reach()
    assert r["g_max"] < r["g_max_lattice"] - 5
    assert r["distinct"] < r["top"] // 2 and r["distinct_lattice"] == r["top"]


def test_integer_divisors_rank_div9_before_div14_before_div7():
    ranked = div14.integer_ranking(divisors=(7.0, 9.0, 14.0))
    assert [r["name"] for r in ranked] == ["div9", "div14", "div7"]
    assert ranked[0]["expected_chi2"] == pytest.approx(63 + 1e9 * ranked[0]["lam"])


def _row(name, lam, chi2_per_seed, mean_ks, seeds=3, exact_ks=1e-5):
    return {"name": name, "lam": lam, "chi2": float(np.mean(chi2_per_seed)),
            "chi2_per_seed": list(chi2_per_seed), "mean_ks": mean_ks, "seeds": seeds,
            "exact_ks": exact_ks}


def test_the_selection_report_says_what_the_sample_does_not_separate():
    n = 10**8
    null = separation.ks_null_mean(n)
    finals = [_row("div14", 6.6e-7, [130, 128, 133], null),
              _row("div8", 7.9e-7, [140, 131, 128], 3 * null)]
    screening = finals + [_row("div9", 6.0e-7, [127, 129, 131], 1.05 * null)]
    result = SimpleNamespace(config=SimpleNamespace(samples_per_seed=n, rng="hw"), finals=finals,
                             screening=screening)
    rep = div14.selection_report(result)
    ks = {r["name"]: r for r in rep["ks"]}
    assert ks["div14"]["p"] > 0.5 and ks["div8"]["p"] < 1e-6
    assert not rep["chi2"][0]["resolved"] and rep["chi2"][0]["inside_each_other"]
    assert [d["name"] for d in rep["dropped"]] == ["div9"]


def test_separation_resolves_a_large_paired_difference_and_rejects_bad_input():
    assert separation.paired_p([100, 110, 105, 98], [200, 212, 207, 199]) < 1e-3
    lo, hi = separation.chi2_band(715.8)
    assert lo < 700 < 730 < hi
    with pytest.raises(ValueError, match="same length"):
        separation.paired_p([1.0], [2.0])
    with pytest.raises(ValueError, match="seeds"):
        separation.ks_against_null(1e-4, 10**8, 0)
    with pytest.raises(ValueError, match="fpc"):
        separation.chi2_band(700.0, fpc=0.0)


def test_draws_without_replacement_narrow_the_null_laws():
    n = 2**31  # half of one stream's words: fpc = 1/2
    fpc = mc.stream_fpc(n)
    assert fpc == 0.5 and mc.stream_fpc(n, "philox") == 1.0
    null = separation.ks_null_mean(n)
    assert separation.ks_against_null(null, n, 4, fpc)["null"] == pytest.approx(null * 0.5**0.5)
    assert separation.ks_against_null(null * 0.5**0.5, n, 4, fpc)["p"] == pytest.approx(1.0)
    lo, hi = separation.chi2_band(63 * fpc, fpc=fpc)
    assert lo < 63 * fpc < hi < 63


def test_the_largest_log_error_on_half_to_two_is_in_the_band_the_bound_leaves_out():
    e = div8.largest_log_error()
    assert e["in_excluded"] and e["ratio"] > 100 and e["error"] > FL.zero_threshold * 0.9


def test_the_div8_atom_mass_formula_carries_ln2_squared():
    hits = div8.plateau_hits(FL, 8, stride=4)[0]
    assert div8.atom_mass_estimate(8) == pytest.approx(hits, rel=0.02)
    assert div8.atom_mass_estimate(8) / np.log(2) == pytest.approx(hits / np.log(2), rel=0.02)
    assert abs(div8.atom_mass_estimate(8) / np.log(2) - hits) > 0.3 * hits


def test_the_recurrence_bound_list_names_the_bare_max_argmax_too():
    rows = pipelining.loop_bounds()
    rec = pipelining.recurrence_bound(rows)
    assert "study: argmax (max)" in rec["loops"] and "study: argmax (select)" in rec["loops"]
    assert rec["work_ratio"] < 1
    by = {r["loop"]: r for r in rows}
    assert by["study: argmax (max)"]["rec_mii"] < by["study: argmax (select)"]["rec_mii"]


def test_the_divisor_figure_axes_fit_both_ends_of_its_slider():
    (x0, x1), (y0, y1) = div8.PROFILE_LIMITS
    for k in (1.0, div8.K_MAX):
        d = div8.divisor_error_profile(k)
        worst = d["worst"][d["worst"] > 0]
        assert x0 <= d["t"][0] and d["plateau"][1] <= x1
        assert y0 <= worst.min() and worst.max() <= y1


def test_the_pipelining_sliders_limits_cover_every_value_of_their_range():
    lims = pipelining.valu_ylims((1, 2, 4))
    top = pipelining.valu_points(pipelining.VALU_RANGE[1], (1, 2, 4))
    assert max(p["measured_ii"] for p in top) < lims[0][1]
    hold = pipelining.hold_ylims((7, 20))
    blind = pipelining.hold_points(pipelining.HOLD_RANGE[1], (7, 20), plan_hold=0)
    assert max(p["stalls_per_iter"] for p in blind) < hold[1][1]


def test_a_run_below_another_programs_floor_is_named():
    from rslab.chapters import results

    rows = [{"draw": "gumbel-div8", "name": "all-accept", "cycles": 300, "bound_cycles": 200,
             "ratio": 1.5, "task_bound_cycles": 50, "task_binding": "dma", "task_ratio": 6.0},
            {"draw": "invcdf-wide48", "name": "all-accept", "cycles": 150, "bound_cycles": 120,
             "ratio": 1.25, "task_bound_cycles": 50, "task_binding": "dma", "task_ratio": 3.0}]
    assert results.below_other_floor(rows) == ["invcdf-wide48 at all-accept (150 cycles "
                                               "against 200)"]
    assert results.task_rows(rows)[1]["task bound"] == "50 (DMA)"


def test_the_selection_report_reads_a_real_search():
    from rslab.numerics import search

    cfg = search.search_config("quick", divisors=(14.0,), samples_per_seed=2**16,
                               finalists=1, grid=(), processes=1)
    rep = div14.selection_report(search.run_search(cfg, progress=False, exact=False))
    # at 2^16 samples a seed either may lead: the report reads the finals whichever wins
    assert {r["name"] for r in rep["ks"]} == {"div8", "div14"}
    assert rep["winner"] == rep["ks"][0]["name"]
    assert all(0 <= r["p"] <= 1 for r in rep["ks"]) and len(rep["chi2"]) == 1
    assert rep["chi2"][0]["band_other"][0] < rep["chi2"][0]["band_other"][1]


def test_the_scaled_tail_merges_by_the_accumulators_lsb_not_by_its_error():
    r = div8.tail_reach()
    assert r["first_log_step"] == r["accumulator_lsb"] == 2.0**-FL.product_bits
    assert r["distinct_products"] > 2 * r["distinct_first_log"] == 2 * r["distinct"]
    fine = r["fine"]
    assert fine["error_bound"] == pytest.approx(fine["bound"], rel=0.02)
    assert fine["distinct"] == r["distinct_products"]
    assert fine["g_max"] == pytest.approx(r["g_max"], abs=0.1)
    assert r["t_min"] > 100 * r["t_min_ideal"]


def test_only_the_plateau_has_a_relative_error_of_one_in_the_band():
    e = div8.largest_log_error()
    assert 0.4 < e["band_zeros"] / e["band_points"] < 0.6
    assert e["band_rel_max"] < 0.01


@pytest.mark.heavy
def test_the_ks_test_rejects_div8_only_past_its_critical_value():
    from rslab.numerics.gumbel import get_noise
    from rslab.numerics.stats import exact_stats

    ex = exact_stats(get_noise("div8"), errors=False)
    mass = div8.plateau_hits(FL, 8)[0]
    at_floor = int((2 * div8.ks_noise_floor(1) / mass) ** 2)
    at_critical = int((2 * div8.ks_critical(1) / mass) ** 2)
    assert div8.ks_power(ex, at_floor) < 0.1
    assert div8.ks_power(ex, at_critical) > 0.8


def test_the_ks_critical_value_is_the_kolmogorov_laws_quantile():
    assert div8.ks_critical(1) == pytest.approx(1.6276, abs=1e-3)
    assert div8.ks_critical(10**6, alpha=0.05) == pytest.approx(1.3581e-3, rel=1e-3)


def test_the_tau_figure_axes_cover_every_position_of_its_slider():
    taus, zeros = div8.plateau_curve()
    (x0, x1), (y0, y1) = div8.plateau_limits()
    assert div8.TAU_SCALES[0] == div8.TAU_RANGE[0] and div8.TAU_SCALES[-1] == div8.TAU_RANGE[1]
    assert np.all(np.diff(zeros) > 0)
    assert x0 <= taus[0] and taus[-1] <= x1 and y0 <= zeros[0] and zeros[-1] <= y1
    control = div8.plateau_control()
    assert (control.lo, control.hi) == div8.TAU_RANGE


def test_the_chi2_rejects_div8_at_a_size_of_the_order_the_ks_needs():
    lam = 7.91e-7                                   # Div8's exact λ (calibration.div8_lambda)
    n50, n90 = div8.chi2_n_for_power(lam, 0.5), div8.chi2_n_for_power(lam, 0.9)
    assert 3.6e7 < n50 < 4.0e7 and 6.3e7 < n90 < 6.8e7
    assert div8.chi2_power(lam, n50) == pytest.approx(0.5, abs=1e-4)
    assert div8.chi2_power(lam, 1 << 20) < 0.05 and div8.chi2_power(lam, 1e9) > 0.999
    with pytest.raises(ValueError, match="power"):
        div8.chi2_n_for_power(lam, 0.005)


def test_the_zero_count_follows_from_the_fitted_plateau_prediction():
    zc = div8.zeros_check({"exact_zeros": 8614.1, "plateau_prediction": 8609.0,
                           "note_zeros": 8627})
    assert zc["ratio"] == pytest.approx(1.0006, abs=1e-4)
    assert 0 < zc["note_sigma_exact"] < zc["note_sigma_pred"] < 0.25


def test_the_top_uniforms_feed_the_first_log_inside_the_band_the_bound_leaves_out():
    top = div8.top_first_log_error()
    assert top["max_abs_log"] < 2 * FL.zero_threshold
    assert 0 < top["max_error"] < FL.error_bound()
