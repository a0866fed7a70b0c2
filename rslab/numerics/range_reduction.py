"""The second log without its plateau: exponent-based range reduction (``rangered``).

The fast log returns exactly 0 on ``[0.988, 1.012]`` (its zero plateau). Div8 and
Div14 move the plateau to ``t ≈ 8`` or ``t ≈ 14``; range reduction removes it:
write ``t = 2^e · m`` with the mantissa folded into ``m ∈ [1.5, 3)``, so the
fast log only ever sees ``m`` and ``log2 m ∈ [0.58, 1.58]`` is never near 0.
Then ``log2 t = e + fl(m)`` and ``g = −log2 t = (−e) − fl(m)``.

Integer ops on the bits ``b`` of a positive normal float32 ``t`` (as the kernel
issues them, nine VALU ops with the pop, against Div8's three):

* ``s = (b + 2^22) & 0xFF800000``: the exponent field ``q = E_b + bit22`` at bit 23
  (``E_b`` the biased exponent, bit 22 the mantissa's top bit, i.e. ``M ≥ 1.5``);
* ``m = b − s + 2^30``: exponent field ``128 − bit22``, so ``m = M`` if ``M ≥ 1.5``
  and ``m = 2M`` otherwise, and ``t = 2^(q − 128) · m``;
* ``−e = 128 − q = (2^23 + 128) − float(0x4B000000 | q)`` (the magic-number
  conversion of a small integer, exact);
* ``g = (−e) − fl(m)`` in float32.
"""

from __future__ import annotations

import numpy as np

from rslab.numerics.fastlog import FastLog2

ROUND_BIT = np.uint32(1 << 22)
EXPONENT_MASK = np.uint32(0xFF800000)
EXPONENT_128 = np.uint32(128 << 23)
MAGIC_BITS = np.uint32(0x4B000000)
MAGIC_PLUS_128 = np.float32(2.0**23 + 128)


def range_reduce(t) -> tuple[np.ndarray, np.ndarray]:
    """``(m, −e)`` (float32) with ``t = 2^e · m``, ``m ∈ [1.5, 3)``, for positive normal ``t``."""
    b = np.asarray(t, dtype=np.float32).view(np.uint32)
    with np.errstate(over="ignore"):
        s = (b + ROUND_BIT) & EXPONENT_MASK
        m = ((b - s) + EXPONENT_128).view(np.float32)
    neg_e = MAGIC_PLUS_128 - ((s >> np.uint32(23)) | MAGIC_BITS).view(np.float32)
    return m, neg_e


def rangered_parts(t, log2: FastLog2):
    """The range-reduced second layer from the first layer's ``t``: ``(m, l2, g)`` with
    ``l2 = fl(m)`` and ``g = (−e) − l2``, all float32."""
    m, neg_e = range_reduce(t)
    l2 = log2(m)
    return m, l2, neg_e - l2
