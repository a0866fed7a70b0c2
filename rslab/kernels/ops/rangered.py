"""The range-reduced second log on the core (``rangered``), as a value ``y`` with g = −y.

From the first layer's ``t`` (:func:`rslab.kernels.ops.noise.first_layer_ops`), the
integer ops of :mod:`rslab.numerics.range_reduction`: ``s = (b + 2^22) & 0xFF800000``,
``m = b − s + 2^30`` (the mantissa folded into [1.5, 3)), ``−e = (2^23 + 128) −
float(0x4B000000 | s >> 23)``, then ``y = fl(m) − (−e)``: the fast log never sees an
input near 1, so the plateau has no mass. ``a − b = −(b − a)`` exactly in float32, so
``x − y`` is the score ``x + g`` of the host's pipeline bit for bit.

Registers (``regs``): ``round``, ``expmask``, ``exp128``, ``magic`` (integer words) and
``magic128`` (float32), from :func:`rangered_constants`.
"""

import numpy as np

from rslab.numerics.range_reduction import (
    EXPONENT_128,
    EXPONENT_MASK,
    MAGIC_BITS,
    MAGIC_PLUS_128,
    ROUND_BIT,
)
from rslab.schedule import Op


def rangered_noise_ops(k: int, t: str, regs) -> tuple[list, str]:
    """(ops, y) of stream k's range-reduced second layer from the first layer's ``t``."""
    return [Op("vadd.u32", f"rb{k}", (t, regs["round"])),
            Op("vand", f"rs{k}", (f"rb{k}", regs["expmask"])),
            Op("vsub.u32", f"rd{k}", (t, f"rs{k}")),
            Op("vadd.u32", f"rm{k}", (f"rd{k}", regs["exp128"])),
            Op("vshr", f"rq{k}", (f"rs{k}", "23")),
            Op("vor", f"rf{k}", (f"rq{k}", regs["magic"])),
            Op("vsub.f32", f"rn{k}", (regs["magic128"], f"rf{k}")),
            Op("vlog2", f"@r2{k}", (f"rm{k}",)), Op("vpop", f"r2{k}", (f"@r2{k}",)),
            Op("vsub.f32", f"ry{k}", (f"r2{k}", f"rn{k}"))], f"ry{k}"


def rangered_constants() -> dict:
    """The words :func:`rangered_noise_ops` reads, by role (uint32, and the float32 magic)."""
    return {"round": np.uint32(ROUND_BIT), "expmask": np.uint32(EXPONENT_MASK),
            "exp128": np.uint32(EXPONENT_128), "magic": np.uint32(MAGIC_BITS),
            "magic128": np.float32(MAGIC_PLUS_128)}
