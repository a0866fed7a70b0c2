"""The floor of a run: hand-made programs whose floor is known, and the sampler's phases."""

from fractions import Fraction
from types import SimpleNamespace

import numpy as np
import pytest

from rslab.fixtures import TEST_POINTS, all_accept_inputs, first_reject_inputs, scenario_inputs
from rslab.kernels.sampler.draws import SAMPLER_DRAWS
from rslab.kernels.sampler.floor import (
    CONVERT,
    NOISE,
    SCORE,
    SHIFT,
    UNIFORM,
    WORD,
    compute_bound,
    element_work,
    machine_task_bound,
    philox_ops_per_word,
    task_bound,
    task_work,
    total_floor,
)
from rslab.kernels.sampler.layout import SamplerLayout
from rslab.kernels.sampler.plans import (
    ALL_ACCEPT_BASELINE,
    FIRST_REJECT_BASELINE,
    OPTIMISED,
    PAIRED_BASELINE,
    baseline_plan,
)
from rslab.kernels.sampler.run import run_sampler
from rslab.machine import MachineConfig, assemble, simulate
from rslab.machine.floor import dma_replay, part_floor, resource_floor, run_parts
from rslab.numerics import methods

SLOTS = MachineConfig().slots


def parts_of(text):
    run = simulate(assemble(text), trace=True)
    return run, run_parts(run.trace, r"^(r\w+)$", default="start")


def test_a_dependent_chain_is_latency_bound():
    _, parts = parts_of("ra:\n" + "vadd.f32 v1, v1, v2\n" * 10 + "halt\n")
    (part,) = [p for p in parts if p.region == "ra"]
    assert part_floor(part, SLOTS, lambda pc: 0) == (3 * 9 + 1, "latency")


def test_independent_ops_are_bound_by_their_unit():
    ops = [f"vadd.f32 v{10 + i}, v1, v2" for i in range(12)] + ["vexp2 v1"] * 4
    text = "ra:\n" + "\n".join(ops) + "\n" + "\n".join(f"vpop v{30 + i}" for i in range(4))
    _, parts = parts_of(text + "\nhalt\n")
    (part,) = [p for p in parts if p.region == "ra"]
    assert part.usage == {"valu": 16, "sfu": 8}  # pops are VALU ops, a push holds the SFU 2
    assert resource_floor(part.usage, SLOTS) == (8, "valu = sfu")


def test_a_loop_run_is_bound_by_its_resources_or_its_recurrence():
    text = "ra:\nvli v1, 0\nloop 50\nvadd.f32 v1, v1, v2 ; vadd.f32 v3, v4, v5\nendloop\nhalt\n"
    run, parts = parts_of(text)
    (loop,) = [p for p in parts if p.kind == "loop"]
    assert loop.passes == 50 and loop.usage == {"valu": 100}
    assert part_floor(loop, SLOTS, lambda pc: 0) == (50, "valu")
    assert part_floor(loop, SLOTS, {run.program.loops()[0]: 3}.get) == (150, "recurrence")


def test_a_bundle_reads_its_registers_before_it_writes_them():
    # the second op reads v1 in the bundle that redefines it: no dependence between them
    _, parts = parts_of("ra:\nvadd.f32 v1, v2, v2 ; vadd.f32 v3, v1, v2\nhalt\n")
    (part,) = [p for p in parts if p.region == "ra"]
    assert part.latency == 1


def test_the_work_after_a_wait_starts_when_its_transfer_is_done():
    """12,800 bytes: 100 cycles on the engine and its latency of 200, then five bundles of
    independent adds: the replay's floor is at least the transfer and at most the run."""
    text = ("sli s1, 0\nsli s2, 0\nsli s3, 12800\ndma s1, s2, s3, 1\nra:\ndmawait 1\n"
            + "".join(f"vadd.f32 v{10 + i}, v1, v2\n" for i in range(10)) + "halt\n")
    run = simulate(assemble(text), hbm={0: np.zeros(3200, np.uint32)}, trace=True)
    parts = run_parts(run.trace, r"^(r\w+)$", default="start")
    floors = [part_floor(p, SLOTS, lambda pc: 0)[0] for p in parts]
    replay = dma_replay(run.trace, parts, floors, SLOTS)
    assert (replay["bytes"], replay["transfers"], replay["engine_cycles"]) == (12800, 1, 300)
    assert 300 + 5 - 1 <= replay["cycles"] <= run.cycles
    assert sum(floors) < 300  # the work alone would have been a floor far below the run


@pytest.mark.parametrize("path", ["fast", "exact"])
def test_every_phase_takes_at_least_its_floor(path):
    """Achieved ≥ floor in every compute phase, for the baselines and the optimised plan;
    the optimised loops run near theirs, the serial first translation far above."""
    runs = {"all-accept": all_accept_inputs(R=2, S=2, V=5120, seed=3),
            "first-reject": first_reject_inputs(R=2, S=2, V=5120, seed=3)}
    for name, inputs in runs.items():
        for plan in (OPTIMISED, ALL_ACCEPT_BASELINE, PAIRED_BASELINE, FIRST_REJECT_BASELINE):
            run = run_sampler(inputs, path, plan, compare=False)
            for phase, f in run.floors.items():
                assert f["achieved"] == run.phases[phase]
                if phase != "dma_wait" and f["bound_cycles"]:
                    assert f["achieved"] >= f["bound_cycles"], (name, plan.name, phase, f)
            total = total_floor(run.floors)
            assert total["achieved"] == run.cycles
            dma = run.floors["dma_wait"]
            assert dma["engine_cycles"] <= total["bound_cycles"] <= run.cycles, (name, plan.name)
            assert run.task["bound_cycles"] <= run.cycles
            assert run.task["bytes"] <= dma["bytes"]  # the task's bytes, the program's own
        opt = run_sampler(inputs, path, OPTIMISED, compare=False).floors
        serial = run_sampler(inputs, path, ALL_ACCEPT_BASELINE, compare=False).floors
        assert opt["sumexp"]["ratio"] < 1.2 < serial["sumexp"]["ratio"]
        assert opt["sumexp"]["binding"] == "valu = sfu"
        assert serial["sumexp"]["binding"] == "recurrence"  # its one accumulator


# ----------------------------------------------------------------- the task bound (finding 40)

def test_the_task_bound_by_hand():
    """R = 1, S = 1, V = 256, the draft accepted, Fast Gumbel-max Div8: one checked row and a
    bonus row of two float32 vectors each. Checked: 3 VALU ops and one exp2 per vector;
    bonus: 9 VALU ops and two logs. So 24 ops and 6 transcendentals: on the SFU 6 × 2 = 12
    cycles, on the VALU (24 + 6 pops) / 2 = 15; moving any to the VALU only adds to it."""
    layout = SamplerLayout(1, 1, 256)
    assert task_work(layout, [1]) == {"valu_ops": 24, "transcendentals": 6}
    bound = task_bound(SimpleNamespace(config=MachineConfig()), layout, [1])
    assert bound == machine_task_bound(MachineConfig(), layout, [1], path="fast",
                                       draw=("gumbel", "div8"))
    nbytes = 36 + (512 + 4) + 512  # tables; the checked row and q(x); the bonus row
    assert bound["bytes"] == nbytes
    assert (bound["sfu_cycles"], bound["valu_cycles"]) == (12, 15)
    assert bound["transcendentals_on_valu"] == 0
    assert bound["dma_cycles"] == 200 + -(-nbytes // 128) == bound["bound_cycles"]
    assert bound["ld_cycles"] == -(-nbytes // 512) and bound["binding"] == "dma"


def test_the_split_moves_transcendentals_to_the_valu_when_the_sfu_would_bind():
    """Seven transcendentals and no other VALU work: all on the SFU would take 14 cycles;
    four there (8 cycles) and three on the VALU (12 ops + 4 pops = 16 ops, 8 cycles) tie."""
    out = compute_bound(0, 7, MachineConfig())
    assert out == {"sfu_cycles": 8, "valu_cycles": 8, "transcendentals_on_valu": 3.0}
    # with 30 other VALU ops the VALU binds already (30 + 7 pops = 37 ops, 18.5 cycles): none
    assert compute_bound(30, 7, MachineConfig()) == {"sfu_cycles": 14, "valu_cycles": 19,
                                                     "transcendentals_on_valu": 0.0}


def test_the_race_bonus_row_counted_from_the_named_constants():
    """The race's bonus row on the Fast path, as the constants' docstrings count it: the
    noise's u·c and − fl (2), the random word's vrand (1), the uniform (1), the score w·R (1),
    the BF16 half to float32 (1) and (l − m)·LOG2E (2): 8 VALU ops; a log, a reciprocal and
    the weight's exp2: 3 transcendentals."""
    by_hand = NOISE["mul"][0] + WORD + UNIFORM + SCORE + CONVERT + SHIFT
    assert by_hand == 8
    assert element_work("bonus", "fast", ("race", "scaled")) == (by_hand, NOISE["mul"][1] + 1)


def test_philox_ops_per_word_by_hand():
    """Only c0 varies: round 1 one product (2 ops); round 2 one product (2); round 3 two
    products and one xor of varying words (5); rounds 4-10 two products and two xors (6
    each): 51 ops per four words."""
    assert philox_ops_per_word() == Fraction(51, 4)


def test_the_task_bound_names_a_draw_the_path_does_not_take():
    layout = SamplerLayout(1, 1, 256)
    with pytest.raises(ValueError, match="method"):
        task_work(layout, [1], "exact", ("invcdf", "wide48"))
    with pytest.raises(ValueError, match="noise"):
        task_work(layout, [1], "fast", ("gumbel", "div14"))


def _per_vector_bound(kind, path, draw, config):
    """The task's least cycles per float32 vector of a ``kind`` row, its transcendentals split
    at best, rounded up (per row kind, so the sum over kinds is at least the whole task's)."""
    out = compute_bound(*element_work(kind, path, draw), config)
    return max(out["sfu_cycles"], out["valu_cycles"])


@pytest.mark.parametrize("name", list(TEST_POINTS))
def test_the_task_bound_lies_below_every_program(name):
    """For every draw the sampler takes, on both paths, at both test points: the task bound
    lies below the program's floor and its cycles (and the baseline's); and per float32
    vector of each kind of row, below the floor of the optimised loops that stream over it,
    so that it stays below at every V (at V = 512 the DMA term binds)."""
    inputs = scenario_inputs(name, V=512)
    runs = [run_sampler(inputs, "exact", OPTIMISED, compare=False),
            run_sampler(inputs, "fast", baseline_plan(name), compare=False)]
    runs += [run_sampler(inputs, "fast", OPTIMISED, compare=False, method=m, noise=n)
             for m, n in SAMPLER_DRAWS]
    for run in runs:
        floor = total_floor(run.floors)["bound_cycles"]
        assert run.task["bound_cycles"] <= floor <= run.cycles, (run.kernel.draw, run.task)
    config = MachineConfig()
    for run in [runs[0], *runs[2:]]:
        path, draw, loops = run.kernel.path, run.kernel.draw, run.loops
        per = {k: loops[f"loop_{k}"]["bound_per_vector"] / 2 for k in ("rowmax", "sumexp",
                                                                        "bonus", "residual")}
        row_max = per["rowmax"] if methods.draw(draw[0]).linear else 0
        for kind, program in (("checked", per["rowmax"] + per["sumexp"]),
                              ("bonus", per["bonus"] + row_max), ("residual", per["residual"])):
            assert _per_vector_bound(kind, path, draw, config) <= program, (path, draw, kind)
