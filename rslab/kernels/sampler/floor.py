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

``ratio`` is achieved cycles over the floor (1.0 would be the machine's floor for
this work; a lower floor needs less work, that is another program).

**The task bound** (:func:`task_bound`) is a bound on every program of the chosen draw on
this machine, whatever its plan: the largest of the bytes it must move (over the DMA
bandwidth, plus one latency; and loaded once from VMEM) and the least its arithmetic can
cost on the SFU and the VALU together. The arithmetic is counted per float32 vector (128
elements) of every row the task must read — the checked logits rows, each request's
residual or bonus row (:func:`element_work`) — under these assumptions:

- a program computes the draw's own float32 values (every kernel is checked token for
  token against the reference), so each float32 operation the reference applies to an
  element is one VALU op: the VALU alone does vector float arithmetic, and the core has
  no fused multiply-add; operations on row constants fold into constants;
- left out, so that the count stays below every program: the reductions (the row max, the
  sums, the argmax: the cross-lane unit can take them), the per-row work (acceptance, the
  inverse CDF's tail), the row max of a linear draw's bonus row, integer bookkeeping
  beyond the random word (one ``vrand`` on the Fast path; Philox's products and varying
  xors on the Exact one) and one conversion per uniform, and Philox's xors with its keys;
- a transcendental (exp2, log2, the race's reciprocal) goes to either unit, where the
  program likes: on the SFU it books 1 + hold cycles and its result costs a VALU ``vpop``;
  on the VALU it costs ``VALU_PER_TRANSCENDENTAL`` = 4 ops. That is conservatively low:
  the cheapest bit-level forms take one op (a reciprocal: a magic constant less the bits)
  to three (Schraudolph's exp2: a multiply, an add, a float-to-integer conversion;
  Mitchell's log2: a conversion, a scale, a subtract) and err by several per cent; a
  correction toward the precision a draw needs (the SFU models' error, about 1e-4 for the
  fast log; correct rounding on the Exact path) adds at least a multiply and an add of
  data-dependent values (a reciprocal's Newton step: three ops), so none costs fewer
  than four.

The bound is then ``max(dma, ld, min over the split of max(sfu, valu))``: a program's
own split is one of those the minimum ranges over, and its ops include the counted ones,
so every program's floor, and so its cycles, lies above it. Where the VALU already
carries at least as much as the SFU with every transcendental on the SFU, the split moves
nothing (a transcendental moved costs the VALU three ops more and saves the SFU its
push); where the SFU carries more (the race's bonus row), some move.
"""

from __future__ import annotations

import math
from fractions import Fraction

from rslab.kernels.sampler.draws import DEFAULT_DRAW, sampler_draw
from rslab.machine.floor import dma_replay, part_floor, run_parts
from rslab.numerics import methods

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


# --------------------------------------------------------------- the task's arithmetic

VALU_PER_TRANSCENDENTAL = 4
"""The fewest VALU ops this bound lets an exp2, a log2 or a reciprocal cost when a program
computes it on the VALU instead of the SFU (see the module docstring: conservatively low)."""
CONVERT, SHIFT, SCALE, WEIGHT, WORD, UNIFORM, SCORE = 1, 2, 1, 3, 1, 1, 1
"""VALU ops per float32 vector of a row's elements: a BF16 half to float32; ``(l − m)·LOG2E``
(a subtract and a multiply: no fused multiply-add); the Gumbel bonus score's ``l·LOG2E``;
the residual weight ``max(e·(1/s) − q, 0)``; the Fast path's random word (one ``vrand`` of
the hardware RNG; the Exact path's Philox costs :func:`philox_ops_per_word` instead); the
uniform from a random word (its integer-to-float conversion only); the score ``x − y`` or
``w·R``."""
NOISE = {"add": (4, 2), "mul": (2, 2), "exact": (1, 2)}
"""(VALU ops, transcendentals) per float32 vector of a noise from its uniform: the Fast
Gumbel pipelines (``u·c``, ``− fl``, the second layer's input, ``+ log2 k``; two logs), the
race's ``E`` and ``rcp(E)`` (``u·c``, ``− fl``; a log and a reciprocal), the Exact path's
``log2.p(−log2.p u)`` (the negation; two logs)."""


def philox_ops_per_word(rounds: int = 10) -> Fraction:
    """VALU ops per output word of Philox4x32 when only counter word 0 varies along a row
    (:func:`rslab.numerics.rng.philox4x32`): per round, a ``mulhi`` and a ``mullo`` for
    each product of a varying word, and a xor for each xor of two varying words; xors
    with a key or another row-invariant word are left out (an invariant can be zero)."""
    vary, ops = [True, False, False, False], 0
    for _ in range(rounds):
        p0, p1 = vary[0], vary[2]
        ops += 2 * (p0 + p1) + (p1 and vary[1]) + (p0 and vary[3])
        vary = [p1 or vary[1], p1, p0 or vary[3], p0]
    return Fraction(ops, 4)


def element_work(kind: str, path: str, draw) -> tuple[Fraction, int]:
    """(VALU ops, transcendentals) per float32 vector of a ``kind`` row (``checked``,
    ``residual`` or ``bonus``) on ``path`` drawing with ``draw``, pops not counted.

    A checked row: ``CONVERT + SHIFT`` and one exp2. A residual row: ``WEIGHT`` (an inverse
    CDF's) or, for a score draw, its noise (``NOISE``), the random word (``WORD`` on the Fast
    path, :func:`philox_ops_per_word` on the Exact one), ``UNIFORM``, ``SCORE`` and
    ``WEIGHT``, with a log2 of the weight for a Gumbel-max score. A bonus row: an inverse
    CDF's ``CONVERT + SHIFT`` and one exp2; a score draw's noise, word, ``UNIFORM`` and
    ``SCORE``, plus ``CONVERT + SHIFT`` and the weight's exp2 for the race, ``CONVERT +
    SCALE`` for a Gumbel score."""
    if kind == "checked":
        return Fraction(CONVERT + SHIFT), 1
    score = "exact" if path == "exact" else methods.draw(draw[0]).score
    if score is None:  # the inverse CDFs: the weights, then sums of them
        return (Fraction(CONVERT + SHIFT), 1) if kind == "bonus" else (Fraction(WEIGHT), 0)
    valu, trans = NOISE[score]
    word = philox_ops_per_word() if path == "exact" else WORD
    valu += word + UNIFORM + SCORE
    if kind == "residual":
        return valu + WEIGHT, trans + (score != "mul")  # Gumbel-max scores log2 w
    if score == "mul":  # the race's bonus weights exp2((l − m)·LOG2E)
        return valu + CONVERT + SHIFT, trans + 1
    return valu + CONVERT + SCALE, trans


def task_work(layout, num_accepted, path: str = "fast", draw=DEFAULT_DRAW) -> dict:
    """The task's arithmetic: ``valu_ops`` (pops not counted) and ``transcendentals``, summed
    over every element of every row the task must read (the checked rows, and each
    request's residual or bonus row), in float32 vectors of 128 elements."""
    draw = sampler_draw(path, *draw)
    vectors = 2 * layout.n_packed
    checked = sum(min(int(a) + 1, layout.S) for a in num_accepted)
    rows = {"checked": checked,
            "residual": sum(int(a) < layout.S for a in num_accepted),
            "bonus": sum(int(a) >= layout.S for a in num_accepted)}
    valu, trans = Fraction(0), 0
    for kind, n in rows.items():
        v, t = element_work(kind, path, draw)
        valu += n * vectors * v
        trans += n * vectors * t
    return {"valu_ops": valu, "transcendentals": trans}


def split_cycles(valu_ops, transcendentals, config, on_valu, *,
                 per_transcendental: int = VALU_PER_TRANSCENDENTAL) -> tuple:
    """(SFU, VALU) cycles, not rounded, with ``on_valu`` of the transcendentals on the VALU
    (``per_transcendental`` ops each) and the rest on the SFU (1 + hold cycles and a pop
    each)."""
    on_sfu = transcendentals - on_valu
    per_push = Fraction(1 + config.sfu_hold, config.slots["sfu"])
    valu = valu_ops + on_sfu + per_transcendental * on_valu
    return per_push * on_sfu, valu / config.slots["valu"]


def compute_bound(valu_ops, transcendentals: int, config, *,
                  per_transcendental: int = VALU_PER_TRANSCENDENTAL) -> dict:
    """The least of ``max(sfu, valu)`` cycles over every split of the transcendentals between
    the SFU (1 + hold cycles and a pop each) and the VALU (``per_transcendental`` ops each):
    ``sfu_cycles``, ``valu_cycles`` (rounded up) and ``transcendentals_on_valu``, the fewest
    that reach it (with one op each the VALU's cycles are the same for every split, and any
    split moving more reaches it too)."""
    if isinstance(per_transcendental, bool) or not isinstance(per_transcendental, int) \
            or per_transcendental < 1:
        raise ValueError(f"per_transcendental must be an integer >= 1, got "
                         f"{per_transcendental!r}")
    per_push = Fraction(1 + config.sfu_hold, config.slots["sfu"])
    slots, k, total = config.slots["valu"], per_transcendental, transcendentals
    on_sfu = Fraction(total)
    if per_push * total * slots > valu_ops + total:  # the SFU would bind: move some over
        on_sfu = (valu_ops + k * total) / (slots * per_push + k - 1)
    sfu, valu = split_cycles(valu_ops, total, config, total - on_sfu, per_transcendental=k)
    return {"sfu_cycles": math.ceil(sfu), "valu_cycles": math.ceil(valu),
            "transcendentals_on_valu": float(total - on_sfu)}


def task_bound(run, layout, num_accepted, *, path: str = "fast", draw=DEFAULT_DRAW) -> dict:
    """A bound of the task, not of this program: :func:`machine_task_bound` on the machine
    ``run`` ran on (``run.config``); ``path`` and ``draw`` name what the program computes."""
    return machine_task_bound(run.config, layout, num_accepted, path=path, draw=draw)


def machine_task_bound(config, layout, num_accepted, *, path: str = "fast",
                       draw=DEFAULT_DRAW) -> dict:
    """The task's bound on the machine ``config`` (see the module docstring): the largest of

    - ``dma``: :func:`task_bytes` over the engine's bandwidth, plus one latency;
    - ``ld``: the task's bytes loaded once from VMEM, a vector per load slot;
    - ``sfu`` and ``valu``: the draw's arithmetic on every element the task must read
      (:func:`task_work`), its transcendentals split between the SFU and the VALU where
      the larger of the two is least (:func:`compute_bound`).

    Returns ``bound_cycles``, ``binding`` (``sfu = valu`` when they tie), each term's
    cycles, ``bytes``, ``valu_ops``, ``transcendentals`` and ``transcendentals_on_valu``."""
    nbytes = task_bytes(layout, num_accepted)
    work = task_work(layout, num_accepted, path, draw)
    split = compute_bound(work["valu_ops"], work["transcendentals"], config)
    terms = {"dma": config.dma_latency + -(-nbytes // config.dma_bytes_per_cycle),
             "ld": -(-nbytes // (config.vector_bytes * config.slots["ld"])),
             "sfu": split["sfu_cycles"], "valu": split["valu_cycles"]}
    top = max(terms.values())
    return {"bound_cycles": top, "binding": " = ".join(k for k, v in terms.items() if v == top),
            "bytes": nbytes, **{f"{k}_cycles": v for k, v in terms.items()},
            "valu_ops": float(work["valu_ops"]), "transcendentals": work["transcendentals"],
            "transcendentals_on_valu": split["transcendentals_on_valu"]}
