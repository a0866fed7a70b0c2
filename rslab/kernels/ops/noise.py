"""Base-2 Gumbel noise on the core, as a value ``y`` with ``g = −y`` (so a score is ``x − y``).

- :func:`divisor_noise_ops`, the Fast path's Div(k) pipeline with the SFU's fast log2
  (:mod:`rslab.numerics.gumbel`, ``div(k)``): from ``uf`` = u·2^25 (see
  :mod:`rslab.kernels.ops.uniform`), ``t = log2 c − fl(uf·(c·2^-25))`` — the same
  product as fl(u·c), since scaling by a power of two commutes with rounding for
  normal numbers — then ``y = fl(t·(1/k)) + log2 k``. For k = 8, ``t·⅛ = t/8`` exactly.
- :func:`precise_noise_ops`, the Exact path's ``y = log2.p(−log2.p u)``.

Registers (``regs``): Fast ``scale`` (c·2^-25), ``log2c``, ``inv_k`` (1/k), ``log2k``;
Exact ``zero``.
"""

import numpy as np

from rslab.numerics.gumbel import first_layer_scale
from rslab.schedule import Op


def first_layer_ops(k: int, uf: str, regs) -> tuple[list, str]:
    """(ops, t) of stream k's scaled first layer ``t = log2 c − fl(uf·(c·2^-25))``; with
    ``scale`` = 2^-25 and ``log2c`` = 0 it is the naive ``t = −fl(u)``."""
    return [Op("vmul.f32", f"gs{k}", (uf, regs["scale"])), Op("vlog2", f"@g1{k}", (f"gs{k}",)),
            Op("vpop", f"g1{k}", (f"@g1{k}",)), Op("vsub.f32", f"gt{k}", (regs["log2c"],
                                                                         f"g1{k}"))], f"gt{k}"


def divisor_noise_ops(k: int, uf: str, regs) -> tuple[list, str]:
    """(ops, y) of the Div(k) noise of stream k from ``uf`` = u·2^25."""
    return first_layer_ops(k, uf, regs)[0] + [
        Op("vmul.f32", f"gk{k}", (f"gt{k}", regs["inv_k"])),
        Op("vlog2", f"@g2{k}", (f"gk{k}",)), Op("vpop", f"g2{k}", (f"@g2{k}",)),
        Op("vadd.f32", f"gy{k}", (f"g2{k}", regs["log2k"]))], f"gy{k}"


def precise_noise_ops(k: int, u: str, regs) -> tuple[list, str]:
    """(ops, y) of the Exact path's noise of stream k from the uniform ``u``."""
    return [Op("vlog2.p", f"@g1{k}", (u,)), Op("vpop", f"g1{k}", (f"@g1{k}",)),
            Op("vsub.f32", f"gt{k}", (regs["zero"], f"g1{k}")),
            Op("vlog2.p", f"@g2{k}", (f"gt{k}",)), Op("vpop", f"g2{k}", (f"@g2{k}",))], f"g2{k}"


def divisor_noise_constants(log2, divisor: float = 8.0) -> dict:
    """The float32 constants :func:`divisor_noise_ops` reads, by role, for the fast log ``log2``
    (its first-layer scale c, :func:`rslab.numerics.gumbel.first_layer_scale`) and divisor k."""
    c = np.float32(first_layer_scale(log2))
    return {"scale": c * np.float32(2.0**-25), "log2c": np.float32(np.log2(np.float64(c))),
            "inv_k": np.float32(1.0 / divisor), "log2k": np.float32(np.log2(divisor))}
