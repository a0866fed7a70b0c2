"""One inverse-CDF row of the sampler (residual or bonus): the pass, the tail, the token.

The row's pass (:func:`rslab.kernels.ops.invcdf.pass_body`, two packed vectors per
iteration) stores every block's sum: software-pipelined, one iteration late, so its
four last sums stay in the carried scalar registers ``BLOCK_SUMS`` until the tail
stores them; in a loop that is not, at once. The weights come from where the
plan leaves the row: the residual loads the e the sum-exp pass stored (or the landed
halves, or the packed row), the bonus reads the halves its row max landed. An odd
row reads the buffers' padding (−inf logits, q = 0), whose weights are 0.

The tail (:func:`~rslab.kernels.ops.invcdf.sums_lines`, then
:func:`~rslab.kernels.ops.invcdf.pick_lines`) runs once per row as straight-line
code. The row's total Σ is left in ``S_T[0]``: a row with Σ = 0 has no weight the
draw can see, skips the pick and leaves the token to the empty-residual fallback,
which tests ``S_T[0]`` against ``empty_bits`` (0). The inverse CDF has no score: the
``score`` diagnostic is not stored.
"""

from __future__ import annotations

from rslab.kernels.ops.invcdf import (
    PACKED_PER_ITER,
    PASS_WORKERS,
    TOKEN,
    TOTAL,
    pass_body,
    pick_lines,
    sums_lines,
)
from rslab.kernels.sampler.registers import REGS, S_FB, S_KEY, S_LB, S_QB, S_T, S_X

BLOCK_SUMS = ("s20", "s21", "s22", "s23")
"""The pass's carried block sums (scalar registers the glue code does not use)."""
S_SUMS = S_X
"""The block-sum row's base: the draft token's register is free once the acceptance
check is done."""


class InvcdfRow:
    """The residual (``kind="residual"``) or bonus row of request ``r`` at position ``s``."""

    empty_bits = 0
    block_sums = True
    """A pass of block sums, two packed vectors per iteration (an odd row reads the
    padding)."""

    def __init__(self, builder, kind: str, r: int, s: int):
        self.b, self.kind, self.r, self.s = builder, kind, r, s
        self.u = PACKED_PER_ITER
        self.source = self._source()
        late = builder.plan.final_style == "pipelined"
        self.body = pass_body(kind, REGS | {"sums": S_SUMS}, self.source, late)
        self.carried = dict(zip((f"b{k}" for k in range(PASS_WORKERS)), BLOCK_SUMS,
                                strict=True))
        self.pool = builder.loop_pool

    def _source(self) -> str:
        plan = self.b.plan
        if self.kind == "residual" and plan.store_e:
            return "e"
        return "landed" if plan.land_fp32 else "packed"

    def setup(self, purpose: int):
        """The key, the block sums' base and their carried registers."""
        p, L = self.b.p, self.b.L
        p.steps(f"sld {S_KEY}, [s0 + {L.vm_key(self.r, self.s, purpose)}]",
                f"sli {S_SUMS}, {L.invcdf_layout(0).sums}",
                *[f"sli {reg}, 0" for reg in BLOCK_SUMS])

    def cycles_per_packed(self) -> float:
        code = self.b.loop_of(self.body, self.u, self.b.plan.final_style, self.carried,
                              pool=self.pool)
        return (code.ii or code.body_bundles) / self.u

    def loop(self, n_packed: int, label: str, gates=None):
        """The pass over ``n_packed`` packed vectors (an odd count reads the padding)."""
        self.b.emit(self.body, n_packed, self.u, self.b.plan.final_style, self.carried, label,
                    pad=True, pool=self.pool, gates=gates)

    def bases(self, buf: int) -> dict:
        L = self.b.L
        out = {S_LB: buf} if self.source == "packed" else {}
        if self.kind == "residual":
            out[S_QB] = L.vm_q
        if self.source != "packed":
            out[S_FB] = L.vm_fp32
        return out

    def finish(self, slot: int, buf: int):
        """The tail: Σ into ``S_T[0]``, then, if Σ > 0, the token into ``tokens[r, slot]``."""
        p, L = self.b.p, self.b.L
        layout = L.invcdf_layout(buf)
        tag = f"_{len(p.lines)}"
        empty = f"invcdf_empty{tag}"
        p.lines += sums_lines(layout, BLOCK_SUMS)
        p.lines += [f"smov {S_T[0]}, {TOTAL}", f"bz {TOTAL}, {empty}"]
        p.lines += pick_lines(self.kind, self.b.draw[1], layout, REGS, tag)
        p.lines += [f"sst {TOKEN}, [s0 + {L.vm_tokens + 4 * (self.r * (L.S + 1) + slot)}]",
                    f"{empty}:"]
