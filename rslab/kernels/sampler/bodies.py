"""The full sampler's loop bodies, composed from :mod:`rslab.kernels.ops` on its register map.

- :func:`rowmax_body`: the row max (one accumulator per packed vector; the natural
  ``acc = max(acc, v)`` chain at one vector per iteration), optionally landing the
  float32 halves at ``S_FB`` (dataflow (a′));
- :func:`sumexp_loop_body`: the pipelined sum-exp (precise exp2 on the Exact path),
  reading the landed halves when the row max stored them;
- :func:`final_body`: one iteration of the residual or bonus Gumbel-argmax row.
"""

from __future__ import annotations

from rslab.kernels.ops.argmax import argmax_update_ops
from rslab.kernels.ops.noise import divisor_noise_ops, precise_noise_ops
from rslab.kernels.ops.philox import philox_ops
from rslab.kernels.ops.rowmax import rowmax_body as _rowmax_body
from rslab.kernels.ops.sumexp import float_half, packed_loads, sumexp_body
from rslab.kernels.ops.uniform import uniform_ops
from rslab.kernels.ops.weights import log_weight_ops, q_load
from rslab.kernels.sampler.registers import (
    REGS,
    TOKEN_OFFSETS,
    V_C1,
    V_C2,
    V_C3,
    V_C128,
    V_LOG2E,
    V_STEP,
    V_ZERO,
)
from rslab.schedule import Op, Use


def rowmax_body(u: int, land: bool = False) -> list:
    """Row max over ``u`` packed vectors per iteration, one accumulator per packed vector
    (``acc = max(max(acc, lo), hi)`` when u = 1); ``land`` stores the float32 halves."""
    return _rowmax_body(u, REGS, accumulate="chain" if u == 1 else "vector",
                        land="lanes" if land else None)[0]


def sumexp_loop_body(path: str, workers: int, u: int, landed: bool = False) -> list:
    """The sum-exp body (precise exp2 on the Exact path); ``landed`` reads the float32 halves
    (same values, same accumulation order, so the same sum bit for bit)."""
    return sumexp_body(u, REGS, workers=workers, exp2="vexp2" if path == "fast" else "vexp2.p",
                       landed=landed)


def _stream_word(body, k, path, words):
    """Stream k's token index ``tok{k}`` and RNG word (Fast: ``vrand`` of the token index)."""
    if path != "fast":
        return words[k]
    # for stream 0 too: reading ``ctr`` itself at the end of the chain would tie the next
    # iteration's counter update to it (RecMII 64)
    body.append(Op("vadd.u32", f"tok{k}", ("ctr", TOKEN_OFFSETS[k])))
    body.append(Op("vrand", f"w{k}", (f"tok{k}", REGS["key"])))
    return f"w{k}"


def _stream(body, kind, path, k, u, landed, words):
    """One stream's ops: noise, its logit, the score ``x − y``, the argmax update."""
    word = _stream_word(body, k, path, words)
    ops, uname = uniform_ops(k, word, REGS, scaled=path != "fast")
    body += ops
    ops, y = (divisor_noise_ops(k, uname, REGS) if path == "fast"
              else precise_noise_ops(k, uname, REGS))
    body += ops
    body.append(float_half(k, u, REGS, landed=landed))
    if kind == "bonus":
        body.append(Op("vmul.f32", f"xs{k}", (f"l{k}", V_LOG2E)))
        x = f"xs{k}"
    else:
        e2, l2 = ("vexp2", "vlog2") if path == "fast" else ("vexp2.p", "vlog2.p")
        ops, x = log_weight_ops(k, f"l{k}", f"q{k}", REGS, exp2=e2, log2=l2,
                                load_q=q_load(k, u, REGS))
        body += ops
    if path == "exact":  # the token index, from the counter before this iteration's
        body.append(Op("vadd.u32", f"tok{k}", (Use("ctr", 1), TOKEN_OFFSETS[k])))
    body.append(Op("vsub.f32", f"sc{k}", (x, y)))
    body += argmax_update_ops(k, f"sc{k}", f"tok{k}", "max")


def final_body(kind: str, path: str, u: int, landed: bool = False) -> list:
    """One iteration of the residual (``kind="residual"``) or bonus Gumbel-argmax row.

    ``landed`` (residual only): the logits are the float32 halves the row-max pass
    stored at ``S_FB``.

    Streams k = 2b + h (packed vector b, half h) keep their own running best
    score ``best{k}`` and token ``idx{k}`` (strict ``>``: ties keep the lower
    index); ``ctr`` counts the iteration's first token and ``tok{k} = ctr + 256·b + 128·h``
    is the stream's token index, also the Fast path's RNG counter. On the Exact
    path it is formed at the end of the chain from the previous ``ctr``, so it
    holds no register long.
    """
    if kind not in ("residual", "bonus"):
        raise ValueError(f"kind must be 'residual' or 'bonus', got {kind!r}")
    if landed and kind != "residual":
        raise ValueError("only the residual row reads landed float32 halves")
    body = [] if landed else packed_loads(u, REGS)
    if path == "fast":
        body.append(Op("vadd.u32", "ctr", ("ctr", V_STEP)))
    words = {}
    if path == "exact":
        if u != 2:
            raise ValueError("the Exact path's final rows take u = 2 (one Philox block)")
        body.append(Op("vadd.u32", "c0", ("c0", V_C128)))
        ops, out = philox_ops(("c0", V_C1, V_C2, V_C3), REGS)
        body += ops
        words = dict(enumerate(out))
    for k in range(2 * u):
        _stream(body, kind, path, k, u, landed, words)
    if path == "exact":
        body.append(Op("vadd.u32", "ctr", ("ctr", V_STEP)))
    return body


__all__ = ["V_ZERO", "final_body", "rowmax_body", "sumexp_loop_body"]
