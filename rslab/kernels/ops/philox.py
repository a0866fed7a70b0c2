"""Philox4x32-10 on the VALU (the Exact path's generator, :func:`rslab.numerics.rng.philox4x32`).

Each round: two ``mulhi``/``mullo`` pairs by the Philox multipliers and four xors
with the round keys, which the caller has stored as broadcast vectors in VMEM
(k0 of rounds 0..9, then k1) at ``regs['keys']``; ``regs['m0']``, ``regs['m1']`` hold
the multipliers.
"""

from rslab.kernels.ops.rowmax import PACKED_BYTES
from rslab.schedule import Addr, Op

ROUNDS = 10


def philox_ops(counter, regs, tag: str = "") -> tuple[list, list]:
    """(ops, the four output words) of Philox4x32-10 on the counter words ``counter``."""
    ops = []
    x = list(counter)
    for r in range(ROUNDS):
        k0, k1 = f"pk0_{r}{tag}", f"pk1_{r}{tag}"
        ops += [Op("vld", k0, addr=Addr(regs["keys"], r * PACKED_BYTES, 0)),
                Op("vld", k1, addr=Addr(regs["keys"], (ROUNDS + r) * PACKED_BYTES, 0))]
        n = f"{r}{tag}"
        m0, m1 = regs["m0"], regs["m1"]
        ops += [Op("vmulhi.u32", f"ph0_{n}", (m0, x[0])), Op("vmullo.u32", f"pl0_{n}", (m0, x[0])),
                Op("vmulhi.u32", f"ph1_{n}", (m1, x[2])), Op("vmullo.u32", f"pl1_{n}", (m1, x[2])),
                Op("vxor", f"pa_{n}", (f"ph1_{n}", x[1])), Op("vxor", f"py0_{n}", (f"pa_{n}", k0)),
                Op("vxor", f"pb_{n}", (f"ph0_{n}", x[3])), Op("vxor", f"py2_{n}", (f"pb_{n}", k1))]
        x = [f"py0_{n}", f"pl1_{n}", f"py2_{n}", f"pl0_{n}"]
    return ops, x
