"""The row maximum of a packed BF16 row as a study kernel (result in ``s3``)."""

import numpy as np

from rslab.kernels.ops.rowmax import PACKED_BYTES, rowmax_body
from rslab.kernels.studies import kernel as sk
from rslab.machine.config import MachineConfig


def max_pass(vectors: int, config: MachineConfig, *, land: str | None = None,
             bank_aware: bool = True, unrolls=sk.UNROLLS):
    """The max pass over ``vectors`` packed vectors, two accumulators per packed vector
    (optionally landing float32, :mod:`rslab.kernels.ops.rowmax`)."""
    name = "max" if land is None else f"max+land({land})"
    return sk.widest_pass(name, lambda u: rowmax_body(u, sk.REGS, accumulate="half", land=land),
                          vectors_needed=vectors, config=config, bank_aware=bank_aware,
                          unrolls=unrolls)


def max_tail(loop, config: MachineConfig) -> list[str]:
    """Reduce the max accumulators to ``s3`` and broadcast it to ``v62``."""
    regs = [reg for v, reg in loop.carried.items() if v.startswith("m")]
    bundles, top = sk.tree_reduce("vmax.f32", regs, config)
    return bundles + [f"vred.max {sk.S_MAX}, {top}", f"vbcast {sk.V_MAX}, {sk.S_MAX}"]


def emit_rowmax(vocab: int, config: MachineConfig | None = None, *,
                in_addr: int = sk.IN_ADDR, unroll: int | None = None) -> sk.Kernel:
    """Assembly for the row maximum of a packed row of ``vocab`` BF16 values at VMEM byte
    ``in_addr`` (result in s3); ``unroll`` forces the packed vectors per iteration."""
    config = config or MachineConfig()
    vectors = sk.packed_vectors(vocab)
    if unroll is None:
        unroll = max_pass(vectors, config).per_iteration
    total = sk.padded_vectors([unroll], vectors)
    mp = max_pass(total, config, unrolls=(unroll,))
    sk.check_region("in_addr", in_addr, total * PACKED_BYTES, config)
    lines = sk.preamble(config, carried_init=sk.accumulator_init(mp, "m", "-inf"),
                        pointers={sk.S_IN: in_addr})
    lines += mp.text.splitlines() + max_tail(mp, config) + ["halt"]
    return sk.Kernel("rowmax", int(vocab), "\n".join(lines) + "\n", [mp], total,
                  vmem={"packed row": total * PACKED_BYTES}, in_addr=int(in_addr),
                  results={"max": sk.S_MAX})


def run_rowmax(row, config: MachineConfig | None = None, *, trace: bool = False):
    """Row maximum of ``row`` (float32, BF16-representable) on the machine: (max, Run)."""
    row = np.asarray(row, dtype=np.float32)
    kernel = emit_rowmax(row.size, config)
    run = sk.run_kernel(kernel, row, config, trace=trace)
    return sk.scalar_f32(run, sk.S_MAX), run
