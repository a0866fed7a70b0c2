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

Each pass is modulo-scheduled at the unroll that gives the fewest cycles for the
whole row among those that fit the registers, on the given machine
(:func:`rslab.kernels.studies.kernel.widest_pass`).
Results: the max in ``s3`` and the sum in ``s4`` (float32). Float32 semantics as in
:mod:`rslab.reference`: z = (l − m)·LOG2E, e = exp2(z), each op in float32; the
summation order is the kernel's (per-lane accumulators, then a lane tree).
"""

from dataclasses import dataclass

import numpy as np

from rslab.kernels.ops.rowmax import PACKED_BYTES
from rslab.kernels.ops.sumexp import EXP2_OPS, check_exp2, online_body, sumexp_body
from rslab.kernels.studies.kernel import (
    IN_ADDR,
    REGS,
    S_IN,
    S_IN2,
    S_MAX,
    S_OUT,
    S_SUM,
    UNROLLS,
    V_LOG2E,
    V_MAX,
    Kernel,
    accumulator_init,
    bundle_ops,
    check_region,
    packed_vectors,
    padded_vectors,
    preamble,
    run_kernel,
    scalar_f32,
    tree_reduce,
    widest_pass,
)
from rslab.kernels.studies.rowmax import max_pass, max_tail
from rslab.machine.bf16 import round_to_bf16
from rslab.machine.config import MachineConfig
from rslab.numerics.fastlog import LOG2E

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
SUM_REGS = {**REGS, "src": S_IN2, "landed": S_IN2}
"""The sum pass reads the second input pointer (the packed row again, or the float32 buffer)."""


def _check(variant, exp2):
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
    check_exp2(exp2)


def _sum_pass(variant, n, config, exp2, unrolls):
    """The sum pass: (b) reads and unpacks the packed row, (a)/(a′) the float32 buffer; one
    accumulator per float32 vector."""
    def body(u):
        ops = sumexp_body(u, SUM_REGS, workers=2 * u, exp2=exp2, landed=variant != "b")
        return ops, [f"acc{w}" for w in range(2 * u)]
    return widest_pass("sum", body, vectors_needed=n, config=config, unrolls=unrolls)


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

    def passes(n, unrolls=(UNROLLS, UNROLLS)):
        first = max_pass(n, config, land=land, bank_aware=bank_aware, unrolls=unrolls[0])
        return first, _sum_pass(variant, n, config, exp2, unrolls[1])

    unroll = _check_unroll(unroll, 2) or tuple(p.per_iteration for p in passes(vectors))
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
    lines += first.text.splitlines() + max_tail(first, config)
    zero = [("valu", f"vli {reg}, 0") for reg in accumulator_init(second, "acc", "0")]
    lines += bundle_ops(zero, config)
    lines += second.text.splitlines() + _sum_tail(second, config) + ["halt"]
    vmem = {"packed row": total * PACKED_BYTES}
    if land:
        vmem["float32 landing buffer"] = 2 * total * PACKED_BYTES
    name = variant if bank_aware or variant != "a" else "a (conflict-unaware schedule)"
    return Kernel(name, int(vocab), "\n".join(lines) + "\n", [first, second], total, vmem,
                  int(in_addr), {"max": S_MAX, "sum": S_SUM})


def _sum_tail(loop, config):
    bundles, top = tree_reduce("vadd.f32", list(loop.carried.values()), config)
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
        return widest_pass("online", lambda u: online_body(u, REGS, exp2=exp2),
                           vectors_needed=n, config=config, unrolls=unrolls)

    unroll = _check_unroll(unroll, 1) or (one(vectors).per_iteration,)
    total = padded_vectors(list(unroll), vectors)
    p = one(total, unroll)
    m, s = (p.carried[v] for v in ("m", "s"))
    check_region("in_addr", in_addr, total * PACKED_BYTES, config)
    lines = preamble(config, carried_init={m: NEG_FLT_MAX, s: "0"}, pointers={S_IN: in_addr})
    lines += p.text.splitlines()
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
    check_exp2(exp2)
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
    gamma = order_tolerance(packed_vectors(vocab) + 16)
    return gamma if variant != "c" else 2 * gamma + 2.0 ** -16


def order_tolerance(n: int) -> float:
    """γ_n = n·u/(1 − n·u) (u = 2^-24): the relative error of a float32 sum of non-negative
    terms in which no term passes through more than ``n`` additions, whatever their order."""
    u = 2.0 ** -24
    if not isinstance(n, int) or n < 0 or n * u >= 1:
        raise ValueError(f"n must be an integer in [0, 2^24), got {n!r}")
    return n * u / (1 - n * u)


__all__ = ["DESCRIPTIONS", "EXP2_OPS", "VARIANTS", "SumExp", "emit_sumexp", "order_tolerance",
           "reference_sumexp", "run_sumexp", "sum_tolerance"]
