"""One fixed-point inverse-CDF row of the sampler (``method="fixed"``): the inverse CDF's
pass, then the exact tail of :mod:`rslab.kernels.ops.fixed_tail`
(:mod:`rslab.numerics.fixed_invcdf`).

The pass is the inverse CDF's (:class:`~rslab.kernels.sampler.invcdf_row.InvcdfRow`):
it stores every block's float32 sum. The tail stores the pass's last sums, finds the largest
block sum M (a row with M = 0 is empty: ``S_T[0]`` = 0, the token is left to the
empty-residual fallback), then the block and the lane, and stores the token.
"""

from __future__ import annotations

from rslab.kernels.loops.pack import pack_lines
from rslab.kernels.ops.fixed_tail import (
    VECTORS,
    Rows,
    block_lines,
    lane_lines,
    row_max_lines,
    scratch_bytes,
)
from rslab.kernels.ops.invcdf import last_sums_lines
from rslab.kernels.sampler.invcdf_row import BLOCK_SUMS, InvcdfRow
from rslab.kernels.sampler.layout import FIXED_BYTES
from rslab.kernels.sampler.registers import REGS, S_T

if scratch_bytes() > FIXED_BYTES:
    raise AssertionError("layout.FIXED_BYTES is smaller than the fixed-point tail's rows")


class FixedRow(InvcdfRow):
    """The residual (``kind="residual"``) or bonus row of request ``r`` at position ``s``."""

    def finish(self, slot: int, buf: int):
        """The tail: ``S_T[0]`` = the largest block sum, then, if it is > 0, the token into
        ``tokens[r, slot]``."""
        p, L = self.b.p, self.b.L
        layout, base = L.invcdf_layout(buf), L.vm_fixed
        tag = f"_{len(p.lines)}"
        empty = f"fixed_empty{tag}"
        v = VECTORS | {"zero": REGS["zero"], "m": REGS["max"], "r": REGS["rinv"],
                       "log2e": REGS["log2e"]}
        rows = Rows(base)
        p.lines += pack_lines(last_sums_lines(layout, BLOCK_SUMS) + row_max_lines(layout, v))
        p.lines += [f"smov {S_T[0]}, s24", f"bz s24, {empty}"]
        p.lines += pack_lines(block_lines(layout, rows, v, tag))
        p.lines += pack_lines(lane_lines(self.kind, layout, rows, v, tag))
        p.lines += self.b.token_lines(self.r, slot) + [f"{empty}:"]
