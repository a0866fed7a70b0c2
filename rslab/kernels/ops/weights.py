"""log2 of the residual weight w = max(p − q, 0), with p = exp2((l − m)·LOG2E)·(1/s).

The core has no divide, so ``p = e·(1/s)`` with the reciprocal from the SFU
(:mod:`rslab.reference`'s float32 semantics); ``fl(0) = −∞``, so a token with no
residual weight scores −∞.

Registers (``regs``): ``max``, ``log2e``, ``rinv`` (1/s), ``zero``; ``q`` the q row's base.
"""

from rslab.kernels.ops.rowmax import PACKED_BYTES
from rslab.schedule import Addr, Op


def q_load(k: int, u: int, regs) -> Op:
    """The load of q's float32 vector k of the iteration, ``q{k}``."""
    return Op("vld", f"q{k}", addr=Addr(regs["q"], PACKED_BYTES * k, 2 * PACKED_BYTES * u))


def residual_weight_ops(k: int, logit: str, q: str, regs, *, exp2: str = "vexp2",
                        load_q: Op | None = None) -> tuple[list, str]:
    """(ops, w) of stream k, the linear weight ``max(p − q, 0)``, from its logit and q values
    (``load_q``: the q load, placed just before its use)."""
    ops = [Op("vsub.f32", f"z{k}", (logit, regs["max"])),
           Op("vmul.f32", f"zy{k}", (f"z{k}", regs["log2e"])),
           Op(exp2, f"@e{k}", (f"zy{k}",)), Op("vpop", f"e{k}", (f"@e{k}",)),
           Op("vmul.f32", f"p{k}", (f"e{k}", regs["rinv"]))]
    ops += [load_q] if load_q is not None else []
    return ops + [Op("vsub.f32", f"d{k}", (f"p{k}", q)),
                  Op("vmax.f32", f"wr{k}", (f"d{k}", regs["zero"]))], f"wr{k}"


def log_weight_ops(k: int, logit: str, q: str, regs, *, exp2: str = "vexp2",
                   log2: str = "vlog2", load_q: Op | None = None) -> tuple[list, str]:
    """(ops, log2 w) of stream k from its logit and q values (``load_q``: the q load, placed
    just before its use)."""
    ops, w = residual_weight_ops(k, logit, q, regs, exp2=exp2, load_q=load_q)
    return ops + [Op(log2, f"@lw{k}", (w,)), Op("vpop", f"lw{k}", (f"@lw{k}",))], f"lw{k}"
