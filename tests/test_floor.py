"""The floor of a run: hand-made programs whose floor is known, and the sampler's phases."""

import numpy as np
import pytest

from rslab.fixtures import all_accept_inputs, first_reject_inputs
from rslab.kernels.sampler.floor import total_floor
from rslab.kernels.sampler.plans import (
    ALL_ACCEPT_BASELINE,
    FIRST_REJECT_BASELINE,
    OPTIMISED,
    PAIRED_BASELINE,
)
from rslab.kernels.sampler.run import run_sampler
from rslab.machine import MachineConfig, assemble, simulate
from rslab.machine.floor import dma_replay, part_floor, resource_floor, run_parts

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
