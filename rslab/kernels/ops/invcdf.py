"""The inverse CDF's pieces on the core: the pass's block sums, and the tail after the pass.

- :func:`pass_body`: one iteration of the pass over a row, two packed vectors: the
  linear weights of four float32 streams (bonus ``exp2((l − m)·LOG2E)``, residual
  ``max(p − q, 0)``), each summed and stored by :func:`block_sum_ops`: the cross-lane
  unit's ``vred.add`` and an ``sst``. The sum reaches its store one iteration later
  (``Use(b, 1)``), which pins it to a scalar register (a carried value): the last ones
  are stored after the loop, by :func:`sums_lines`.
- :func:`sums_lines` and :func:`pick_lines`, the tail (straight-line, once per row, in
  the order of :mod:`rslab.numerics.invcdf`): the group sums and their running total Σ
  (in ``s12``), then ``x = u₁·Σ``, the group, the block, the block's weights recomputed
  from the logits, the lane and the token (an integer in ``s5``).
- :func:`scan_lines` / :func:`suffix_scan_lines`: the inclusive Hillis–Steele scan of
  a vector (prefix or suffix), seven store / shifted-load / add steps over a row of
  zeros (:data:`rslab.numerics.invcdf.SCAN_STEPS`), as straight-line assembly.
- :func:`first_past_lines`: the first lane with a positive weight whose scan passes a
  threshold, else the last positive lane (a true mask lane reads as NaN, the largest,
  for ``vred.argmax``).

Registers (``regs``): ``sums`` the base of the block-sum row, and those of
:mod:`rslab.kernels.ops.sumexp` and :mod:`rslab.kernels.ops.weights`. The tail takes
``v0``–``v36`` and ``s12``–``s31`` as scratch, reads the row's key in ``s3`` and the
row max, 1/s and LOG2E from the registers ``reg`` names.
"""

from dataclasses import dataclass

import numpy as np

from rslab.kernels.ops.sumexp import packed_loads
from rslab.kernels.ops.uniform import uniform_ops
from rslab.kernels.ops.weights import linear_weight_ops, q_load, stream_weight_ops
from rslab.machine.asm import f32_bits
from rslab.machine.bf16 import LANES
from rslab.numerics.invcdf import SCAN_STEPS
from rslab.schedule import Addr, Op, Use

PACKED_PER_ITER = 2
"""Packed vectors per iteration of the pass: the recurrence from a block sum to its store
(the cross-lane latency) stays under the resource bound."""
PASS_WORKERS = 2 * PACKED_PER_ITER
SOURCES = ("packed", "landed", "e")
U25 = f32_bits(np.float32(2.0**-25))
INF_BITS, MINUS_ONE_BITS = "0x7f800000", f32_bits(np.float32(-1.0))
WIDE48_CONSTANTS = {"c24": f32_bits(np.float32(2.0**-24)), "c48": f32_bits(np.float32(2.0**-48)),
                    "cff": 0xFFFFFF, "c1m": 0x1000000, "c128": f32_bits(np.float32(128.0))}
TAIL_VECTORS = ("zero", "one", "u25", "iota_f", "minus1", "tmp", "word", "u1", "u2", "xe", "sig",
                "D", "sums", "scan", "valid", "lane", "is_last", "past", "x", "lo", "hi", "l", "w",
                "q", "thr", "khi", "klo", "fa", "fb", "qscan", "hf", "side", *WIDE48_CONSTANTS)
TOTAL = "s12"
"""The scalar register holding the row's float32 total Σ after :func:`sums_lines`."""
TOKEN = "s5"
"""The scalar register holding the token after :func:`pick_lines`."""


@dataclass(frozen=True)
class Layout:
    """Byte addresses of a row's regions in VMEM: the packed logits, q (float32), the block
    sums (after guard words the pass's first stores write), the group prefix (``D[−1] = 0``
    then 128 lanes), a scan row after 128 zeros and a suffix-scan row before 128 zeros."""

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


def scratch_bytes(n_packed: int) -> int:
    """Bytes of the regions after the q row: guard words, block sums, prefix, scan rows."""
    groups = -(-2 * n_packed // LANES)
    return 4 * PASS_WORKERS + 4 * LANES * groups + 4 + 4 * LANES + 16 * LANES


def scratch_layout(n_packed: int, logits: int, q: int, start: int) -> Layout:
    """The :class:`Layout` of a row with its scratch regions from byte ``start`` on."""
    sums = start + 4 * PASS_WORKERS
    prefix = sums + 4 * LANES * (-(-2 * n_packed // LANES))
    scratch = prefix + 4 + 4 * LANES
    return Layout(n_packed, logits, q, sums, prefix, scratch, scratch + 8 * LANES)


def pass_body(kind: str, regs, source: str = "packed", late: bool = True) -> list:
    """Weights, block sums and their stores for ``PACKED_PER_ITER`` packed vectors; ``source``:
    the logits as the packed row, the landed float32 halves, or (residual) the stored e;
    ``late``: each sum stored one iteration later (:func:`block_sum_ops`)."""
    if kind not in ("bonus", "residual"):
        raise ValueError(f"kind must be 'bonus' or 'residual', got {kind!r}")
    if source not in SOURCES or (source == "e" and kind != "residual"):
        raise ValueError(f"source must be one of {SOURCES} (e: residual only), got {source!r}")
    u = PACKED_PER_ITER
    body = packed_loads(u, regs) if source == "packed" else []
    if kind == "residual" and source != "e":
        body += [q_load(k, u, regs) for k in range(PASS_WORKERS)]
    for k in range(PASS_WORKERS):
        ops, w = stream_weight_ops(kind, k, u, regs, source, load_q=source == "e")
        body += ops + block_sum_ops(k, w, regs, PASS_WORKERS, late)
    return body


def block_sum_ops(k: int, w: str, regs, streams: int, late: bool = True) -> list:
    """Stream k's ``b{k} = Σ w`` and its store, the iteration's ``streams`` sums in order;
    ``late``: the store of the previous iteration's sum (a software-pipelined loop), else
    of this one's (the natural order of a loop that is not)."""
    store = (Use(f"b{k}", 1), 4 * (k - streams)) if late else (f"b{k}", 4 * k)
    return [Op("vred.add", f"b{k}", (w,)),
            Op("sst", None, (store[0],), name=f"st{k}",
               addr=Addr(regs["sums"], store[1], 4 * streams))]


def scan_lines(src: str, dst: str, tmp: str, row: int) -> list:
    """Inclusive prefix scan of ``src`` into ``dst`` (``row``: 128 zeros, then scratch)."""
    lines = [f"vmov {dst}, {src}"]
    for i in range(SCAN_STEPS):
        lines += [f"vst {dst}, [s0 + {row + 4 * LANES}]",
                  f"vld {tmp}, [s0 + {row + 4 * LANES - 4 * (1 << i)}]",
                  f"vadd.f32 {dst}, {dst}, {tmp}"]
    return lines


def suffix_scan_lines(src: str, dst: str, tmp: str, row: int) -> list:
    """Inclusive suffix scan (``Q_l += Q_{l+2^i}``; ``row``: scratch, then 128 zeros)."""
    lines = [f"vmov {dst}, {src}"]
    for i in range(SCAN_STEPS):
        lines += [f"vst {dst}, [s0 + {row}]", f"vld {tmp}, [s0 + {row + 4 * (1 << i)}]",
                  f"vadd.f32 {dst}, {dst}, {tmp}"]
    return lines


def first_past_lines(scan: str, weights: str, threshold: str, out: str, v: dict) -> list:
    """``out`` = the first positive lane with scan > threshold, else the last positive lane
    (``v``: vector registers by role, ``zero``, ``iota_f``, ``minus1`` set)."""
    return [f"vcmpgt.f32 {v['valid']}, {weights}, {v['zero']}",
            f"vsel {v['lane']}, {v['valid']}, {v['iota_f']}, {v['minus1']}",
            "vred.max s28, " + v["lane"],
            f"vbcast {v['lane']}, s28",
            f"vcmpeq.f32 {v['is_last']}, {v['iota_f']}, {v['lane']}",
            f"vcmpgt.f32 {v['past']}, {scan}, {threshold}",
            f"vand {v['past']}, {v['past']}, {v['valid']}",
            f"vor {v['past']}, {v['past']}, {v['is_last']}",
            f"vred.argmax {out}, {v['past']}"]


def straight_line(ops, names: dict) -> list:
    """Loop-body ops as straight-line assembly, value names to registers by ``names``."""
    out = []
    for op in ops:
        srcs = [names.get(s, s) for s in op.register_srcs()]
        dst = None if op.dst is None or op.is_push else names.get(op.dst, op.dst)
        out.append(op.assembly(dst, srcs, op.addr.offset if op.addr is not None else None))
    return out


def tail_registers(reg: dict | None = None) -> dict:
    """The tail's vector registers by role (``v0``…), and the row max, 1/s and LOG2E of
    ``reg`` (``max``, ``rinv``, ``log2e``) when given."""
    v = {name: f"v{i}" for i, name in enumerate(TAIL_VECTORS)}
    return v | ({"m": reg["max"], "r": reg["rinv"], "log2e": reg["log2e"]} if reg else {})


def last_sums_lines(L: Layout, block_sum_regs) -> list:
    """The pass's last block sums (its carried registers) stored in the block-sum row."""
    last = L.sums + 4 * (L.blocks - PASS_WORKERS)
    return [f"sst {r}, [s0 + {last + 4 * k}]" for k, r in enumerate(block_sum_regs)]


def sums_lines(L: Layout, block_sum_regs) -> list:
    """The pass's last block sums stored, the group sums and their running total Σ (in
    ``TOTAL``); the group prefix ``D`` stored (lanes past the last group +inf)."""
    v = tail_registers()
    lines = last_sums_lines(L, block_sum_regs)
    lines += [f"vli {v['tmp']}, {INF_BITS}", f"vst {v['tmp']}, [s0 + {L.prefix + 4}]",
              f"sli {TOTAL}, 0"]
    for k in range(L.groups):  # D_k = D_{k-1} + tree sum of group k's block sums
        lines += [f"vld {v['sums']}, [s0 + {L.sums + 4 * LANES * k}]",
                  f"vred.add s13, {v['sums']}", f"sfadd {TOTAL}, {TOTAL}, s13",
                  f"sst {TOTAL}, [s0 + {L.prefix + 4 + 4 * k}]"]
    return lines


def _uniform_lines(counter: int, out: str, v: dict) -> list:
    """The uniform of the row's word ``counter`` in every lane (``ops.uniform``)."""
    ops, _ = uniform_ops("U", v["word"], {"one": v["one"], "2^-25": v["u25"]})
    names = {"uaU": v["tmp"], "ubU": v["tmp"], "ucU": v["word"], "udU": v["word"],
             "ufU": v["word"], "uU": out}
    return [f"vli {v['tmp']}, {counter}", f"vrand {v['word']}, {v['tmp']}, s3",
            *straight_line(ops, names)]


def weights_lines(kind: str, L: Layout, v: dict) -> list:
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


def _wide48_lines(L: Layout, v: dict, tag: str) -> list:
    """The lane of block J from both ends around its heaviest lane h (``wide48``), into s30
    (``tag`` makes its labels unique in a program)."""
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
    left, right, done = (f"wide48_{name}{tag}" for name in ("left", "right", "done"))
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
              "sflt s21, s18, s16", f"bnz s21, {left}",
              "sflt s22, s20, s17", f"bnz s22, {right}",
              "smov s30, s13", f"jmp {done}",
              f"{left}: vcmplt.f32 {v['side']}, {v['iota_f']}, {v['hf']}",
              f"vand {v['side']}, {v['side']}, {v['valid']}",
              f"vsel {v['lane']}, {v['side']}, {v['iota_f']}, {v['minus1']}",
              f"vred.max s28, {v['lane']}", f"vbcast {v['lane']}, s28",
              f"vcmpeq.f32 {v['is_last']}, {v['iota_f']}, {v['lane']}",
              f"vcmpgt.f32 {v['past']}, {v['scan']}, {v['u1']}",
              f"vand {v['past']}, {v['past']}, {v['side']}",
              f"vor {v['past']}, {v['past']}, {v['is_last']}",
              f"vred.argmax s30, {v['past']}", f"jmp {done}",
              f"{right}: vcmpgt.f32 {v['side']}, {v['iota_f']}, {v['hf']}",
              f"vand {v['side']}, {v['side']}, {v['valid']}",
              f"vsel {v['lane']}, {v['side']}, {v['iota_f']}, {v['c128']}",
              f"vred.min s28, {v['lane']}", f"vbcast {v['lane']}, s28",
              f"vcmpeq.f32 {v['is_last']}, {v['iota_f']}, {v['lane']}",
              f"vcmpgt.f32 {v['past']}, {v['qscan']}, {v['u2']}",
              f"vand {v['past']}, {v['past']}, {v['side']}",
              f"vor {v['past']}, {v['past']}, {v['is_last']}",
              f"vsel {v['lane']}, {v['past']}, {v['iota_f']}, {v['minus1']}",
              f"vred.argmax s30, {v['lane']}",
              f"{done}: nop"]
    return lines


def pick_lines(kind: str, noise: str, L: Layout, reg: dict, tag: str = "") -> list:
    """From the group prefix and Σ (:func:`sums_lines`) to the token in ``TOKEN`` (``tag``
    makes the labels unique in a program)."""
    v = tail_registers(reg)
    lines = [f"vli {v['zero']}, 0", f"vli {v['one']}, 1", f"vli {v['u25']}, {U25}",
             f"viota {v['iota_f']}", f"vcvt.u2f {v['iota_f']}, {v['iota_f']}",
             f"vli {v['minus1']}, {MINUS_ONE_BITS}"]
    lines += _uniform_lines(0, v["u1"], v)
    if noise == "wide":
        lines += _uniform_lines(1, v["u2"], v)
    lines += [f"vbcast {v['sig']}, {TOTAL}", f"vmul.f32 {v['xe']}, {v['u1']}, {v['sig']}",
              f"ssub s14, {TOTAL}, 1", f"vbcast {v['sig']}, s14",
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
    lines += weights_lines(kind, L, v)
    lines += scan_lines(v["w"], v["scan"], v["tmp"], L.scratch)
    if noise == "wide48":
        return lines + _wide48_lines(L, v, tag) + ["sshl s31, s25, 7", f"sadd {TOKEN}, s31, s30"]
    if noise == "wide":
        lines += [f"vst {v['scan']}, [s0 + {L.scratch + 4 * LANES}]",
                  f"sld s29, [s0 + {L.scratch + 8 * LANES - 4}]", f"vbcast {v['thr']}, s29",
                  f"vmul.f32 {v['thr']}, {v['u2']}, {v['thr']}"]
    else:
        lines += [f"vbcast {v['thr']}, s24"]
    lines += first_past_lines(v["scan"], v["w"], v["thr"], "s30", v)  # the lane
    return lines + ["sshl s31, s25, 7", f"sadd {TOKEN}, s31, s30"]
