"""Bonus and residual rows drawn by argmax on the core: Gumbel-max variants and the race.

One packed vector (two float32 workers of 128 tokens) per iteration,
modulo-scheduled with :mod:`rslab.schedule`; the body per worker k:

* weights — bonus: ``l·LOG2E`` (Gumbel) or ``e = exp2((l − m)·LOG2E)`` (race,
  which needs the row max m); residual: ``w = max(exp2((l − m)·LOG2E)·r − q, 0)``
  and, for Gumbel, ``fl(w)``;
* the uniform ``f·2^-25`` from the token's word (``gumbel_argmax.uniform_ops``);
* noise — ``div8`` / ``div32``: the scaled first layer ``t``, ``g = −log2 k − fl(t/k)``;
  ``rangered``: the same ``t``, then the range-reduced second log
  (:mod:`rslab.numerics.range_reduction`: four integer ops, the magic-number
  conversion of the exponent, one log); race ``scaled``: ``E = t``, race ``naive``:
  ``E = 0 − fl(u)``, then ``R = rcp(E)``;
* score ``a + g`` (Gumbel) or ``w·R`` (race), then the argmax update.

The race keeps ``best`` from 0 with the ``select`` update, so a score that is not
positive (zero weight, or ``0·inf`` = NaN) never wins, as the reference's −inf.
The tokens are those of :mod:`rslab.reference` / :mod:`rslab.row_draws` on the
same weights and key (``gumbel_reference`` … in the tests).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rslab.kernels.argmax import argmax_update_ops, index_step_op, reduce_text, token_from_float
from rslab.kernels.gumbel_argmax import first_layer_ops, uniform_ops
from rslab.kernels.layout import BLOCK, LANES, pack_rows
from rslab.kernels.sumexp_pipeline import LOG2E, PACKED_BYTES, f32_bits
from rslab.numerics.gumbel import first_layer_scale, parse_divisor
from rslab.numerics.range_reduction import (
    EXPONENT_128,
    EXPONENT_MASK,
    MAGIC_BITS,
    MAGIC_PLUS_128,
    ROUND_BIT,
)
from rslab.schedule import Addr, Op, SlotModel, modulo_schedule

KINDS = ("bonus", "residual")
DRAWS = (("gumbel", "div8"), ("gumbel", "div32"), ("gumbel", "rangered"),
         ("race", "scaled"), ("race", "naive"))
"""The (method, noise) pairs with a loop on the core."""
WORKERS = 2


def check_draw(kind, method, noise) -> None:
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    if (method, noise) not in DRAWS:
        raise ValueError(f"(method, noise) must be one of {DRAWS}, got {(method, noise)!r}")


def constants(kind: str, method: str, noise: str, log2) -> dict:
    """Float32 / integer words of the loop's constant registers (name → 32-bit word)."""
    c = {"log2e": f32_bits(LOG2E), "zero": 0, "one": 1, "step": BLOCK}
    scaled = noise != "naive"
    scale = first_layer_scale(log2) if scaled else 1.0
    c["cp"] = f32_bits(np.float32(scale * 2.0**-25))
    c["log2c"] = f32_bits(np.float32(np.log2(np.float32(scale))))
    k = parse_divisor(noise) if method == "gumbel" else None
    if k is not None:
        c["inv_k"] = f32_bits(np.float32(1.0 / k))
        c["neg_log2k"] = f32_bits(np.float32(-np.log2(k)))
    if noise == "rangered":
        c.update(round=int(ROUND_BIT), expmask=int(EXPONENT_MASK), exp128=int(EXPONENT_128),
                 magic=int(MAGIC_BITS), magic128=f32_bits(MAGIC_PLUS_128))
    return c


def weight_ops(kind, method, k, reg) -> tuple[list, str]:
    """Ops from the unpacked logits ``l{k}`` to the weight (linear ``w``, or ``fl(w)``)."""
    if kind == "bonus" and method == "gumbel":
        return [Op("vmul.f32", f"y{k}", (f"l{k}", reg["log2e"]))], f"y{k}"
    ops = [Op("vsub.f32", f"z{k}", (f"l{k}", reg["m"])),
           Op("vmul.f32", f"y{k}", (f"z{k}", reg["log2e"])),
           Op("vexp2", f"@e{k}", (f"y{k}",)),
           Op("vpop", f"e{k}", (f"@e{k}",))]
    out = f"e{k}"
    if kind == "residual":
        ops += [Op("vmul.f32", f"p{k}", (f"e{k}", reg["r"])),
                Op("vsub.f32", f"dq{k}", (f"p{k}", f"q{k}")),
                Op("vmax.f32", f"wr{k}", (f"dq{k}", reg["zero"]))]
        out = f"wr{k}"
        if method == "gumbel":
            ops += [Op("vlog2", f"@lw{k}", (out,)), Op("vpop", f"lw{k}", (f"@lw{k}",))]
            out = f"lw{k}"
    return ops, out


def _noise_ops(method, noise, k, reg) -> tuple[list, str]:
    """Ops from ``f{k}`` to the noise (``g{k}``) or the race's ``R{k}``."""
    if noise == "naive":
        ops = [Op("vmul.f32", f"uc{k}", (f"f{k}", reg["cp"])),
               Op("vlog2", f"@l1_{k}", (f"uc{k}",)),
               Op("vpop", f"l1_{k}", (f"@l1_{k}",)),
               Op("vsub.f32", f"t{k}", (reg["zero"], f"l1_{k}"))]
    else:
        ops = first_layer_ops(k, reg)
    if method == "race":
        return ops + [Op("vrcp", f"@R{k}", (f"t{k}",)), Op("vpop", f"R{k}", (f"@R{k}",))], f"R{k}"
    if noise == "rangered":
        ops += [Op("vadd.u32", f"s0_{k}", (f"t{k}", reg["round"])),
                Op("vand", f"s{k}", (f"s0_{k}", reg["expmask"])),
                Op("vsub.u32", f"m0_{k}", (f"t{k}", f"s{k}")),
                Op("vadd.u32", f"mm{k}", (f"m0_{k}", reg["exp128"])),
                Op("vshr", f"qe{k}", (f"s{k}", "23")),
                Op("vor", f"fe{k}", (f"qe{k}", reg["magic"])),
                Op("vsub.f32", f"ne{k}", (reg["magic128"], f"fe{k}")),
                Op("vlog2", f"@l2_{k}", (f"mm{k}",)),
                Op("vpop", f"l2_{k}", (f"@l2_{k}",)),
                Op("vsub.f32", f"g{k}", (f"ne{k}", f"l2_{k}"))]
    else:
        ops += [Op("vmul.f32", f"tk{k}", (f"t{k}", reg["inv_k"])),
                Op("vlog2", f"@l2_{k}", (f"tk{k}",)),
                Op("vpop", f"l2_{k}", (f"@l2_{k}",)),
                Op("vsub.f32", f"g{k}", (reg["neg_log2k"], f"l2_{k}"))]
    return ops, f"g{k}"


def argmax_variant(method: str) -> str:
    """The argmax update: ``max`` for Gumbel, ``select`` (NaN never wins) for the race."""
    return "select" if method == "race" else "max"


def draw_body(kind: str, method: str, noise: str, reg: dict, *, logits_base="s1", q_base="s2",
              key_sreg="s3") -> list:
    """The loop body over one packed vector (two float32 workers)."""
    check_draw(kind, method, noise)
    body = [Op("vld", "x0", addr=Addr(logits_base, 0, PACKED_BYTES))]
    if kind == "residual":
        body += [Op("vld", f"q{k}", addr=Addr(q_base, PACKED_BYTES * k, 2 * PACKED_BYTES))
                 for k in range(WORKERS)]
    for k, half in enumerate(("lo", "hi")):
        body.append(Op(f"vunpack.{half}", f"l{k}", ("x0",)))
        weighting, weight = weight_ops(kind, method, k, reg)
        noise_ops, noise_value = _noise_ops(method, noise, k, reg)
        score = Op("vmul.f32" if method == "race" else "vadd.f32", f"sc{k}", (weight, noise_value))
        body += weighting + uniform_ops(k, key_sreg, reg) + noise_ops + [score]
        body += argmax_update_ops(k, f"sc{k}", argmax_variant(method))
    return body + [index_step_op(k, reg["step"]) for k in range(WORKERS)]


def register_map(names) -> dict:
    """Constant registers from v63 down, then best/idx of each worker, iota and a temporary."""
    regs = {}
    free = iter(range(63, -1, -1))
    for name in ["m", "r", *names]:
        regs[name] = f"v{next(free)}"
    for k in range(WORKERS):
        regs[f"best{k}"], regs[f"idx{k}"] = f"v{next(free)}", f"v{next(free)}"
    regs["iota"], regs["tmp"] = f"v{next(free)}", f"v{next(free)}"
    return regs


@dataclass
class DrawLoop:
    """A scheduled draw loop and the program around it."""

    kind: str
    method: str
    noise: str
    schedule: object
    expansion: object
    registers: dict
    text: str


def draw_program(kind: str, method: str, noise: str, n_packed: int, *, m=0.0, r=1.0,
                 key: int = 0, config=None, q_addr: int | None = None) -> DrawLoop:
    """Setup, the loop over ``n_packed`` packed vectors and the reduction (value ``s4``, token
    ``s5`` as float32)."""
    from rslab.machine import MachineConfig
    from rslab.schedule import expand

    check_draw(kind, method, noise)
    if not isinstance(n_packed, int) or n_packed < 1:
        raise ValueError(f"n_packed must be a positive int, got {n_packed!r}")
    config = config or MachineConfig()
    words = constants(kind, method, noise, config.log2_fn)
    reg = register_map(words)
    body = draw_body(kind, method, noise, reg)
    schedule = modulo_schedule(body, SlotModel.from_config(config),
                               reserve_scalar=2 if kind == "residual" else 1,
                               rotating=[f"i{k}" for k in range(WORKERS)])
    carried = {f"{v}{k}": reg[f"{v}{k}"] for k in range(WORKERS) for v in ("best", "idx")}
    pool = [f"v{i}" for i in range(64) if f"v{i}" not in set(reg.values())]
    expansion = expand(schedule, n_packed, registers=pool, carried_registers=carried)
    q_addr = PACKED_BYTES * n_packed if q_addr is None else q_addr
    lines = ["sli s1, 0", f"sli s2, {q_addr}", f"sli s3, {int(key)}",
             f"sli s4, {f32_bits(m)}", f"vbcast {reg['m']}, s4",
             f"sli s4, {f32_bits(r)}", f"vbcast {reg['r']}, s4"]
    lines += [f"vli {reg[name]}, {word}" for name, word in words.items()]
    best = "0" if method == "race" else "0xff800000"
    lines.append(f"viota {reg['iota']}")
    for k in range(WORKERS):
        index = expansion.initial[f"i{k}"]
        lines += [f"vli {reg['tmp']}, {LANES * k} ; vli {reg[f'best{k}']}, {best}",
                  f"vadd.u32 {index}, {reg['iota']}, {reg['tmp']}",
                  f"vmov {reg[f'idx{k}']}, {index}"]
    tail = reduce_text([reg[f"best{k}"] for k in range(WORKERS)],
                       [reg[f"idx{k}"] for k in range(WORKERS)],
                       scratch=tuple(f"v{i}" for i in range(32, 40)))
    text = "\n".join(lines) + "\n" + expansion.text + "\n".join(tail) + "\nhalt\n"
    return DrawLoop(kind, method, noise, schedule, expansion, reg, text)


@dataclass
class DrawResult:
    token: int
    cycles: int
    loop: DrawLoop
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
    loop = draw_program(kind, method, noise, n_packed, m=m, r=r, key=key, config=config)
    run = simulate(assemble(loop.text), config, vmem=vmem)
    return DrawResult(token_from_float(run.sreg_f32(5)), run.cycles, loop, run)
