"""The exponential race's multiplier on the core: ``R = rcp(E)``, and the score ``w·R``.

``E`` is the first layer of the noise (:func:`rslab.kernels.ops.noise.first_layer_ops`):
the scaled ``t = log2 c − fl(u·c)`` for the race ``scaled``, or the naive
``E = −fl(u)`` for ``naive`` (the same ops with :func:`naive_first_layer_constants`);
``R`` comes from the SFU's reciprocal, and the score is the linear weight times ``R``
(:mod:`rslab.numerics.race`), so no second log is needed.

Registers (``regs``): those of ``first_layer_ops`` (``scale``, ``log2c``).
"""

import numpy as np

from rslab.kernels.ops.noise import first_layer_ops
from rslab.schedule import Op


def race_multiplier_ops(k: int, uf: str, regs) -> tuple[list, str]:
    """(ops, R) of stream k from ``uf`` = u·2^25: the first layer ``E``, then ``rcp(E)``."""
    ops, e = first_layer_ops(k, uf, regs)
    return ops + [Op("vrcp", f"@R{k}", (e,)), Op("vpop", f"R{k}", (f"@R{k}",))], f"R{k}"


def race_score_op(k: int, w: str, multiplier: str) -> Op:
    """``sc{k} = w·R``."""
    return Op("vmul.f32", f"sc{k}", (w, multiplier))


def naive_first_layer_constants() -> dict:
    """The constants that make ``first_layer_ops`` the naive ``−fl(u)``: no scale (c = 1)."""
    return {"scale": np.float32(2.0**-25), "log2c": np.float32(0.0)}
