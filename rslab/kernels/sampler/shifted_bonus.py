"""The alternative the sampler did not take: a shift-invariant bonus row, and what it costs.

The bonus row scores ``l·LOG2E + g`` on raw logits (:mod:`rslab.reference`), which is
shift-invariant only while float32 resolves the score, so the reference rejects bonus rows
whose max logit exceeds ``BONUS_LOGIT_LIMIT``. The alternative scores
``(l − m)·LOG2E + g``: the bonus row then needs its own row max ``m`` (one more pass over
the row) and one more VALU op per stream. This module builds that variant of the optimised
program, runs it, checks its tokens against the reference on the logits shifted by the row
max (the same float32 operations), and measures its cycles beside the kernel's.
"""

from __future__ import annotations

import numpy as np

from rslab.kernels.sampler.final_rows import FinalRow
from rslab.kernels.sampler.layout import SamplerLayout
from rslab.kernels.sampler.plans import OPTIMISED
from rslab.kernels.sampler.program import BuiltKernel, _Builder
from rslab.kernels.sampler.registers import REGS, V_LOG2E
from rslab.kernels.sampler.run import run_sampler
from rslab.reference import rejection_sample
from rslab.schedule import Op, SlotModel


def shifted_bonus_body(body: list) -> list:
    """The bonus body with each ``xs = l·LOG2E`` replaced by ``z = l − m; xs = z·LOG2E``."""
    out = []
    for op in body:
        if op.opcode == "vmul.f32" and op.srcs[1:] == (V_LOG2E,) and op.dst.startswith("xs"):
            z = "zs" + op.dst[2:]
            out += [Op("vsub.f32", z, (op.srcs[0], REGS["max"])),
                    Op("vmul.f32", op.dst, (z, V_LOG2E))]
        else:
            out.append(op)
    return out


class _ShiftedBonusRow(FinalRow):
    """The bonus row scoring ``(l − m)·LOG2E + g``, in its loop and in its recompute."""

    def rewrite(self, body: list) -> list:
        return shifted_bonus_body(body)


class _ShiftedBonusBuilder(_Builder):
    """The optimised program, with the bonus row's max computed before its Gumbel-argmax."""

    def bonus_row(self, r, buf) -> FinalRow:
        self.row_max(buf, [(0, self.L.n_packed, None)])
        self.p.phase("bonus")
        return _ShiftedBonusRow(self, "bonus", r, self.L.S)


def build_shifted_kernel(layout: SamplerLayout, path: str = "fast") -> BuiltKernel:
    """The optimised sampler program with a shift-invariant bonus row."""
    return _ShiftedBonusBuilder(layout, path, OPTIMISED, SlotModel()).build()


def bonus_shifted_by_max(inputs):
    """The inputs with each bonus row replaced by ``l − max(l)`` (float32): the reference's
    raw-logit bonus on them is the shift-invariant bonus on the original inputs."""
    l, q, ids = inputs
    l = l.copy()
    bonus = l[:, -1]
    l[:, -1] = bonus - bonus.max(axis=-1, keepdims=True)
    return type(inputs)(l, q, ids)


def shift_invariance_cost(inputs, path: str = "fast", *, seed: int = 0) -> dict:
    """Cycles of the optimised kernel and of its shift-invariant variant on ``inputs``, the
    bonus loop's II in each, and whether the variant's tokens equal the shift-invariant
    reference's (the reference on :func:`bonus_shifted_by_max` of the inputs)."""
    R, S1, V = inputs[0].shape
    layout = SamplerLayout(R, S1 - 1, V)
    kernel = run_sampler(inputs, path, seed=seed, compare=False)
    variant = run_sampler(inputs, path, seed=seed, compare=False,
                          kernel=build_shifted_kernel(layout, path))
    reference = rejection_sample(*bonus_shifted_by_max(inputs), path=path, seed=seed)
    extra = variant.cycles - kernel.cycles
    return {"kernel_cycles": int(kernel.cycles), "shifted_cycles": int(variant.cycles),
            "extra_cycles": int(extra), "extra_pct": 100.0 * extra / kernel.cycles,
            "extra_per_request": extra / R,
            "bonus_ii": kernel.loops["loop_bonus"]["ii"],
            "shifted_bonus_ii": variant.loops["loop_bonus"]["ii"],
            "tokens_match": bool(np.array_equal(variant.tokens, reference.tokens)
                                 and np.array_equal(variant.outputs["num_accepted"],
                                                    reference.num_accepted))}
