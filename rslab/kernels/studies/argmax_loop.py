"""Argmax over a float32 score row, two ways, as modulo-scheduled study loops.

Each worker keeps, per lane, the best score and its token index with one of the two
updates of :mod:`rslab.kernels.ops.argmax` (``select``: greater → select; ``max``:
an independent max, the compare only updates the index). The final reduction takes
the largest score over workers and lanes and, among the lanes holding it, the
lowest token index (ties → lowest index).

**NaN rule.** Valid rows have no NaN score (the reference rejects NaN logits,
``w ≥ 0`` and the noise is finite). ``select`` ignores NaN scores; ``max``
propagates them: the returned value is NaN and the token is −1, which callers
must treat as an invalid row. Both are stated by :func:`argmax_reference`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rslab.kernels.loops.emit import emit_loop
from rslab.kernels.ops.argmax import VARIANTS, argmax_update_ops, check_variant, index_step_op
from rslab.schedule import Addr, Op, Schedule, SlotModel

LANES = 128
INF_BITS = "0x7f800000"
NEG_INF_BITS = "0xff800000"


def argmax_body(*, variant: str = "max", workers: int = 1, base: str = "s1",
                step_reg: str = "v63") -> list:
    """Loop body: ``workers`` float32 score vectors per iteration, one argmax state each."""
    check_variant(variant)
    if not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be a positive int, got {workers!r}")
    body = [Op("vld", f"s{k}", addr=Addr(base, 4 * LANES * k, 4 * LANES * workers))
            for k in range(workers)]
    for k in range(workers):
        body += argmax_update_ops(k, f"s{k}", f"i{k}", variant)
    body += [index_step_op(k, step_reg) for k in range(workers)]
    return body


def pinned_registers(values, first: int = 40) -> dict:
    """Consecutive fixed registers from ``v{first}`` for loop-carried ``values``, in order."""
    return {v: f"v{first + j}" for j, v in enumerate(values)}


def carried_registers(workers: int, first: int = 40) -> dict:
    """Registers for the loop-carried ``best``, ``idx`` and ``i`` of each worker."""
    return pinned_registers([v for k in range(workers) for v in (f"best{k}", f"idx{k}",
                                                                   f"i{k}")], first)


def init_text(carried: dict, workers: int, first_index: list, *, iota_reg: str,
              tmp_reg: str, scratch_sreg: str = "s30") -> list:
    """Bundles that set best = −inf, idx = i = first index + lane for each worker."""
    lines = [f"viota {iota_reg}"]
    for k in range(workers):
        lines += [f"sli {scratch_sreg}, {first_index[k]}",
                  f"vbcast {tmp_reg}, {scratch_sreg} ; vli {carried[f'best{k}']}, {NEG_INF_BITS}",
                  f"vadd.u32 {carried[f'i{k}']}, {iota_reg}, {tmp_reg}",
                  f"vmov {carried[f'idx{k}']}, {carried[f'i{k}']}"]
    return lines


def reduce_text(best_regs, idx_regs, *, value_sreg: str = "s4", token_sreg: str = "s5",
                scratch=("v32", "v33", "v34", "v35", "v36", "v37", "v38", "v39")) -> list:
    """Bundles reducing per-lane (best, idx) of all workers to the max value and lowest index.

    The token index ends as a float32 in ``token_sreg`` (+inf if no lane equals the max,
    i.e. the max is NaN).
    """
    s = list(scratch)
    lines = []
    level = list(best_regs)
    tmp = iter(s[:4])
    while len(level) > 1:
        nxt = []
        for i in range(0, len(level) - 1, 2):
            dst = next(tmp)
            lines.append(f"vmax.f32 {dst}, {level[i]}, {level[i + 1]}")
            nxt.append(dst)
        if len(level) % 2:
            nxt.append(level[-1])
        level = nxt
    top = level[0]
    mb, inf, cand, acc = s[4], s[5], s[6], s[7]
    lines += [f"vred.max {value_sreg}, {top}",
              f"vbcast {mb}, {value_sreg} ; vli {inf}, {INF_BITS}"]
    for k, (b, i) in enumerate(zip(best_regs, idx_regs, strict=True)):
        lines += [f"vcmpeq.f32 {cand}, {b}, {mb} ; vcvt.u2f {s[0]}, {i}",
                  f"vsel {cand}, {cand}, {s[0]}, {inf}"]
        lines.append(f"vmov {acc}, {cand}" if k == 0 else f"vmin.f32 {acc}, {acc}, {cand}")
    lines.append(f"vred.min {token_sreg}, {acc}")
    return lines


@dataclass
class ArgmaxResult:
    token: int
    value: float
    cycles: int
    stalls: dict
    schedule: Schedule


def token_from_float(x: float) -> int:
    """The kernel's float32 token index as an int (−1 when it is +inf: the NaN case)."""
    return -1 if not np.isfinite(x) else int(x)


def argmax_program(n_vectors: int, *, variant: str = "max", workers: int = 1,
                   model: SlotModel | None = None, address: int = 0):
    """A whole program: init, the pipelined loop over ``n_vectors`` score vectors, reduction.

    ``n_vectors`` must be a multiple of ``workers``. Returns ``(text, schedule)``.
    """
    if not isinstance(n_vectors, int) or n_vectors < 1 or n_vectors % workers:
        raise ValueError(f"n_vectors must be a positive multiple of workers={workers}, "
                         f"got {n_vectors!r}")
    body = argmax_body(variant=variant, workers=workers, step_reg="v63")
    carried = carried_registers(workers)
    loop = emit_loop(body, n_vectors // workers, "pipelined", carried=carried,
                     pool=[f"v{i}" for i in range(32)], model=model or SlotModel())
    lines = [f"sli s1, {address}", f"sli s2, {LANES * workers}", "vbcast v63, s2"]
    lines += init_text(carried, workers, [LANES * k for k in range(workers)],
                       iota_reg="v62", tmp_reg="v61")
    text = "\n".join(lines) + "\n" + loop.text
    tail = reduce_text([carried[f"best{k}"] for k in range(workers)],
                       [carried[f"idx{k}"] for k in range(workers)])
    return text + "\n".join(tail) + "\nhalt\n", loop.schedule


def run_argmax(scores, *, variant: str = "max", workers: int = 1, config=None) -> ArgmaxResult:
    """Run the argmax kernel on a float32 row (length a multiple of 128·workers)."""
    from rslab.machine import MachineConfig, assemble, simulate

    scores = np.asarray(scores)
    if scores.dtype != np.float32 or scores.ndim != 1:
        raise ValueError(f"scores must be a 1-d float32 array, got {scores.dtype} {scores.shape}")
    if scores.size % (LANES * workers):
        raise ValueError(f"scores: length must be a multiple of {LANES * workers}, "
                         f"got {scores.size}")
    config = config or MachineConfig()
    text, schedule = argmax_program(scores.size // LANES, variant=variant, workers=workers,
                                    model=SlotModel.from_config(config))
    run = simulate(assemble(text), config, vmem=scores)
    return ArgmaxResult(token_from_float(run.sreg_f32(5)), run.sreg_f32(4), run.cycles,
                        run.stalls, schedule)


def argmax_reference(scores, variant: str = "max"):
    """(token, value) by the stated rules: ties → lowest index; ``select`` ignores NaN,
    ``max`` returns (−1, NaN) when any score is NaN."""
    check_variant(variant)
    s = np.asarray(scores, dtype=np.float32)
    nan = np.isnan(s)
    if variant == "max" and nan.any():
        return -1, float("nan")
    clean = np.where(nan, np.float32(-np.inf), s)
    k = int(np.argmax(clean))
    return k, float(clean[k])

__all__ = ["VARIANTS", "argmax_body", "argmax_program", "argmax_reference", "carried_registers",
           "pinned_registers", "reduce_text", "run_argmax", "token_from_float"]
