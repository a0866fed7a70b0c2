"""The bonus Gumbel-argmax and the residual-Gumbel loops as standalone study programs (Fast path).

Per float32 vector of 128 tokens (token index i in each lane), from the ops of
:mod:`rslab.kernels.ops`:

- noise (Div8): ``w = vrand(i, key)``, the uniform built exactly with integer ops
  (:mod:`~rslab.kernels.ops.uniform`), then ``t = log2 c − fl(u·c)`` and
  ``y = fl(t·⅛) + 3`` (:mod:`~rslab.kernels.ops.noise`): the float32 values of
  ``rslab.numerics.gumbel``'s ``div8`` pipeline bit for bit, with g = −y;
- bonus: ``score = l·LOG2E − y``;
- residual: ``p = exp2((l − m)·LOG2E)·r`` with ``r = 1/s`` from the caller
  (the core has no divide, so ``p = e·(1/s)``, not ``e/s``), ``w = max(p − q, 0)``,
  ``score = fl(w) − y`` (``fl(0) = −inf``) (:mod:`~rslab.kernels.ops.weights`);
- the argmax update (:mod:`~rslab.kernels.ops.argmax`), then the index vector steps on.
  The index vectors ``i{k}`` rotate: modulo variable expansion renames them like
  any other value, so no register pins them.

The row max ``m`` and ``r = 1/s`` are inputs (the caller's acceptance pass
computes them); the key is the Fast path's per-(request, position, purpose)
key (:mod:`rslab.randomness`: counter = token index).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rslab.kernels.loops.emit import emit_loop, remainder_drop
from rslab.kernels.loops.loop import Loop
from rslab.kernels.ops.argmax import argmax_state, argmax_update_ops, index_step_op
from rslab.kernels.ops.noise import divisor_noise_constants, divisor_noise_ops
from rslab.kernels.ops.rowmax import PACKED_BYTES
from rslab.kernels.ops.sumexp import float_half, packed_loads
from rslab.kernels.ops.uniform import uniform_ops
from rslab.kernels.ops.weights import log_weight_ops, q_load
from rslab.kernels.studies.argmax_loop import (
    argmax_reference,
    pinned_registers,
    reduce_text,
    token_from_float,
)
from rslab.machine.asm import f32_bits
from rslab.machine.bf16 import BLOCK, LANES, pack_rows
from rslab.numerics.fastlog import LOG2E
from rslab.numerics.rng import hw_random_words, uniform_from_words
from rslab.schedule import Op, SlotModel

KINDS = ("bonus", "residual")
DIVISOR = 8.0
REGS = {"src": "s1", "q": "s2", "key": "s3", "max": "v50", "log2e": "v51", "rinv": "v52",
        "zero": "v53", "one": "v54", "scale": "v55", "log2c": "v56", "log2k": "v57",
        "inv_k": "v58", "step": "v59"}
"""The study program's registers by role (:mod:`rslab.kernels.ops`)."""


def gumbel_body(kind: str, *, packed_per_iter: int = 1, variant: str = "max") -> list:
    """Loop body over ``packed_per_iter`` packed logit vectors (two float32 streams each)."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    u = packed_per_iter
    if not isinstance(u, int) or u < 1:
        raise ValueError(f"packed_per_iter must be a positive int, got {u!r}")
    body = packed_loads(u, REGS)
    if kind == "residual":
        body += [q_load(k, u, REGS) for k in range(2 * u)]
    for k in range(2 * u):
        body.append(float_half(k, u, REGS))
        if kind == "bonus":
            body.append(Op("vmul.f32", f"y{k}", (f"l{k}", REGS["log2e"])))
            x = f"y{k}"
        else:
            ops, x = log_weight_ops(k, f"l{k}", f"q{k}", REGS)
            body += ops
        body.append(Op("vrand", f"w{k}", (f"i{k}", REGS["key"])))
        ops, uf = uniform_ops(k, f"w{k}", REGS, scaled=False)
        body += ops
        ops, y = divisor_noise_ops(k, uf, REGS)
        body += ops
        body.append(Op("vsub.f32", f"sc{k}", (x, y)))
        body += argmax_update_ops(k, f"sc{k}", f"i{k}", variant)
    body += [index_step_op(k, REGS["step"]) for k in range(2 * u)]
    return body


def gumbel_loop(kind: str, n_packed: int, *, packed_per_iter: int = 1, variant: str = "max",
                model: SlotModel | None = None, registers=None, carried=None,
                max_stages: int | None = None) -> Loop:
    """Schedule and expand the loop over ``n_packed`` packed vectors (remainder handled).

    Inputs the caller sets up: ``s1`` logits, ``s2`` q (float32), ``s3`` key, the
    constants of ``REGS`` and the carried registers (see :func:`init_lines`).
    """
    if not isinstance(n_packed, int) or n_packed < 1:
        raise ValueError(f"n_packed must be a positive int, got {n_packed!r}")
    body = gumbel_body(kind, packed_per_iter=packed_per_iter, variant=variant)
    iterations = -(-n_packed // packed_per_iter)
    left = n_packed - (iterations - 1) * packed_per_iter
    streams = 2 * packed_per_iter
    carried = carried or pinned_registers(argmax_state(streams), first=40)
    if registers is None:
        reserved = set(REGS.values()) | set(carried.values())
        registers = [f"v{i}" for i in range(64) if f"v{i}" not in reserved]
    return emit_loop(body, iterations, "pipelined", carried=carried, pool=registers,
                     model=model or SlotModel(), last_drop=remainder_drop(body, left,
                                                                          packed_per_iter),
                     per_iteration=packed_per_iter, max_stages=max_stages,
                     rotating=tuple(f"i{k}" for k in range(streams)))


def init_lines(loop: Loop, *, m, r, key: int, log2, logits_addr: int, q_addr: int,
               packed_per_iter: int) -> list:
    """Setup bundles: bases, key, constants, best = −inf and index vectors."""
    k = divisor_noise_constants(log2, DIVISOR)
    c = REGS
    lines = [f"sli s1, {logits_addr}", f"sli s2, {q_addr}", f"sli s3, {int(key)}",
             f"sli s4, {f32_bits(m)}", f"vbcast {c['max']}, s4 ; vli {c['log2e']}, "
             f"{f32_bits(LOG2E)}",
             f"sli s4, {f32_bits(r)}", f"vbcast {c['rinv']}, s4 ; vli {c['zero']}, 0",
             f"vli {c['one']}, 1 ; vli {c['scale']}, {f32_bits(k['scale'])}",
             f"vli {c['log2c']}, {f32_bits(k['log2c'])} ; "
             f"vli {c['log2k']}, {f32_bits(k['log2k'])}",
             f"vli {c['inv_k']}, {f32_bits(k['inv_k'])} ; vli {c['step']}, "
             f"{BLOCK * packed_per_iter}",
             "viota v62"]
    for w in range(2 * packed_per_iter):
        first = BLOCK * (w // 2) + LANES * (w % 2)
        index = loop.expansion.initial[f"i{w}"]
        lines += [f"vli v61, {first} ; vli {loop.carried[f'best{w}']}, 0xff800000",
                  f"vadd.u32 {index}, v62, v61",
                  f"vmov {loop.carried[f'idx{w}']}, {index}"]
    return lines


@dataclass
class GumbelResult:
    token: int
    value: float
    cycles: int
    stalls: dict
    loop: Loop
    run: object


def gumbel_program(kind: str, n_packed: int, *, m=0.0, r=1.0, key: int = 0, config=None,
                   packed_per_iter: int = 1, variant: str = "max", q_addr: int | None = None):
    """Whole program text (setup, loop, reduction to ``s4`` value / ``s5`` token) and the loop."""
    from rslab.machine import MachineConfig

    config = config or MachineConfig()
    loop = gumbel_loop(kind, n_packed, packed_per_iter=packed_per_iter, variant=variant,
                       model=SlotModel.from_config(config))
    q_addr = PACKED_BYTES * n_packed if q_addr is None else q_addr
    lines = init_lines(loop, m=m, r=r, key=key, log2=config.log2_fn, logits_addr=0,
                       q_addr=q_addr, packed_per_iter=packed_per_iter)
    streams = range(2 * packed_per_iter)
    tail = reduce_text([loop.carried[f"best{w}"] for w in streams],
                       [loop.carried[f"idx{w}"] for w in streams],
                       scratch=tuple(f"v{i}" for i in range(32, 40)))
    return "\n".join(lines) + "\n" + loop.text + "\n".join(tail) + "\nhalt\n", loop


def run_gumbel(kind: str, logits, *, q=None, m=None, r=None, key: int = 0, config=None,
               packed_per_iter: int = 1, variant: str = "max", trace: bool = False):
    """Run the loop on one row; returns the token, the best score and the run."""
    from rslab.machine import MachineConfig, assemble, simulate

    config = config or MachineConfig()
    logits = np.asarray(logits, dtype=np.float32)
    n_packed = -(-logits.size // BLOCK)
    vmem = {0: pack_rows(logits)}
    if kind == "residual":
        if q is None or m is None or r is None:
            raise ValueError("residual needs q, m and r = 1/s")
        qp = np.zeros(n_packed * BLOCK, dtype=np.float32)
        qp[:logits.size] = np.asarray(q, dtype=np.float32)
        vmem[PACKED_BYTES * n_packed] = qp
    text, loop = gumbel_program(kind, n_packed, m=0.0 if m is None else m,
                                r=1.0 if r is None else r, key=key, config=config,
                                packed_per_iter=packed_per_iter, variant=variant)
    run = simulate(assemble(text), config, vmem=vmem, trace=trace)
    return GumbelResult(token_from_float(run.sreg_f32(5)), run.sreg_f32(4), run.cycles,
                        run.stalls, loop, run)


def gumbel_scores_numpy(kind: str, logits, *, q=None, m=None, r=None, key: int = 0,
                        log2=None, exp2=None) -> np.ndarray:
    """The loop's float32 scores in NumPy (same ops, same order), padded to the block."""
    from rslab.numerics.fastlog import DEFAULT_FASTLOG2, fast_exp2
    from rslab.numerics.gumbel import get_noise

    log2 = log2 or DEFAULT_FASTLOG2
    exp2 = exp2 or fast_exp2
    logits = np.asarray(logits, dtype=np.float32)
    n = -(-logits.size // BLOCK) * BLOCK
    lp = np.full(n, -np.inf, dtype=np.float32)
    lp[:logits.size] = logits
    u = uniform_from_words(hw_random_words(np.uint32(key), np.arange(n, dtype=np.uint32)))
    g = get_noise("div8", log2=log2)(u)
    with np.errstate(invalid="ignore", divide="ignore"):
        if kind == "bonus":
            return lp * LOG2E + g
        qp = np.zeros(n, dtype=np.float32)
        qp[:logits.size] = np.asarray(q, dtype=np.float32)
        e = exp2((lp - np.float32(m)) * LOG2E)
        w = np.maximum(e * np.float32(r) - qp, np.float32(0))
        return log2(w) + g


def gumbel_reference(kind: str, logits, **kw):
    """(token, score) the loop must return: argmax of :func:`gumbel_scores_numpy`."""
    return argmax_reference(gumbel_scores_numpy(kind, logits, **kw), "select")
