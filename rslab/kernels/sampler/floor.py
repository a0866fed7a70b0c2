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
the DMA latency plus its bytes over the bandwidth, and only the work up to the end of
its row max (the setup, the first acceptance glue and that row max, each at its
floor) can run meanwhile. This is a floor of the start as a whole (work plus wait): a
program whose early work is slower than its floor hides more of the transfer, and its
DMA wait may come out below this figure. The other transfers are taken as hidden: a
program whose loops outpace the DMA engine (the inverse CDF's residual row, faster than
its q row arrives) waits for them beyond this floor, and its ratio then measures the
engine, not its loops.

``ratio`` is achieved cycles over the floor (1.0 would be the machine's floor for
this work; a lower floor needs less work, that is another program).
"""

from __future__ import annotations

from rslab.machine.floor import part_floor, run_parts

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


def dma_floor(run, row_bytes: int, parts, floors) -> int:
    """The floor of the DMA waits: latency + the first row's bytes over the bandwidth, less
    the floors of the parts up to the end of the first row max (at least 0)."""
    ends = [i for i, p in enumerate(parts) if _phase(p.region) == "max"]
    if not ends:
        return 0
    first = parts[ends[0]].region
    last = max(i for i in ends if parts[i].region == first)
    cfg = run.config
    arrive = cfg.dma_latency + -(-row_bytes // cfg.dma_bytes_per_cycle)
    return max(0, arrive - sum(floors[: last + 1]))


def phase_floors(run, kernel, achieved: dict) -> dict:
    """Per phase of ``achieved`` (cycles per phase): ``achieved``, ``bound_cycles``,
    ``binding`` and ``ratio``, from the traced ``run`` of ``kernel``."""
    parts = run_parts(run.trace, INSTANCE, default="setup")
    recurrence = _loop_recurrence(run, kernel)
    floors = [part_floor(p, run.config.slots, recurrence) for p in parts]
    out = {name: {"achieved": int(cycles), "bound_cycles": 0, "by_binding": {}}
           for name, cycles in achieved.items()}
    for part, (cycles, binding) in zip(parts, floors, strict=True):
        phase = out.setdefault(_phase(part.region), {"achieved": 0, "bound_cycles": 0,
                                                     "by_binding": {}})
        phase["bound_cycles"] += cycles
        phase["by_binding"][binding] = phase["by_binding"].get(binding, 0) + cycles
    if "dma_wait" in out:
        dma = dma_floor(run, kernel.layout.row_bytes, parts, [f for f, _ in floors])
        out["dma_wait"].update(bound_cycles=dma, by_binding={"dma": dma})
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
