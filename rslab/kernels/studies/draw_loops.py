"""Bonus and residual rows drawn by argmax on the core: Gumbel-max variants and the race.

One packed vector (two float32 streams of 128 tokens) per iteration, through
:func:`rslab.kernels.loops.emit_loop` (pipelined); the body per stream k, from the
ops of :mod:`rslab.kernels.ops`:

* weights — bonus: ``l·LOG2E`` (Gumbel) or ``e = exp2((l − m)·LOG2E)`` (race, which
  needs the row max m; :func:`~rslab.kernels.ops.sumexp.exp_step`); residual: the
  linear ``w = max(exp2((l − m)·LOG2E)·r − q, 0)`` and, for Gumbel, ``fl(w)``
  (:mod:`~rslab.kernels.ops.weights`); a residual row with ``source="e"`` loads the
  e = exp2((l − m)·LOG2E) its sum-exp pass stored (float32, token order, at ``s7``)
  instead of reading and unpacking the logits and recomputing it: no unpack, subtract,
  multiply nor exp2 per token;
* the uniform from the token's word (:mod:`~rslab.kernels.ops.uniform`);
* noise — ``div8`` / ``div32``: the Div(k) noise (:mod:`~rslab.kernels.ops.noise`);
  ``rangered``: the same first layer, then the range-reduced second log
  (:mod:`~rslab.kernels.ops.rangered`); race ``scaled`` / ``naive``: ``R = rcp(E)``
  (:mod:`~rslab.kernels.ops.race`);
* score ``x − y`` (Gumbel) or ``w·R`` (race), then the argmax update
  (:mod:`~rslab.kernels.ops.argmax`).

The race keeps ``best`` from 0 with the ``select`` update, so a score that is not
positive (zero weight, or ``0·inf`` = NaN) never wins, as the reference's −inf.
The tokens are those of :mod:`rslab.reference` / :mod:`rslab.draws` on the same
weights and key (the tests compare them).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rslab.kernels.loops.emit import emit_loop
from rslab.kernels.loops.loop import Loop
from rslab.kernels.ops.argmax import argmax_state, argmax_update_ops, index_step_op
from rslab.kernels.ops.draw_noise import draw_noise_ops
from rslab.kernels.ops.noise import divisor_noise_constants
from rslab.kernels.ops.race import naive_first_layer_constants, race_score_op
from rslab.kernels.ops.rangered import rangered_constants
from rslab.kernels.ops.rowmax import PACKED_BYTES
from rslab.kernels.ops.sumexp import exp_step, float_half, packed_loads
from rslab.kernels.ops.uniform import uniform_ops
from rslab.kernels.ops.weights import (
    e_load,
    log_weight_from_e_ops,
    log_weight_ops,
    q_load,
    residual_weight_from_e_ops,
    residual_weight_ops,
)
from rslab.kernels.studies.argmax_loop import pinned_registers, reduce_text, token_from_float
from rslab.machine.asm import constant_word, f32_bits
from rslab.machine.bf16 import BLOCK, LANES, pack_rows
from rslab.numerics.fastlog import LOG2E
from rslab.numerics.gumbel import parse_divisor
from rslab.numerics.methods import draw
from rslab.schedule import Op, SlotModel

KINDS = ("bonus", "residual")
DRAWS = (("gumbel", "div8"), ("gumbel", "div32"), ("gumbel", "rangered"),
         ("race", "scaled"), ("race", "naive"))
"""The (method, noise) pairs with a loop on the core."""
STREAMS = 2
SOURCES = ("logits", "e")
"""Where a row's weights come from: the packed logits, or (residual) the stored e."""
REGS = {"src": "s1", "q": "s2", "key": "s3", "landed": "s7", "max": "v46", "rinv": "v47",
        "log2e": "v48", "zero": "v49", "one": "v50", "step": "v51", "scale": "v52", "log2c": "v53",
        "inv_k": "v54", "log2k": "v55", "round": "v56", "expmask": "v57", "exp128": "v58",
        "magic": "v59", "magic128": "v60"}
"""The study programs' registers by role (:mod:`rslab.kernels.ops`); v61–v63 are setup
temporaries, v40–v45 the carried argmax state, v32–v39 the reduction's scratch."""
TEMPS = ("v61", "v62")


def check_draw(kind, method, noise, source: str = "logits") -> None:
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    if (method, noise) not in DRAWS:
        raise ValueError(f"(method, noise) must be one of {DRAWS}, got {(method, noise)!r}")
    if source not in SOURCES or (source == "e" and kind != "residual"):
        raise ValueError(f"source must be one of {SOURCES} (e: residual only), got {source!r}")


def constants(method: str, noise: str, log2) -> dict:
    """The constant registers' values by role (float32 or uint32) of one draw's loop."""
    c = {"log2e": LOG2E, "zero": np.uint32(0), "one": np.uint32(1), "step": np.uint32(BLOCK)}
    if noise == "naive":
        return c | naive_first_layer_constants()
    k = parse_divisor(noise) if draw(method).score == "add" else None
    c |= divisor_noise_constants(log2, k or 8.0)
    if k is None:
        del c["inv_k"], c["log2k"]
    return c | (rangered_constants() if noise == "rangered" else {})


def weight_ops(kind: str, method: str, k: int, source: str = "logits") -> tuple[list, str]:
    """Ops from the float32 logits ``l{k}`` (``source="e"``: the loaded e ``e{k}``) to the
    weight (linear, or its log for Gumbel)."""
    linear = draw(method).linear
    if source == "e":
        from_e = residual_weight_from_e_ops if linear else log_weight_from_e_ops
        return from_e(k, f"e{k}", f"q{k}", REGS)
    if kind == "bonus" and not linear:
        return [Op("vmul.f32", f"y{k}", (f"l{k}", REGS["log2e"]))], f"y{k}"
    if kind == "bonus":
        return exp_step(k, f"l{k}", REGS)
    if not linear:
        return log_weight_ops(k, f"l{k}", f"q{k}", REGS)
    return residual_weight_ops(k, f"l{k}", f"q{k}", REGS)


def argmax_variant(method: str) -> str:
    """The argmax update: ``max`` for Gumbel, ``select`` (NaN never wins) for the race."""
    return "select" if draw(method).score == "mul" else "max"


def draw_body(kind: str, method: str, noise: str, source: str = "logits") -> list:
    """The loop body over one packed vector (two float32 streams)."""
    check_draw(kind, method, noise, source)
    body = packed_loads(1, REGS) if source == "logits" else []
    if kind == "residual":
        body += [q_load(k, 1, REGS) for k in range(STREAMS)]
    for k in range(STREAMS):
        body.append(float_half(k, 1, REGS) if source == "logits" else e_load(k, 1, REGS))
        ops, x = weight_ops(kind, method, k, source)
        body += ops + [Op("vrand", f"w{k}", (f"i{k}", REGS["key"]))]
        ops, uf = uniform_ops(k, f"w{k}", REGS, scaled=False)
        body += ops
        ops, noise_value = draw_noise_ops(method, noise, k, uf, REGS)
        body += ops + [race_score_op(k, x, noise_value) if draw(method).score == "mul"
                       else Op("vsub.f32", f"sc{k}", (x, noise_value))]
        body += argmax_update_ops(k, f"sc{k}", f"i{k}", argmax_variant(method))
    return body + [index_step_op(k, REGS["step"]) for k in range(STREAMS)]


def draw_loop(kind: str, method: str, noise: str, n_packed: int, model: SlotModel,
              source: str = "logits") -> Loop:
    """The pipelined loop over ``n_packed`` packed vectors (``emit_loop``, cached)."""
    if not isinstance(n_packed, int) or n_packed < 1:
        raise ValueError(f"n_packed must be a positive int, got {n_packed!r}")
    carried = pinned_registers(argmax_state(STREAMS), first=40)
    reserved = set(REGS.values()) | set(carried.values()) | set(TEMPS)
    pool = [f"v{i}" for i in range(64) if f"v{i}" not in reserved]
    return emit_loop(draw_body(kind, method, noise, source), n_packed, "pipelined",
                     carried=carried,
                     pool=pool, model=model, rotating=tuple(f"i{k}" for k in range(STREAMS)))


def setup_lines(loop: Loop, consts: dict, *, m, r, key: int, q_addr: int, best: str,
                logits_addr: int = 0, e_addr: int | None = None) -> list:
    """Bases, key, the row max and 1/s, the constants, best and the index vectors."""
    iota, tmp = TEMPS
    lines = [f"sli s1, {logits_addr}", f"sli s2, {q_addr}", f"sli s3, {int(key)}",
             f"sli s4, {f32_bits(m)}", f"vbcast {REGS['max']}, s4",
             f"sli s4, {f32_bits(r)}", f"vbcast {REGS['rinv']}, s4"]
    lines += [] if e_addr is None else [f"sli {REGS['landed']}, {e_addr}"]
    lines += [f"vli {REGS[role]}, {constant_word(value)}" for role, value in consts.items()]
    lines.append(f"viota {iota}")
    for k in range(STREAMS):
        index = loop.expansion.initial[f"i{k}"]
        lines += [f"vli {tmp}, {LANES * k} ; vli {loop.carried[f'best{k}']}, {best}",
                  f"vadd.u32 {index}, {iota}, {tmp}",
                  f"vmov {loop.carried[f'idx{k}']}, {index}"]
    return lines


@dataclass
class DrawProgram:
    """A draw's loop and the whole program around it."""

    kind: str
    method: str
    noise: str
    loop: Loop
    text: str


def draw_program(kind: str, method: str, noise: str, n_packed: int, *, m=0.0, r=1.0,
                 key: int = 0, config=None, q_addr: int | None = None, source: str = "logits",
                 logits_addr: int = 0, e_addr: int | None = None) -> DrawProgram:
    """Setup, the loop over ``n_packed`` packed vectors and the reduction (value ``s4``, token
    ``s5`` as float32). The logits at ``logits_addr``, q at ``q_addr`` (default: after the
    logits), the stored e (``source="e"``) at ``e_addr`` (default: after q)."""
    from rslab.machine import MachineConfig

    check_draw(kind, method, noise, source)
    config = config or MachineConfig()
    loop = draw_loop(kind, method, noise, n_packed, SlotModel.from_config(config), source)
    q_addr = logits_addr + PACKED_BYTES * n_packed if q_addr is None else q_addr
    if source == "e" and e_addr is None:
        e_addr = q_addr + 2 * PACKED_BYTES * n_packed
    lines = setup_lines(loop, constants(method, noise, config.log2_fn), m=m, r=r, key=key,
                        q_addr=q_addr, best="0" if draw(method).score == "mul" else "0xff800000",
                        logits_addr=logits_addr, e_addr=e_addr if source == "e" else None)
    tail = reduce_text([loop.carried[f"best{k}"] for k in range(STREAMS)],
                       [loop.carried[f"idx{k}"] for k in range(STREAMS)],
                       scratch=tuple(f"v{i}" for i in range(32, 40)))
    text = "\n".join(lines) + "\n" + loop.text + "\n".join(tail) + "\nhalt\n"
    return DrawProgram(kind, method, noise, loop, text)


@dataclass
class DrawResult:
    token: int
    cycles: int
    program: DrawProgram
    run: object


def row_vmem(kind: str, logits, q=None) -> tuple[dict, int]:
    """VMEM image (packed logits at 0, float32 q after them) and the packed vector count."""
    logits = np.asarray(logits, dtype=np.float32)
    n_packed = -(-logits.size // BLOCK)
    vmem = {0: pack_rows(logits)}
    if kind == "residual":
        if q is None:
            raise ValueError("q: the residual row needs the draft probabilities")
        qp = np.zeros(n_packed * BLOCK, dtype=np.float32)
        qp[:logits.size] = np.asarray(q, dtype=np.float32)
        vmem[PACKED_BYTES * n_packed] = qp
    return vmem, n_packed


def run_draw(kind: str, method: str, noise: str, logits, *, q=None, m=0.0, r=1.0, key: int = 0,
             config=None) -> DrawResult:
    """Run the loop on one row (BF16 logits; residual: float32 q, row max m and r = 1/s)."""
    from rslab.machine import MachineConfig, assemble, simulate

    config = config or MachineConfig()
    vmem, n_packed = row_vmem(kind, logits, q)
    program = draw_program(kind, method, noise, n_packed, m=m, r=r, key=key, config=config)
    run = simulate(assemble(program.text), config, vmem=vmem)
    return DrawResult(token_from_float(run.sreg_f32(5)), run.cycles, program, run)
