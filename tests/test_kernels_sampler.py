"""The full rejection-sampling kernels (optimised and baselines) against the reference."""

from dataclasses import replace

import numpy as np
import pytest

from rslab.fixtures import (
    all_accept_inputs,
    empty_residual_inputs,
    first_reject_inputs,
    sampled_inputs,
    scenario_inputs,
)
from rslab.kernels.loops.emit import emit_loop
from rslab.kernels.sampler.layout import SamplerLayout
from rslab.kernels.sampler.plans import (
    ALL_ACCEPT_BASELINE,
    FIRST_REJECT_BASELINE,
    OPTIMISED,
    KernelPlan,
    baseline_plan,
    optimisation_steps,
)
from rslab.kernels.sampler.program import build_kernel
from rslab.kernels.sampler.run import run_sampler, run_steps
from rslab.machine.asm import assemble
from rslab.reference import target_probs
from rslab.schedule import Op, SlotModel

SMALL_V = 768  # three packed vectors: odd, so every two-vector loop has a partial last iteration
SMALL = {"all-accept": lambda: all_accept_inputs(R=3, S=4, V=SMALL_V, seed=1),
         "first-reject": lambda: first_reject_inputs(R=2, S=4, V=SMALL_V, seed=1)}


@pytest.mark.parametrize("path", ["fast", "exact"])
@pytest.mark.parametrize("scenario", ["all-accept", "first-reject"])
def test_optimised_and_baseline_tokens_equal_reference(path, scenario):
    inputs = SMALL[scenario]()
    expected_accepted = 4 if scenario == "all-accept" else 0
    for plan in (OPTIMISED, baseline_plan(scenario)):
        run = run_sampler(inputs, path, plan, seed=3)
        assert run.tokens_match, (plan.name, run.tokens, run.reference_tokens)
        assert (run.outputs["num_accepted"] == expected_accepted).all()
        # the kernel's uniforms are the reference's, bit for bit
        assert run.float_checks["u"]["differ"] == 0
        assert run.float_checks["u"]["compared"] > 0
        assert run.float_checks["m"]["differ"] == 0


@pytest.mark.parametrize("path", ["fast", "exact"])
def test_empty_residual_falls_back_to_p(path):
    """p ≤ q at every token: the residual is all zero and both sampler and kernel draw from p."""
    inputs = empty_residual_inputs(R=2, S=4, V=SMALL_V, seed=1)
    p = target_probs(inputs.target_logits[:, :1], path)[:, 0]
    assert not (p > inputs.draft_probs[:, 0]).any()
    for plan in (OPTIMISED, baseline_plan("first-reject")):
        run = run_sampler(inputs, path, plan, seed=3)
        assert (run.outputs["num_accepted"] == 0).all()
        assert run.tokens_match, (plan.name, run.tokens, run.reference_tokens)
        # a draw from p: never the rejected token (p(x) = 0), and a token with p > 0
        tokens = run.tokens[:, 0]
        assert (tokens != inputs.draft_token_ids[:, 0]).all()
        assert (p[np.arange(2), tokens] > 0).all()


@pytest.mark.parametrize("path", ["fast", "exact"])
def test_landing_float32_changes_cycles_not_bits(path):
    """Dataflow (a′) against (b) in the full kernel: same sums, p(x) and tokens, fewer cycles."""
    inputs = first_reject_inputs(R=2, S=4, V=SMALL_V * 4, seed=2)
    landed = run_sampler(inputs, path, OPTIMISED, seed=3)
    packed = run_sampler(inputs, path, replace(OPTIMISED, land_fp32=False), seed=3)
    for key in ("tokens", "sum", "px", "m", "score"):
        np.testing.assert_array_equal(landed.outputs[key], packed.outputs[key])
    assert landed.tokens_match
    assert landed.phases["sumexp"] < packed.phases["sumexp"]
    assert "vunpack" not in landed.kernel.loops["loop_sumexp"].text


def test_optimised_is_faster_than_both_baselines():
    for scenario in ("all-accept", "first-reject"):
        inputs = scenario_inputs(scenario, V=5120)
        base = run_sampler(inputs, "fast", baseline_plan(scenario), compare=False)
        opt = run_sampler(inputs, "fast", OPTIMISED, compare=False)
        assert opt.cycles < base.cycles
        assert sum(opt.phases.values()) == opt.cycles
        assert sum(base.phases.values()) == base.cycles
    # first-reject: the baseline's acceptance check is the optimised one
    assert base.phases["sumexp"] == opt.phases["sumexp"]
    assert base.phases["residual"] > opt.phases["residual"]


def test_mixed_outcomes_match_reference():
    """Sampled drafts: some requests accept a few tokens, then reject (or take the bonus)."""
    inputs = sampled_inputs(6, 3, 768, mismatch=1.0, seed=5)
    run = run_sampler(inputs, "fast", OPTIMISED, seed=11)
    assert run.tokens_match
    assert len(set(run.outputs["num_accepted"].tolist())) > 1


def test_baseline_plans_say_what_they_are():
    assert ALL_ACCEPT_BASELINE.sumexp_style == "naive" and not ALL_ACCEPT_BASELINE.prefetch
    assert FIRST_REJECT_BASELINE.sumexp_style == "pipelined"
    assert FIRST_REJECT_BASELINE.final_style == "local"
    with pytest.raises(ValueError, match="scenario"):
        baseline_plan("sometimes")


def test_program_marks_phases_and_uses_hardware_loops():
    kernel = build_kernel(SamplerLayout(2, 2, 512), "fast")
    program = assemble(kernel.text)
    phases = {name.split("_", 1)[1] for name in program.labels if name.startswith("ph")}
    assert {"max", "sumexp", "accept", "residual", "bonus"} <= phases
    assert program.loops()


def test_bad_arguments_raise():
    with pytest.raises(ValueError, match="V must be a multiple of 256"):
        SamplerLayout(1, 1, 300)
    with pytest.raises(ValueError, match="path"):
        build_kernel(SamplerLayout(1, 1, 256), "slow")
    with pytest.raises(ValueError, match="final_u"):
        build_kernel(SamplerLayout(1, 1, 256), "fast", KernelPlan("x", final_u=2))
    with pytest.raises(ValueError, match="style"):
        emit_loop([Op("vmov", "a", ("v1",))], 1, "fancy", carried={}, pool=["v0"],
                  model=SlotModel())


def test_loop_styles_agree_on_a_small_body():
    body = [Op("vadd.f32", "a", ("v40", "v41")), Op("vmul.f32", "b", ("a", "v42")),
            Op("vmax.f32", "acc", ("acc", "b"))]
    texts = {s: emit_loop(body, 5, s, carried={"acc": "v50"}, pool=[f"v{i}" for i in range(8)],
                          model=SlotModel()) for s in ("naive", "local", "pipelined")}
    assert texts["naive"].body_bundles == 3
    assert texts["local"].body_bundles == 7  # add, mul, max each wait 3 cycles
    assert texts["pipelined"].ii == 3  # the accumulator's recurrence
    for code in texts.values():
        assemble(code.text)


def test_hbm_image_checks_shapes():
    layout = SamplerLayout(1, 1, 256)
    l, q, ids = scenario_inputs("all-accept", V=512)
    with pytest.raises(ValueError, match="target_logits"):
        layout.hbm_image(l, q, ids, 0)
    image = SamplerLayout(8, 4, 512).hbm_image(l, q, ids, 0)
    assert sum(np.asarray(a).nbytes for a in image.values()) > l.nbytes // 2


def test_optimisation_steps_go_from_baseline_to_optimised_and_each_helps():
    steps = optimisation_steps()
    assert steps[0][1] == ALL_ACCEPT_BASELINE
    assert replace(steps[-1][1], name=OPTIMISED.name) == OPTIMISED
    rows = run_steps(scenario_inputs("all-accept", V=5120), progress=False)
    assert all(r["tokens_match_reference"] for r in rows)
    cycles = [r["cycles"] for r in rows]
    assert cycles == sorted(cycles, reverse=True) and len(set(cycles)) == len(cycles)
