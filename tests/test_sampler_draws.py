"""The full sampler program with every draw it takes: tokens equal to the reference's."""

import numpy as np
import pytest

from rslab import reference as ref
from rslab.chapters.beyond import DETECT_TARGET
from rslab.chapters.results import BEYOND_DRAW, beyond_rows
from rslab.draws import EMPTY, draw_tokens
from rslab.executors import LocalProcesses
from rslab.fixtures import (
    SamplerInputs,
    all_accept_inputs,
    empty_residual_inputs,
    first_reject_inputs,
    round_to_bf16,
    sampled_inputs,
)
from rslab.kernels.loops.emit import schedule_body
from rslab.kernels.sampler.draws import DEFAULT_DRAW, SAMPLER_DRAWS, needs_row_max, sampler_draw
from rslab.kernels.sampler.layout import SamplerLayout
from rslab.kernels.sampler.plans import ALL_ACCEPT_BASELINE, OPTIMISED, baseline_plan
from rslab.kernels.sampler.program import _Builder, build_kernel
from rslab.kernels.sampler.registers import LOOP_POOL
from rslab.kernels.sampler.run import run_sampler
from rslab.kernels.sampler.scenarios import run_draws, run_scenarios, speedup_rows
from rslab.numerics import draw_comparison as dc
from rslab.numerics.divergence_bound import samples_no_test_sees
from rslab.numerics.fixed_invcdf import GUARANTEE
from rslab.numerics.methods import RECOMMENDED
from rslab.randomness import RESIDUAL
from rslab.schedule import SlotModel

SMALL_V = 768  # three packed vectors: odd, so every two-vector loop reads the padding
SMALL = {"all-accept": lambda: all_accept_inputs(R=3, S=4, V=SMALL_V, seed=1),
         "first-reject": lambda: first_reject_inputs(R=2, S=4, V=SMALL_V, seed=1)}
OTHER_DRAWS = [d for d in SAMPLER_DRAWS if d != DEFAULT_DRAW]


@pytest.mark.parametrize("draw", OTHER_DRAWS, ids=lambda d: "-".join(d))
@pytest.mark.parametrize("scenario", ["all-accept", "first-reject"])
def test_every_draw_gives_the_references_tokens_at_both_test_points(draw, scenario):
    inputs = SMALL[scenario]()
    accepted = 4 if scenario == "all-accept" else 0
    for plan in (OPTIMISED, baseline_plan(scenario)):
        run = run_sampler(inputs, "fast", plan, seed=3, method=draw[0], noise=draw[1])
        assert run.kernel.draw == draw
        assert run.tokens_match, (plan.name, run.tokens, run.reference_tokens)
        assert (run.outputs["num_accepted"] == accepted).all()
        assert run.float_checks["u"]["differ"] == 0


@pytest.mark.parametrize("draw", OTHER_DRAWS, ids=lambda d: "-".join(d))
def test_mixed_outcomes_and_the_first_translation(draw):
    inputs = sampled_inputs(R=4, S=3, V=1024, mismatch=2.0, seed=5)
    for plan in (OPTIMISED, ALL_ACCEPT_BASELINE):
        run = run_sampler(inputs, "fast", plan, seed=8, method=draw[0], noise=draw[1])
        assert run.tokens_match, (plan.name, run.tokens, run.reference_tokens)


def test_the_race_is_gumbel_max_in_disguise_and_the_inverse_cdf_is_not():
    """The race reads the same words as Gumbel-max and log(w·rcp(E)) = log w − log E: the
    same draw in exact arithmetic, so the tokens agree; the inverse CDF reads other words."""
    inputs = first_reject_inputs(R=6, S=2, V=SMALL_V, seed=2)
    tokens = {d: run_sampler(inputs, "fast", seed=4, method=d[0], noise=d[1]).tokens[:, 0]
              for d in (("gumbel", "div8"), ("race", "scaled"), ("invcdf", "wide48"))}
    assert (tokens[("race", "scaled")] == tokens[("gumbel", "div8")]).sum() >= 5
    assert (tokens[("invcdf", "wide48")] != tokens[("gumbel", "div8")]).any()


@pytest.mark.parametrize("method", ["race", "invcdf", "fixed"])
def test_empty_residual_falls_back_to_p(method):
    inputs = empty_residual_inputs(R=2, S=4, V=SMALL_V, seed=1)
    p = ref.target_probs(inputs.target_logits[:, :1], "fast")[:, 0]
    for plan in (OPTIMISED, baseline_plan("first-reject")):
        run = run_sampler(inputs, "fast", plan, seed=3, method=method)
        assert run.tokens_match, (plan.name, run.tokens, run.reference_tokens)
        assert (p[np.arange(2), run.tokens[:, 0]] > 0).all()


def tiny_residual_inputs(log_p: float, V: int = SMALL_V):
    """Position 0 rejected with a residual of one ulp of p at three tokens whose logit is
    ``log_p`` below the row max (about 1e-38 at −87: a subnormal ulp), zero elsewhere."""
    l, q, ids = empty_residual_inputs(R=2, S=4, V=V, seed=1)
    l = l.copy()
    tokens = np.array([5, 300, V - 1])
    l[:, 0, tokens] = round_to_bf16(l[:, 0].max(axis=-1, keepdims=True) + np.float32(log_p))
    p_fast = ref.target_probs(l[:, :1], "fast")[:, 0]
    p = np.maximum(ref.target_probs(l[:, :1], "exact")[:, 0], p_fast)
    q0 = np.maximum(q[:, 0], np.nextafter(p, np.float32(np.inf)))
    q0[:, tokens] = np.nextafter(p_fast[:, tokens], np.float32(0))
    q = q.copy()
    q[:, 0] = q0
    return SamplerInputs(l, q, ids)


@pytest.mark.parametrize("log_p", [-87.0, -20.0])
def test_the_fixed_draw_on_tiny_residuals_gives_the_references_tokens(log_p):
    """A residual of a few ulps (a subnormal one at −87): the tail's exponent and scaling
    at the ends of the float32 range; tokens equal the reference's, all among the three."""
    inputs = tiny_residual_inputs(log_p)
    run = run_sampler(inputs, "fast", seed=3, method="fixed")
    assert run.tokens_match, (run.tokens, run.reference_tokens)
    w = np.maximum(ref.target_probs(inputs.target_logits[:, :1], "fast")[:, 0]
                   - inputs.draft_probs[:, 0], 0)
    assert (w[np.arange(2), run.tokens[:, 0]] > 0).all()


@pytest.mark.parametrize("method", ["race", "invcdf", "fixed"])
def test_a_row_the_draw_sees_empty_is_drawn_from_p(method):
    """The reference's rule the kernels follow: no positive race score, or a zero total."""
    w = np.zeros((2, 512), np.float32)
    w[1, 7] = 0.5
    tokens = draw_tokens(method, None, 1, np.arange(2), 0, RESIDUAL, w)
    assert tokens[0] == EMPTY and tokens[1] == 7
    p = np.full((2, 512), 1 / 512, np.float32)
    drawn, _ = ref.residual_draw(method, None, ref.path_math("fast"), 1, np.arange(2), 0, w, p)
    assert drawn[1] == 7 and 0 <= drawn[0] < 512


def test_the_bonus_row_of_a_linear_draw_takes_its_row_max_first():
    layout = SamplerLayout(1, 1, SMALL_V)
    for draw in SAMPLER_DRAWS:
        text = build_kernel(layout, "fast", method=draw[0], noise=draw[1]).text
        maxes = sum(1 for line in text.split("\n") if line.endswith("_max:"))
        assert maxes == 1 + needs_row_max(draw), draw


@pytest.mark.parametrize(("path", "method", "noise", "match"), [
    ("fast", "race", "naive", "noise"), ("fast", "gumbel", "div14", "noise"),
    ("exact", "invcdf", None, "method"), ("fast", "softmax", None, "method"),
    ("fast", "invcdf", "u48", "noise")])
def test_draws_without_a_kernel_name_the_argument(path, method, noise, match):
    with pytest.raises(ValueError, match=match):
        sampler_draw(path, method, noise)
    with pytest.raises(ValueError, match=match):
        build_kernel(SamplerLayout(1, 1, SMALL_V), path, method=method, noise=noise)


def test_a_prebuilt_kernel_must_have_the_runs_draw():
    inputs = SMALL["first-reject"]()
    kernel = build_kernel(SamplerLayout(2, 4, SMALL_V), "fast", method="race")
    with pytest.raises(ValueError, match="kernel"):
        run_sampler(inputs, "fast", kernel=kernel, method="invcdf")


def test_the_results_chapters_row_beyond_the_note():
    main = run_scenarios(1024, "fast", progress=False)
    rows = {(r["draw"], r["name"]): r for r in beyond_rows(1024, main["runs"])}
    name = "-".join(BEYOND_DRAW)
    for point in main["scenarios"]:
        div8, beyond = rows[("gumbel-div8", point["name"])], rows[(name, point["name"])]
        assert div8["cycles"] == point["optimized_cycles"]
        assert beyond["baseline_cycles"] == point["baseline_cycles"]
        assert beyond["speedup"] == round(point["baseline_cycles"] / beyond["cycles"], 3)
        assert beyond["tokens_match_reference"]


def test_the_live_vocabulary_update_shows_the_tables_figures():
    """``speedup_rows`` (the results chapter's slider) gives the figures of ``run_scenarios``
    it shows, in this process and on two worker processes alike; a V off the grid of 256 is
    refused naming ``vocab``."""
    full = {r["name"]: r for r in run_scenarios(512, "fast", progress=False)["scenarios"]}
    rows = speedup_rows(512)
    assert rows == speedup_rows(512, executor=LocalProcesses(2))
    for r in rows:
        assert r == {k: full[r["name"]][k] for k in r} and r["tokens_match_reference"]
    with pytest.raises(ValueError, match="vocab"):
        speedup_rows(300)


def test_the_draw_beyond_the_note_is_the_recommended_one_and_no_test_sees_it_on_three_targets():
    """The results chapter's draw is Beyond the note's recommendation; at the note's vocabulary
    no test of the chapter sees it on the three reference targets before 10^10 samples (its
    exact token laws), and its guarantee covers every other row."""
    assert BEYOND_DRAW == RECOMMENDED
    laws = dc.token_rows((BEYOND_DRAW,), exact_path=False)
    assert {r["target"] for r in laws} == {"peaked(tail=0.1)", "zipf", "flat"}
    assert all(r["detect_seen"] > DETECT_TARGET for r in laws)
    assert samples_no_test_sees(GUARANTEE) > DETECT_TARGET


def test_every_draws_row_loops_run_at_their_resource_bound():
    """II = ResMII for every row loop of every draw, but where the loop registers do not fit
    at ResMII (then the next II that fits, one more here)."""
    rows = run_draws(SMALL_V, progress=False, baselines=False)
    for r in rows:
        for kind, fig in r["loops"].items():
            assert fig["res_mii"] <= fig["ii"] <= fig["res_mii"] + 1, (r["draw"], kind, fig)
    at_bound = sum(f["ii"] == f["res_mii"] for r in rows for f in r["loops"].values())
    assert at_bound >= len(rows) * 2 - 2


def test_the_range_reduced_residual_loop_is_one_over_resmii_for_registers_alone():
    """What the chapter says of it: the schedule reaches ResMII; the registers do not fit
    there, even with the three its constants take given back."""
    builder = _Builder(SamplerLayout(1, 1, SMALL_V), "fast", OPTIMISED, SlotModel(),
                       ("gumbel", "rangered"))
    row = builder.final_row("residual", 0, 0)
    schedule = schedule_body(row.body, SlotModel(), rotating=row.rotating)
    assert schedule.ii == schedule.bounds.res_mii
    assert row.cycles_per_packed() == (schedule.ii + 1) / row.u
    builder.loop_pool = list(LOOP_POOL["fast"])
    assert builder.final_row("residual", 0, 0).cycles_per_packed() == (schedule.ii + 1) / row.u


def test_a_residual_faster_than_the_engine_gets_its_q_early():
    """The inverse CDFs' residual loops outpace the q row's transfer: their first chunk is
    the share the engine brings during a check (after the next row), a quarter here; the
    argmax draws keep the tenth issued before the next row."""
    layout = SamplerLayout(2, 4, 154_880)
    for draw in SAMPLER_DRAWS:
        b = _Builder(layout, "fast", OPTIMISED, SlotModel(), draw)
        fast = b.final_row("residual", 0, 0).cycles_per_packed() < 8
        assert b.q_after_row == fast == (draw[0] in ("invcdf", "fixed")), draw
        first = b.chunks[0][1]
        assert first == (150 if fast else 60), (draw, b.chunks)
        assert b.chunks[-1][1] == layout.n_packed
