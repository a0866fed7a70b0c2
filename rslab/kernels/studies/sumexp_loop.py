"""The note's software-pipelined sum-exp loop as a standalone study program.

Per iteration: ``packed_per_iter`` packed BF16 vectors (two by default, the
two independent unpack chains), each loaded, unpacked into its low and high
float32 halves, then per float32 vector ``z = (l − m)``, ``y = z·LOG2E``,
``push exp2 y``, ``pop e``, ``acc += e`` (:func:`rslab.kernels.ops.sumexp.sumexp_body`).
The accumulators are the *workers*: independent register groups, so the short
VALU dependence ``acc += e`` is reused only every ``workers``-th vector. The
modulo scheduler places the ops (stages Unpack / Multiply / Pow / Pop fall out
of it) and expands the kernel.

The row max ``m`` is an input (the caller's row-max pass computes it). A row
whose packed-vector count is not a multiple of ``packed_per_iter`` ends with a
partial iteration (the remainder), which leaves out the missing vectors.
Registers: ``s1`` the row, ``v60`` the max, ``v61`` LOG2E, accumulators from ``v50``.
"""

from __future__ import annotations

import numpy as np

from rslab.kernels.loops.emit import emit_loop, remainder_drop
from rslab.kernels.loops.loop import Loop
from rslab.kernels.ops import sumexp as ops
from rslab.machine.asm import f32_bits
from rslab.machine.bf16 import BLOCK, LANES, pack_rows
from rslab.machine.config import MachineConfig
from rslab.machine.overrides import machine_line
from rslab.machine.units import tree_sum
from rslab.numerics.fastlog import LOG2E
from rslab.schedule import SlotModel

REGS = {"src": "s1", "max": "v60", "log2e": "v61"}
"""The study program's registers by role (:mod:`rslab.kernels.ops`)."""
SCHEDULERS = ("heuristic", "exact")


def sumexp_body(*, workers: int = 4, packed_per_iter: int = 2) -> list:
    """The loop body on the study's registers; ``acc{w}`` is worker w's accumulator."""
    return ops.sumexp_body(packed_per_iter, REGS, workers=workers)


def sumexp_loop(n_packed: int, *, model: SlotModel | None = None, workers: int = 4,
                packed_per_iter: int = 2, acc_registers=None, registers=None,
                max_stages: int | None = None, scheduler: str = "heuristic") -> Loop:
    """Schedule and expand the sum-exp loop over ``n_packed`` packed vectors at ``[s1]``.

    ``scheduler="exact"`` takes the smallest-II schedule of the integer program
    (:mod:`rslab.schedule.exact`, at most ``max_stages`` or 8 stages) at or below the
    heuristic's II. ``acc_registers`` (one per worker) must be zeroed by the caller and
    hold the per-worker partial sums afterwards (``loop.carried``); ``registers`` is the
    pool for loop values. ``s1`` advances by the bytes consumed in the kernel loop.
    """
    if not isinstance(n_packed, int) or n_packed < 1:
        raise ValueError(f"n_packed must be a positive int, got {n_packed!r}")
    if scheduler not in SCHEDULERS:
        raise ValueError(f"scheduler must be 'heuristic' or 'exact', got {scheduler!r}")
    model = model or SlotModel()
    acc_registers = list(acc_registers or [f"v{50 + w}" for w in range(workers)])
    if len(acc_registers) != workers:
        raise ValueError(f"acc_registers: need {workers}, got {len(acc_registers)}")
    body = sumexp_body(workers=workers, packed_per_iter=packed_per_iter)
    iterations = -(-n_packed // packed_per_iter)
    left = n_packed - (iterations - 1) * packed_per_iter
    ops.check_remainder(workers, packed_per_iter, left)
    carried = dict(zip(ops.accumulators(workers), acc_registers, strict=True))
    return emit_loop(body, iterations, "pipelined", carried=carried,
                     pool=list(registers or [f"v{i}" for i in range(48)]), model=model,
                     last_drop=remainder_drop(body, left, packed_per_iter),
                     per_iteration=packed_per_iter, max_stages=max_stages,
                     exact=scheduler == "exact")


def sumexp_program(n_packed: int, m: float, *, model: SlotModel | None = None,
                   address: int = 0, result_reg: str = "s3", **loop_kw):
    """A whole program: the ``# machine:`` line of the machine it is scheduled for (the
    model's slots, latencies, hold and FIFO depth), constants, zeroed accumulators, the
    loop, the final reduction, halt.

    Returns ``(text, loop)``; the sum (float32 bits) ends in ``result_reg``.
    """
    model = model or SlotModel()
    loop = sumexp_loop(n_packed, model=model, **loop_kw)
    accs = list(loop.carried.values())
    setup = [f"sli s1, {address}", f"sli s2, {f32_bits(m)}",
             "vbcast v60, s2 ; vli v61, " + f32_bits(LOG2E)]
    for i in range(0, len(accs), 2):
        setup.append(" ; ".join(f"vli {r}, 0" for r in accs[i:i + 2]))
    tail = []
    level = list(accs)
    scratch = iter(f"v{56 + i}" for i in range(8))
    while len(level) > 1:
        nxt, ops = [], []
        for i in range(0, len(level), 2):
            dst = next(scratch)
            ops.append(f"vadd.f32 {dst}, {level[i]}, {level[i + 1]}")
            nxt.append(dst)
        tail += [" ; ".join(ops[j:j + 2]) for j in range(0, len(ops), 2)]
        level = nxt
    tail += [f"vred.add {result_reg}, {level[0]}", "halt"]
    loop.setup_bundles = len(setup)
    machine = MachineConfig().with_(slots=model.units, latency=model.latency,
                                    sfu_hold=model.sfu_hold, fifo_depth=model.fifo_depth)
    return (machine_line(machine) + "\n" + "\n".join(setup) + "\n" + loop.text
            + "\n".join(tail) + "\n", loop)


def sumexp_numpy(row, m, *, workers: int = 4, packed_per_iter: int = 2, exp2=None) -> np.float32:
    """The loop's float32 result computed in NumPy in the kernel's exact order.

    ``row`` holds BF16-representable float32 logits (padded with −inf to the
    256-element block); ``exp2`` is the SFU's exp2 model (default ``fast_exp2``).
    """
    from rslab.numerics.fastlog import fast_exp2

    exp2 = exp2 or fast_exp2
    ops.check_workers(workers, packed_per_iter)
    row = np.asarray(row, dtype=np.float32)
    n_packed = -(-row.size // BLOCK)
    padded = np.full(n_packed * BLOCK, -np.inf, dtype=np.float32)
    padded[:row.size] = row
    vectors = padded.reshape(n_packed * 2, LANES)  # vector k = 2b + h
    e = exp2((vectors - np.float32(m)) * LOG2E)
    accs = np.zeros((workers, LANES), dtype=np.float32)
    per_iter = 2 * packed_per_iter
    for k in range(e.shape[0]):
        w = (k % per_iter) % workers
        accs[w] = accs[w] + e[k]
    level = list(accs)
    while len(level) > 1:
        level = [level[i] + level[i + 1] for i in range(0, len(level), 2)]
    return np.float32(tree_sum(level[0]))


def packed_row(row) -> np.ndarray:
    """A float32 logits row packed to BF16 words (the VMEM image the loop reads)."""
    return pack_rows(np.asarray(row, dtype=np.float32))
