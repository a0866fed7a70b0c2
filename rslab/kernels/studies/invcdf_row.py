"""The inverse-CDF draw of a bonus or residual row on the core.

Two parts, in the order of :mod:`rslab.numerics.invcdf`:

1. **The pass** (modulo-scheduled, two packed vectors per iteration): the
   weights of the four float32 streams (``exp2((l − m)·LOG2E)``; residual
   ``max(p − q, 0)``; :mod:`rslab.kernels.ops.weights`), each summed and stored
   by :func:`rslab.kernels.ops.invcdf.block_sum_ops`, through
   :func:`rslab.kernels.loops.emit_loop`. Pinned to a scalar register, a sum
   cannot be rewritten before its store, 8 cycles (the XLU latency) after the
   reduction: two packed vectors per iteration keep that recurrence under the
   resource bound (a row of an odd number of packed vectors gets one more of
   −inf logits, whose zero block sums change nothing). No noise and no log.
2. **The tail** (straight-line, once per row): group sums and their running
   total, ``x = u₁·Σ``, the group by a compare and ``vred.argmax`` (a true mask
   lane reads as NaN, the largest), the Hillis–Steele scan of the group's block
   sums (:mod:`rslab.kernels.ops.invcdf`), the block, then the block's weights
   recomputed from the logits and scanned the same way, and the token (an integer
   in ``s5``). The uniforms and the recomputed weights are the loop bodies' own ops
   (:mod:`rslab.kernels.ops`) written out as straight-line code.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rslab.kernels.loops.emit import emit_loop
from rslab.kernels.loops.loop import Loop
from rslab.kernels.ops.invcdf import (
    block_sum_ops,
    first_past_lines,
    scan_lines,
    suffix_scan_lines,
)
from rslab.kernels.ops.rowmax import PACKED_BYTES
from rslab.kernels.ops.sumexp import exp_step, float_half, packed_loads
from rslab.kernels.ops.uniform import uniform_ops
from rslab.kernels.ops.weights import q_load, residual_weight_ops
from rslab.kernels.studies.draw_loops import REGS, STREAMS, row_vmem
from rslab.machine.asm import f32_bits
from rslab.machine.bf16 import BLOCK, LANES
from rslab.numerics.fastlog import LOG2E
from rslab.numerics.invcdf import check_invcdf_noise
from rslab.schedule import Addr, Op, SlotModel

KINDS = ("bonus", "residual")
PACKED_PER_ITER = 2
PASS_WORKERS = STREAMS * PACKED_PER_ITER
PASS_REGS = REGS | {"sums": "s6"}
BLOCK_SUM_REGS = ("s8", "s9", "s10", "s11")
U25 = f32_bits(np.float32(2.0**-25))
INF_BITS, MINUS_ONE_BITS = "0x7f800000", f32_bits(np.float32(-1.0))
WIDE48_CONSTANTS = {"c24": f32_bits(np.float32(2.0**-24)), "c48": f32_bits(np.float32(2.0**-48)),
                    "cff": 0xFFFFFF, "c1m": 0x1000000, "c128": f32_bits(np.float32(128.0))}


def linear_weight_ops(kind: str, k, logit: str, regs, **options) -> tuple[list, str]:
    """(ops, w): the bonus ``exp2((l − m)·LOG2E)`` or the residual ``max(p − q, 0)``."""
    if kind == "bonus":
        return exp_step(k, logit, regs)
    return residual_weight_ops(k, logit, f"q{k}", regs, **options)


def pass_body(kind: str) -> list:
    """Weights, block sums and their stores for ``PACKED_PER_ITER`` packed vectors."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    body = packed_loads(PACKED_PER_ITER, PASS_REGS)
    if kind == "residual":
        body += [q_load(k, PACKED_PER_ITER, PASS_REGS) for k in range(PASS_WORKERS)]
    for k in range(PASS_WORKERS):
        body.append(float_half(k, PACKED_PER_ITER, PASS_REGS))
        ops, w = linear_weight_ops(kind, k, f"l{k}", PASS_REGS)
        body += ops + block_sum_ops(k, w, PASS_REGS, PASS_WORKERS)
    return body


def straight_line(ops, names: dict) -> list:
    """Loop-body ops as straight-line assembly, value names to registers by ``names``."""
    out = []
    for op in ops:
        srcs = [names.get(s, s) for s in op.register_srcs()]
        dst = None if op.dst is None or op.is_push else names.get(op.dst, op.dst)
        out.append(op.assembly(dst, srcs, op.addr.offset if op.addr is not None else None))
    return out


@dataclass(frozen=True)
class Layout:
    """Byte addresses of the row's regions in VMEM."""

    n_packed: int
    logits: int
    q: int
    sums: int
    prefix: int
    scratch: int
    suffix: int

    @property
    def blocks(self) -> int:
        return 2 * self.n_packed

    @property
    def groups(self) -> int:
        return -(-self.blocks // LANES)


def layout(n_packed: int, kind: str) -> Layout:
    """Logits at 0, q after them (residual), then the block sums (after guard words),
    the group prefix (``D[−1] = 0`` then 128 lanes), a scan row after 128 zeros and a
    suffix-scan row before 128 zeros."""
    q = PACKED_BYTES * n_packed
    sums = q + (2 * PACKED_BYTES * n_packed if kind == "residual" else 0) + 4 * PASS_WORKERS
    groups = -(-2 * n_packed // LANES)
    prefix = sums + 4 * LANES * groups
    scratch = prefix + 4 + 4 * LANES
    return Layout(n_packed, 0, q, sums, prefix, scratch, scratch + 8 * LANES)






def _uniform_lines(counter: int, out: str, v: dict) -> list:
    """The uniform of the row's word ``counter`` in every lane (``ops.uniform``)."""
    ops, _ = uniform_ops("U", v["word"], {"one": v["one"], "2^-25": v["u25"]})
    names = {"uaU": v["tmp"], "ubU": v["tmp"], "ucU": v["word"], "udU": v["word"],
             "ufU": v["word"], "uU": out}
    return [f"vli {v['tmp']}, {counter}", f"vrand {v['word']}, {v['tmp']}, s3",
            *straight_line(ops, names)]


def _weights_lines(kind: str, L: Layout, v: dict) -> list:
    """The weights of block J (``s25``) recomputed as the pass computed them, into ``w``."""
    lines = ["sshr s26, s25, 1", "sshl s26, s26, 9", f"vld {v['x']}, [s26 + {L.logits}]",
             f"vunpack.lo {v['lo']}, {v['x']}", f"vunpack.hi {v['hi']}, {v['x']}",
             "sand s27, s25, 1", f"vbcast {v['tmp']}, s27", f"vcvt.u2f {v['tmp']}, {v['tmp']}",
             f"vcmpgt.f32 {v['tmp']}, {v['tmp']}, {v['zero']}",
             f"vsel {v['l']}, {v['tmp']}, {v['hi']}, {v['lo']}"]
    regs = {"max": v["m"], "log2e": v["log2e"], "rinv": v["r"], "zero": v["zero"]}
    load_q = Op("vld", "qJ", addr=Addr("s26", L.q, 0))
    ops, _ = linear_weight_ops(kind, "J", v["l"], regs, load_q=load_q)
    names = {"zJ": v["l"], "yJ": v["l"], "zyJ": v["l"], "eJ": v["w"], "pJ": v["w"],
             "qJ": v["q"], "dJ": v["w"], "wrJ": v["w"]}
    return lines + (["sshl s26, s25, 9"] if kind == "residual" else []) + straight_line(
        ops, names)


TAIL_VECTORS = ("zero", "one", "u25", "iota_f", "minus1", "tmp", "word", "u1", "u2", "xe", "sig",
                "D", "sums", "scan", "valid", "lane", "is_last", "past", "x", "lo", "hi", "l", "w",
                "q", "thr", "khi", "klo", "fa", "fb", "qscan", "hf", "side", *WIDE48_CONSTANTS)




def _wide48_lines(L: Layout, v: dict) -> list:
    """The lane of block J from both ends around its heaviest lane h (``wide48``), into s30."""
    lines = [f"vli {v[name]}, {word}" for name, word in WIDE48_CONSTANTS.items()]
    for counter, half in ((1, "khi"), (2, "klo")):
        lines += [f"vli {v['tmp']}, {counter}", f"vrand {v['word']}, {v['tmp']}, s3",
                  f"vshr {v[half]}, {v['word']}, 8"]
    lines += [f"vcvt.u2f {v['fa']}, {v['khi']}", f"vmul.f32 {v['fa']}, {v['fa']}, {v['c24']}",
              f"vcvt.u2f {v['fb']}, {v['klo']}", f"vmul.f32 {v['fb']}, {v['fb']}, {v['c48']}",
              f"vadd.f32 {v['u1']}, {v['fa']}, {v['fb']}",  # a
              f"vsub.u32 {v['khi']}, {v['cff']}, {v['khi']}",
              f"vsub.u32 {v['klo']}, {v['c1m']}, {v['klo']}",
              f"vcvt.u2f {v['fa']}, {v['khi']}", f"vmul.f32 {v['fa']}, {v['fa']}, {v['c24']}",
              f"vcvt.u2f {v['fb']}, {v['klo']}", f"vmul.f32 {v['fb']}, {v['fb']}, {v['c48']}",
              f"vadd.f32 {v['u2']}, {v['fa']}, {v['fb']}"]  # b
    lines += suffix_scan_lines(v["w"], v["qscan"], v["tmp"], L.suffix)
    lines += [f"vst {v['scan']}, [s0 + {L.scratch + 4 * LANES}]",
              f"vst {v['qscan']}, [s0 + {L.suffix}]",
              f"sld s14, [s0 + {L.scratch + 8 * LANES - 4}]",  # T = S_127
              f"vred.argmax s13, {v['w']}",  # h
              "sshl s23, s13, 2", f"sld s16, [s23 + {L.scratch + 4 * LANES - 4}]",  # S_{h-1}
              f"sld s17, [s23 + {L.suffix + 4}]",  # Q_{h+1}
              f"vbcast {v['thr']}, s14", f"vmul.f32 {v['u1']}, {v['u1']}, {v['thr']}",
              f"vmul.f32 {v['u2']}, {v['u2']}, {v['thr']}",
              f"vred.max s18, {v['u1']}", f"vred.max s20, {v['u2']}",  # a·T, b·T
              f"vcmpgt.f32 {v['valid']}, {v['w']}, {v['zero']}",
              f"vbcast {v['hf']}, s13", f"vcvt.u2f {v['hf']}, {v['hf']}",
              "sflt s21, s18, s16", "bnz s21, wide48_left",
              "sflt s22, s20, s17", "bnz s22, wide48_right",
              "smov s30, s13", "jmp wide48_done",
              f"wide48_left: vcmplt.f32 {v['side']}, {v['iota_f']}, {v['hf']}",
              f"vand {v['side']}, {v['side']}, {v['valid']}",
              f"vsel {v['lane']}, {v['side']}, {v['iota_f']}, {v['minus1']}",
              f"vred.max s28, {v['lane']}", f"vbcast {v['lane']}, s28",
              f"vcmpeq.f32 {v['is_last']}, {v['iota_f']}, {v['lane']}",
              f"vcmpgt.f32 {v['past']}, {v['scan']}, {v['u1']}",
              f"vand {v['past']}, {v['past']}, {v['side']}",
              f"vor {v['past']}, {v['past']}, {v['is_last']}",
              f"vred.argmax s30, {v['past']}", "jmp wide48_done",
              f"wide48_right: vcmpgt.f32 {v['side']}, {v['iota_f']}, {v['hf']}",
              f"vand {v['side']}, {v['side']}, {v['valid']}",
              f"vsel {v['lane']}, {v['side']}, {v['iota_f']}, {v['c128']}",
              f"vred.min s28, {v['lane']}", f"vbcast {v['lane']}, s28",
              f"vcmpeq.f32 {v['is_last']}, {v['iota_f']}, {v['lane']}",
              f"vcmpgt.f32 {v['past']}, {v['qscan']}, {v['u2']}",
              f"vand {v['past']}, {v['past']}, {v['side']}",
              f"vor {v['past']}, {v['past']}, {v['is_last']}",
              f"vsel {v['lane']}, {v['past']}, {v['iota_f']}, {v['minus1']}",
              f"vred.argmax s30, {v['lane']}",
              "wide48_done: nop"]
    return lines


def tail_lines(kind: str, noise: str, L: Layout, reg: dict) -> list:
    """Straight-line code from the stored block sums to the token in ``s5``."""
    v = {name: f"v{i}" for i, name in enumerate(TAIL_VECTORS)}
    v.update(m=reg["max"], r=reg["rinv"], log2e=reg["log2e"])
    last = L.sums + 4 * (L.blocks - PASS_WORKERS)
    lines = [f"sst {reg}, [s0 + {last + 4 * k}]" for k, reg in enumerate(BLOCK_SUM_REGS)]
    lines += [f"vli {v['zero']}, 0", f"vli {v['one']}, 1", f"vli {v['u25']}, {U25}",
             f"viota {v['iota_f']}", f"vcvt.u2f {v['iota_f']}, {v['iota_f']}",
             f"vli {v['minus1']}, {MINUS_ONE_BITS}", f"vli {v['tmp']}, {INF_BITS}",
             f"vst {v['tmp']}, [s0 + {L.prefix + 4}]", "sli s12, 0"]
    for k in range(L.groups):  # D_k = D_{k-1} + tree sum of group k's block sums
        lines += [f"vld {v['sums']}, [s0 + {L.sums + 4 * LANES * k}]", f"vred.add s13, {v['sums']}",
                  "sfadd s12, s12, s13", f"sst s12, [s0 + {L.prefix + 4 + 4 * k}]"]
    lines += _uniform_lines(0, v["u1"], v)
    if noise == "wide":
        lines += _uniform_lines(1, v["u2"], v)
    lines += [f"vbcast {v['sig']}, s12", f"vmul.f32 {v['xe']}, {v['u1']}, {v['sig']}",
              "ssub s14, s12, 1", f"vbcast {v['sig']}, s14",
              f"vmin.f32 {v['xe']}, {v['xe']}, {v['sig']}",
              f"vld {v['D']}, [s0 + {L.prefix + 4}]",
              f"vcmpgt.f32 {v['past']}, {v['D']}, {v['xe']}",
              f"vred.argmax s15, {v['past']}",  # the group k*
              "sshl s16, s15, 2", f"sld s17, [s16 + {L.prefix}]", f"vred.max s18, {v['xe']}",
              "sfsub s19, s18, s17",  # r1
              "sshl s20, s15, 9", f"vld {v['sums']}, [s20 + {L.sums}]"]
    lines += scan_lines(v["sums"], v["scan"], v["tmp"], L.scratch)
    lines += [f"vbcast {v['thr']}, s19"]
    lines += first_past_lines(v["scan"], v["sums"], v["thr"], "s21", v)  # the block j*
    lines += [f"vst {v['scan']}, [s0 + {L.scratch + 4 * LANES}]", "sshl s22, s21, 2",
              f"sld s23, [s22 + {L.scratch + 4 * LANES - 4}]", "sfsub s24, s19, s23",  # r2
              "sshl s25, s15, 7", "sadd s25, s25, s21"]  # the block J
    lines += _weights_lines(kind, L, v)
    lines += scan_lines(v["w"], v["scan"], v["tmp"], L.scratch)
    if noise == "wide48":
        return lines + _wide48_lines(L, v) + ["sshl s31, s25, 7", "sadd s5, s31, s30"]
    if noise == "wide":
        lines += [f"vst {v['scan']}, [s0 + {L.scratch + 4 * LANES}]",
                  f"sld s29, [s0 + {L.scratch + 8 * LANES - 4}]", f"vbcast {v['thr']}, s29",
                  f"vmul.f32 {v['thr']}, {v['u2']}, {v['thr']}"]
    else:
        lines += [f"vbcast {v['thr']}, s24"]
    lines += first_past_lines(v["scan"], v["w"], v["thr"], "s30", v)  # the lane
    return lines + ["sshl s31, s25, 7", "sadd s5, s31, s30"]


@dataclass
class InvcdfKernel:
    """The pass loop, the memory layout and the program text."""

    kind: str
    noise: str
    loop: Loop
    layout: Layout
    text: str


def pass_loop(kind: str, n_packed: int, model: SlotModel) -> Loop:
    """The pipelined pass over ``n_packed`` packed vectors (``emit_loop``, cached)."""
    carried = dict(zip((f"b{k}" for k in range(PASS_WORKERS)), BLOCK_SUM_REGS, strict=True))
    pool = [f"v{i}" for i in range(64) if f"v{i}" not in set(REGS.values())]
    return emit_loop(pass_body(kind), n_packed // PACKED_PER_ITER, "pipelined", carried=carried,
                     pool=pool, model=model, per_iteration=PACKED_PER_ITER)


def invcdf_program(kind: str, noise: str, n_packed: int, *, m=0.0, r=1.0, key: int = 0,
                   config=None) -> InvcdfKernel:
    """The whole program for one row of ``n_packed`` packed vectors."""
    from rslab.machine import MachineConfig

    check_invcdf_noise(noise)
    if not isinstance(n_packed, int) or n_packed < 1 or n_packed % PACKED_PER_ITER:
        raise ValueError(f"n_packed must be a positive multiple of {PACKED_PER_ITER}, "
                         f"got {n_packed!r}")
    config = config or MachineConfig()
    loop = pass_loop(kind, n_packed, SlotModel.from_config(config))
    L = layout(n_packed, kind)
    lines = [f"sli s1, {L.logits}", f"sli s2, {L.q}", f"sli s6, {L.sums}", f"sli s3, {int(key)}",
             f"sli s4, {f32_bits(m)}", f"vbcast {REGS['max']}, s4",
             f"sli s4, {f32_bits(r)}", f"vbcast {REGS['rinv']}, s4",
             *(f"sli {reg}, 0" for reg in BLOCK_SUM_REGS),
             f"vli {REGS['log2e']}, {f32_bits(LOG2E)}", f"vli {REGS['zero']}, 0"]
    text = "\n".join(lines) + "\n" + loop.text + "\n".join(
        tail_lines(kind, noise, L, REGS)) + "\nhalt\n"
    return InvcdfKernel(kind, noise, loop, L, text)


@dataclass
class InvcdfResult:
    token: int
    cycles: int
    kernel: InvcdfKernel
    run: object


def run_invcdf(kind: str, noise: str, logits, *, q=None, m=0.0, r=1.0, key: int = 0,
               config=None) -> InvcdfResult:
    """Run the kernel on one row (BF16 logits; the row max m; residual: float32 q, r = 1/s)."""
    from rslab.machine import MachineConfig, assemble, simulate

    config = config or MachineConfig()
    logits = np.asarray(logits, np.float32)
    whole = -(-logits.size // (BLOCK * PACKED_PER_ITER)) * BLOCK * PACKED_PER_ITER
    padded = np.full(whole, -np.inf, np.float32)
    padded[:logits.size] = logits
    qp = None if q is None else np.concatenate([q, np.zeros(whole - logits.size, np.float32)])
    vmem, n_packed = row_vmem(kind, padded, qp)
    kernel = invcdf_program(kind, noise, n_packed, m=m, r=r, key=key, config=config)
    run = simulate(assemble(kernel.text), config, vmem=vmem)
    return InvcdfResult(int(run.sreg(5)), run.cycles, kernel, run)

