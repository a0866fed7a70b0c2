"""Lab ``rowmax``: the dataflow chapter's row max of a packed BF16 row.

A maximum does not depend on the order of its comparisons, so it is compared exactly. It
rests on one token, so a kernel is also checked on probe rows, the row with its maximum
moved (:data:`PROBES`). The book's kernel is
:func:`rslab.kernels.studies.rowmax.emit_rowmax` (two accumulators a packed vector, the
unroll that is fastest on the variant's machine).
"""

from __future__ import annotations

import numpy as np

from rslab.kernels.ops.rowmax import rowmax_body
from rslab.kernels.studies.rowmax import emit_rowmax
from rslab.labs.lab import LOGITS, ROW, Lab, count_lines, inputs_of, max_at, runtime_loop
from rslab.labs.variants import Variant
from rslab.machine.bf16 import BLOCK, LANES

PROBES = 3
"""Packed vectors drawn (by the variant's seed) for probe rows; each gets one with the
maximum in its low half and one in its high half, beside the first packed vector's two
halves and the row's last token."""


def probe_tokens(variant: Variant) -> list[int]:
    """The tokens a probe row moves the maximum to: the first of each half of the first
    packed vector, the last, and a low-half and a high-half token of each of :data:`PROBES`
    packed vectors drawn by the variant's seed."""
    rng = np.random.default_rng([variant.seed, 0x726F776D6178])  # "rowmax"
    tokens = [0, LANES, variant.vocab - 1]
    for j in rng.integers(0, variant.covered, PROBES):
        low, high = rng.integers(0, LANES, 2)
        tokens += [int(j) * BLOCK + int(low), int(j) * BLOCK + LANES + int(high)]
    return list(dict.fromkeys(t for t in tokens if t < variant.vocab))


class RowMaxLab(Lab):
    name = "rowmax"
    title = "the packed row max"
    chapter = "Dataflow"
    task = ("Compute m = the largest logit of the row (BF16 values read as float32), from "
            "the packed row.")
    inputs = (LOGITS,)
    results = {"s3": "m, float32"}
    per_packed = {"ld": 1, "valu": 3}
    bound_note = ("VALU: three ops a packed vector — the high halves' max can be taken on "
                  "the packed words without unpacking them (exercise dataflow-ex2), the low "
                  "halves need an unpack and a max; the book's kernel takes four.")
    comparison = ("s3 equal to the row's maximum (a max is the same in any order), on the "
                  "row and on probe rows, the row with its maximum moved to the first token "
                  "of each half of the first packed vector, to the last token, and to a "
                  f"low-half and a high-half token of each of {PROBES} packed vectors the "
                  "variant's seed draws.")

    def check(self, run, case, variant):
        got = np.float32(run.sreg_f32(3))
        want = np.float32(case.data["logits"].max())
        if got == want:
            return None
        return f"s3 = {float(got)!r}, expected {float(want)!r}"

    def probes(self, variant, case):
        return tuple(inputs_of(variant, dict(case.data, logits=max_at(case.data["logits"], t)))
                     for t in probe_tokens(variant))

    def book_kernel(self, variant, case):
        return emit_rowmax(variant.packed * BLOCK, variant.config, in_addr=ROW).text

    def starting_kernel(self):
        body, carried = rowmax_body(1, {"src": "s1"}, accumulate="chain")
        regs = dict(zip(carried, ["v50"], strict=True))
        loop = runtime_loop(body, count_lines(1), regs, [f"v{i}" for i in range(48)])
        return "\n".join(["vli v50, 0xff800000"] + loop + ["vred.max s3, v50", "halt"]) + "\n"


LAB = RowMaxLab()
