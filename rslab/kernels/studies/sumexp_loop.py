"""The note's software-pipelined sum-exp loop (DESIGN §1 item 4), built by ``rslab.schedule``.

Per iteration: ``packed_per_iter`` packed BF16 vectors (two by default, the
two independent unpack chains), each loaded, unpacked into its low and high
float32 halves, then per float32 vector ``z = (l − m)``, ``y = z·LOG2E``,
``push exp2 y``, ``pop e``, ``acc += e``. The accumulators are the *workers*:
independent register groups, so the short VALU dependence ``acc += e`` is
reused only every ``workers``-th vector. The modulo scheduler places the ops
(stages Unpack / Multiply / Pow / Pop fall out of it) and expands the kernel.

The row max ``m`` is an input (the caller's row-max pass computes it). A row
whose packed-vector count is not a multiple of ``packed_per_iter`` ends with a
partial iteration (the remainder), which leaves out the missing vectors.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rslab.machine.bf16 import BLOCK, LANES, pack_rows
from rslab.schedule import (
    Addr,
    Expansion,
    Op,
    Schedule,
    SlotModel,
    closure_of_consumers,
    expand,
    modulo_schedule,
)
from rslab.schedule.exact import smallest_exact

LOG2E = np.float32(1.0 / np.log(2.0))
PACKED_BYTES = 4 * LANES


def f32_bits(x) -> str:
    """The float32 bit pattern of ``x`` as an assembler immediate."""
    return hex(int(np.float32(x).view(np.uint32)))


def _check_workers(workers, packed_per_iter):
    if not isinstance(packed_per_iter, int) or packed_per_iter < 1:
        raise ValueError(f"packed_per_iter must be a positive int, got {packed_per_iter!r}")
    vectors = 2 * packed_per_iter
    if not isinstance(workers, int) or workers < 1 or vectors % workers:
        raise ValueError(f"workers must divide the {vectors} float32 vectors of an iteration, "
                         f"got {workers!r}")


def sumexp_body(*, workers: int = 4, packed_per_iter: int = 2, base: str = "s1",
                max_reg: str = "v60", log2e_reg: str = "v61") -> list:
    """The loop body: loads, unpacks, sub, mul, exp2 push, pop, accumulate into ``workers`` accs.

    The value ``acc{w}`` is worker w's accumulator (loop-carried).
    """
    _check_workers(workers, packed_per_iter)
    body = []
    chains = {w: [] for w in range(workers)}
    for b in range(packed_per_iter):
        body.append(Op("vld", f"x{b}", addr=Addr(base, PACKED_BYTES * b,
                                                  PACKED_BYTES * packed_per_iter)))
    for b in range(packed_per_iter):
        for h, half in enumerate(("lo", "hi")):
            k = 2 * b + h
            body += [Op(f"vunpack.{half}", f"l{k}", (f"x{b}",)),
                     Op("vsub.f32", f"z{k}", (f"l{k}", max_reg)),
                     Op("vmul.f32", f"y{k}", (f"z{k}", log2e_reg)),
                     Op("vexp2", f"@e{k}", (f"y{k}",)),
                     Op("vpop", f"e{k}", (f"@e{k}",))]
            chains[k % workers].append(k)
    for w, ks in chains.items():
        prev = f"acc{w}"
        for j, k in enumerate(ks):
            dst = f"acc{w}" if j == len(ks) - 1 else f"acc{w}_{j}"
            body.append(Op("vadd.f32", dst, (prev, f"e{k}")))
            prev = dst
    return body


@dataclass
class SumExpLoop:
    """A sum-exp loop fragment: its schedule, expansion and assembly text."""

    schedule: Schedule
    expansion: Expansion
    acc_registers: list
    n_packed: int
    workers: int
    packed_per_iter: int
    setup_bundles: int = 0

    @property
    def text(self) -> str:
        return self.expansion.text

    @property
    def iterations(self) -> int:
        return self.expansion.iterations

    def figures(self, stalls_per_iter: float | None = None) -> dict:
        """The bench keys of DESIGN §6 (``stalls_per_iter`` measured by the caller)."""
        b = self.schedule.bounds
        return {"ii": self.schedule.ii, "res_mii": b.res_mii, "rec_mii": b.rec_mii,
                "stalls_per_iter": stalls_per_iter}


_EXACT: dict = {}
"""Exact schedules by body, model and bounds (the integer program takes seconds)."""


def sumexp_loop(n_packed: int, *, model: SlotModel | None = None, workers: int = 4,
                packed_per_iter: int = 2, base: str = "s1", max_reg: str = "v60",
                log2e_reg: str = "v61", acc_registers=None, registers=None,
                max_stages: int | None = None, scheduler: str = "heuristic") -> SumExpLoop:
    """Schedule and expand the sum-exp loop over ``n_packed`` packed vectors at ``[base]``.

    ``scheduler="exact"`` takes the smallest-II schedule of the integer program
    (:mod:`rslab.schedule.exact`, at most ``max_stages`` or 8 stages) at or below the
    heuristic's II.

    ``acc_registers`` (one per worker) must be zeroed by the caller and hold the
    per-worker partial sums afterwards; ``registers`` is the pool for loop values.
    ``base`` advances by the bytes consumed in the kernel loop (``expansion.pointer_step``).
    """
    if not isinstance(n_packed, int) or n_packed < 1:
        raise ValueError(f"n_packed must be a positive int, got {n_packed!r}")
    model = model or SlotModel()
    acc_registers = list(acc_registers or [f"v{50 + w}" for w in range(workers)])
    if len(acc_registers) != workers:
        raise ValueError(f"acc_registers: need {workers}, got {len(acc_registers)}")
    registers = list(registers or [f"v{i}" for i in range(48)])
    body = sumexp_body(workers=workers, packed_per_iter=packed_per_iter, base=base,
                       max_reg=max_reg, log2e_reg=log2e_reg)
    iterations = -(-n_packed // packed_per_iter)
    left = n_packed - (iterations - 1) * packed_per_iter
    drop = closure_of_consumers(body, [f"x{b}" for b in range(left, packed_per_iter)]) \
        if left < packed_per_iter else set()
    if any(op.label.startswith("acc") and op.label in drop for op in body) and workers < 2 * \
            packed_per_iter:
        raise ValueError(f"n_packed={n_packed} leaves a partial iteration; with {workers} "
                         "workers an accumulator chain would be cut: use workers = "
                         f"{2 * packed_per_iter} or a multiple of {packed_per_iter} vectors")
    if scheduler not in ("heuristic", "exact"):
        raise ValueError(f"scheduler must be 'heuristic' or 'exact', got {scheduler!r}")
    schedule = modulo_schedule(body, model, max_stages=max_stages, reserve_scalar=1)
    if scheduler == "exact" and schedule.ii > schedule.bounds.mii:
        key = (tuple(body), repr(model), max_stages, schedule.ii)
        if key not in _EXACT:
            found, _ = smallest_exact(body, model=model, max_ii=schedule.ii - 1,
                                      max_stages=max_stages or 8, reserve_scalar=1)
            _EXACT[key] = found.schedule if found is not None else schedule
        schedule = _EXACT[key]
    carried = {f"acc{w}": acc_registers[w] for w in range(workers)}
    expansion = expand(schedule, iterations, registers=registers, carried_registers=carried,
                       last_drop=drop)
    return SumExpLoop(schedule, expansion, acc_registers, n_packed, workers, packed_per_iter)


def sumexp_program(n_packed: int, m: float, *, model: SlotModel | None = None,
                   address: int = 0, result_reg: str = "s3", **loop_kw):
    """A whole program: constants, zeroed accumulators, the loop, the final reduction, halt.

    Returns ``(text, loop)``; the sum (float32 bits) ends in ``result_reg``.
    """
    loop = sumexp_loop(n_packed, model=model, **loop_kw)
    accs = loop.acc_registers
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
    return "\n".join(setup) + "\n" + loop.text + "\n".join(tail) + "\n", loop


def sumexp_numpy(row, m, *, workers: int = 4, packed_per_iter: int = 2, exp2=None) -> np.float32:
    """The loop's float32 result computed in NumPy in the kernel's exact order.

    ``row`` holds BF16-representable float32 logits (padded with −inf to the
    256-element block); ``exp2`` is the SFU's exp2 model (default ``fast_exp2``).
    """
    from rslab.numerics.fastlog import fast_exp2

    exp2 = exp2 or fast_exp2
    _check_workers(workers, packed_per_iter)
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
    return lane_tree_sum(level[0])


def lane_tree_sum(x) -> np.float32:
    """``vred.add``: pairwise tree over lanes (lane l + lane l + half, halving)."""
    x = np.asarray(x, dtype=np.float32)
    while x.size > 1:
        half = x.size // 2
        x = x[:half] + x[half:]
    return np.float32(x[0])


def packed_row(row) -> np.ndarray:
    """A float32 logits row packed to BF16 words (the VMEM image the loop reads)."""
    return pack_rows(np.asarray(row, dtype=np.float32))
