"""log2 of the residual weight w = max(p − q, 0), with p = exp2((l − m)·LOG2E)·(1/s).

The core has no divide, so ``p = e·(1/s)`` with the reciprocal from the SFU
(:mod:`rslab.reference`'s float32 semantics); ``fl(0) = −∞``, so a token with no
residual weight scores −∞.

When the sum-exp pass has stored e over the landed row (:func:`e_load`), the
residual row loads e and skips the subtract, the multiply and the exp2:
:func:`log_weight_from_e_ops`.

The draws that take linear weights (the race, the inverse CDF) use
:func:`linear_weight_ops` (the bonus ``exp2((l − m)·LOG2E)`` or the residual
``max(p − q, 0)`` from a logit) and :func:`stream_weight_ops` (stream k's weight with
the loads it needs, from wherever the row is).

Registers (``regs``): ``max``, ``log2e``, ``rinv`` (1/s), ``zero``; ``q`` the q row's base,
``landed`` the base of the stored e.
"""

from rslab.kernels.ops.rowmax import PACKED_BYTES
from rslab.kernels.ops.sumexp import exp_step, float_half
from rslab.schedule import Addr, Op


def q_load(k: int, u: int, regs) -> Op:
    """The load of q's float32 vector k of the iteration, ``q{k}``."""
    return Op("vld", f"q{k}", addr=Addr(regs["q"], PACKED_BYTES * k, 2 * PACKED_BYTES * u))


def e_load(k: int, u: int, regs) -> Op:
    """The load of e's float32 vector k of the iteration, ``e{k}``, where the sum-exp pass
    stored it (the landed row's layout)."""
    return Op("vld", f"e{k}", addr=Addr(regs["landed"], PACKED_BYTES * k, 2 * PACKED_BYTES * u))


def residual_weight_ops(k: int, logit: str, q: str, regs, *, exp2: str = "vexp2",
                        load_q: Op | None = None) -> tuple[list, str]:
    """(ops, w) of stream k, the linear weight ``max(p − q, 0)``, from its logit and q values
    (``load_q``: the q load, placed just before its use)."""
    ops = [Op("vsub.f32", f"z{k}", (logit, regs["max"])),
           Op("vmul.f32", f"zy{k}", (f"z{k}", regs["log2e"])),
           Op(exp2, f"@e{k}", (f"zy{k}",)), Op("vpop", f"e{k}", (f"@e{k}",)),
           Op("vmul.f32", f"p{k}", (f"e{k}", regs["rinv"]))]
    ops += [load_q] if load_q is not None else []
    return ops + _linear_tail(k, q, regs), f"wr{k}"


def _linear_tail(k: int, q: str, regs) -> list:
    """``w = max(p − q, 0)`` from ``p{k}``."""
    return [Op("vsub.f32", f"d{k}", (f"p{k}", q)),
            Op("vmax.f32", f"wr{k}", (f"d{k}", regs["zero"]))]


def _log_tail(k: int, log2: str) -> list:
    """log2 of ``wr{k}`` on the SFU."""
    return [Op(log2, f"@lw{k}", (f"wr{k}",)), Op("vpop", f"lw{k}", (f"@lw{k}",))]


def log_weight_ops(k: int, logit: str, q: str, regs, *, exp2: str = "vexp2",
                   log2: str = "vlog2", load_q: Op | None = None) -> tuple[list, str]:
    """(ops, log2 w) of stream k from its logit and q values (``load_q``: the q load, placed
    just before its use)."""
    ops, _ = residual_weight_ops(k, logit, q, regs, exp2=exp2, load_q=load_q)
    return ops + _log_tail(k, log2), f"lw{k}"


def residual_weight_from_e_ops(k: int, e: str, q: str, regs, *,
                               load_q: Op | None = None) -> tuple[list, str]:
    """(ops, w) of stream k, the linear weight ``max(p − q, 0)``, from its stored ``e`` and q
    values."""
    ops = [Op("vmul.f32", f"p{k}", (e, regs["rinv"]))]
    ops += [load_q] if load_q is not None else []
    return ops + _linear_tail(k, q, regs), f"wr{k}"


def linear_weight_ops(kind: str, k, logit: str, regs, *,
                      load_q: Op | None = None) -> tuple[list, str]:
    """(ops, w): the bonus ``exp2((l − m)·LOG2E)`` or the residual ``max(p − q, 0)`` from the
    logit value ``logit`` (``load_q``: the residual's q load, placed just before its use)."""
    if kind == "bonus":
        return exp_step(k, logit, regs)
    return residual_weight_ops(k, logit, f"q{k}", regs, load_q=load_q)


def stream_weight_ops(kind: str, k: int, u: int, regs, source: str = "packed", *,
                      load_q: bool = True) -> tuple[list, str]:
    """(ops, w): stream k's linear weight with its loads, from the stored e (``source="e"``,
    residual), the landed float32 halves or the packed row (the packed loads are the
    caller's); ``load_q``: the residual's q load placed before its use (else ``q{k}`` is
    loaded by the caller)."""
    q = q_load(k, u, regs) if load_q else None
    if source == "e":
        ops, w = residual_weight_from_e_ops(k, f"e{k}", f"q{k}", regs, load_q=q)
        return [e_load(k, u, regs)] + ops, w
    ops, w = linear_weight_ops(kind, k, f"l{k}", regs, load_q=q)
    return [float_half(k, u, regs, landed=source == "landed")] + ops, w


def log_weight_from_e_ops(k: int, e: str, q: str, regs, *, log2: str = "vlog2",
                          load_q: Op | None = None) -> tuple[list, str]:
    """(ops, log2 w) of stream k from its stored ``e`` and q values."""
    ops, _ = residual_weight_from_e_ops(k, e, q, regs, load_q=load_q)
    return ops + _log_tail(k, log2), f"lw{k}"
