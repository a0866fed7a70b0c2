"""The draws the full sampler program takes, and what each needs on the core.

The Fast path's residual and bonus rows draw with any of ``SAMPLER_DRAWS``
(``rejection_sample(..., method=, noise=)`` of :mod:`rslab.reference` gives the same
tokens): Gumbel-max with the Div8 or Div32 noise or the range-reduced second log,
the exponential race with the scaled first layer, the inverse CDF with each of
its uniforms, and the inverse CDF over exact fixed-point sums (``fixed``). Not here:
Div14 (``t/14`` needs a divide, and ``t·fl(1/14)`` is another noise) and the naive
race (a plateau hit makes ``rcp(E)`` infinite, and ``0·inf`` a NaN score the block
argmax would keep). The Exact path draws with Gumbel-max only.

Per draw: the constants the rows read (role → value, :func:`draw_constants`), the
registers those roles live in (:data:`DRAW_REGS`: the range reduction takes the
divisor's two and three of the Fast loops' spare registers, :func:`taken_registers`),
and whether the bonus row needs its row max first (the race and the inverse CDF draw
from the linear weights ``exp2((l − m)·LOG2E)``).
"""

from __future__ import annotations

from rslab.kernels.ops.noise import divisor_noise_constants
from rslab.kernels.ops.rangered import rangered_constants
from rslab.kernels.sampler.registers import (
    LOOP_POOL,
    REGS,
    V_C1,
    V_EIGHTH,
    V_PM0,
    V_PM1,
    V_THREE,
)
from rslab.numerics.fastlog import DEFAULT_FASTLOG2
from rslab.numerics.gumbel import parse_divisor
from rslab.numerics.methods import check_method, resolve_noise

SAMPLER_DRAWS = (("gumbel", "div8"), ("gumbel", "div32"), ("gumbel", "rangered"),
                 ("race", "scaled"), ("invcdf", "u24"), ("invcdf", "wide"), ("invcdf", "wide48"),
                 ("fixed", "u96"))
"""(method, noise) of every draw the Fast path's sampler program takes."""
DEFAULT_DRAW = ("gumbel", "div8")
DRAW_REGS = REGS | {"round": V_EIGHTH, "expmask": V_THREE, "exp128": V_PM0, "magic": V_PM1,
                    "magic128": V_C1}
"""Role → register for the rows' bodies, with the range reduction's constants."""


def sampler_draw(path: str, method="gumbel", noise=None) -> tuple[str, str]:
    """``(method, noise)`` of a draw the sampler program takes on ``path``, else a
    ``ValueError`` naming the argument."""
    method = check_method(method)
    if path == "exact":
        if method != "gumbel":
            raise ValueError(f"method: the 'exact' path draws with 'gumbel' only, "
                             f"got {method!r}")
        return DEFAULT_DRAW
    noise = resolve_noise(method, noise)
    if (method, noise) not in SAMPLER_DRAWS:
        raise ValueError(f"noise: the sampler program draws with one of {SAMPLER_DRAWS}, "
                         f"got {(method, noise)!r}")
    return method, noise


PASS_METHODS = ("invcdf", "fixed")
"""Draws whose rows are a pass of block sums and a tail (two packed vectors per iteration,
reading one past an odd row)."""


def needs_row_max(draw) -> bool:
    """Whether the bonus row needs the row max first (its weights are linear)."""
    return draw[0] in ("race", *PASS_METHODS)


def draw_constants(draw) -> dict:
    """Role → float32 or uint32 constant the Fast path's rows read for ``draw``."""
    method, noise = draw
    if method in PASS_METHODS:
        return {}
    divisor = parse_divisor(noise) if method == "gumbel" else None
    c = divisor_noise_constants(DEFAULT_FASTLOG2, divisor or 8.0)
    if divisor is None:
        del c["inv_k"], c["log2k"]
    return c | (rangered_constants() if noise == "rangered" else {})


def taken_registers(draw) -> set:
    """The Fast loops' spare registers that hold ``draw``'s constants."""
    return {DRAW_REGS[role] for role in draw_constants(draw)} & set(LOOP_POOL["fast"])
