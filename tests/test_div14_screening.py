"""The fifth review of the Div14 chapter: the screening says which of two causes dropped a
candidate of smaller λ (a KS rank that is noise, or an atom the KS sees), the χ² sees an atom
a bin edge runs through, the stage tables' predicted mean carries the seeds'
finite-population factor, and Div9 and Div14 are both on the integers' front of λ and KS.
The sixth: the screening says how many candidates go on and whether a dropped candidate's χ²
rank is unreliable; a sweep whose designs all pick one divisor says the sliders move it elsewhere;
Div14's one tie is with Div7, a power of two away."""

from types import SimpleNamespace

import pytest

from rslab.chapters import div14
from rslab.numerics import montecarlo as mc
from rslab.numerics import search, sweep
from rslab.numerics.fastlog import DEFAULT_FASTLOG2 as FL


def _row(name, divisor, mean_ks, chi2, lam, exact_ks, samples=3 * 2**20):
    return {"name": name, "divisor": divisor, "mean_ks": mean_ks, "chi2": chi2, "lam": lam,
            "exact_ks": exact_ks, "samples": samples, "seeds": 3}


def _result(screening, finals, n=2**20, finalists=1):
    cfg = SimpleNamespace(samples_per_seed=n, rng="hw", log2=FL, baseline=8.0,
                          finalists=finalists, screen_seeds=(1, 2, 3))
    return SimpleNamespace(config=cfg, screening=screening, finals=finals)


def _quick_screening():
    """The quick build's screening (pooled χ² and mean KS as measured, λ and KS exact)."""
    return [_row("div10", 10.0, 7.263e-4, 41.32, 7.652e-7, 8.29e-5),
            _row("div8", 8.0, 7.259e-4, 43.46, 7.912e-7, 2.63e-4),
            _row("div14", 14.0, 7.295e-4, 42.19, 6.575e-7, 4.73e-5),
            _row("div(10.5)", 10.5, 7.284e-4, 42.48, 7.068e-7, 6.17e-5),
            _row("div2", 2.0, 4.35e-3, 7007.4, 2.15e-3, 4.11e-3)]


def test_a_drop_below_the_ks_null_is_noise_and_one_above_it_is_the_atom():
    winner = _row("div8", 8.0, 7.26e-4, 43.5, 7.9e-7, 2.6e-4)
    noise = _row("div14", 14.0, 7.29e-4, 42.2, 6.6e-7, 4.7e-5)           # quick: null 8.5e-4
    atom = _row("div9", 9.0, 7.3e-4, 42.0, 6.0e-7, 1.5e-3)               # above the null
    edge = _row("div2", 2.0, 4.3e-3, 7007.4, 2.2e-3, 4.1e-3)
    text = div14.screening_text(_result([winner, noise, atom, edge], [winner]))
    assert text["noise"] == ["div14"]
    assert "div14's law is 4.70e-05 from the ideal, below the KS null" in text["cause"]
    assert "its KS rank is sampling noise" in text["cause"]
    assert "div9's law is 1.50e-03 from the ideal, above" in text["cause"]
    assert "the KS sees its plateau atom (2.9e-04)" in text["cause"]
    assert [r["name"] for r in text["edge_rows"]] == ["div2"] and text["off_max"] == 43.5
    assert "div2 7,007, against at most 44 for the others" in text["edge"]
    assert text["null"] == pytest.approx(0.8687 / 2**10 * (1 - 2**-12) ** 0.5, rel=1e-3)


def test_no_drop_is_said_as_none():
    winner = _row("div8", 8.0, 7.26e-4, 43.5, 6.0e-7, 2.6e-4)
    text = div14.screening_text(_result([winner, _row("div10", 10.0, 7.3e-4, 41.3, 7.7e-7,
                                                      8.3e-5)], [winner]))
    assert text["dropped"].startswith("No candidate") and text["cause"] == text["edge"] == ""


def test_the_stage_tables_predicted_mean_carries_the_finite_population_factor():
    n = 2**28                                      # book-like: f = 1 − 2^−4
    fpc = mc.stream_fpc(n)
    row = _row("div14", 14.0, 1e-4, 720.0, 6.575e-7, 4.7e-5, samples=10 * n)
    table = div14.ranking_rows([row], fpc)[0]["E[χ²] from λ"]
    assert table == f"{fpc * 63 + 10 * n * 6.575e-7:,.1f}"
    assert table == f"{mc.predicted_chi2(6.575e-7, 10 * n, fpc=fpc).mean():,.1f}"
    assert div14.ranking_rows([row])[0]["E[χ²] from λ"] == f"{63 + 10 * n * 6.575e-7:,.1f}"


@pytest.mark.heavy
def test_div9_and_div14_are_both_on_the_front_of_lambda_and_ks_over_7_to_16():
    rows = div14.atom_rows(div14.KNOB_DIVISORS)
    front = search.pareto_front([r["lam"] for r in rows], [r["exact_ks"] for r in rows])
    on = [r["name"] for r, f in zip(rows, front, strict=True) if f]
    assert on == ["div9", "div11", "div13", "div14", "div15"]


def test_one_finalist_slot_leaves_out_all_but_one_candidate_below_the_baseline():
    screen = _quick_screening()
    text = div14.screening_text(_result(screen, [screen[1]]))
    assert text["below_baseline"] == ["div10", "div14", "div(10.5)"]
    assert text["slots"] == ("This build sends the best-ranked candidate besides Div8 (always "
                             "a finalist) to the finals; 3 screened candidates have an "
                             "exact λ below Div8's, so 2 of them are left out whatever the ranks")
    four = div14.screening_text(_result(screen, [screen[1]], finalists=4))
    assert four["slots"].startswith("This build sends the 4 best-ranked candidates besides Div8")
    assert "left out" not in four["slots"]


def test_a_dropped_candidate_whose_lambda_gap_is_below_the_spread_has_a_chance_chi2_rank():
    screen = _quick_screening()
    text = div14.screening_text(_result(screen, [screen[1]]))
    div14_rank = text["chi2_chance"]["div14"]
    assert div14_rank["chance"] and list(div14_rank["ahead"]) == ["div10"]
    pair = div14_rank["ahead"]["div10"]
    assert 0 < pair["pooled_mean"] < 0.5 < 1.5 < pair["pooled_sd"] < 2.5   # quick: 0.34, 1.9
    assert "Its χ² rank is unreliable as well (each order right less than 84 % of the time): " \
           "its expected pooled χ² is within 0.3 of that of div10" in text["cause"]
    assert set(text["chi2_chance"]["div(10.5)"]["ahead"]) == {"div10", "div14"}


def test_a_chi2_rank_behind_a_much_smaller_lambda_is_not_chance():
    screen = _quick_screening()
    rank = div14.chi2_rank_chance(_result(screen, [screen[1]]), "div2")
    assert not rank["chance"] and set(rank["resolved"]) == {"div8", "div10", "div14", "div(10.5)"}
    assert div14._chi2_cause("div2", rank).startswith(" div10, div8, div14 and div(10.5) rank "
                                                       "ahead of it on χ² as their smaller λ")


def test_a_sweep_that_cannot_move_its_choice_says_where_the_sliders_move_it():
    moved = {("c1_bits", 7): ("div15",), ("index_bits", 7): ("div15",)}
    text = div14.sweep_scope_text(sweep.sweep_config("quick"), moved)
    assert text == (" This sweep is too small to show it move: it varies c1_bits over 9 and 12 "
                    "at index_bits 6 and tries Div8, Div9 and Div14, while the sliders above "
                    "move the choice at c1_bits 7 (Div15) and index_bits 7 (Div15), none of "
                    "them a design of this sweep.")
    assert div14.sweep_scope_text(sweep.sweep_config("book"), moved) == ""   # index_bits 7 in it
    assert div14.sweep_scope_text(sweep.sweep_config("quick"), {}) == ""


def test_div14_ties_the_smallest_lambda_at_index_bits_8_only_with_div7():
    names = div14.knob_winners(div14.knob_study("index_bits", (8,)))[8]
    assert names == ("div7", "div14")
    tie = div14.tie_choice(names, FL.replace(index_bits=8))
    assert tie["choice"] == "div14" and tie["margin"] < 1e-3
