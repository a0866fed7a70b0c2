"""Lab ``sumexp``: the pipelining chapter's sum-exp loop, s = Σ exp2((l − m)·LOG2E).

The reference is :func:`rslab.kernels.studies.sumexp.reference_sumexp` (the same float32
terms, summed in float64); the sum may be taken in any order, so it is compared within the
tolerance of :func:`~rslab.kernels.studies.sumexp.order_tolerance`. The book's kernel is the
chapter's loop (:func:`rslab.kernels.studies.sumexp_loop.sumexp_program`, modulo-scheduled
for the variant's machine) at the width fastest there: 1, 2 or 4 packed vectors an
iteration with one accumulator per float32 vector, so that on a machine whose VALU latency
outgrows the chapter's four workers the book's kernel still reaches its resource bound.
"""

from __future__ import annotations

import numpy as np

from rslab.kernels.ops.sumexp import sumexp_body
from rslab.kernels.studies.sumexp import order_tolerance, reference_sumexp
from rslab.kernels.studies.sumexp_loop import REGS, sumexp_program
from rslab.labs.lab import LOGITS, ROW, Lab, count_lines, runtime_loop
from rslab.machine.asm import f32_bits
from rslab.numerics.fastlog import LOG2E
from rslab.schedule import SlotModel

BOOK_WIDTHS = (1, 2, 4)
"""Packed vectors an iteration the book's kernel tries on a variant's machine."""


def tolerance(packed: int) -> float:
    """γ_n with n = 2P + 16: each lane sums its 2P terms, then lanes and accumulators combine
    in at most 16 more additions."""
    return order_tolerance(2 * packed + 16)


class SumExpLab(Lab):
    name = "sumexp"
    title = "the sum-exp loop"
    chapter = "Software pipelining"
    task = ("Compute s = Σ exp2((l − m)·LOG2E) over the row (the softmax normaliser), each "
            "term exactly as the book computes it: z = l − m (vsub.f32), y = z·LOG2E "
            f"(vmul.f32, LOG2E = {f32_bits(LOG2E)}), e = vexp2 y (the SFU's fast exp2), "
            "then the terms added in any order you like.")
    inputs = (LOGITS,)
    results = {"s3": "s, float32"}
    live = ("s8", "s10")
    per_packed = {"ld": 1, "valu": 10, "sfu": 2}
    bound_note = ("VALU: two unpacks, two subtracts, two multiplies, two pops and two adds a "
                  "packed vector (the sum of 2P·128 terms needs about 2P vector adds).")
    comparison = ("s3 within a relative γ_n = n·2^-24/(1 − n·2^-24) of the reference, "
                  "n = 2P + 16 (the terms are the reference's, only their order is yours).")

    def check(self, run, case, variant):
        got = np.float32(run.sreg_f32(3))
        _, ref = reference_sumexp(case.data["logits"], variant.config)
        tol = tolerance(variant.packed)
        if np.isfinite(got) and abs(float(got) - ref) <= tol * ref:
            return None
        return f"s3 = {float(got):.9g}, expected {ref:.9g} within a relative {tol:.2g}"

    def book_kernel(self, variant, case):
        """The chapter's loop at the width fastest on the variant's machine: 1, 2 or 4
        packed vectors an iteration, one accumulator per float32 vector (two, four, eight
        workers: the recurrence never binds), in v48 … v55 (the final reduction's scratch
        starts at v56)."""
        from rslab.machine import assemble, simulate

        texts = [sumexp_program(variant.packed, case.data["m"],
                                model=SlotModel.from_config(variant.config), address=ROW,
                                result_reg="s3", workers=2 * u, packed_per_iter=u,
                                acc_registers=[f"v{48 + w}" for w in range(2 * u)])[0]
                 for u in BOOK_WIDTHS]
        cycles = [simulate(assemble(t), variant.config, vmem=case.vmem).cycles for t in texts]
        return texts[cycles.index(min(cycles))]

    def starting_kernel(self):
        body = sumexp_body(1, REGS, workers=1)
        setup = [f"vbcast {REGS['max']}, s8 ; vli {REGS['log2e']}, {f32_bits(LOG2E)}",
                 "vli v50, 0"]
        loop = runtime_loop(body, count_lines(1), {"acc0": "v50"}, [f"v{i}" for i in range(48)])
        return "\n".join(setup + loop + ["vred.add s3, v50", "halt"]) + "\n"


LAB = SumExpLab()
