"""The chapter "An exact draw in integers": the worked example is the package's draw, the
guarantee's terms add up, the rounding row and the widths."""

import numpy as np
import pytest

from rslab.chapters import fixed_point as ch
from rslab.numerics import fixed_invcdf


def test_the_worked_example_is_the_draw_at_eight_bits():
    ex = ch.worked_example()
    assert ex["counts"] == ex["package_counts"] and sum(ex["counts"]) == 2**16
    for level in ex["levels"]:
        assert level["counts"] == level["formula_counts"] and sum(level["counts"]) == 256
        assert all(0 <= q < 256 for q in level["quantised"])
    assert ex["counts"][3] == 0 and ex["levels"][0]["counts"] == [216, 40]


def test_the_worked_example_names_its_bad_input():
    with pytest.raises(ValueError, match="weights"):
        ch.worked_example((1.0, 2.0, 3.0))


def test_the_guarantee_terms_add_up_to_the_bound():
    for vocab in (256, 16_384, 154_880):
        t = ch.guarantee_terms(vocab)
        assert t["total"] == t["bound"] == fixed_invcdf.chi2_bound(vocab)
    t = ch.guarantee_terms(154_880)
    assert t["total"] == fixed_invcdf.GUARANTEE and 0.9 < t["share_sums"] < 1
    assert "| χ² |" in ch.guarantee_table(t)


def test_the_domain_is_named():
    assert "2^120" in ch.domain_error()


def test_the_rounding_row_attains_the_block_sums_term():
    r = ch.rounding_figures(16_384)
    assert r["share_256"] >= 0.99 and r["share"] >= 0.9


def test_guarantee_grid_needs_both_widths_and_keeps_the_float32_floor():
    grid = ch.guarantee_grid(154_880)
    enough = ch.least_enough(grid, 1e-12)
    assert 40 < enough["fraction_bits"] <= 62 and 48 < enough["uniform_bits"] <= 96
    gamma = 7 * 2.0**-24 / (1 - 7 * 2.0**-24)
    assert min(g["chi2_bound"] for g in grid) >= (gamma / (1 - gamma)) ** 2
    with pytest.raises(ValueError):
        ch.least_enough(grid, 1e-20)


def test_the_tail_per_row_is_the_row_phases_difference():
    from rslab.fixtures import TEST_POINTS

    rows = [{"draw": d, "name": n, "phases": {"bonus": b, "residual": r}}
            for d, b, r in (("gumbel-div8", 100, 50), ("invcdf-wide48", 80, 40),
                            ("fixed-u96", 80 + 8 * TEST_POINTS["all-accept"].R, 40))
            for n in ("all-accept", "first-reject")]
    cyc = ch.fixed_cycles(rows, TEST_POINTS)
    assert cyc["all-accept"]["tail_per_row"] == 8 and cyc["first-reject"]["tail_per_row"] == 0
    assert np.isfinite(cyc["all-accept"]["tail_per_row"])


def test_the_worse_end_of_the_quanta_is_set_by_the_crossover_width():
    """Review 2, finding 2: at 1,210 blocks the top end of S sets K* below about 67.6 bits and
    the smallest S from 68 on, though 1,210·2^63 = 2^73.2 lies above 2^68."""
    t = ch.guarantee_terms(154_880)
    assert abs(t["crossover_bits"] - 67.62) < 0.01 and t["smallest_worst_from"] == 68
    lo, top = fixed_invcdf.quanta_range(1210)
    assert fixed_invcdf.level_bound(1210, top, 67) > fixed_invcdf.level_bound(1210, lo, 67)
    assert fixed_invcdf.level_bound(1210, top, 68) < fixed_invcdf.level_bound(1210, lo, 68)
    assert t["top_quanta_bits"] > 68 and t["k1"] > t["k1_top"]


def test_order_and_scale_keep_the_bound_not_the_law():
    """Review 2, finding 1: any order or scale stays within the bound; only a power-of-two
    scale keeps the rounding row's law."""
    rows = {r["row"]: r for r in ch.order_and_scale(1024)}
    base = rows["the rounding row"]["chi2"]
    assert all(r["share"] <= 1 for r in rows.values())
    assert rows["scaled by 2⁻¹⁰⁰"]["chi2"] == base
    for name in ("its tokens in a random order", "its tokens sorted, heaviest first",
                 "scaled by 3"):
        assert rows[name]["chi2"] < 0.1 * base
