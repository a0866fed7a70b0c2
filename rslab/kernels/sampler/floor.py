"""The floor of each phase of a sampler run: the least the machine allows for *this program's* work.

For every phase (:data:`rslab.kernels.sampler.run.PHASE_KEYS`) the floor is computed
from the program the simulator ran and its trace (:mod:`rslab.machine.floor`): the
phase's straight-line segments and loop runs, each at the larger of its resource floor
(ops per slot class over slots, the SFU hold) and its latency floor (a segment's
critical path; a loop's recurrence, passes × RecMII of its body per iteration of the
pass, :attr:`rslab.kernels.loops.loop.Loop.pass_recurrence`). ``binding`` names what
binds the parts that hold most of the floor: a unit (``valu``, ``st``, ``sfu`` …,
``valu = st`` when two tie), ``latency`` or ``recurrence``.

**DMA wait.** The floor of the waiting is what the run's transfers add to its work
when the parts are replayed at their floors with the DMA engine modelled
(:func:`rslab.machine.floor.dma_replay`: every transfer the program issues — the
speculative ones too — at the engine's bandwidth, each as early as the floors allow,
overlapped with the work at best): the replay's end less the sum of the work's floors.

So the floor is the floor **of the program's own work**: its ops and its transfers, at
the machine's best. It is not a bound on the machine: another program (fewer bytes,
another prefetch order, another draw) has another floor, possibly below this one.
:func:`task_bound` is the bound of the *task*: the bytes any program must move and the
ops any program of the chosen draw must issue.

``ratio`` is achieved cycles over the floor (1.0 would be the machine's floor for
this work; a lower floor needs less work, that is another program).
"""

from __future__ import annotations

from rslab.machine.floor import dma_replay, part_floor, run_parts

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


def phase_floors(run, kernel, achieved: dict) -> dict:
    """Per phase of ``achieved`` (cycles per phase): ``achieved``, ``bound_cycles``,
    ``binding`` and ``ratio``, from the traced ``run`` of ``kernel``; the ``dma_wait``
    phase adds the replay's figures (:func:`rslab.machine.floor.dma_replay`):
    ``engine_cycles``, ``bytes``, ``transfers``."""
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
        work = [f for f, _ in floors]
        replay = dma_replay(run.trace, parts, work, run.config.slots)
        dma = max(0, replay["cycles"] - sum(work))
        out["dma_wait"].update(bound_cycles=dma, by_binding={"dma": dma},
                               engine_cycles=replay["engine_cycles"], bytes=replay["bytes"],
                               transfers=replay["transfers"])
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


TASK_PHASES = ("sumexp", "residual", "bonus")
"""Phases whose loops apply the reference's per-element functions (exp2, log2) to rows."""


def task_bytes(layout, num_accepted) -> int:
    """The bytes any program must bring from HBM: the tables, every checked logits row,
    q(x) of every accepted draft, and the final row's inputs (the q row of a rejected
    position, whose logits row is already in; or the bonus logits row)."""
    total = layout.table_bytes
    for a in (int(x) for x in num_accepted):
        checked = min(a + 1, layout.S)
        total += checked * layout.row_bytes + 4 * a
        total += layout.q_row_bytes if a < layout.S else layout.row_bytes
    return total


def task_bound(run, layout, num_accepted) -> dict:
    """A bound of the task, not of this program: the larger of

    - ``dma``: :func:`task_bytes` over the engine's bandwidth, plus one latency;
    - ``sfu``: the SFU cycles of the run's per-element loops (``TASK_PHASES``): each push
      is a function the reference applies to every element of a row it must read (exp2
      of every logit of a checked row; the draw's exp2 or log2 of every weight or
      uniform), which any program of the chosen draw issues once per element;
    - ``ld``: the task's bytes loaded once from VMEM, a vector per load slot.

    Returns ``bound_cycles``, ``binding`` and each term's cycles and ``bytes``."""
    cfg = run.config
    nbytes = task_bytes(layout, num_accepted)
    sfu = sum(p.usage.get("sfu", 0) for p in run_parts(run.trace, INSTANCE, default="setup")
              if p.kind == "loop" and _phase(p.region) in TASK_PHASES)
    terms = {"dma": cfg.dma_latency + -(-nbytes // cfg.dma_bytes_per_cycle),
             "sfu": -(-sfu // cfg.slots["sfu"]),
             "ld": -(-nbytes // (cfg.vector_bytes * cfg.slots["ld"]))}
    binding = max(terms, key=terms.get)
    return {"bound_cycles": terms[binding], "binding": binding, "bytes": nbytes,
            **{f"{k}_cycles": v for k, v in terms.items()}}
