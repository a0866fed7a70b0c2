"""Measured figures of the pipelined loops (``python -m rslab bench``, keys ``loops.*``).

Steady state is measured in the simulator by differencing: two runs of the
same loop that differ only by ``extra`` kernel iterations; the extra cycles
and stall cycles divided by ``extra`` are the achieved II and the stalls per
iteration (prologue, epilogue, setup and reduction cancel out).
"""

from __future__ import annotations

import numpy as np

from rslab.kernels.studies.gumbel_loop import gumbel_program
from rslab.kernels.studies.sumexp_loop import packed_row, sumexp_numpy, sumexp_program
from rslab.machine.bf16 import BLOCK, round_to_bf16
from rslab.schedule import SlotModel


def _run(text, config, vmem=None):
    from rslab.machine import assemble, simulate

    return simulate(assemble(text), config, vmem=vmem)


def steady_state(make_text, iterations: int, extra: int, config) -> dict:
    """Achieved II and stalls per iteration from two runs ``iterations`` and ``+ extra``."""
    if extra < 1:
        raise ValueError(f"extra must be positive, got {extra}")
    a = _run(make_text(iterations), config)
    b = _run(make_text(iterations + extra), config)
    return {"ii": (b.cycles - a.cycles) / extra,
            "stalls_per_iter": (b.stall_cycles - a.stall_cycles) / extra,
            "stalls_by_cause": {k: (b.stalls[k] - a.stalls[k]) / extra for k in b.stalls}}


def sumexp_figures(config=None, *, vocab: int = 154880, workers: int = 4, seed: int = 0,
                   max_stages: int | None = None) -> dict:
    """Sum-exp over one ``vocab`` row: cycles vs ResMII × iterations + prologue/epilogue."""
    from rslab.machine import MachineConfig

    config = config or MachineConfig()
    model = SlotModel.from_config(config)
    n_packed = -(-vocab // BLOCK)
    row = round_to_bf16(np.random.default_rng(seed).normal(size=vocab).astype(np.float32) * 3)
    m = float(row.max())
    text, loop = sumexp_program(n_packed, m, model=model, workers=workers,
                                max_stages=max_stages)
    run = _run(text, config, vmem=packed_row(row))
    exact = run.sreg_f32(3) == sumexp_numpy(row, m, workers=workers, exp2=config.exp2_fn)
    sch = loop.schedule
    predicted = sch.bounds.res_mii * loop.iterations + (sch.stage_count - 1) * sch.ii
    per2 = 2 * loop.per_iteration

    def make(iters):
        return sumexp_program(iters * loop.per_iteration, m, model=model, workers=workers,
                              max_stages=max_stages)[0]

    steady = steady_state(make, max(sch.stage_count + 2 * loop.expansion.unroll, 8),
                          2 * loop.expansion.unroll, config)
    loop_cycles = run.cycles - loop.setup_bundles
    return {"ii": sch.ii, "res_mii": sch.bounds.res_mii, "rec_mii": sch.bounds.rec_mii,
            "stalls_per_iter": steady["stalls_per_iter"],
            "measured_ii": steady["ii"], "stages": sch.stage_count,
            "iterations": loop.iterations, "cycles": run.cycles, "loop_cycles": loop_cycles,
            "predicted_cycles": predicted,
            "error_pct": 100.0 * (loop_cycles - predicted) / predicted,
            "vector_registers": loop.expansion.vector_registers,
            "tokens_per_iter": per2 * 128, "exact_vs_numpy": bool(exact)}


def residual_figures(config=None, *, kind: str = "residual", packed_per_iter: int = 1,
                     variant: str = "max") -> dict:
    """II / ResMII / RecMII and measured stalls per pass of a Gumbel-argmax loop."""
    from rslab.machine import MachineConfig

    config = config or MachineConfig()

    def make(iters):
        return gumbel_program(kind, iters * packed_per_iter, config=config,
                              packed_per_iter=packed_per_iter, variant=variant)[0]

    _, loop = gumbel_program(kind, 8 * packed_per_iter, config=config,
                             packed_per_iter=packed_per_iter, variant=variant)
    sch = loop.schedule
    steady = steady_state(make, sch.stage_count + 2 * loop.expansion.unroll,
                          2 * loop.expansion.unroll, config)
    return {"ii": sch.ii, "res_mii": sch.bounds.res_mii, "rec_mii": sch.bounds.rec_mii,
            "stalls_per_iter": steady["stalls_per_iter"], "measured_ii": steady["ii"],
            "stages": sch.stage_count, "vector_registers": loop.expansion.vector_registers,
            "binding": sch.bounds.res_binding}


def sumexp_point(*, workers: int = 4, sfu_latency: int = 13, hold: int = 1,
                 valu_latency: int = 3, plan_hold: int | None = None,
                 max_stages: int | None = None, scheduler: str = "heuristic",
                 packed_per_iter: int = 2) -> dict:
    """One design point: achieved II, measured stalls per iteration, vector registers.

    ``plan_hold`` lets the scheduler plan with a different hold-issue than the
    machine has (to show what an unmodelled hold costs); ``packed_per_iter`` packed vectors
    an iteration (each one unpack chain).
    """
    from rslab.machine import MachineConfig

    config = MachineConfig().with_(sfu_hold=hold,
                                   latency={"sfu": sfu_latency, "valu": valu_latency})
    model = SlotModel.from_config(config)
    if plan_hold is not None:
        model = model.replace(sfu_hold=plan_hold)

    def make(iters):
        return sumexp_program(packed_per_iter * iters, 0.0, model=model, workers=workers,
                              max_stages=max_stages, scheduler=scheduler,
                              packed_per_iter=packed_per_iter)[0]

    _, loop = sumexp_program(8 * packed_per_iter, 0.0, model=model, workers=workers,
                             max_stages=max_stages, scheduler=scheduler,
                             packed_per_iter=packed_per_iter)
    sch = loop.schedule
    iters = sch.stage_count + 2 * loop.expansion.unroll + 2
    steady = steady_state(make, iters, 2 * loop.expansion.unroll, config)
    return {"ii": sch.ii, "res_mii": sch.bounds.res_mii, "rec_mii": sch.bounds.rec_mii,
            "measured_ii": steady["ii"], "stalls_per_iter": steady["stalls_per_iter"],
            "stalls_by_cause": steady["stalls_by_cause"], "stages": sch.stage_count,
            "vector_registers": loop.expansion.vector_registers, "length": sch.length}
