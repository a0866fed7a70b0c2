"""The softmax normaliser s = Σ exp2((l − max l)·LOG2E) of a packed BF16 row, four dataflows.

The row (already in VMEM, packed as in :mod:`rslab.machine.bf16`) is read by:

- ``"a"``  — max pass that also *lands* the float32 values in VMEM with the
  generic BF16→FP32 helper's store pattern (stride-2 stores: word 2l ← element
  l, 2l+1 ← element l+128; a 2-way bank conflict each), then a sum pass over
  the float32 buffer;
- ``"a'"`` — the same with the changed landing layout: the two unpacked halves
  go to two contiguous 128-word blocks (plain stores, no conflict);
- ``"b"``  — max pass over the packed BF16, then a sum pass that reads and
  unpacks the packed BF16 again;
- ``"c"``  — one pass, online: per-lane running max m and sum s; each block
  of packed vectors rescales s by exp2((m_old − m_new)·LOG2E).

Each pass is modulo-scheduled (:mod:`rslab.schedule`) at the unroll that gives
the fewest cycles per packed vector on the given machine. Results: the max in
``s3`` and the sum in ``s4`` (float32). Float32 semantics as in
INTERFACES.md: z = (l − m)·LOG2E, e = exp2(z), each op in float32; the
summation order is the kernel's (per-lane accumulators, then a lane tree).
"""

import functools
from dataclasses import dataclass

import numpy as np

from rslab.kernels.studies.rowmax import (
    IN_ADDR,
    LOG2E,
    PACKED_BYTES,
    S_IN,
    S_IN2,
    S_MAX,
    S_OUT,
    S_SUM,
    UNROLLS,
    V_LOG2E,
    V_MAX,
    V_ZERO,
    Kernel,
    accumulator_init,
    build_pass,
    bundle_ops,
    check_region,
    max_pass,
    max_tail,
    packed_vectors,
    padded_vectors,
    preamble,
    run_kernel,
    scalar_f32,
    stride2_conflict,
    tree_reduce,
)
from rslab.machine.bf16 import round_to_bf16
from rslab.machine.config import MachineConfig
from rslab.schedule import Addr, Op, Use

VARIANTS = ("a", "a'", "b", "c")
"""The dataflows: (a) FP32 landing with the generic helper, (a′) FP32 landing in the
changed layout, (b) two passes over packed BF16, (c) online one pass."""
DESCRIPTIONS = {
    "a": "land FP32 (generic helper, stride-2 stores), re-read",
    "a'": "land FP32 (changed layout, contiguous stores), re-read",
    "b": "read packed BF16 twice, unpack twice",
    "c": "online: one pass, running max + rescale",
}
NEG_FLT_MAX = "0xff7fffff"
"""Initial running max of (c): −FLT_MAX, not −inf, so that −inf − m never makes a NaN."""
EXP2_OPS = ("vexp2", "vexp2.p")


def _check(variant, exp2):
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
    if exp2 not in EXP2_OPS:
        raise ValueError(f"exp2 must be one of {EXP2_OPS}, got {exp2!r}")


def _exp_acc(ops, x, j, exp2):
    """z = (x − M)·LOG2E, push exp2(z), pop, accumulate into a{j}."""
    d, z, e, a = f"d{j}", f"z{j}", f"e{j}", f"a{j}"
    ops += [Op("vsub.f32", d, (x, V_MAX)), Op("vmul.f32", z, (d, V_LOG2E)),
            Op(exp2, f"@{e}", (z,)), Op("vpop", e, (f"@{e}",)), Op("vadd.f32", a, (a, e))]
    return a


def packed_sum_body(unroll: int, *, exp2: str = "vexp2", src: str = S_IN2):
    """(b) sum pass: load a packed vector, unpack both halves, exp2 and accumulate each."""
    ops, carried = [], []
    for u in range(unroll):
        p, lo, hi = f"p{u}", f"lo{u}", f"hi{u}"
        ops += [Op("vld", p, addr=Addr(src, PACKED_BYTES * u, PACKED_BYTES * unroll)),
                Op("vunpack.lo", lo, (p,)), Op("vunpack.hi", hi, (p,))]
        carried += [_exp_acc(ops, lo, 2 * u, exp2), _exp_acc(ops, hi, 2 * u + 1, exp2)]
    return ops, carried


def float_sum_body(unroll: int, *, exp2: str = "vexp2", src: str = S_IN2):
    """(a) sum pass: load float32 vectors (two per packed vector), exp2 and accumulate."""
    ops, carried = [], []
    n = 2 * unroll
    for j in range(n):
        f = f"f{j}"
        ops.append(Op("vld", f, addr=Addr(src, PACKED_BYTES * j, PACKED_BYTES * n)))
        carried.append(_exp_acc(ops, f, j, exp2))
    return ops, carried


def online_body(unroll: int, *, exp2: str = "vexp2", src: str = S_IN):
    """(c) one block of ``unroll`` packed vectors: block max, rescale, exp2, block sum.

    m ← max(m, block max); s ← s·exp2(min(m_old − bm, 0)·LOG2E) + Σ exp2((x − m)·LOG2E).
    min(m_old − bm, 0) equals m_old − m_new and reads only the old m.
    """
    ops, xs = [], []
    for u in range(unroll):
        p = f"p{u}"
        ops += [Op("vld", p, addr=Addr(src, PACKED_BYTES * u, PACKED_BYTES * unroll)),
                Op("vunpack.lo", f"x{2 * u}", (p,)), Op("vunpack.hi", f"x{2 * u + 1}", (p,))]
        xs += [f"x{2 * u}", f"x{2 * u + 1}"]
    bm = _tree(ops, "vmax.f32", xs, "bm")
    ops += [Op("vsub.f32", "dm", (Use("m", 1), bm)), Op("vmin.f32", "dmc", ("dm", V_ZERO)),
            Op("vmul.f32", "zm", ("dmc", V_LOG2E)), Op(exp2, "@r", ("zm",)),
            Op("vpop", "r", ("@r",)),
            Op("vmax.f32", "m", ("m", bm))]
    es = []
    for j, x in enumerate(xs):
        ops += [Op("vsub.f32", f"d{j}", (x, "m")), Op("vmul.f32", f"z{j}", (f"d{j}", V_LOG2E)),
                Op(exp2, f"@e{j}", (f"z{j}",)), Op("vpop", f"e{j}", (f"@e{j}",))]
        es.append(f"e{j}")
    bs = _tree(ops, "vadd.f32", es, "bs")
    ops += [Op("vmul.f32", "sr", ("s", "r")), Op("vadd.f32", "s", ("sr", bs))]
    return ops, ["m", "s"]


def _tree(ops, opcode, names, prefix):
    level, k = list(names), 0
    while len(level) > 1:
        nxt = []
        for i in range(0, len(level) - 1, 2):
            out = f"{prefix}{k}"
            k += 1
            ops.append(Op(opcode, out, (level[i], level[i + 1])))
            nxt.append(out)
        if len(level) % 2:
            nxt.append(level[-1])
        level = nxt
    return level[0]


def emit_sumexp(variant: str, vocab: int, config: MachineConfig | None = None, *,
                exp2: str = "vexp2", bank_aware: bool = True, in_addr: int = IN_ADDR,
                buf_addr: int | None = None, unroll: tuple | None = None) -> Kernel:
    """Assembly for max and sum-exp of a packed row of ``vocab`` BF16 values.

    The packed row is at VMEM byte ``in_addr``; (a) and (a′) land float32 at
    ``buf_addr`` (default: right after the row). ``bank_aware=False`` (variant
    ``"a"`` only) schedules the stride-2 stores as if they held the store port one
    cycle: the machine then stalls on bank conflicts. ``unroll`` forces the packed
    vectors per iteration of each pass (a tuple, one per pass).
    """
    config = config or MachineConfig()
    _check(variant, exp2)
    vectors = packed_vectors(vocab)
    if variant == "c":
        return _emit_online(vocab, vectors, config, exp2, in_addr, unroll)
    land = {"a": "helper", "a'": "lanes", "b": None}[variant]
    sum_body = packed_sum_body if variant == "b" else float_sum_body

    def passes(n, unrolls=(UNROLLS, UNROLLS)):
        first = max_pass(n, config, land=land, bank_aware=bank_aware, unrolls=unrolls[0])
        second = build_pass("sum", functools.partial(sum_body, exp2=exp2), vectors_needed=n,
                            config=config, bases=1, unrolls=unrolls[1])
        return first, second

    unroll = _check_unroll(unroll, 2) or tuple(p.unroll for p in passes(vectors))
    total = padded_vectors(list(unroll), vectors)
    first, second = passes(total, tuple((u,) for u in unroll))
    check_region("in_addr", in_addr, total * PACKED_BYTES, config)
    fp32_addr = in_addr + total * PACKED_BYTES if buf_addr is None else buf_addr
    if land:
        check_region("buf_addr", fp32_addr, 2 * total * PACKED_BYTES, config)
        if fp32_addr < in_addr + total * PACKED_BYTES and in_addr < fp32_addr + \
                2 * total * PACKED_BYTES:
            raise ValueError("buf_addr: the float32 buffer overlaps the packed row")
    pointers = {S_IN: in_addr, S_IN2: in_addr if variant == "b" else fp32_addr}
    if land:
        pointers[S_OUT] = fp32_addr
    lines = preamble(config, carried_init=accumulator_init(first, "m", "-inf"),
                     pointers=pointers)
    lines += first.expansion.text.splitlines() + max_tail(first, config)
    zero = [("valu", f"vli {reg}, 0") for reg in accumulator_init(second, "a", "0")]
    lines += bundle_ops(zero, config)
    lines += second.expansion.text.splitlines() + _sum_tail(second, config) + ["halt"]
    vmem = {"packed row": total * PACKED_BYTES}
    if land:
        vmem["float32 landing buffer"] = 2 * total * PACKED_BYTES
    name = variant if bank_aware or variant != "a" else "a (conflict-unaware schedule)"
    return Kernel(name, int(vocab), "\n".join(lines) + "\n", [first, second], total, vmem,
                  int(in_addr), {"max": S_MAX, "sum": S_SUM})


def _sum_tail(pass_, config):
    regs = [pass_.expansion.registers[v][0] for v in pass_.carried]
    bundles, top = tree_reduce("vadd.f32", regs, config)
    return bundles + [f"vred.add {S_SUM}, {top}"]


def _check_unroll(unroll, n_passes):
    if unroll is None:
        return None
    if not isinstance(unroll, tuple) or len(unroll) != n_passes or not all(
            isinstance(u, int) and u >= 1 for u in unroll):
        raise ValueError(f"unroll must be a tuple of {n_passes} positive ints, got {unroll!r}")
    return unroll


def _emit_online(vocab, vectors, config, exp2, in_addr, unroll):
    def one(n, unrolls=UNROLLS):
        return build_pass("online", functools.partial(online_body, exp2=exp2),
                          vectors_needed=n, config=config, bases=1, unrolls=unrolls)

    unroll = _check_unroll(unroll, 1) or (one(vectors).unroll,)
    total = padded_vectors(list(unroll), vectors)
    p = one(total, unroll)
    m, s = (p.expansion.registers[v][0] for v in ("m", "s"))
    check_region("in_addr", in_addr, total * PACKED_BYTES, config)
    lines = preamble(config, carried_init={m: NEG_FLT_MAX, s: "0"}, pointers={S_IN: in_addr})
    lines += p.expansion.text.splitlines()
    lines += [f"vred.max {S_MAX}, {m}", f"vbcast {V_MAX}, {S_MAX}",
              f"vsub.f32 {m}, {m}, {V_MAX}", f"vmul.f32 {m}, {m}, {V_LOG2E}",
              f"{exp2} {m}", f"vpop {m}", f"vmul.f32 {s}, {s}, {m}",
              f"vred.add {S_SUM}, {s}", "halt"]
    return Kernel("c", int(vocab), "\n".join(lines) + "\n", [p], total,
                  {"packed row": total * PACKED_BYTES}, int(in_addr),
                  {"max": S_MAX, "sum": S_SUM})


@dataclass(frozen=True)
class SumExp:
    """Row max and sum of exponentials (float32)."""

    max: np.float32
    sum: np.float32


def run_sumexp(row, variant: str, config: MachineConfig | None = None, *,
               exp2: str = "vexp2", bank_aware: bool = True, trace: bool = False):
    """Max and sum-exp of ``row`` on the machine with one dataflow: (SumExp, Run)."""
    row = np.asarray(row, dtype=np.float32)
    if row.ndim != 1:
        raise ValueError(f"row must be one-dimensional, got shape {row.shape}")
    config = config or MachineConfig()
    kernel = emit_sumexp(variant, row.size, config, exp2=exp2, bank_aware=bank_aware)
    run = run_kernel(kernel, row, config, trace=trace)
    return SumExp(scalar_f32(run, S_MAX), scalar_f32(run, S_SUM)), run


def reference_sumexp(row, config: MachineConfig | None = None, *,
                     exp2: str = "vexp2") -> tuple[np.float32, float]:
    """NumPy expectation on the same BF16 values: (max exactly, sum in float64 of the
    float32 terms e = exp2((l − m)·LOG2E) computed with the machine's exp2)."""
    config = config or MachineConfig()
    if exp2 not in EXP2_OPS:
        raise ValueError(f"exp2 must be one of {EXP2_OPS}, got {exp2!r}")
    row = round_to_bf16(np.asarray(row, dtype=np.float32))
    m = row.max()
    with np.errstate(invalid="ignore", over="ignore"):
        z = ((row - m) * LOG2E).astype(np.float32)
    fn = config.exp2_fn if exp2 == "vexp2" else config.exp2_precise_fn
    e = np.asarray(fn(z), dtype=np.float32)
    return np.float32(m), float(e.astype(np.float64).sum())


def sum_tolerance(variant: str, vocab: int) -> float:
    """Relative tolerance of the kernel's sum against :func:`reference_sumexp`.

    (a), (a′), (b) compute the same float32 terms as the reference and differ
    only in summation order: every term passes through at most n = (packed
    vectors + 16) float32 additions, so the error is at most γ_n = n·u/(1 − n·u)
    of the sum (u = 2^-24, all terms ≥ 0). (c) also rounds each term through
    rescale factors exp2((m_old − m_new)·LOG2E) and one multiply per block,
    so it gets twice that plus 2^-16 for the rounding of the rescale arguments.
    """
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
    u = 2.0 ** -24
    n = packed_vectors(vocab) + 16
    gamma = n * u / (1 - n * u)
    return gamma if variant != "c" else 2 * gamma + 2.0 ** -16


def conflict_degree_of_helper(config: MachineConfig | None = None) -> int:
    """Bank-conflict degree of the generic helper's stride-2 stores."""
    return stride2_conflict(config or MachineConfig())
