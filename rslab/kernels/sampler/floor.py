"""The floor of each phase of a sampler run: the least the machine allows for the work it did.

For every phase (:data:`rslab.kernels.sampler.run.PHASE_KEYS`) the floor is computed
from the program the simulator ran and its trace (:mod:`rslab.machine.floor`): the
phase's straight-line segments and loop runs, each at the larger of its resource floor
(ops per slot class over slots, the SFU hold) and its latency floor (a segment's
critical path; a loop's recurrence, passes × RecMII of its body per iteration of the
pass, :attr:`rslab.kernels.loops.loop.Loop.pass_recurrence`). ``binding`` names what
binds the parts that hold most of the floor: a unit (``valu``, ``st``, ``sfu`` …,
``valu = st`` when two tie), ``latency`` or ``recurrence``.

**DMA wait.** Every transfer but the first row's can be hidden behind work, so the
floor of the waiting is that of the start: the first logits row arrives no sooner than
the DMA latency plus its bytes over the bandwidth, and only its own row max (that
row max's floor) can run meanwhile.

``ratio`` is achieved cycles over the floor (1.0 would be the machine's floor for
this work; a lower floor needs less work, that is another program).
"""

from __future__ import annotations

import re

from rslab.machine.floor import region_floors, run_parts

INSTANCE = r"^(ph\d+_\w+)$"
"""A phase instance's label: ``ph<n>_<phase>``."""


def _phase(instance: str) -> str:
    return instance.split("_", 1)[1] if instance.startswith("ph") else instance


def _loop_recurrence(run, kernel):
    """loop directive pc -> the loop's recurrence per pass, for every loop the kernel emitted."""
    labels = run.program.labels
    per_pc = {labels[name]: code.pass_recurrence for name, code in kernel.instances.items()
              if name in labels}
    return per_pc.get


def dma_floor(run, row_bytes: int, floors_by_instance) -> int:
    """The floor of the DMA waits: latency + the first row's bytes over the bandwidth, less
    that row max's floor (at least 0)."""
    firsts = sorted((int(re.match(r"ph(\d+)_", k).group(1)), k) for k in floors_by_instance
                    if k.endswith("_max"))
    if not firsts:
        return 0
    cfg = run.config
    arrive = cfg.dma_latency + -(-row_bytes // cfg.dma_bytes_per_cycle)
    return max(0, arrive - floors_by_instance[firsts[0][1]]["bound_cycles"])


def phase_floors(run, kernel, achieved: dict) -> dict:
    """Per phase of ``achieved`` (cycles per phase): ``achieved``, ``bound_cycles``,
    ``binding`` and ``ratio``, from the traced ``run`` of ``kernel``."""
    parts = run_parts(run.trace, INSTANCE, default="setup")
    by_instance = region_floors(parts, run.config.slots, _loop_recurrence(run, kernel))
    out = {name: {"achieved": int(cycles), "bound_cycles": 0, "by_binding": {}}
           for name, cycles in achieved.items()}
    for instance, f in by_instance.items():
        phase = out.setdefault(_phase(instance), {"achieved": 0, "bound_cycles": 0,
                                                  "by_binding": {}})
        phase["bound_cycles"] += f["bound_cycles"]
        for binding, cycles in f["by_binding"].items():
            phase["by_binding"][binding] = phase["by_binding"].get(binding, 0) + cycles
    if "dma_wait" in out:
        out["dma_wait"]["bound_cycles"] = dma_floor(run, kernel.layout.row_bytes, by_instance)
        out["dma_wait"]["by_binding"] = {"dma": out["dma_wait"]["bound_cycles"]}
    for phase in out.values():
        by = phase.pop("by_binding")
        phase["binding"] = max(by, key=by.get) if any(by.values()) else "none"
        bound = phase["bound_cycles"]
        phase["ratio"] = round(phase["achieved"] / bound, 3) if bound else None
    return out


def total_floor(floors: dict) -> dict:
    """The whole program: achieved and floor summed over its phases."""
    achieved = sum(f["achieved"] for f in floors.values())
    bound = sum(f["bound_cycles"] for f in floors.values())
    return {"achieved": achieved, "bound_cycles": bound,
            "ratio": round(achieved / bound, 3) if bound else None}
