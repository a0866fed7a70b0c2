"""The uniform u ∈ (0, 1) from a 32-bit RNG word, on the VALU, bit for bit as the host makes it.

The host's ``uniform_from_words`` is ``u = float32_rtz((w >> 8) + ½)·2^-24``
(:mod:`rslab.numerics.rng`). The core has no rounding-mode control, so the
kernel builds the same value exactly with integer ops: ``d = ((w >> 7) | 1) ^ (w >> 31)``
(bit 0 cleared when ``w >> 8 ≥ 2^23``, where float32 cannot hold the half),
then ``float(d)`` is exact and ``u = float(d)·2^-25``.

Registers (``regs``): ``one`` (1 in every lane), ``2^-25`` (the float32 2^-25).
"""

from rslab.schedule import Op


def uniform_ops(k: int, word: str, regs, *, scaled: bool = True) -> tuple[list, str]:
    """(ops, name) of stream k's uniform from the value ``word``.

    ``scaled=False`` stops at ``uf{k}`` = u·2^25 (an exact integer in float32), which a
    following multiply can fold the 2^-25 into.
    """
    ops = [Op("vshr", f"ua{k}", (word, "7")), Op("vor", f"ub{k}", (f"ua{k}", regs["one"])),
           Op("vshr", f"uc{k}", (word, "31")), Op("vxor", f"ud{k}", (f"ub{k}", f"uc{k}")),
           Op("vcvt.u2f", f"uf{k}", (f"ud{k}",))]
    if not scaled:
        return ops, f"uf{k}"
    return ops + [Op("vmul.f32", f"u{k}", (f"uf{k}", regs["2^-25"]))], f"u{k}"
