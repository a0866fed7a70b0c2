"""The row maximum of a packed BF16 row as a study kernel (result in ``s3``)."""

import numpy as np

from rslab.kernels.ops.rowmax import PACKED_BYTES, rowmax_body
from rslab.kernels.studies.kernel import (
    IN_ADDR,
    REGS,
    S_IN,
    S_MAX,
    UNROLLS,
    V_MAX,
    Kernel,
    accumulator_init,
    check_region,
    packed_vectors,
    padded_vectors,
    preamble,
    run_kernel,
    scalar_f32,
    stride2_conflict,
    tree_reduce,
    widest_pass,
)
from rslab.machine.config import MachineConfig


def max_pass(vectors: int, config: MachineConfig, *, land: str | None = None,
             bank_aware: bool = True, unrolls=UNROLLS):
    """The max pass over ``vectors`` packed vectors, two accumulators per packed vector
    (optionally landing float32, :mod:`rslab.kernels.ops.rowmax`)."""
    busy = stride2_conflict(config) if (land == "helper" and bank_aware) else 1
    name = "max" if land is None else f"max+land({land})"
    return widest_pass(name, lambda u: rowmax_body(u, REGS, accumulate="half", land=land),
                       vectors_needed=vectors, config=config,
                       strided_store_busy=busy, unrolls=unrolls)


def max_tail(loop, config: MachineConfig) -> list[str]:
    """Reduce the max accumulators to ``s3`` and broadcast it to ``v62``."""
    regs = [reg for v, reg in loop.carried.items() if v.startswith("m")]
    bundles, top = tree_reduce("vmax.f32", regs, config)
    return bundles + [f"vred.max {S_MAX}, {top}", f"vbcast {V_MAX}, {S_MAX}"]


def emit_rowmax(vocab: int, config: MachineConfig | None = None, *,
                in_addr: int = IN_ADDR, unroll: int | None = None) -> Kernel:
    """Assembly for the row maximum of a packed row of ``vocab`` BF16 values at VMEM byte
    ``in_addr`` (result in s3); ``unroll`` forces the packed vectors per iteration."""
    config = config or MachineConfig()
    vectors = packed_vectors(vocab)
    if unroll is None:
        unroll = max_pass(vectors, config).per_iteration
    total = padded_vectors([unroll], vectors)
    mp = max_pass(total, config, unrolls=(unroll,))
    check_region("in_addr", in_addr, total * PACKED_BYTES, config)
    lines = preamble(config, carried_init=accumulator_init(mp, "m", "-inf"),
                     pointers={S_IN: in_addr})
    lines += mp.text.splitlines() + max_tail(mp, config) + ["halt"]
    return Kernel("rowmax", int(vocab), "\n".join(lines) + "\n", [mp], total,
                  vmem={"packed row": total * PACKED_BYTES}, in_addr=int(in_addr),
                  results={"max": S_MAX})


def run_rowmax(row, config: MachineConfig | None = None, *, trace: bool = False):
    """Row maximum of ``row`` (float32, BF16-representable) on the machine: (max, Run)."""
    row = np.asarray(row, dtype=np.float32)
    kernel = emit_rowmax(row.size, config)
    run = run_kernel(kernel, row, config, trace=trace)
    return scalar_f32(run, S_MAX), run
