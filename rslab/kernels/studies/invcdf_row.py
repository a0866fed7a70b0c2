"""The inverse-CDF draw of a bonus or residual row on the core, as a program of its own.

Two parts, in the order of :mod:`rslab.numerics.invcdf`, both from
:mod:`rslab.kernels.ops.invcdf`:

1. **The pass** (modulo-scheduled, two packed vectors per iteration): the
   weights of the four float32 streams (``exp2((l − m)·LOG2E)``; residual
   ``max(p − q, 0)``), each summed and stored by the cross-lane unit and a scalar
   store, through :func:`rslab.kernels.loops.emit_loop`. Pinned to a scalar register,
   a sum cannot be rewritten before its store, 8 cycles (the XLU latency) after the
   reduction: two packed vectors per iteration keep that recurrence under the
   resource bound (a row of an odd number of packed vectors gets one more of
   −inf logits, whose zero block sums change nothing). No noise and no log.
2. **The tail** (straight-line, once per row): group sums and their running
   total, ``x = u₁·Σ``, the group by a compare and ``vred.argmax`` (a true mask
   lane reads as NaN, the largest), the Hillis–Steele scan of the group's block
   sums, the block, then the block's weights recomputed from the logits and scanned
   the same way, and the token (an integer in ``s5``).

The full sampler takes the same pieces (:mod:`rslab.kernels.sampler.invcdf_row`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rslab.kernels.loops.emit import emit_loop
from rslab.kernels.loops.loop import Loop
from rslab.kernels.ops.invcdf import (
    PACKED_PER_ITER,
    PASS_WORKERS,
    Layout,
    pass_body,
    pick_lines,
    scratch_layout,
    sums_lines,
)
from rslab.kernels.ops.rowmax import PACKED_BYTES
from rslab.kernels.studies.draw_loops import REGS, row_vmem
from rslab.machine.asm import f32_bits
from rslab.machine.bf16 import BLOCK
from rslab.numerics.fastlog import LOG2E
from rslab.numerics.invcdf import check_invcdf_noise
from rslab.schedule import SlotModel

KINDS = ("bonus", "residual")
PASS_REGS = REGS | {"sums": "s6"}
BLOCK_SUM_REGS = ("s8", "s9", "s10", "s11")


def layout(n_packed: int, kind: str) -> Layout:
    """Logits at 0, q after them (residual), then the scratch regions."""
    q = PACKED_BYTES * n_packed
    return scratch_layout(n_packed, 0, q, q + (2 * PACKED_BYTES * n_packed
                                               if kind == "residual" else 0))


def tail_lines(kind: str, noise: str, L: Layout, reg: dict) -> list:
    """Straight-line code from the stored block sums to the token in ``s5``."""
    return sums_lines(L, BLOCK_SUM_REGS) + pick_lines(kind, noise, L, reg)


@dataclass
class InvcdfKernel:
    """The pass loop, the memory layout and the program text."""

    kind: str
    noise: str
    loop: Loop
    layout: Layout
    text: str


def pass_loop(kind: str, n_packed: int, model: SlotModel) -> Loop:
    """The pipelined pass over ``n_packed`` packed vectors (``emit_loop``, cached)."""
    carried = dict(zip((f"b{k}" for k in range(PASS_WORKERS)), BLOCK_SUM_REGS, strict=True))
    pool = [f"v{i}" for i in range(64) if f"v{i}" not in set(REGS.values())]
    return emit_loop(pass_body(kind, PASS_REGS), n_packed // PACKED_PER_ITER, "pipelined",
                     carried=carried, pool=pool, model=model, per_iteration=PACKED_PER_ITER)


def setup_lines(L: Layout, *, m, r, key: int) -> list:
    """The pass's bases (logits, q, block sums), key, row max and 1/s broadcast, the carried
    block sums zeroed, LOG2E and zero."""
    return [f"sli s1, {L.logits}", f"sli s2, {L.q}", f"sli s6, {L.sums}", f"sli s3, {int(key)}",
            f"sli s4, {f32_bits(m)}", f"vbcast {REGS['max']}, s4",
            f"sli s4, {f32_bits(r)}", f"vbcast {REGS['rinv']}, s4",
            *(f"sli {reg}, 0" for reg in BLOCK_SUM_REGS),
            f"vli {REGS['log2e']}, {f32_bits(LOG2E)}", f"vli {REGS['zero']}, 0"]


def invcdf_program(kind: str, noise: str, n_packed: int, *, m=0.0, r=1.0, key: int = 0,
                   config=None) -> InvcdfKernel:
    """The whole program for one row of ``n_packed`` packed vectors."""
    from rslab.machine import MachineConfig

    check_invcdf_noise(noise)
    if not isinstance(n_packed, int) or n_packed < 1 or n_packed % PACKED_PER_ITER:
        raise ValueError(f"n_packed must be a positive multiple of {PACKED_PER_ITER}, "
                         f"got {n_packed!r}")
    config = config or MachineConfig()
    loop = pass_loop(kind, n_packed, SlotModel.from_config(config))
    L = layout(n_packed, kind)
    text = "\n".join(setup_lines(L, m=m, r=r, key=key)) + "\n" + loop.text + "\n".join(
        tail_lines(kind, noise, L, REGS)) + "\nhalt\n"
    return InvcdfKernel(kind, noise, loop, L, text)


@dataclass
class InvcdfResult:
    token: int
    cycles: int
    kernel: InvcdfKernel
    run: object


def run_invcdf(kind: str, noise: str, logits, *, q=None, m=0.0, r=1.0, key: int = 0,
               config=None) -> InvcdfResult:
    """Run the kernel on one row (BF16 logits; the row max m; residual: float32 q, r = 1/s)."""
    from rslab.machine import MachineConfig, assemble, simulate

    config = config or MachineConfig()
    logits = np.asarray(logits, np.float32)
    whole = -(-logits.size // (BLOCK * PACKED_PER_ITER)) * BLOCK * PACKED_PER_ITER
    padded = np.full(whole, -np.inf, np.float32)
    padded[:logits.size] = logits
    qp = None if q is None else np.concatenate([q, np.zeros(whole - logits.size, np.float32)])
    vmem, n_packed = row_vmem(kind, padded, qp)
    kernel = invcdf_program(kind, noise, n_packed, m=m, r=r, key=key, config=config)
    run = simulate(assemble(kernel.text), config, vmem=vmem)
    return InvcdfResult(int(run.sreg(5)), run.cycles, kernel, run)

