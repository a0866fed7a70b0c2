"""The Div8 and Div14 chapters' results, one test per review finding (17, 21–25, 27, 30):
the figures each corrected sentence rests on, computed by the chapter modules."""

from types import SimpleNamespace

import matplotlib
import numpy as np
import pytest

from rslab.chapters import div8, div14
from rslab.numerics import montecarlo as mc
from rslab.numerics import search, separation, stats, sweep, tails
from rslab.numerics.fastlog import DEFAULT_FASTLOG2 as FL
from rslab.numerics.gumbel import get_noise

matplotlib.use("Agg")


@pytest.fixture(scope="module")
def laws():
    """Div8's and Div14's exact lattice laws (built once for the tests that read them)."""
    return {n: mc.LatticeLaw.of(n, get_noise(n)) for n in ("div8", "div14")}


def test_div8_and_div14_spread_t_alike_over_the_segments():
    # finding 17: the "other segments" mechanism, refuted by the page's own measurement
    spread = div14.segment_spread(8.0, 14.0)
    assert spread["share"] < 0.005
    assert spread["error"] < 1e-3 * abs(spread["error_range"][0])


def test_the_divisor_changes_lambda_through_the_edges_and_the_cross_term():
    # finding 17: what does differ, measured
    m8, m14, m16 = (div14.edge_mechanism(k) for k in (8.0, 14.0, 16.0))
    for m in (m8, m14, m16):
        assert m["shift_corr"] > 0.99
        assert m["lam"] == pytest.approx(m["lam_first"] + m["lam_second"] + m["cross"], rel=1e-9)
        assert m["lam_predicted"] == pytest.approx(m["lam"], rel=0.01)
    assert m8["lam_first"] == m14["lam_first"]
    assert m8["lam_second"] == pytest.approx(m14["lam_second"], rel=0.02)
    assert m8["cross"] > 0 > m14["cross"]
    assert m8["lam"] - m14["lam"] == pytest.approx(m8["cross"] - m14["cross"], rel=0.05)
    assert m16["lam"] == pytest.approx(m8["lam"], rel=0.01)


def _final(name, rank_sum, mean_ks, chi2, ks_per_seed, lam=7e-7, exact_ks=4e-5, seeds=3):
    return {"name": name, "rank_sum": rank_sum, "mean_ks": mean_ks, "chi2": chi2,
            "chi2_per_seed": [chi2 - 1, chi2, chi2 + 1.5], "ks_per_seed": ks_per_seed,
            "lam": lam, "exact_ks": exact_ks, "seeds": seeds, "samples": seeds * 10**8,
            "expected_chi2": 63 + seeds * 10**8 * lam}


def _result(finals):
    config = SimpleNamespace(samples_per_seed=10**8, rng="hw", baseline=8.0, log2=FL)
    return SimpleNamespace(config=config, finals=finals, screening=finals)


def test_a_tie_on_the_rank_sum_is_said_with_its_tie_break():
    # finding 21: div14 = div11 on the rank sum, the χ² breaks the tie, KS would pick div11
    null = separation.ks_null_mean(10**8) * mc.stream_fpc(10**8) ** 0.5
    finals = [_final("div14", 2, 1.026 * null, 707.1, [1.0 * null, 1.02 * null, 1.06 * null]),
              _final("div11", 2, 1.020 * null, 734.3, [0.99 * null, 1.02 * null, 1.05 * null]),
              _final("div8", 8, 3.1 * null, 849.6, [3 * null, 3.1 * null, 3.2 * null],
                     exact_ks=2.6e-4)]
    verdict = div14.finals_verdict(_result(finals))
    assert verdict["tied"] == ["div14", "div11"] and verdict["winner"] == "div14"
    assert verdict["ks_first"] == "div11" and verdict["by_ks_tiebreak"] == "div11"
    assert not verdict["baseline_wins"]
    text = div14.finals_text(_result(finals))
    assert "only through the tie-break" in text["won"] and "div14 and div11" in text["won"]
    assert "a KS tie-break would have chosen div11" in text["leaders"]


def test_the_baseline_winning_its_own_finals_is_said():
    null = separation.ks_null_mean(10**8)
    finals = [_final("div8", 0, null, 60.0, [null] * 3), _final("div10", 2, 1.01 * null, 61.0,
                                                                 [1.01 * null] * 3)]
    verdict = div14.finals_verdict(_result(finals))
    assert verdict["baseline_wins"]
    assert "won by the baseline, div8, itself" in div14.finals_text(_result(finals))["won"]


def test_finalists_two_sigma_above_the_ks_null_are_read_against_their_own_laws():
    # finding 21: p 0.027-0.047 against the null is the sample beginning to see laws at half
    # the noise floor (their own laws expect it), and shared uniforms are one observation
    n = 10**8
    fpc = mc.stream_fpc(n)
    null = separation.ks_null_mean(n) * fpc**0.5
    sd = separation.KS_NULL_SD * fpc**0.5 / np.sqrt(n)
    base = np.linspace(-1, 1, 10) * sd + null + 2.0 * sd / np.sqrt(10)
    finals = [_final("div14", 2, float(base.mean()), 707.1, list(base), seeds=10),
              _final("div11", 2, float((base * 0.999).mean()), 734.3, list(base * 0.999),
                     seeds=10),
              _final("div8", 8, 3 * null, 849.6, list(base * 3), exact_ks=2.6e-4, seeds=10)]
    ks = div14.ks_text(_result(finals))
    assert [r["name"] for r in ks["below"]] == ["div14", "div11"]
    assert all(0.01 < r["p"] < 0.06 for r in ks["below"])
    assert "not a fluke" in ks["text"] and "one observation, not 2" in ks["text"]
    for name in ("div14", "div11"):
        assert ks["own"][name]["mean"] > 1.05 * ks["null"] and ks["own"][name]["p"] > 0.05


def test_lambda_is_blind_to_an_atom_no_bin_edge_runs_through():
    # finding 22: same λ a power of two apart, atoms an order or two apart, KS ≈ half the atom
    rows = {r["name"]: r for r in div14.atom_rows((3.5, 7.0, 14.0, 4.5, 9.0, 6.0))}
    lams = [rows[n]["lam"] for n in ("div(3.5)", "div7", "div14")]
    assert max(lams) < 1.01 * min(lams)
    assert rows["div(4.5)"]["lam"] == pytest.approx(rows["div9"]["lam"], rel=0.01)
    assert rows["div(3.5)"]["atom"] > 100 * rows["div14"]["atom"]
    assert rows["div(4.5)"]["atom"] > 10 * rows["div9"]["atom"]
    for n in ("div(3.5)", "div(4.5)", "div7"):
        assert rows[n]["exact_ks"] == pytest.approx(rows[n]["atom"] / 2, rel=0.1)
    assert rows["div6"]["on_edge"] and rows["div6"]["lam"] > 50 * rows["div9"]["lam"]
    assert [k for k in range(1, 17) if div14.atom_on_edge(float(k))] == [1, 2, 3, 4, 5, 6]
    assert not div14.atom_on_edge(4.5)


def test_the_smallest_t_is_the_first_logs_error_at_c():
    # finding 23: not "about one output LSB" but the first log's error at its top input
    t = search._first_layer(FL)
    c = np.float32(get_noise("scaled").scale)
    err_c = abs(float(FL(np.array([c]))[0]) - float(np.log2(np.float64(c))))
    assert float(t.min()) == pytest.approx(err_c, rel=0.05)
    assert float(t.min()) > 100 * float(np.spacing(np.float32(1)))


def test_the_cores_multiply_keeps_div14s_lambda_ks_and_atom():
    # finding 24: t times 1/14 rounded to float32 is another noise at millions of points,
    # and as good
    core = div14.core_divide(14.0)
    assert core["differ"] > 10**6
    assert core["lam_multiply"] == pytest.approx(core["lam_divide"], rel=1e-3)
    assert core["ks_multiply"] == core["ks_divide"]
    assert core["atom_multiply"] == core["atom_divide"]


def test_no_divisor_changes_the_tail_and_its_error_dwarfs_the_divisors_gain(laws):
    # finding 25: the tail at several Δ, beside the λ gains
    for d in (14, 16):
        wins = [tails.tail_token_win(law, d) for law in laws.values()]
        assert max(wins) - min(wins) < 1e-3
        assert float(tails.ideal_tail_token_win(d)) - wins[0] > 0.3
    rows = div14.tail_rows(div14.tail_wins(laws, (14, 16)), (14, 16), (16,))
    assert rows[0]["div8"] == rows[0]["div14"] and rows[0]["Δ"] == "16"
    m8, m14 = div14.edge_mechanism(8.0), div14.edge_mechanism(14.0)
    assert 0.5 * np.abs(m8["deviation"] - m14["deviation"]).sum() < 1e-3


def test_one_more_index_bit_moves_the_winner_and_the_sweep_tries_every_integer():
    # finding 27: index_bits 6 → div9, 7 → div15; the book sweep's list holds the winners
    assert div14.best_divisor(FL) == "div9"
    assert div14.best_divisor(FL.replace(index_bits=7)) == "div15"
    assert sweep.sweep_config("book").divisors == search.INTEGER_DIVISORS
    assert 9.0 in sweep.sweep_config("quick").divisors


def test_the_validation_tables_keep_a_samples_ks_apart_from_the_laws():
    # finding 30: the law's own distance is labelled as such, with no "expected p-value"
    n = 2**14
    u = get_noise("precise").trace(mc.lattice_uniforms()[:: mc.LATTICE_SIZE // n])["u"]
    ideal = np.sort(stats.gumbel2_ppf((np.arange(2**16) + 0.5) / 2**16).astype(np.float32))
    ex = {"div8": SimpleNamespace(expected_count=lambda what, k: 0.0, ks=2.6e-4,
                                  expected_chi2=lambda k: 63.0, sorted_g=ideal,
                                  chi2_law=lambda k: SimpleNamespace(median=lambda: 62.3))}
    mc_rows, exact_rows = div8.validation_rows(u, ex, n)
    assert "KS distance (p)" in mc_rows[0]
    assert "KS distance of the law" in exact_rows[0] and "KS distance (p)" not in exact_rows[0]
    assert float(exact_rows[0]["a sample's mean KS"]) == pytest.approx(
        div8.ks_noise_floor(n), rel=0.1)
    assert div8.ks_noise_floor(2**20) == pytest.approx(0.8687 / 1024, rel=1e-3)


def test_a_samples_ks_is_the_null_for_the_ideal_law_and_the_laws_own_far_above_it():
    # findings 21 and 30: what a sample shows, beside the law's own distance
    ideal = np.sort(stats.gumbel2_ppf((np.arange(2**16) + 0.5) / 2**16).astype(np.float32))
    n = 10**6
    null = separation.sample_ks(ideal, n, sims=1000, seed=1)
    assert null.mean() == pytest.approx(separation.ks_null_mean(n), rel=0.03)
    assert null.std() == pytest.approx(separation.KS_NULL_SD / np.sqrt(n), rel=0.1)
    assert np.array_equal(null, separation.sample_ks(ideal, n, sims=1000, seed=1))
    atom = ideal.copy()
    atom[2**15 - 200:2**15 + 200] = atom[2**15]  # an atom of mass 400/2^16 ≈ 6e-3
    law = stats.ks_sorted(atom, atom.size)
    assert separation.sample_ks(atom, 10**9, sims=50).mean() == pytest.approx(law, rel=0.02)
    near = separation.sample_ks(atom, int(1 / law**2), sims=200).mean()
    assert near > 1.1 * separation.ks_null_mean(int(1 / law**2))
    with pytest.raises(ValueError, match="sorted"):
        separation.sample_ks(ideal[::-1], n)
    with pytest.raises(ValueError, match="sims"):
        separation.sample_ks(ideal, n, sims=0)


def test_the_fast_log_table_describes_every_knob():
    docs = div8.knob_docs()
    assert set(docs) == set(FL.__dataclass_fields__)
    assert all(r["what it sets"] and "``" not in r["what it sets"] for r in div8.knob_rows())


def test_the_trace_table_skips_the_steps_a_pipeline_does_not_take():
    tr = get_noise("scaled").trace(np.array([0.5], np.float32))
    steps = [r["step"] for r in div8.trace_rows(tr, 0)]
    assert "t/k" not in steps and "u·c" in steps
    assert "t/k" in [r["step"] for r in div8.trace_rows(get_noise("div8").trace(
        np.array([0.5], np.float32)), 0)]


def _text_sizes(fig) -> list[float]:
    return [t.get_fontsize() for t in fig.findobj(matplotlib.text.Text) if t.get_text()]


def test_the_chapters_figures_are_legible_at_the_pages_width(laws):
    from rslab.viz import numerics_plots as npl
    from rslab.viz import search_plots as sp

    m = div14.edge_mechanism(8.0)
    law = laws["div8"]
    rows = [{"name": f"div{k}", "divisor": float(k), "lam": 1e-6 * k, "exact_ks": 1e-4 / k,
             "pareto": k > 2} for k in range(2, 6)]
    figures = [sp.plot_edge_shifts({"div8": m}), sp.plot_landscape(rows, 1e9),
               sp.plot_pareto(rows, 1e9),
               sp.plot_tail({"div8": law}, (12, 16), div14.tail_wins({"div8": law}, (12, 16))),
               sp.plot_chi2_growth({"div8": 7.9e-7}, {"div8": (1e6, 64.0)}, note=(1e9, 851.5)),
               npl.plot_log_error({"fast": FL}),
               npl.plot_plateau_mass([1, 8], [1e-2, 1e-4], [1e-2, 1e-4])]
    for fig in figures:
        assert fig.get_figwidth() <= 7.0
        assert min(_text_sizes(fig)) >= 10
        matplotlib.pyplot.close(fig)


def test_the_plateau_mass_figure_marks_a_divisor_with_no_lattice_hit():
    from rslab.viz import numerics_plots as npl

    fig = npl.plot_plateau_mass([1, 8, 32], [1e-2, 1e-4, 1e-12], [1e-2, 1e-4, 0.0])
    ax = fig.axes[0]
    marks = [ln for ln in ax.get_lines() if ln.get_marker() == "v"]
    assert len(marks) == 1 and list(marks[0].get_xdata()) == [32]
    assert marks[0].get_ydata()[0] == pytest.approx(ax.get_ylim()[0])
    assert "never empty" not in ax.get_title()
    matplotlib.pyplot.close(fig)


def test_the_notes_traced_t_lies_in_the_models_plateau():
    # a weak comparison: the traced t is 1 + 2^-22, inside any plateau wider than its log2
    from rslab import note

    a, b = FL.plateau()
    assert a <= note.SECOND_LAYER_INPUT <= b
    assert FL(np.array([note.SECOND_LAYER_INPUT], np.float32))[0] == 0
    t = np.float32(note.SECOND_LAYER_INPUT)
    assert np.float64(t) - 1 == 2.0**-22
    narrow = FL.replace(zero_threshold=2 * float(np.log2(np.float64(t))))
    assert narrow(np.array([t]))[0] == 0 and FL.zero_threshold > 1e4 * narrow.zero_threshold


def test_the_largest_error_outside_the_band_is_about_the_bound_not_within_it():
    # second review, finding 2: 8.0287e-05 against error_bound() 8.0184e-05
    worst = div8.largest_log_error()
    assert FL.error_bound() < worst["outside"] < 1.01 * FL.error_bound()


def test_div24_misses_the_plateau_below_t_max_over_a_and_div8_keeps_two_zeros():
    # second review, findings 4 and 5: the lattice's coarse top t; Div8's zeros on the lattice
    from rslab.numerics.rng import all_uniforms

    u = all_uniforms()
    t = get_noise("scaled").trace(u)["t"]
    a, _ = FL.plateau()
    assert 24 < float(t.max()) / a
    assert not np.any(FL(t / np.float32(24)) == 0)
    assert int(np.sum(get_noise("div8")(u) == 0)) == 2


def test_a_per_binade_fast_logs_zeros_are_one_grid_atom_not_a_pile_up():
    from rslab import note

    rows = div8.per_binade_rows(bits=(6, 8))
    assert all(r["Div8 = scaled"] for r in rows)
    empty, eight = rows
    assert empty["values of t giving 0"] == 0 and empty["zeros per 2^20, scaled"] == 0
    assert eight["values of t giving 0"] == 1
    assert eight["zeros per 2^20, scaled"] <= 1.01 * eight["neighbour atom per 2^20"]
    assert note.ZEROS_SCALED / 10 < eight["zeros per 2^20, scaled"] < note.ZEROS_SCALED


def test_the_div14_power_variant_is_no_sample_size_the_pages_print():
    # third review, finding 1: Div8's 90 % point at α = 0.01 was the check's answer. The
    # sample size for a power is λ*/λ, so the ratios below hold for any λ.
    from rslab.exercises import EXERCISES
    from rslab.viz.search_plots import samples_for_power

    e, lam = EXERCISES["div14-power"], 1e-6
    mine = samples_for_power(lam, power=e.params["power"], alpha=e.params["alpha"])
    printed = [div8.chi2_n_for_power(lam, 0.5), div8.chi2_n_for_power(lam, 0.9),  # Div8 page
               samples_for_power(lam, power=0.5, alpha=1e-3)]                      # Div14 page
    assert e.params["divisor"] == 8
    assert all(abs(mine / n - 1) > e.rel_tol + 0.05 for n in printed)  # 2 digits printed


def test_the_div8_atom_check_takes_the_count_not_the_estimate_or_the_slider_caption(capsys):
    # third review, finding 2: the ideal-law estimate (−1.0 %) and the caption's rounded
    # plateau hits (−1.2 %) passed a 2 % tolerance
    import re

    from rslab.exercises import check, expected, variant

    k = variant("div8-atom").divisor
    exact = expected("div8-atom")
    assert exact * 2**24 == round(exact * 2**24)          # a count of lattice points
    caption = div8.divisor_caption(k, div8.divisor_error_profile(k))
    shown = float(re.search(r"([\d.,]+) plateau hits", caption).group(1).replace(",", ""))
    assert check("div8-atom", exact)
    assert not check("div8-atom", div8.atom_mass_estimate(k))
    assert not check("div8-atom", shown / 2**20)


def test_the_chi2_sees_the_zeros_on_the_middle_edge_not_div8s_atom_inside_a_bin():
    # third review, finding 3: g = 0 is the middle bin edge and a value on an edge is counted
    # above it; the range Div8's plateau draws would cover lies inside the first bin
    edges = stats.bin_edges()
    lo, hi = div8.plateau_g_range(1)
    assert edges[31] == 0 and lo < 0 < hi
    assert np.bincount(np.searchsorted(edges, np.zeros(3, np.float32), side="right"))[32] == 3
    assert div8.plateau_g_range(8)[1] < edges[0] < div8.plateau_g_range(8)[1] + 0.5
