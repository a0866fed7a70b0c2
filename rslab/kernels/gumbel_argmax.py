"""The bonus Gumbel-argmax and the residual-Gumbel loops, modulo-scheduled (Fast path).

Per float32 vector of 128 tokens (token index i in each lane):

- noise (Div8 form, DESIGN §1 item 5): ``w = vrand(i, key)``; the uniform
  ``u = rtz((k + ½)·2^-24)`` with ``k = w >> 8`` is built exactly with integer
  ops: ``d = ((w >> 7) | 1)``, and bit 0 cleared when ``d ≥ 2^24`` (``k ≥ 2^23``),
  so ``u = float(d)·2^-25`` with no rounding; then ``u·c`` (one multiply by
  ``c·2^-25``), ``t = log2 c − fl(u·c)``, ``g = −3 − fl(t·⅛)``. These are the
  float32 values of ``rslab.numerics.gumbel``'s ``div8`` pipeline bit for bit
  (``a − b = −(b − a)`` and ``t·⅛ = t/8`` exactly in float32).
- bonus: ``score = l·LOG2E + g``.
- residual: ``p = exp2((l − m)·LOG2E)·r`` with ``r = 1/s`` from the caller
  (the core has no divide, so ``p = e·(1/s)``, not ``e/s``), ``w = max(p − q, 0)``,
  ``score = fl(w) + g`` (``fl(0) = −inf``).
- argmax update (:mod:`rslab.kernels.argmax`), then the index vector steps on.

The row max ``m`` and ``r = 1/s`` are inputs (the caller's acceptance pass
computes them); the key is the Fast path's per-(request, position, purpose)
key (INTERFACES: counter = token index).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rslab.kernels.argmax import (
    argmax_reference,
    argmax_update_ops,
    index_step_op,
    reduce_text,
    token_from_float,
)
from rslab.kernels.layout import BLOCK, LANES, pack_rows
from rslab.kernels.sumexp_pipeline import LOG2E, PACKED_BYTES, f32_bits
from rslab.numerics.rng import hw_random_words, uniform_from_words
from rslab.schedule import (
    Addr,
    Expansion,
    Op,
    Schedule,
    SlotModel,
    closure_of_consumers,
    expand,
    modulo_schedule,
)

KINDS = ("bonus", "residual")
DIVISOR = 8.0
CONSTANT_REGS = {"m": "v50", "log2e": "v51", "r": "v52", "zero": "v53", "one": "v54",
                 "cp": "v55", "log2c": "v56", "neg_log2k": "v57", "inv_k": "v58",
                 "step": "v59"}


def noise_constants(log2) -> dict:
    """Float32 constants of the Div8 pipeline for the fast log ``log2``."""
    from rslab.numerics.gumbel import first_layer_scale

    c = first_layer_scale(log2)
    return {"c": np.float32(c), "cp": np.float32(c * 2.0**-25),
            "log2c": np.float32(np.log2(np.float32(c))),
            "neg_log2k": np.float32(-np.log2(DIVISOR)), "inv_k": np.float32(1.0 / DIVISOR)}


def uniform_ops(k: int, key_sreg: str, consts=CONSTANT_REGS) -> list:
    """Worker k's word ``w{k}`` and ``f{k} = float(d)``, the uniform being ``f·2^-25``."""
    return [Op("vrand", f"w{k}", (f"i{k}", key_sreg)),
            Op("vshr", f"a{k}", (f"w{k}", "7")),
            Op("vor", f"o{k}", (f"a{k}", consts["one"])),
            Op("vshr", f"h{k}", (f"o{k}", "24")),
            Op("vxor", f"d{k}", (f"o{k}", f"h{k}")),
            Op("vcvt.u2f", f"f{k}", (f"d{k}",))]


def first_layer_ops(k: int, consts=CONSTANT_REGS) -> list:
    """``t{k} = log2 c − fl(u·c)`` from ``f{k}`` (``cp`` = c·2^-25)."""
    return [Op("vmul.f32", f"uc{k}", (f"f{k}", consts["cp"])),
            Op("vlog2", f"@l1_{k}", (f"uc{k}",)),
            Op("vpop", f"l1_{k}", (f"@l1_{k}",)),
            Op("vsub.f32", f"t{k}", (consts["log2c"], f"l1_{k}"))]


def _noise_ops(k: int, key_sreg: str) -> list:
    c = CONSTANT_REGS
    return uniform_ops(k, key_sreg) + first_layer_ops(k) + [
        Op("vmul.f32", f"tk{k}", (f"t{k}", c["inv_k"])),
        Op("vlog2", f"@l2_{k}", (f"tk{k}",)),
        Op("vpop", f"l2_{k}", (f"@l2_{k}",)),
        Op("vsub.f32", f"g{k}", (c["neg_log2k"], f"l2_{k}"))]


def gumbel_body(kind: str, *, packed_per_iter: int = 1, variant: str = "max",
                logits_base: str = "s1", q_base: str = "s2", key_sreg: str = "s3") -> list:
    """Loop body over ``packed_per_iter`` packed logit vectors (two float32 workers each)."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    if not isinstance(packed_per_iter, int) or packed_per_iter < 1:
        raise ValueError(f"packed_per_iter must be a positive int, got {packed_per_iter!r}")
    c = CONSTANT_REGS
    body = [Op("vld", f"x{b}", addr=Addr(logits_base, PACKED_BYTES * b,
                                          PACKED_BYTES * packed_per_iter))
            for b in range(packed_per_iter)]
    if kind == "residual":
        body += [Op("vld", f"q{k}", addr=Addr(q_base, PACKED_BYTES * k,
                                               2 * PACKED_BYTES * packed_per_iter))
                 for k in range(2 * packed_per_iter)]
    for b in range(packed_per_iter):
        for h, half in enumerate(("lo", "hi")):
            k = 2 * b + h
            body.append(Op(f"vunpack.{half}", f"l{k}", (f"x{b}",)))
            if kind == "bonus":
                body.append(Op("vmul.f32", f"y{k}", (f"l{k}", c["log2e"])))
                body += _noise_ops(k, key_sreg)
                body.append(Op("vadd.f32", f"sc{k}", (f"y{k}", f"g{k}")))
            else:
                body += [Op("vsub.f32", f"z{k}", (f"l{k}", c["m"])),
                         Op("vmul.f32", f"y{k}", (f"z{k}", c["log2e"])),
                         Op("vexp2", f"@e{k}", (f"y{k}",)),
                         Op("vpop", f"e{k}", (f"@e{k}",)),
                         Op("vmul.f32", f"p{k}", (f"e{k}", c["r"])),
                         Op("vsub.f32", f"dq{k}", (f"p{k}", f"q{k}")),
                         Op("vmax.f32", f"wr{k}", (f"dq{k}", c["zero"])),
                         Op("vlog2", f"@lw{k}", (f"wr{k}",)),
                         Op("vpop", f"lw{k}", (f"@lw{k}",))]
                body += _noise_ops(k, key_sreg)
                body.append(Op("vadd.f32", f"sc{k}", (f"lw{k}", f"g{k}")))
            body += argmax_update_ops(k, f"sc{k}", variant)
    body += [index_step_op(k, c["step"]) for k in range(2 * packed_per_iter)]
    return body


def _carried(workers: int) -> dict:
    regs = {}
    for k in range(workers):
        regs[f"best{k}"] = f"v{40 + 2 * k}"
        regs[f"idx{k}"] = f"v{41 + 2 * k}"
    return regs


@dataclass
class GumbelLoop:
    """A scheduled and expanded Gumbel-argmax loop fragment."""

    kind: str
    schedule: Schedule
    expansion: Expansion
    carried: dict
    workers: int

    @property
    def text(self) -> str:
        return self.expansion.text

    def figures(self, stalls_per_iter: float | None = None) -> dict:
        b = self.schedule.bounds
        return {"ii": self.schedule.ii, "res_mii": b.res_mii, "rec_mii": b.rec_mii,
                "stalls_per_iter": stalls_per_iter}


def gumbel_loop(kind: str, n_packed: int, *, packed_per_iter: int = 1, variant: str = "max",
                model: SlotModel | None = None, registers=None, carried=None,
                max_stages: int | None = None) -> GumbelLoop:
    """Schedule and expand the loop over ``n_packed`` packed vectors (remainder handled).

    Inputs the caller sets up: ``s1`` logits, ``s2`` q (float32), ``s3`` key, the
    constants of ``CONSTANT_REGS`` and the carried registers (see :func:`init_lines`).
    """
    if not isinstance(n_packed, int) or n_packed < 1:
        raise ValueError(f"n_packed must be a positive int, got {n_packed!r}")
    body = gumbel_body(kind, packed_per_iter=packed_per_iter, variant=variant)
    iterations = -(-n_packed // packed_per_iter)
    left = n_packed - (iterations - 1) * packed_per_iter
    missing = [f"x{b}" for b in range(left, packed_per_iter)]
    missing += [f"q{k}" for k in range(2 * left, 2 * packed_per_iter)] if kind == "residual" \
        else []
    drop = closure_of_consumers(body, missing) if missing else set()
    workers = 2 * packed_per_iter
    carried = carried or _carried(workers)
    drop -= {f"i{k}" for k in range(workers)}
    schedule = modulo_schedule(body, model, max_stages=max_stages,
                               reserve_scalar=2 if kind == "residual" else 1,
                               rotating=[f"i{k}" for k in range(workers)])
    if registers is None:
        reserved = set(CONSTANT_REGS.values()) | set(carried.values())
        registers = [f"v{i}" for i in range(64) if f"v{i}" not in reserved]
    expansion = expand(schedule, iterations, registers=registers, carried_registers=carried,
                       last_drop=drop)
    return GumbelLoop(kind, schedule, expansion, carried, workers)


def init_lines(loop: GumbelLoop, *, m, r, key: int, log2, logits_addr: int, q_addr: int,
               packed_per_iter: int) -> list:
    """Setup bundles: bases, key, constants, best = −inf and index vectors."""
    k = noise_constants(log2)
    c = CONSTANT_REGS
    lines = [f"sli s1, {logits_addr}", f"sli s2, {q_addr}", f"sli s3, {int(key)}",
             f"sli s4, {f32_bits(m)}", f"vbcast {c['m']}, s4 ; vli {c['log2e']}, {f32_bits(LOG2E)}",
             f"sli s4, {f32_bits(r)}", f"vbcast {c['r']}, s4 ; vli {c['zero']}, 0",
             f"vli {c['one']}, 1 ; vli {c['cp']}, {f32_bits(k['cp'])}",
             f"vli {c['log2c']}, {f32_bits(k['log2c'])} ; "
             f"vli {c['neg_log2k']}, {f32_bits(k['neg_log2k'])}",
             f"vli {c['inv_k']}, {f32_bits(k['inv_k'])} ; vli {c['step']}, "
             f"{BLOCK * packed_per_iter}",
             "viota v62"]
    for w in range(loop.workers):
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
    loop: GumbelLoop
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
    tail = reduce_text([loop.carried[f"best{w}"] for w in range(loop.workers)],
                       [loop.carried[f"idx{w}"] for w in range(loop.workers)],
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
