"""The fourth review of the Div14 chapter: the knob section ranks by λ alone only where it
says so, and the chapter's rule (λ, plateau atom and KS distance together) is applied to the
fits it computes: at 8 index bits Div7 and Div14 tie on λ and Div14 wins on the atom and KS;
at the calibrated fit Div9, of smallest λ, has a larger atom and KS distance than Div14."""

from rslab.chapters import div14
from rslab.numerics.fastlog import DEFAULT_FASTLOG2 as FL
from rslab.viz import search_plots as sp

FEW = (7.0, 9.0, 14.0, 15.0)


def test_at_8_index_bits_div7_and_div14_tie_on_lambda_and_the_rule_picks_div14():
    cfg = FL.replace(index_bits=8)
    winners = div14.knob_winners({8: sp.knob_landscape(cfg, FEW)}, FEW)[8]
    assert winners == ("div7", "div14")
    tie = div14.tie_choice(winners, cfg, FEW)
    assert tie["margin"] < 1e-4 and tie["choice"] == "div14"
    lam = sp.knob_landscape(cfg, FEW)
    assert lam is sp.knob_landscape(cfg, FEW) and not lam.flags.writeable


def test_at_the_calibrated_fit_the_smallest_lambda_has_a_larger_atom_and_ks_than_div14():
    assert div14.knob_winners({0: sp.knob_landscape(FL, FEW)}, FEW)[0] == ("div9",)
    r9, r14 = div14.atom_rows((9.0, 14.0))
    assert r9["exact_ks"] > 3 * r14["exact_ks"] and r9["atom"] > 10 * r14["atom"]


def test_a_tie_with_no_divisor_best_on_both_has_no_choice():
    cfg = FL.replace(index_bits=7)                  # div15: smaller atom; div14: smaller KS
    tie = div14.tie_choice(("div14", "div15"), cfg, FEW)
    r14, r15 = tie["rows"]
    assert (r15["atom"] < r14["atom"]) != (r15["exact_ks"] < r14["exact_ks"])
    assert tie["choice"] is None and tie["margin"] > 0
