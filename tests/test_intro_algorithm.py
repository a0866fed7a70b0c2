"""The introduction's and the algorithm chapter's figures, computed by their modules: the
recommended draw's guarantee, the headline in words, the gap to the note, the noise's hard
limit and what a small check can see, the χ² cells, the flat target's mass."""

import math

import numpy as np
import pytest

from rslab import note
from rslab.chapters import algorithm as alg
from rslab.chapters import intro, prose
from rslab.fixtures import VOCAB, random_target_logits, zipf_target_logits
from rslab.numerics.divergence_bound import samples_no_test_sees
from rslab.numerics.fixed_invcdf import GUARANTEE
from rslab.numerics.methods import RECOMMENDED, variant_name
from rslab.reference import target_probs


def test_the_recommended_draw_keeps_every_test_below_the_advantage_at_the_notes_target():
    rec = intro.recommended()
    assert rec["name"] == variant_name(*RECOMMENDED)
    assert rec["bound"] == GUARANTEE and rec["samples"] == samples_no_test_sees(GUARANTEE)
    assert rec["target"] == 1e10 > note.CHI2_SAMPLES  # the book's target, not the note's
    assert rec["samples"] > 10 * rec["target"]
    assert rec["advantage_at_target"] == pytest.approx(math.sqrt(1e10 * GUARANTEE / 2))
    assert rec["advantage_at_target"] < rec["advantage"] == 0.1


def test_the_recommended_draw_rounds_float32_block_sums_and_draws_two_uniforms():
    """Blocks of 128, a 96-bit uniform for the block and one for the lane; the float32
    block sums' rounding is most of the bound (1.741e-13 of 1.879e-13)."""
    rec = intro.recommended()
    assert (rec["lanes"], rec["uniforms"], rec["uniform_bits"]) == (128, 2, 96)
    assert rec["sums_share"] == pytest.approx(1.741e-13 / 1.879e-13, abs=2e-3)


def test_with_exact_block_sums_the_bound_would_be_a_tiny_share_of_itself():
    """Without the block sums' rounding (γ = 0) the bound is 2.90e-16, 0.15 % of 1.879e-13:
    the cross term, too, exists only because of the block sums."""
    rec = intro.recommended()
    assert rec["exact_sums_share"] == pytest.approx(2.90e-16 / 1.879e-13, rel=0.02)


def test_the_bounds_terms_add_up_the_block_sums_own_their_cross_term_and_the_rest():
    """The block sums' own term (92.7 %), their cross term with the quantisation (7.2 %) and
    the bound with exact sums (0.15 %) make the whole bound (1.879e-13)."""
    rec = intro.recommended()
    assert rec["cross_share"] == pytest.approx(0.072, abs=1e-3)
    assert rec["sums_share"] + rec["cross_share"] + rec["exact_sums_share"] == pytest.approx(1)


def test_a_slowdown_is_never_called_a_speedup():
    assert intro.speed_words(2.883) == "2.88× faster"
    assert intro.speed_words(0.939) == "1.06× slower"
    assert prose.sci(1.8789e-13) == "1.9 × 10⁻¹³" and prose.sci(1.06e11) == "1.1 × 10¹¹"
    assert prose.sci(1e10) == "10¹⁰" and prose.sci(1e9, 1) == "10⁹"
    assert intro.power_of_two(120) == "2¹²⁰"


def test_the_guarantee_is_printed_on_its_safe_side():
    """The bound rounds up, the sample count below which it holds rounds down (1.064e11 is
    "1.06 × 10¹¹", not "1.1 × 10¹¹", where the advantage bound already exceeds 0.1), and the
    advantage at 10¹⁰ samples (0.03065) is "0.031", not "0.03"."""
    rec = intro.recommended()
    assert prose.sci(rec["samples"], 3, rounding="down") == "1.06 × 10¹¹"
    assert math.sqrt(1.1e11 * rec["bound"] / 2) > rec["advantage"]
    assert prose.sci(rec["bound"], rounding="up") == "1.9 × 10⁻¹³"
    assert intro.ceil_to(rec["advantage_at_target"], 3) == "0.031"
    assert prose.sci(1.9e-13, rounding="down") == "1.9 × 10⁻¹³"  # no float error flips a digit
    assert prose.sci(9.96e10, rounding="up") == "10¹¹"
    assert prose.sci(9.96e10, rounding="down") == "9.9 × 10¹⁰"
    with pytest.raises(ValueError, match="rounding"):
        prose.sci(1.0, rounding="sideways")


def test_at_the_readers_scale_first_step_reject_is_slower_and_the_page_says_where():
    runs = intro.headline_runs(1024)
    items = {it["name"]: it for it in intro.items_of(runs)}
    (base, speedup), = items["first-reject"]["speedups"]
    assert speedup < 1 and "slower" in intro.speed_words(speedup)
    fr = next(r for r in runs if r["name"] == "first-reject")
    assert "residual Gumbel" in intro.slower_phases(fr)
    text, slower = intro.scale_note(runs, intro.items_of(runs), 1024)
    assert list(slower) == ["first-reject"] and "first-step reject program is slower" in text
    gap = intro.note_gap(intro.items_of(runs), 1024)
    assert not gap["comparable"] and "no measure" in intro.gap_sentence(gap)
    assert "S = 4 drafts, R = 2 requests" in intro.test_points(runs)
    assert "first-step reject (S = " in intro.test_points(runs)
    tables = intro.model_table(intro.items_of(runs)) + intro.speedup_table(intro.items_of(runs))
    assert "first-step reject" in tables and "first-reject" not in tables
    assert "the note's optimised program, on its chip at V = 154,880" in tables
    assert "not this table's 1,024" in intro.model_table(intro.items_of(runs), 1024)
    assert "11.91× faster (the note's)" in tables and "1.47× faster (the note's)" in tables


def test_the_note_gap_is_measured_against_the_floor():
    items = [{"name": "all-accept", "optimised": 211_574, "floor": 207_663,
              "note_optimised": 128_453},
             {"name": "first-reject", "optimised": 33_456, "floor": 33_013,
              "note_optimised": 38_032}]
    gap = intro.note_gap(items, note.VOCAB)
    assert gap["comparable"]
    assert gap["all-accept"]["below_floor_pct"] == pytest.approx(100 * (1 - 128_453 / 207_663))
    assert gap["first-reject"]["below_floor_pct"] < 0
    assert "128,453 cycles, 38 % below the floor" in intro.gap_sentence(gap)


@pytest.mark.heavy
def test_at_the_notes_vocabulary_the_notes_all_accept_ran_below_the_models_floor():
    items = {it["name"]: it for it in intro.headline_items(VOCAB)}
    aa, fr = items["all-accept"], items["first-reject"]
    assert aa["note_optimised"] < aa["floor"] <= aa["optimised"]
    assert fr["optimised"] < fr["note_optimised"]
    assert all(s > 1 for it in items.values() for _, s in it["speedups"])


def test_a_token_past_the_noises_spread_is_never_drawn():
    logits = np.float32([0.0, -10.0, -20.0, -30.0]) / np.float32(np.log2(np.e))
    count, mass = alg.never_drawn(logits, 15.0)
    assert count == 2
    assert mass == pytest.approx(float(target_probs(logits)[2:].sum()), rel=1e-6)
    assert alg.never_drawn(logits, 30.5)[0] == 0


def test_the_noise_ranges_and_the_rank2_targets_undrawable_tokens():
    exact, div8 = alg.noise_range("exact"), alg.noise_range("div8")
    assert div8[0] == pytest.approx(exact[0], abs=1e-3) and div8[1] < exact[1] - 9
    assert alg.infinite_share("naive") > 0.01 and alg.infinite_share("div8") == 0
    zipf = zipf_target_logits(1, 0, VOCAB, exponent=2.0, seed=5)[0, 0]
    rows = {r["path"]: r for r in alg.cap_rows({"rank^-2": zipf}, {"exact": exact,
                                                                   "div8": div8})}
    assert 0 < rows["exact"]["mass"] < rows["div8"]["mass"] < 1e-3
    for r in rows.values():  # a level-10^-3 test aimed at the tokens: (1 − m)^n = 10^-3
        assert (1 - r["mass"]) ** r["aimed"] == pytest.approx(1e-3)
    # the chapter's check (64 samples at quick scale, 400 at book) most often sees none
    assert (1 - rows["div8"]["mass"]) ** 400 > 0.5


def test_the_flat_targets_mass_lies_between_two_to_the_minus_17_and_minus_14():
    p = target_probs(random_target_logits(1, 0, VOCAB, seed=5, scale=1.5)[0, 0])
    q25, q50, q75 = (alg.mass_quantile(p, q) for q in (0.25, 0.5, 0.75))
    assert -17.5 < q25 < -16.5 and -16 < q50 < -15.2 and -14.5 < q75 < -13.7
    assert alg.mass_quantile(np.array([0.25, 0.25, 0.5])) == -2.0


def test_the_rank2_checks_lightest_cell_folds_the_whole_tail():
    """At 64 samples (quick) the χ² of the rank^-2 check keeps two cells: every token of
    p < 2^-6 in one (about 6 samples expected); at 400 (book) the lightest holds p < 2^-10.
    The tokens div8 can never draw all lie in it."""
    zipf = zipf_target_logits(1, 0, VOCAB, exponent=2.0, seed=5)[0, 0]
    p = target_probs(zipf).astype(np.float64)
    _, pb = alg.sp.bin_masses(np.zeros(1, np.int64), p, alg.sp.log2p_bins(p), 7)
    edge, folded, expected = alg.lightest_cell(pb, 64)
    assert (edge, folded) == (-6, 6) and 5 < expected < 7
    assert alg.merged_chi2_pvalue(pb * 64, pb, 64)[1] == 2
    edge, folded, expected = alg.lightest_cell(pb, 400)
    assert (edge, folded) == (-10, 5) and 5 < expected < 15
    lo, hi = alg.noise_range("div8")
    lost, _ = alg.never_drawn(zipf, hi - lo)
    assert np.sort(p)[lost - 1] < 2.0**-10
    with pytest.raises(ValueError, match="bin_probs"):
        alg.lightest_cell(pb, 4)


def test_chi2_cells_are_merged_until_each_expects_five():
    probs = np.array([0.002, 0.002, 0.003, 0.006, 0.013, 0.069, 0.905])
    np.testing.assert_array_equal(alg.merged_cells(probs, 400), [0, 0, 0, 0, 1, 2, 3])
    np.testing.assert_array_equal(alg.merged_cells(probs, 64), [0, 0, 0, 0, 0, 0, 1])
    assert alg.merged_chi2_pvalue(np.array([0, 0, 0, 0, 0, 0, 10]), probs, 10) == (1.0, 1)
    pvalue, cells = alg.merged_chi2_pvalue(np.array([5, 0, 0, 0, 0, 0, 395]), probs, 400)
    assert cells == 4 and pvalue < 1e-3


def test_the_notes_top_bin_holds_one_64th_of_the_ideal_noise():
    t = alg.top_bin_start(64)
    assert 2.0 ** -(2.0**-t) == pytest.approx(63 / 64)


def test_the_reference_normalises_by_a_reciprocal_not_a_divide():
    """p = e·(1/s) bit for bit; the share that differs from e/s varies from row to row (about
    1 % to 52 % over 40 rows) with the rounding error of 1/s."""
    from scipy.stats import spearmanr

    rows = random_target_logits(40, 0, 4_000, seed=0)[:, 0]
    reciprocal, differs, error = alg.reciprocal_shares(rows)
    assert reciprocal and differs.shape == (40,) and differs.min() > 0
    assert differs.min() < 0.05 and differs.max() > 0.4
    assert spearmanr(error, differs).statistic > 0.9


def test_div8s_top_bin_shortfall_shows_at_ten_to_the_nine_not_at_two_to_the_twenty():
    """Under div8 the note's top bin holds ~99.84 % of its ideal share: at 2^20 samples that
    adds ~0.04 to the expected χ², at 10^9 ~39 (a ~6σ deficit on the bin)."""
    shares, lams = alg.bin_lambdas("div8")
    assert shares.shape == lams.shape == (64,)
    assert 0.998 < shares[-1] < 0.999
    assert note.SAMPLES * lams[-1] < 0.1 and 30 < note.CHI2_SAMPLES * lams[-1] < 50
    exact_shares, exact_lams = alg.bin_lambdas("exact")
    assert abs(exact_shares[-1] - 1) < 1e-3 and note.CHI2_SAMPLES * exact_lams.sum() < 1


def test_div8s_chi2_at_ten_to_the_nine_comes_mostly_from_bins_below_the_top():
    """The whole div8 law adds ~791 to the expected 64-bin χ² at 10^9 (63 + 791 ≈ the note's
    851.5, to which the fast log was calibrated); the top bin only ~39 of it, and bins 40, 38
    and 55 lie further off than the top bin."""
    _, lams = alg.bin_lambdas("div8")
    total = note.CHI2_SAMPLES * lams.sum()
    assert 700 < total < 900
    assert abs(63 + total - note.CHI2_DIV8) < 20
    assert lams[-1] < 0.1 * lams.sum()
    assert set(np.argsort(-lams)[:3]) == {40, 38, 55}


def test_div8s_tail_falls_short_from_about_ten_and_the_flat_target_lies_there():
    """The flat target's under-draw: div8's P(g > y) is more than 5 % short of the ideal from
    y ≈ 10.5 on (the gap growing), nearly all of the target's mass needs such a noise, and
    its best score is below 0 in ~91 % of draws, not half (exact over the lattice)."""
    from rslab.viz.sampling_plots import noise_tail

    ys = np.arange(0.0, 24.5, 0.5)
    tails, _ = noise_tail(["div8"], ys)
    y_short = alg.shortfall_from(ys, tails["div8"], tails["ideal"])
    assert 9.5 <= y_short <= 11.5
    ratio = tails["div8"] / tails["ideal"]
    assert np.all(np.diff(ratio[ys >= y_short]) <= 0)
    p = target_probs(random_target_logits(1, 0, VOCAB, seed=5, scale=1.5)[0, 0]).astype(float)
    assert p[-np.log2(p) > y_short].sum() > 0.95
    assert alg.best_below_zero(p, "div8") == pytest.approx(0.906, abs=0.005)


def test_the_tokens_div8_cannot_lift_above_zero_win_far_fewer_draws_than_their_mass():
    """Tokens of p < 2^-g_max(div8) hold 0.72 of the flat target's mass but win only
    0.424-0.430 of div8's draws (exact bounds over the lattice; 4,000 seeded draws give 0.422
    ± 0.008), fewer than the 0.906 of draws whose best score is below 0."""
    p = target_probs(random_target_logits(1, 0, VOCAB, seed=5, scale=1.5)[0, 0]).astype(float)
    below = 2.0 ** -alg.noise_range("div8")[1]
    lo, hi = alg.share_won(p, "div8", below)
    assert 0.42 < lo <= hi < 0.435 and hi - lo < 0.01
    assert p[p < below].sum() == pytest.approx(0.72, abs=0.005)


def test_share_won_brackets_the_mass_on_a_small_row_with_a_fine_noise():
    """With the exact noise (close to the ideal law) a token's share of the draws is its
    probability: the bracket holds 1/4 for the token of p = 1/4."""
    q = np.array([0.5, 0.25, 0.125, 0.125])
    lo, hi = alg.share_won(q, "exact", 0.3)
    lo_light, hi_light = alg.share_won(q, "exact", 0.2)
    assert lo_light <= 0.25 <= hi_light and hi_light - lo_light < 0.01
    assert lo <= 0.5 <= hi


def test_tail_helpers_on_a_made_up_tail():
    ys = np.arange(6.0)
    ideal = np.ones(6)
    assert alg.shortfall_from(ys, np.array([1, 1, 0.97, 0.9, 0.99, 0.5]), ideal) == 5.0
    assert alg.shortfall_from(ys, ideal, ideal) == np.inf
    assert alg.close_until(ys, np.array([1, 1.005, 0.98, 1, 1, 1]), ideal) == 1.0
    assert alg.close_until(ys, ideal, ideal) == 5.0


def test_the_notes_chosen_divisor_loses_the_same_rank2_tokens_as_div8():
    zipf = zipf_target_logits(1, 0, note.VOCAB, exponent=2.0, seed=5)[0, 0]
    lost = [alg.never_drawn(zipf, hi - lo) for lo, hi in
            (alg.noise_range(n) for n in ("div8", f"div{note.BEST_DIVISOR:g}"))]
    assert lost[0] == lost[1] and lost[0][0] > 0


def test_the_reference_also_misses_most_rank2_tokens_div8_misses_but_26_times_less_mass():
    """At the note's V the Exact path can never draw 138,254 tokens (3.3e-5 of the mass), Div8
    154,161 (8.4e-4): 0.90 of the count, 1/26 of the mass."""
    zipf = zipf_target_logits(1, 0, note.VOCAB, exponent=2.0, seed=5)[0, 0]
    (d_count, d_mass), (e_count, e_mass) = (alg.never_drawn(zipf, hi - lo) for lo, hi in
                                            map(alg.noise_range, ("div8", "exact")))
    assert 0.85 < e_count / d_count < 0.95
    assert 20 < d_mass / e_mass < 30


def test_the_threshold_follows_from_the_bound_printed_with_four_digits():
    """The intro gives n = 2a²/χ² with the bound to four digits: recomputing from that figure
    gives the printed threshold; from the rounded-up 1.9 × 10⁻¹³ it would not."""
    rec = intro.recommended()
    printed = prose.sci(rec["samples"], 3, rounding="down")
    four = float(f"{rec['bound']:.4g}")
    assert prose.sci(samples_no_test_sees(four, rec["advantage"]), 3, rounding="down") == printed
    mantissa, exponent = prose.significant(rec["bound"], 2, "up")
    up = float(mantissa) * 10.0**exponent
    assert up > rec["bound"] and prose.sci(samples_no_test_sees(up), 3, "down") != printed
