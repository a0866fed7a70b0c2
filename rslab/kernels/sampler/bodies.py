"""The full sampler's loop bodies, composed from :mod:`rslab.kernels.ops` on its register map.

- :func:`rowmax_body`: the row max (one accumulator per packed vector; the natural
  ``acc = max(acc, v)`` chain at one vector per iteration), optionally landing the
  float32 halves at ``S_FB`` (dataflow (a′));
- :func:`sumexp_loop_body`: the pipelined sum-exp (precise exp2 on the Exact path),
  reading the landed halves when the row max stored them;
- :func:`final_body`: one iteration of the residual or bonus argmax row
  (:func:`final_scores` its scores), and :func:`recompute_body`: the winning
  iteration of a block-argmax row recomputed, to find its token. The row draws
  with Gumbel-max (score ``x − y``, the noise g = −y: Div(k), or the range-reduced
  second log) or with the race (score ``w·R``, ``R = rcp(E)``; the bonus row's
  weights ``exp2((l − m)·LOG2E)`` need its row max first), ``draw`` of
  :mod:`rslab.kernels.sampler.draws`.
"""

from __future__ import annotations

from rslab.kernels.ops.argmax import argmax_update_ops
from rslab.kernels.ops.block_argmax import block_argmax_ops, candidate_ops
from rslab.kernels.ops.draw_noise import draw_noise_ops
from rslab.kernels.ops.noise import precise_noise_ops
from rslab.kernels.ops.philox import philox_ops, philox_split
from rslab.kernels.ops.race import race_score_op
from rslab.kernels.ops.rowmax import rowmax_body as _rowmax_body
from rslab.kernels.ops.sumexp import float_half, packed_loads, sumexp_body
from rslab.kernels.ops.uniform import uniform_ops
from rslab.kernels.ops.weights import (
    e_load,
    log_weight_from_e_ops,
    log_weight_ops,
    q_load,
    stream_weight_ops,
)
from rslab.kernels.sampler.draws import DEFAULT_DRAW, DRAW_REGS, needs_row_max
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


def sumexp_loop_body(path: str, workers: int, u: int, landed: bool = False,
                     store_e: bool = False) -> list:
    """The sum-exp body (precise exp2 on the Exact path); ``landed`` reads the float32 halves
    (same values, same accumulation order, so the same sum bit for bit); ``store_e`` stores
    each e over its float32 vector."""
    return sumexp_body(u, REGS, workers=workers, exp2="vexp2" if path == "fast" else "vexp2.p",
                       landed=landed, store_e=store_e)


COUNTERS = ("offsets", "own")
ARGMAX = ("streams", "block")
SOURCES = ("packed", "landed", "e")


def _check_row(kind, path, u, source, counters, argmax, draw):
    if kind not in ("residual", "bonus"):
        raise ValueError(f"kind must be 'residual' or 'bonus', got {kind!r}")
    for name, value, known in (("source", source, SOURCES), ("counters", counters, COUNTERS),
                               ("argmax", argmax, ARGMAX)):
        if value not in known:
            raise ValueError(f"{name} must be one of {known}, got {value!r}")
    if draw[0] not in ("gumbel", "race"):
        raise ValueError(f"draw: an argmax row draws with 'gumbel' or 'race', got {draw!r}")
    if kind == "bonus" and source != "packed" and not (source == "landed"
                                                       and needs_row_max(draw)):
        raise ValueError("the bonus row reads landed float32 halves only after its row max, "
                         "and never the stored e")
    if path == "exact" and u != 2:
        raise ValueError("the Exact path's final rows take u = 2 (one Philox block)")
    if path == "fast" and u > 1 and counters != "own":
        raise ValueError("the Fast path's final rows take u = 2 only with their own counters "
                         "(the token offsets' registers hold the noise constants)")
    if path == "fast" and argmax == "block" and counters != "own":
        raise ValueError("the block argmax tags an iteration by stream 0's own counter")


def _counter_ops(path, u, counters) -> list:
    """The iteration's counter updates at the top of the body."""
    if path == "exact":
        return [Op("vadd.u32", "c0", ("c0", V_C128))]
    if counters == "own":
        return [Op("vadd.u32", f"tok{k}", (f"tok{k}", V_STEP)) for k in range(2 * u)]
    return [Op("vadd.u32", "ctr", ("ctr", V_STEP))]


def _stream_word(body, k, path, counters, words):
    """Stream k's RNG word (Fast: ``vrand`` of the token index ``tok{k}``)."""
    if path != "fast":
        return words[k]
    if counters == "offsets":
        # for stream 0 too: reading ``ctr`` itself at the end of the chain would tie the next
        # iteration's counter update to it (RecMII 64)
        body.append(Op("vadd.u32", f"tok{k}", ("ctr", TOKEN_OFFSETS[k])))
    body.append(Op("vrand", f"w{k}", (f"tok{k}", REGS["key"])))
    return f"w{k}"


def _noise(path, draw, k, uname) -> tuple[list, str]:
    """Stream k's noise value: ``y`` (g = −y) for Gumbel-max, ``R = rcp(E)`` for the race."""
    if path != "fast":
        return precise_noise_ops(k, uname, REGS)
    return draw_noise_ops(*draw, k, uname, DRAW_REGS)


def _logit_term(body, kind, path, k, u, source):
    """Stream k's ``x``: l·LOG2E (bonus) or log2 of the residual weight."""
    if kind == "bonus":
        body.append(float_half(k, u, REGS))
        body.append(Op("vmul.f32", f"xs{k}", (f"l{k}", V_LOG2E)))
        return f"xs{k}"
    log2 = "vlog2" if path == "fast" else "vlog2.p"
    if source == "e":
        body.append(e_load(k, u, REGS))
        ops, x = log_weight_from_e_ops(k, f"e{k}", f"q{k}", REGS, log2=log2,
                                       load_q=q_load(k, u, REGS))
    else:
        body.append(float_half(k, u, REGS, landed=source == "landed"))
        e2 = "vexp2" if path == "fast" else "vexp2.p"
        ops, x = log_weight_ops(k, f"l{k}", f"q{k}", REGS, exp2=e2, log2=log2,
                                load_q=q_load(k, u, REGS))
    body += ops
    return x


def final_scores(kind: str, path: str, u: int, *, source: str = "packed",
                 counters: str = "offsets", argmax: str = "streams", hoisted=None,
                 after=None, draw=DEFAULT_DRAW) -> list:
    """The ops of one iteration of a final row up to its scores ``sc{k}`` (k < 2u).

    ``source``: the residual's logits as the packed row, the landed float32 halves, or
    the e the sum-exp pass stored; ``counters``: Fast token indices as one counter plus
    offsets, or one counter per stream; ``hoisted`` (Exact): the registers of the Philox
    values computed before the loop (:func:`hoisted_philox`), or None to compute it all;
    ``after(k)``: ops placed right after stream k's score; ``draw``: (method, noise) of
    :mod:`rslab.kernels.sampler.draws` (the Exact path: Gumbel-max, precise logs).
    """
    _check_row(kind, path, u, source, counters, argmax, draw)
    body = packed_loads(u, REGS) if kind == "bonus" or source == "packed" else []
    body += _counter_ops(path, u, counters)
    words = {}
    if path == "exact":
        if hoisted is None:
            ops, out = philox_ops(("c0", V_C1, V_C2, V_C3), REGS)
        else:
            _, ops, out, live_ins = philox_split(("c0", V_C1, V_C2, V_C3), (0,), REGS)
            ops = rename(ops, dict(zip(live_ins, hoisted, strict=True)))
        body += ops
        words = dict(enumerate(out))
    for k in range(2 * u):
        word = _stream_word(body, k, path, counters, words)
        ops, uname = uniform_ops(k, word, REGS, scaled=path != "fast")
        body += ops
        ops, y = _noise(path, draw, k, uname)
        body += ops
        if draw[0] == "race":
            ops, w = stream_weight_ops(kind, k, u, REGS, source)
            body += ops + [race_score_op(k, w, y)]
            body += after(k) if after else []
            continue
        x = _logit_term(body, kind, path, k, u, source)
        if path == "exact" and argmax == "streams":
            # the token index, from the counter before this iteration's
            body.append(Op("vadd.u32", f"tok{k}", (Use("ctr", 1), TOKEN_OFFSETS[k])))
        body.append(Op("vsub.f32", f"sc{k}", (x, y)))
        body += after(k) if after else []
    return body


def final_body(kind: str, path: str, u: int, landed: bool = False, *, source: str | None = None,
               counters: str = "offsets", argmax: str = "streams", hoisted=None,
               draw=DEFAULT_DRAW) -> list:
    """One iteration of the residual (``kind="residual"``) or bonus Gumbel-argmax row.

    ``landed`` (residual only; or ``source="landed"``): the logits are the float32
    halves the row-max pass stored at ``S_FB``; ``source="e"``: the e the sum-exp pass
    stored there.

    Streams k = 2b + h (packed vector b, half h). With ``argmax="streams"`` each keeps
    its own running best score ``best{k}`` and token ``idx{k}`` (strict ``>``: ties keep
    the lower index); with ``"block"`` the iteration keeps one ``best`` and the tag
    ``it`` of the iteration it came from (:mod:`rslab.kernels.ops.block_argmax`; the
    tag is stream 0's token index on the Fast path, the Philox counter c0 on the
    Exact path). Fast token indices ``tok{k} = ctr + 256·b + 128·h`` (``counters=
    "offsets"``; ``ctr`` counts the iteration's first token) or one counter per stream
    (``"own"``), which is also the RNG counter. On the Exact path the token index is
    formed at the end of the chain from the previous ``ctr``, so it holds no register
    long.
    """
    row = {"source": source or ("landed" if landed else "packed"), "counters": counters,
           "argmax": argmax, "hoisted": hoisted, "draw": draw}
    if argmax == "block":
        body = final_scores(kind, path, u, **row)
        return body + block_argmax_ops([f"sc{k}" for k in range(2 * u)],
                                       "tok0" if path == "fast" else "c0")
    body = final_scores(kind, path, u, **row,
                        after=lambda k: argmax_update_ops(k, f"sc{k}", f"tok{k}", "max"))
    if path == "exact":
        body.append(Op("vadd.u32", "ctr", ("ctr", V_STEP)))
    return body


def recompute_body(kind: str, path: str, u: int, *, best: str, inf: str, token_base: str,
                   **row) -> list:
    """One iteration of a final row's scores again, and per lane the lowest token whose
    score equals the row's ``best`` (broadcast), as the value ``pick`` (float32, +inf where
    none). Exact tokens are ``token_base`` (the iteration's first token per lane) plus the
    stream offsets; Fast ones the stream counters."""
    body = final_scores(kind, path, u, **{**row, "argmax": "block"})
    tokens = [f"tok{k}" for k in range(2 * u)]
    if path == "exact":
        body += [Op("vadd.u32", tokens[k], (token_base, TOKEN_OFFSETS[k])) for k in range(2 * u)]
    ops, low = candidate_ops([f"sc{k}" for k in range(2 * u)], tokens, best, inf)
    return body + ops + [Op("vmov", "pick", (low,))]


def hoisted_philox() -> tuple[list, list]:
    """(ops, the values the loop reads): the Philox ops of a final row computed before it."""
    ops, _, _, names = philox_split(("c0", V_C1, V_C2, V_C3), (0,), REGS)
    return ops, names


def rename(ops, mapping) -> list:
    """``ops`` with the values of ``mapping`` renamed (defined and read)."""
    def name(v):
        return mapping.get(v, v) if isinstance(v, str) else v
    return [Op(op.opcode, name(op.dst), tuple(name(s) for s in op.srcs), op.addr,
               op.name if op.name else "") for op in ops]


__all__ = ["ARGMAX", "COUNTERS", "SOURCES", "V_ZERO", "final_body", "final_scores",
           "hoisted_philox", "recompute_body", "rename", "rowmax_body", "sumexp_loop_body"]
