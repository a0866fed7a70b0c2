"""A Fast draw's noise value for one stream: what its score combines with the weight.

``draw_noise_ops(method, noise, k, uf, regs)`` from ``uf`` = u·2^25
(:mod:`rslab.kernels.ops.uniform`): Gumbel-max's ``y`` (g = −y) by the Div(k) pipeline
(:func:`rslab.kernels.ops.noise.divisor_noise_ops`) or, for ``rangered``, the same first
layer and the range-reduced second log (:mod:`rslab.kernels.ops.rangered`); the race's
``R = rcp(E)`` (:mod:`rslab.kernels.ops.race`).

Registers (``regs``): those of the pieces it uses.
"""

from rslab.kernels.ops.noise import divisor_noise_ops, first_layer_ops
from rslab.kernels.ops.race import race_multiplier_ops
from rslab.kernels.ops.rangered import rangered_noise_ops
from rslab.numerics.methods import draw


def draw_noise_ops(method: str, noise: str, k: int, uf: str, regs) -> tuple[list, str]:
    """(ops, value) of stream k: ``y`` for Gumbel-max, ``R`` for the race."""
    if draw(method).score == "mul":
        return race_multiplier_ops(k, uf, regs)
    if noise == "rangered":
        first, t = first_layer_ops(k, uf, regs)
        ops, y = rangered_noise_ops(k, t, regs)
        return first + ops, y
    return divisor_noise_ops(k, uf, regs)
