"""Lab ``residual``: a residual row drawn by Gumbel-max with fewer VALU ops.

The row's token by Gumbel-max with the Div8 noise, as the sampler draws it: weight
``w = max(e·r − q, 0)``, score ``fl(log2 w) − y`` with the noise ``y`` of the token's
hardware-RNG word (:mod:`rslab.kernels.studies.draw_loops`). The sum-exp pass has stored
every token's ``e``: a kernel that loads it skips the unpack, the subtract, the multiply,
the exp2 and its pop of every token. The reference's token is
:func:`rslab.kernels.studies.draw_table.reference_token` (the framework sampler); the
winning score is that of :func:`rslab.kernels.studies.gumbel_loop.gumbel_reference` (the
same float32 ops in NumPy), bit for bit. The starting kernel reads the logits (the study's
row, one op per bundle); the book's kernel loads e (``draw_program(..., source="e")``,
modulo-scheduled for the variant's machine).
"""

from __future__ import annotations

import numpy as np

from rslab.kernels.studies.argmax_loop import init_text, reduce_text, token_from_float
from rslab.kernels.studies.draw_loops import REGS, STREAMS, constants, draw_body, draw_program
from rslab.kernels.studies.draw_table import reference_token
from rslab.kernels.studies.gumbel_loop import gumbel_reference
from rslab.labs.lab import (
    EROW,
    LOGITS,
    POSITION,
    QROW,
    REQUEST,
    ROW,
    E,
    Lab,
    Q,
    count_lines,
    runtime_loop,
)
from rslab.machine.asm import constant_word
from rslab.machine.bf16 import LANES
from rslab.numerics.fastlog import DEFAULT_FASTLOG2
from rslab.randomness import RESIDUAL

DRAW = ("gumbel", "div8")


def reference(case) -> tuple[int, np.float32]:
    """(token, winning score) of the row: the framework's token, the study's score."""
    d = case.data
    token = reference_token("residual", *DRAW, d, d["seed"], REQUEST, POSITION)
    _, score = gumbel_reference("residual", d["logits"], q=d["q"], m=d["m"], r=d["r"],
                                key=d["key"])
    return token, np.float32(score)


class ResidualLab(Lab):
    name = "residual"
    title = "a residual row with fewer VALU ops"
    chapter = "Results"
    task = ("Draw the residual row's token by Gumbel-max with the Div8 noise, as the sampler "
            "does: w = max(e·r − q, 0) with e = exp2((l − m)·LOG2E), score = fl(log2 w) − y "
            "(vlog2, the SFU's fast log2; fl(0) = −inf) with y the Div8 noise of the "
            "token's word vrand(key = s3, counter = token) (the uniform from the word's top "
            "bits, t = log2 c − fl(u·c), y = fl(t·⅛) + 3: rslab.kernels.ops.uniform and "
            "rslab.kernels.ops.noise), the token of the largest score (ties: the lowest). "
            "The sum-exp pass has stored every token's e (region e): use it, and the row "
            "costs fewer VALU ops than one computed from the logits.")
    inputs = (LOGITS, QROW, EROW)
    results = {"s4": "the winning score, float32 (bit for bit)",
               "s5": "the token, as a float32 (the book's reduction leaves it so)"}
    live = ("s3", "s8", "s9", "s10")
    purpose = RESIDUAL
    per_packed = {"ld": 3, "sfu": 6}
    bound_note = ("Loads: the two q vectors and at least one for the weights; SFU: per float32 "
                  "vector the log2 of the weight and the Div8 noise's two logs. The VALU work "
                  "is the lab's subject: the bound leaves it out.")
    comparison = ("s5 the reference's token and s4 its score, bit for bit (the contract fixes "
                  "every float32 op of the score).")

    def check(self, run, case, variant):
        token, score = reference(case)
        got_token, got_score = token_from_float(run.sreg_f32(5)), np.float32(run.sreg_f32(4))
        if got_token != token:
            return f"token s5 = {got_token}, expected {token}"
        if got_score.view(np.uint32) != score.view(np.uint32):
            return f"score s4 = {float(got_score)!r}, expected {float(score)!r}"
        return None

    def book_kernel(self, variant, case):
        d = case.data
        return draw_program("residual", *DRAW, variant.packed, m=d["m"], r=d["r"], key=d["key"],
                            config=variant.config, q_addr=Q, source="e", logits_addr=ROW,
                            e_addr=E).text

    def starting_kernel(self):
        carried = {f"{v}{k}": f"v{40 + 3 * k + j}" for k in range(STREAMS)
                   for j, v in enumerate(("best", "idx", "i"))}
        consts = constants(*DRAW, DEFAULT_FASTLOG2)
        setup = [f"vbcast {REGS['max']}, s8", f"vbcast {REGS['rinv']}, s9"]
        setup += [f"vli {REGS[role]}, {constant_word(value)}" for role, value in consts.items()]
        setup += init_text(carried, STREAMS, [LANES * k for k in range(STREAMS)],
                           iota_reg="v62", tmp_reg="v61")
        pool = [f"v{i}" for i in range(32)]
        loop = runtime_loop(draw_body("residual", *DRAW), count_lines(1), carried, pool)
        tail = reduce_text([carried[f"best{k}"] for k in range(STREAMS)],
                           [carried[f"idx{k}"] for k in range(STREAMS)],
                           scratch=tuple(f"v{i}" for i in range(32, 40)))
        return "\n".join(setup + loop + tail + ["halt"]) + "\n"


LAB = ResidualLab()
