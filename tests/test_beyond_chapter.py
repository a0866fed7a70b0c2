"""The chapter "Beyond the note": its live figures recompute the exact laws, its table's verdict."""

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

from rslab.chapters import beyond as ch  # noqa: E402
from rslab.numerics import draw_comparison as dc  # noqa: E402
from rslab.numerics.targets import flat  # noqa: E402
from rslab.viz.widgets import live_figure  # noqa: E402

V = 2048
DRAWS = (("invcdf", "u24"), ("invcdf", "wide48"))


def test_tail_figure_recomputes_the_exact_laws_at_a_new_tail_mass():
    sweep = dc.tail_sweep(DRAWS, (0.1,), vocab=V)
    draw = ch.tail_figure(DRAWS, V, sweep)
    widget = live_figure(draw, ch.tail_control((0.1,)))
    widget.set(tail=0.003)
    fresh = dc.tail_sweep(DRAWS, (0.003,), vocab=V)
    expected = ", ".join(f"{n} {s['detect'][0]:.3g}" for n, s in fresh.items())
    assert expected in widget.caption.value
    assert "0.003" in widget.status.value and widget.draw_calls == 2
    assert draw(tail=0.1)[1] != draw(tail=0.003)[1]


def test_tail_control_rejects_a_frame_outside_its_range():
    with pytest.raises(ValueError, match="frame"):
        ch.tail_control((0.9,))


def test_method_figure_redraws_from_the_computed_laws():
    laws = {(r["method"], r["target"]): r
            for r in dc.token_rows(DRAWS, ("flat",), vocab=V, exact_path=False)}
    targets = {"flat": flat(V)}
    widget = live_figure(ch.method_figure(laws, targets),
                         ch.method_control(m for m, _ in laws))
    assert widget.draw_calls == 2  # both options precomputed
    tv = laws[("invcdf-u24", "flat")]["tv"]
    widget.set(method="invcdf-u24")
    assert f"{tv:.2e}" in widget.caption.value


def _worst(draw, bound):
    return {"draw": draw, "bound_samples": bound, "target": "t"}


def test_target_answer_is_the_worst_case_bound_beyond_1e10_with_its_cycles():
    rows = [{"draw": "gumbel-div8", "all_accept": 100, "first_reject": 50},
            {"draw": "slow-but-clean", "all_accept": 120, "first_reject": 40},
            {"draw": "fast-and-clean", "all_accept": 90, "first_reject": 40},
            {"draw": "fast-but-biased", "all_accept": 90, "first_reject": 40},
            {"draw": "the note's Div8", "note_chi2": 1.0}]
    worst = [_worst("gumbel-div8", 1e-2), _worst("slow-but-clean", 1e12),
             _worst("fast-and-clean", 1e11), _worst("fast-but-biased", 1e9),
             _worst("no-program-yet", 1e13)]
    answer = ch.target_answer(rows, worst)
    assert [(m["draw"], m["no_more_cycles"]) for m in answer["meets"]] == [
        ("slow-but-clean", False), ("fast-and-clean", True), ("no-program-yet", None)]
    assert answer["best"]["draw"] == "no-program-yet"
    assert ch.verdict_text(answer["meets"][1], 1024) == (
        "fast-and-clean (no more cycles than Div8 at both test points, V = 1,024)")


def test_target_answer_counts_the_whole_sampler_at_both_test_points():
    rows = [{"draw": "gumbel-div8", "bonus": 19.0, "residual": 25.0, "all_accept": 100,
             "first_reject": 50},
            {"draw": "rows-fast-sampler-slow", "bonus": 9.0, "residual": 7.0, "all_accept": 101,
             "first_reject": 40},
            {"draw": "fast-everywhere", "bonus": 9.0, "residual": 7.0, "all_accept": 90,
             "first_reject": 40}]
    worst = [_worst("rows-fast-sampler-slow", 1e12), _worst("fast-everywhere", 1e11)]
    cheap = [m["draw"] for m in ch.target_answer(rows, worst)["meets"] if m["no_more_cycles"]]
    assert cheap == ["fast-everywhere"]


def test_guarantee_grid_needs_both_widths_and_keeps_the_float32_floor():
    grid = ch.guarantee_grid(154_880)
    enough = ch.least_enough(grid, 1e-12)
    assert 40 < enough["fraction_bits"] <= 62 and 48 < enough["uniform_bits"] <= 96
    gamma = 7 * 2.0**-24 / (1 - 7 * 2.0**-24)
    assert min(g["chi2_bound"] for g in grid) >= (gamma / (1 - gamma)) ** 2
    with pytest.raises(ValueError):
        ch.least_enough(grid, 1e-20)


def test_samples_text_says_when_no_test_can_see_a_bias():
    assert ch.samples_text(float("inf")) == "no number of samples"
    assert ch.samples_text(1.5e10) == "1.50e+10 samples"


def test_worst_cases_carry_the_fixed_draws_guarantee():
    worst = ch.worst_cases(V, (("invcdf", "u24"), ("fixed", "u96")))
    assert worst[0]["guarantee"] is None and worst[1]["chi2"] <= worst[1]["guarantee"]
    assert worst[0]["chi2"] > worst[1]["guarantee"]
