"""The chip's bound: an estimate of what a chip of C cores needs for the sampler's task, done
by the chip's program — not the least possible time: it adds the barriers after the bytes,
letting no barrier overlap a transfer (below), though the program fetches a split row's q
row while the check's merges run.

The one-core task bound (:func:`rslab.kernels.sampler.floor.machine_task_bound`) on a chip:
the work does not shrink, it spreads; the bytes spread over the active cores' DMA engines
until those engines together are faster than the one HBM they share:

- ``dma``: the task's bytes over the active cores' DMA engines together (A ×
  ``core.dma_bytes_per_cycle`` for A active cores), plus one DMA latency: on one core, the
  one-core task bound's ``dma`` term. Sequential mode reads what the one-core task reads
  (:func:`rslab.kernels.sampler.floor.task_bytes`: every checked row, q(x) of the accepted
  drafts, the final row's inputs); parallel mode reads every row: R·(S + 1) logits rows and
  R·S q rows;
- ``hbm``: the same bytes over the HBM's bandwidth, plus one DMA latency: it binds instead
  of ``dma`` once A engines move more than the HBM (A ≥ 9 on the default chip; a tie is
  named ``hbm``);
- ``sfu`` and ``valu``: the per-element work of the chip program's passes — the SFU cycles
  and VALU ops per packed vector of its row max, sum-exp, residual and bonus loop bodies
  (those of the optimised program, :data:`~rslab.kernels.sampler.plans.OPTIMISED`, so these
  terms bound *this* program, not every program: the task's own VALU work is less), times
  the packed vectors of every row the task passes over — spread over the C cores' slots;
- ``exchange``: for split rows, the barriers a group cannot avoid, one after the other: per
  check the merges of the sum (and, max-first, of the max), per fixed-point row the merges of
  its largest block sum and of its totals (and a bonus row's max), and in parallel mode the
  barrier before the selection; each costs :meth:`~rslab.machine.config.ChipConfig.
  barrier_latency` for its cores. The largest sum over the groups is added to the largest of
  the other terms, as if no barrier could overlap a transfer: a schedule that respects the
  dependences needs fewer of them after its last byte (for a first-step reject, only the
  residual's two merges), so a run's ratio to this bound is smaller than its ratio to such a
  schedule's time (the chapter reports both).

``ratio`` = the run's cycles over the bound.
"""

from __future__ import annotations

from functools import lru_cache

from rslab.kernels.ops.invcdf import PACKED_PER_ITER, pass_body
from rslab.kernels.sampler.bodies import rowmax_body, sumexp_loop_body
from rslab.kernels.sampler.floor import task_bytes
from rslab.kernels.sampler.layout import SamplerLayout
from rslab.kernels.sampler.plans import OPTIMISED
from rslab.kernels.sampler.registers import REGS, S_X
from rslab.machine.isa import SPECS


@lru_cache(maxsize=4)
def pass_work(hold: int) -> dict:
    """Per pass (``max``, ``sumexp``, ``residual``, ``bonus``): SFU cycles (1 + ``hold`` per
    push) and VALU ops per packed vector of its loop body."""
    plan = OPTIMISED
    bodies = {"max": (rowmax_body(plan.rowmax_u, plan.land_fp32), plan.rowmax_u),
              "sumexp": (sumexp_loop_body("fast", plan.sumexp_workers, plan.sumexp_u,
                                          plan.land_fp32, plan.store_e), plan.sumexp_u),
              "residual": (pass_body("residual", REGS | {"sums": S_X}, "e"), PACKED_PER_ITER),
              "bonus": (pass_body("bonus", REGS | {"sums": S_X}, "landed"), PACKED_PER_ITER)}
    out = {}
    for name, (body, u) in bodies.items():
        slots = [SPECS[op.opcode].slot for op in body]
        out[name] = {"sfu": (1 + hold) * slots.count("sfu") / u, "valu": slots.count("valu") / u}
    return out


def row_passes(plan, num_accepted) -> dict:
    """How many rows each pass goes over in the task of ``plan``."""
    n = dict.fromkeys(("max", "sumexp", "residual", "bonus"), 0)
    for r in range(plan.R):
        a = int(num_accepted[r])
        checked = plan.S if plan.mode == "parallel" else min(a + 1, plan.S)
        n["max"] += checked
        n["sumexp"] += checked
        if plan.mode == "parallel" or a == plan.S:
            n["max"] += 1
            n["bonus"] += 1
        n["residual"] += plan.S if plan.mode == "parallel" else int(a < plan.S)
    return n


def plan_bytes(plan, num_accepted) -> int:
    """The bytes the task of ``plan`` must bring from HBM."""
    layout = SamplerLayout(plan.R, plan.S, plan.V)
    if plan.mode == "sequential":
        return task_bytes(layout, num_accepted)
    return (layout.table_bytes + plan.R * (plan.S + 1) * layout.row_bytes
            + plan.R * plan.S * layout.q_row_bytes)


def exchange_path(plan, chip, num_accepted) -> int:
    """Cycles of the barriers of the longest chain of a group (module docstring)."""
    check = 1 if plan.merge == "online" else 2
    longest = 0
    for g in plan.groups:
        if g.size == 1:
            continue
        rounds = 0
        for r, s in g.rows:
            if plan.mode == "parallel":
                rounds += 3 if s == plan.S else check + 2
                continue
            a = int(num_accepted[r])
            rounds += min(a + 1, plan.S) * check + (3 if a == plan.S else 2)
        longest = max(longest, rounds * chip.barrier_latency(g.size))
    if plan.mode == "parallel":
        longest += chip.barrier_latency(len(plan.active))
    return longest


def chip_bound(plan, chip, num_accepted) -> dict:
    """The chip's bound of the task of ``plan`` whose requests accepted ``num_accepted``."""
    nbytes = plan_bytes(plan, num_accepted)
    per = pass_work(chip.core.sfu_hold)
    rows = row_passes(plan, num_accepted)
    packed = plan.V // 256
    work = {unit: sum(rows[p] * per[p][unit] for p in rows) * packed for unit in ("sfu", "valu")}
    slots = chip.core.slots
    engines = len(plan.active) * chip.core.dma_bytes_per_cycle
    terms = {"hbm": chip.core.dma_latency + -(-nbytes // chip.hbm_bytes_per_cycle),
             "dma": chip.core.dma_latency + -(-nbytes // engines),
             "sfu": int(-(-work["sfu"] // (chip.cores * slots["sfu"]))),
             "valu": int(-(-work["valu"] // (chip.cores * slots["valu"])))}
    binding = max(terms, key=terms.get)
    exchange = exchange_path(plan, chip, num_accepted)
    return {"bound_cycles": terms[binding] + exchange, "binding": binding, "bytes": nbytes,
            "exchange_cycles": exchange, **{f"{k}_cycles": v for k, v in terms.items()}}
