"""The chip's bound: the least a chip of C cores needs for the sampler's task.

The one-core task bound (:func:`rslab.kernels.sampler.floor.task_bound`) on a chip: the work
does not shrink, it spreads, except the bytes, which all cross the one HBM:

- ``hbm``: the task's bytes over the chip's HBM bandwidth, plus one DMA latency. Sequential
  mode reads what the one-core task reads (:func:`rslab.kernels.sampler.floor.task_bytes`:
  every checked row, q(x) of the accepted drafts, the final row's inputs); parallel mode
  reads every row: R·(S + 1) logits rows and R·S q rows;
- ``sfu`` and ``valu``: the per-element work of the draw's loops (the row max, sum-exp,
  residual and bonus passes of every core: their SFU pushes and VALU ops, the one-core
  bound's SFU term with the VALU's beside it) over C cores' slots;
- ``exchange``: for split rows, the barriers a group cannot avoid, one after the other: per
  check the merges of the sum (and, max-first, of the max), per fixed-point row the merges of
  its largest block sum and of its totals (and a bonus row's max), and in parallel mode the
  barrier before the selection; each costs :meth:`~rslab.machine.config.ChipConfig.
  barrier_latency` for its cores. The largest sum over the groups is added to the largest of
  the other terms: a latency bound.

``ratio`` = the run's cycles over the bound.
"""

from __future__ import annotations

from rslab.kernels.sampler.floor import INSTANCE, task_bytes
from rslab.kernels.sampler.layout import SamplerLayout
from rslab.machine.floor import run_parts

ELEMENT_PHASES = ("max", "sumexp", "residual", "bonus")
"""Phases whose loops do per-element work."""


def _phase(region: str) -> str:
    return region.split("_", 1)[1] if region.startswith("ph") else region


def loop_work(run) -> dict:
    """SFU pushes and VALU ops of a traced core's per-element loops."""
    out = {"sfu": 0, "valu": 0}
    for part in run_parts(run.trace, INSTANCE, default="setup"):
        if part.kind == "loop" and _phase(part.region) in ELEMENT_PHASES:
            for unit in out:
                out[unit] += part.usage.get(unit, 0)
    return out


def plan_bytes(plan, num_accepted) -> int:
    """The bytes the task of ``plan`` must bring from HBM."""
    layout = SamplerLayout(plan.R, plan.S, plan.V)
    if plan.mode == "sequential":
        return task_bytes(layout, num_accepted)
    return (layout.table_bytes + plan.R * (plan.S + 1) * layout.row_bytes
            + plan.R * plan.S * layout.q_row_bytes)


def exchange_path(plan, chip, num_accepted, empty=()) -> int:
    """Cycles of the barriers of the longest chain of a group (module docstring); ``empty``:
    the (request, position) residual rows the fallback drew again."""
    check = 1 if plan.merge == "online" else 2
    longest = 0
    for g in plan.groups:
        if g.size == 1:
            continue
        rounds = 0
        for r, s in g.rows:
            if plan.mode == "parallel":
                rounds += 3 if s == plan.S else check + 2 + 2 * ((r, s) in empty)
                continue
            a = int(num_accepted[r])
            checked = min(a + 1, plan.S)
            rounds += checked * check + (3 if a == plan.S else 2 + 2 * ((r, a) in empty))
        longest = max(longest, rounds * chip.barrier_latency(g.size))
    if plan.mode == "parallel":
        longest += chip.barrier_latency(len(plan.active))
    return longest


def chip_bound(plan, chip, runs, num_accepted, empty=()) -> dict:
    """The chip's bound of a run of ``plan`` (``runs``: the traced cores' runs)."""
    nbytes = plan_bytes(plan, num_accepted)
    work = {"sfu": 0, "valu": 0}
    for run in runs:
        if run is not None:
            for unit, n in loop_work(run).items():
                work[unit] += n
    slots = chip.core.slots
    terms = {"hbm": chip.core.dma_latency + -(-nbytes // chip.hbm_bytes_per_cycle),
             "sfu": -(-work["sfu"] // (chip.cores * slots["sfu"])),
             "valu": -(-work["valu"] // (chip.cores * slots["valu"]))}
    binding = max(terms, key=terms.get)
    exchange = exchange_path(plan, chip, num_accepted, empty)
    return {"bound_cycles": terms[binding] + exchange, "binding": binding, "bytes": nbytes,
            "exchange_cycles": exchange, **{f"{k}_cycles": v for k, v in terms.items()}}
