"""Lab ``fixedbonus``: the bonus row of the recommended draw (``numerics.methods.RECOMMENDED``,
the fixed-point inverse CDF): its pass, the O(V) part of the row.

The kernel stores every block's float32 sum of weights ``w = exp2((l − m)·LOG2E)``, each
summed by ``vred.add`` over its 128 lanes (the cross-lane unit's fixed pairwise tree), so
the sums are compared bit for bit. The grader then runs the row's tail, the book's exact
fixed-point tail (:mod:`rslab.kernels.ops.fixed_tail`, the same for every submission, not
counted in its cycles), on the sums the kernel left, and compares the token with the
reference's recommended draw (:func:`rslab.kernels.studies.draw_table.reference_token`).
The book's kernel is the inverse CDF's pass (:mod:`rslab.kernels.studies.invcdf_row`:
two packed vectors an iteration, each sum stored one iteration late, modulo-scheduled for
the variant's machine).
"""

from __future__ import annotations

import numpy as np

from rslab.kernels.loops.pack import pack_lines
from rslab.kernels.ops.fixed_tail import VECTORS, Rows, block_lines, lane_lines, row_max_lines
from rslab.kernels.ops.invcdf import (
    PACKED_PER_ITER,
    TOKEN,
    last_sums_lines,
    pass_body,
    scratch_bytes,
    scratch_layout,
)
from rslab.kernels.studies.draw_table import reference_token
from rslab.kernels.studies.invcdf_row import BLOCK_SUM_REGS, PASS_REGS, pass_loop, setup_lines
from rslab.labs.lab import (
    LOGITS,
    P_MAX,
    POSITION,
    REQUEST,
    ROW,
    SUMROW,
    SUMS,
    SUMS_START,
    Lab,
    Q,
    count_lines,
    runtime_loop,
)
from rslab.machine.asm import f32_bits
from rslab.machine.bf16 import LANES
from rslab.machine.units import tree_sum
from rslab.numerics.fastlog import LOG2E
from rslab.numerics.methods import RECOMMENDED
from rslab.randomness import BONUS
from rslab.schedule import SlotModel

TAIL_REGS = {"zero": "v60", "r": "v61", "m": "v62", "log2e": "v63"}


def block_sums(case, packed: int) -> np.ndarray:
    """The reference's block sums (float32 [2P]): the weights e, 0 past V, each block's 128
    summed by the cross-lane unit's tree."""
    e = np.zeros(packed * 2 * LANES, dtype=np.float32)
    w = np.asarray(case.data["bonus"], dtype=np.float32).reshape(-1)
    e[:w.size] = w
    return np.array([tree_sum(b) for b in e.reshape(-1, LANES)], dtype=np.float32)


def tail_program(case) -> str:
    """The row's tail for the contract's layout (every block of the longest row; the blocks
    past the row's are 0), from the stored sums to the token in ``TOKEN``."""
    layout = scratch_layout(P_MAX, ROW, Q, SUMS_START)
    rows = Rows(SUMS_START + scratch_bytes(P_MAX))
    v = VECTORS | TAIL_REGS
    d = case.data
    lines = [f"sli s3, {d['key']}", f"sli s4, {f32_bits(d['m'])}", f"vbcast {v['m']}, s4",
             f"vli {v['log2e']}, {f32_bits(LOG2E)}", f"vli {v['zero']}, 0"]
    lines += pack_lines(row_max_lines(layout, v))
    lines += pack_lines(block_lines(layout, rows, v, "_tail"))
    lines += pack_lines(lane_lines("bonus", layout, rows, v, "_tail"))
    return "\n".join(lines + ["halt"]) + "\n"


class FixedBonusLab(Lab):
    name = "fixedbonus"
    title = "the recommended draw's bonus row (its pass)"
    chapter = "Beyond the note"
    task = ("The bonus row drawn by the recommended draw, the fixed-point inverse CDF "
            f"{RECOMMENDED}: write its pass. Store each block's sum of weights "
            "w = exp2((l − m)·LOG2E) (vsub.f32, vmul.f32 by LOG2E, vexp2: the SFU's fast "
            "exp2), block j = tokens 128j … 128j + 127, summed by vred.add over its 128 lanes "
            "(so the sums are fixed bit for bit), at SUMS + 4j for every j < 2P. The grader "
            "then runs the row's tail — the book's exact fixed-point tail, the same for "
            "everyone and not counted in your cycles — on your sums, and the token must be "
            "the reference's.")
    inputs = (LOGITS,)
    outputs = (SUMROW,)
    results = {}
    live = ("s3", "s8", "s10")
    purpose = BONUS
    per_packed = {"ld": 1, "valu": 8, "sfu": 2, "xlu": 2}
    bound_note = ("VALU: two unpacks, two subtracts, two multiplies and two pops a packed "
                  "vector; XLU: a vred.add a block.")
    comparison = ("the 2P block sums bit for bit; then the token of the book's tail on them "
                  "equal to the reference's.")

    def check(self, run, case, variant):
        from rslab.machine import assemble, simulate

        want = block_sums(case, variant.packed)
        got = run.read_vmem(SUMS, want.size, np.float32)
        bad = np.flatnonzero(got.view(np.uint32) != want.view(np.uint32))
        if bad.size:
            j = int(bad[0])
            return (f"block sum {j} (tokens {LANES * j}–{LANES * j + LANES - 1}) is "
                    f"{float(got[j])!r}, expected {float(want[j])!r} ({bad.size} of "
                    f"{want.size} differ)")
        tail = simulate(assemble(tail_program(case)), vmem={0: run.vmem})
        token = int(tail.sreg(int(TOKEN[1:])))
        d = case.data
        want_token = reference_token("bonus", *RECOMMENDED, d, d["seed"], REQUEST, POSITION)
        if token != want_token:
            return f"the tail's token on your sums is {token}, expected {want_token}"
        return None

    def book_kernel(self, variant, case):
        layout = scratch_layout(variant.packed, ROW, Q, SUMS_START)
        d = case.data
        loop = pass_loop("bonus", variant.packed, SlotModel.from_config(variant.config))
        lines = setup_lines(layout, m=d["m"], r=d["r"], key=d["key"])
        tail = last_sums_lines(layout, BLOCK_SUM_REGS)
        return "\n".join(lines) + "\n" + loop.text + "\n".join(tail + ["halt"]) + "\n"

    def starting_kernel(self):
        body = pass_body("bonus", PASS_REGS, "packed", late=False)
        setup = [f"vbcast {PASS_REGS['max']}, s8", f"vli {PASS_REGS['log2e']}, {f32_bits(LOG2E)}"]
        sums = {f"b{k}": reg for k, reg in enumerate(BLOCK_SUM_REGS)}
        loop = runtime_loop(body, count_lines(PACKED_PER_ITER), sums,
                            [f"v{i}" for i in range(40)])
        return "\n".join(setup + loop + ["halt"]) + "\n"


LAB = FixedBonusLab()
if SUMS != scratch_layout(1, ROW, Q, SUMS_START).sums:
    raise AssertionError("the contract's SUMS must be where the pass stores its sums")
