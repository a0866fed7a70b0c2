"""Row maximum of a packed BF16 row, and the kernel plumbing the sum-exp dataflows share.

A kernel is a few *passes*: loops over packed vectors that :mod:`rslab.schedule`
modulo-schedules and expands (prologue / kernel / epilogue, modulo variable
expansion), glued by short straight-line code (constants, reductions). Each
pass picks how many packed vectors one iteration handles (its *unroll*): the
one with the fewest scheduled cycles per packed vector that fits the register
file, so each dataflow is written as well as this machine allows.

The row is packed as in :mod:`rslab.machine.bf16` and padded with −inf to a
whole number of loop iterations; −inf changes neither the maximum nor the sum
of exponentials. The row maximum lands in scalar register ``s3``.
"""

import functools
import math
from dataclasses import dataclass, field

import numpy as np

from rslab.machine.bf16 import LANES, pack_rows, padded_length
from rslab.machine.config import MachineConfig
from rslab.machine.memory import conflict_degree
from rslab.schedule import Addr, Op, SlotModel, analyse, expand, modulo_schedule

LOG2E = np.float32(1 / np.log(2))
"""The base-change constant float32(1/ln 2)."""
LOG2E_WORD = int(LOG2E.view(np.uint32))
NEG_INF_PAIR = np.uint32(0xFF80FF80)
"""A packed word holding two BF16 −inf."""
PACKED_BYTES = 512
"""Bytes of one packed vector (128 lanes × 32 bit = 256 BF16 elements)."""
IN_ADDR = 0
"""VMEM byte address of the packed row."""
UNROLLS = (1, 2, 4, 8)
"""Packed vectors per loop iteration that the passes try."""

# fixed registers (the loop values take v0 upwards)
V_LOG2E, V_MAX, V_ZERO = "v63", "v62", "v61"
S_IN, S_OUT, S_MAX, S_SUM, S_IN2 = "s1", "s2", "s3", "s4", "s5"


def slot_model(config: MachineConfig, strided_store_busy: int = 1) -> SlotModel:
    """The scheduler's view of ``config``; a ``vst.s`` books its port ``strided_store_busy``
    cycles (its bank-conflict degree) when the scheduler is told about conflicts."""
    units = dict(config.slots)
    latency = dict(config.latency)
    if strided_store_busy == 1:
        return SlotModel(units=units, latency=latency, sfu_hold=config.sfu_hold,
                         fifo_depth=config.fifo_depth)
    return _BankAwareModel(units=units, latency=latency, sfu_hold=config.sfu_hold,
                           fifo_depth=config.fifo_depth, strided_store_busy=strided_store_busy)


@dataclass(frozen=True)
class _BankAwareModel(SlotModel):
    strided_store_busy: int = 1

    def op_busy(self, opcode: str) -> int:
        if opcode == "vst.s":
            return self.strided_store_busy
        return super().op_busy(opcode)


def stride2_conflict(config: MachineConfig) -> int:
    """Bank-conflict degree of a stride-2 vector store on ``config``'s VMEM."""
    return conflict_degree(2, config.lanes, config.vmem_banks)


@dataclass
class Pass:
    """One modulo-scheduled loop of a kernel."""

    name: str
    unroll: int  # packed vectors per iteration
    iterations: int
    schedule: object  # rslab.schedule.Schedule
    expansion: object  # rslab.schedule.Expansion
    carried: list  # loop-carried values (accumulators), each in one fixed register

    @property
    def ii(self) -> int:
        return self.schedule.ii

    @property
    def cycles_per_vector(self) -> float:
        """Scheduled cycles per packed vector in the steady state (II / unroll)."""
        return self.schedule.ii / self.unroll


@dataclass
class Kernel:
    """Assembly text of a kernel plus what the runner and the table need."""

    name: str
    vocab: int
    text: str
    passes: list
    vectors: int  # packed vectors processed (with the −inf padding)
    vmem: dict = field(default_factory=dict)  # region -> bytes
    in_addr: int = IN_ADDR  # VMEM byte address of the packed row
    results: dict = field(default_factory=dict)  # result name -> scalar register


def _check_vocab(vocab) -> int:
    if not isinstance(vocab, (int, np.integer)) or isinstance(vocab, bool) or vocab < 1:
        raise ValueError(f"vocab must be a positive integer, got {vocab!r}")
    return int(vocab)


def packed_vectors(vocab: int) -> int:
    """Packed vectors holding a row of ``vocab`` BF16 elements (padded to 256)."""
    return padded_length(_check_vocab(vocab)) // (2 * LANES)


def bundle_ops(ops, config: MachineConfig) -> list[str]:
    """Pack independent op texts (``(slot, text)``) greedily into bundles, in order."""
    bundles, current, used = [], [], {}
    for slot, text in ops:
        if used.get(slot, 0) >= config.slots[slot]:
            bundles.append(" ; ".join(current))
            current, used = [], {}
        current.append(text)
        used[slot] = used.get(slot, 0) + 1
    if current:
        bundles.append(" ; ".join(current))
    return bundles


def tree_reduce(opcode: str, regs: list[str], config: MachineConfig) -> tuple[list[str], str]:
    """Bundles reducing ``regs`` pairwise in place with ``opcode``; returns (bundles, result)."""
    regs = list(regs)
    bundles = []
    while len(regs) > 1:
        level = [("valu", f"{opcode} {regs[i]}, {regs[i]}, {regs[i + 1]}")
                 for i in range(0, len(regs) - 1, 2)]
        bundles += bundle_ops(level, config)
        regs = regs[::2]
    return bundles, regs[0]


def carried_pool(n: int, config: MachineConfig) -> list[str]:
    """``n`` registers for loop-carried values, below the three constants at the top."""
    top = config.vregs - 3
    if n > top:
        raise ValueError(f"config: {config.vregs} vector registers cannot hold {n} accumulators")
    return [f"v{top - 1 - k}" for k in range(n)]


def build_pass(name: str, body_fn, *, vectors_needed: int, config: MachineConfig, bases: int,
               strided_store_busy: int = 1, unrolls=UNROLLS) -> Pass:
    """Schedule ``body_fn(unroll)`` for each unroll; keep the one with the fewest scheduled
    cycles for this many vectors ((iterations + stages − 1)·II) that fits the registers.

    ``body_fn(unroll) -> (ops, carried values)``; ``vectors_needed`` is the
    packed vectors the pass must cover (the caller pads to whole iterations).
    Carried values get fixed registers just below the three constants at the
    top of the register file; the rotating values take the rest from ``v0``.
    """
    candidates, errors = [], []
    model = slot_model(config, strided_store_busy)
    for unroll in unrolls:
        ops, carried = body_fn(unroll)
        try:
            schedule = _cached_schedule(tuple(ops), _model_key(model), model, bases)
        except ValueError as exc:
            errors.append(f"unroll {unroll}: {exc}")
            continue
        iterations = math.ceil(vectors_needed / unroll)
        cost = (iterations + schedule.stage_count - 1) * schedule.ii
        candidates.append((cost, unroll, iterations, schedule, carried))
    for _, unroll, iterations, schedule, carried in sorted(candidates, key=lambda c: c[:2]):
        life = schedule.lifetimes()
        if any(life[v] > schedule.ii for v in carried):
            errors.append(f"unroll {unroll}: an accumulator is read after its next write")
            continue
        regs = carried_pool(len(carried), config)
        pool = [f"v{k}" for k in range(config.vregs - 3 - len(carried))]
        try:
            expansion = expand(schedule, iterations, registers=pool,
                               carried_registers=dict(zip(carried, regs, strict=True)))
        except ValueError as exc:
            errors.append(f"unroll {unroll}: {exc}")
            continue
        return Pass(name, unroll, iterations, schedule, expansion, list(carried))
    raise ValueError(f"{name}: no unroll fits this machine: {errors}")


def _model_key(model: SlotModel) -> tuple:
    return (tuple(sorted(model.units.items())), tuple(sorted(model.latency.items())),
            model.sfu_hold, model.fifo_depth, model.op_busy("vst.s"))


_SCHEDULES: dict = {}


def _cached_schedule(ops: tuple, key: tuple, model: SlotModel, bases: int):
    """The modulo schedule of a body, searched up to II = 1.25·MII + 2 (beyond that the
    unroll is not worth having, and the search of a large body can take long)."""
    k = (ops, key, bases)
    if k not in _SCHEDULES:
        if len(_SCHEDULES) > 512:
            _SCHEDULES.clear()
        mii = max(analyse(list(ops), model).mii, bases)
        _SCHEDULES[k] = modulo_schedule(list(ops), model, reserve_scalar=bases,
                                        max_ii=mii + mii // 4 + 2)
    return _SCHEDULES[k]


def max_body(unroll: int, *, land: str | None = None, src: str = S_IN, dst: str = S_OUT):
    """Max-pass body: per packed vector load, unpack both halves, running max per half.

    ``land`` also stores the float32 halves: ``"helper"`` with the generic
    BF16→FP32 helper's stride-2 stores (word 2l ← element l, word 2l+1 ← element
    l+128), ``"lanes"`` with two contiguous stores (the changed layout).
    """
    if land not in (None, "helper", "lanes"):
        raise ValueError(f"land must be None, 'helper' or 'lanes', got {land!r}")
    ops, carried = [], []
    for u in range(unroll):
        p, lo, hi, a, b = f"p{u}", f"lo{u}", f"hi{u}", f"m{2 * u}", f"m{2 * u + 1}"
        ops += [Op("vld", p, addr=Addr(src, PACKED_BYTES * u, PACKED_BYTES * unroll)),
                Op("vunpack.lo", lo, (p,)), Op("vunpack.hi", hi, (p,)),
                Op("vmax.f32", a, (a, lo)), Op("vmax.f32", b, (b, hi))]
        carried += [a, b]
        step, off = 2 * PACKED_BYTES * unroll, 2 * PACKED_BYTES * u
        if land == "helper":
            ops += [Op("vst.s", None, (lo,), addr=Addr(dst, off, step), name=f"st{u}lo",
                       tail=", 2"),
                    Op("vst.s", None, (hi,), addr=Addr(dst, off + 4, step), name=f"st{u}hi",
                       tail=", 2")]
        elif land == "lanes":
            ops += [Op("vst", None, (lo,), addr=Addr(dst, off, step), name=f"st{u}lo"),
                    Op("vst", None, (hi,), addr=Addr(dst, off + PACKED_BYTES, step),
                       name=f"st{u}hi")]
    return ops, carried


def max_pass(vectors: int, config: MachineConfig, *, land: str | None = None,
             bank_aware: bool = True, unrolls=UNROLLS) -> Pass:
    """The max pass over ``vectors`` packed vectors (optionally landing float32)."""
    busy = stride2_conflict(config) if (land == "helper" and bank_aware) else 1
    name = "max" if land is None else f"max+land({land})"
    return build_pass(name, functools.partial(max_body, land=land), vectors_needed=vectors,
                      config=config, bases=1 if land is None else 2,
                      strided_store_busy=busy, unrolls=unrolls)


def padded_vectors(passes_units: list[int], vectors: int) -> int:
    """Packed vectors after padding ``vectors`` to whole iterations of every pass."""
    step = math.lcm(*passes_units)
    return -(-vectors // step) * step


def preamble(config: MachineConfig, *, carried_init: dict, pointers: dict) -> list[str]:
    """Bundles setting constants, pointers and the initial accumulator values."""
    ops = [("scalar", f"sli {reg}, {addr}") for reg, addr in pointers.items()]
    ops += [("valu", f"vli {V_LOG2E}, {LOG2E_WORD:#x}"), ("valu", f"vli {V_ZERO}, 0")]
    ops += [("valu", f"vli {reg}, {value}") for reg, value in carried_init.items()]
    ops.sort(key=lambda o: o[0] != "scalar")
    return bundle_ops(ops, config)


def max_tail(pass_: Pass, config: MachineConfig) -> list[str]:
    """Reduce the max accumulators to ``s3`` and broadcast it to ``v62``."""
    regs = [pass_.expansion.registers[v][0] for v in pass_.carried if v.startswith("m")]
    bundles, top = tree_reduce("vmax.f32", regs, config)
    return bundles + [f"vred.max {S_MAX}, {top}", f"vbcast {V_MAX}, {S_MAX}"]


def accumulator_init(pass_: Pass, prefix: str, value: str) -> dict:
    """{register: initial value} for the pass's carried values named ``prefix…``."""
    return {pass_.expansion.registers[v][0]: value for v in pass_.carried
            if v.startswith(prefix)}


def check_region(name: str, addr, nbytes: int, config: MachineConfig) -> int:
    """Validate a VMEM region [addr, addr + nbytes): 4-byte aligned and inside VMEM."""
    if not isinstance(addr, (int, np.integer)) or isinstance(addr, bool) or addr < 0 or addr % 4:
        raise ValueError(f"{name} must be a non-negative multiple of 4, got {addr!r}")
    if addr + nbytes > config.vmem_bytes:
        raise ValueError(f"{name}: [{addr}, {addr + nbytes}) does not fit the "
                         f"{config.vmem_bytes}-byte VMEM")
    return int(addr)


def emit_rowmax(vocab: int, config: MachineConfig | None = None, *,
                in_addr: int = IN_ADDR, unroll: int | None = None) -> Kernel:
    """Assembly for the row maximum of a packed row of ``vocab`` BF16 values at VMEM byte
    ``in_addr`` (result in s3); ``unroll`` forces the packed vectors per iteration."""
    config = config or MachineConfig()
    vectors = packed_vectors(vocab)
    if unroll is None:
        unroll = max_pass(vectors, config).unroll
    total = padded_vectors([unroll], vectors)
    mp = max_pass(total, config, unrolls=(unroll,))
    check_region("in_addr", in_addr, total * PACKED_BYTES, config)
    lines = preamble(config, carried_init=accumulator_init(mp, "m", "-inf"),
                     pointers={S_IN: in_addr})
    lines += mp.expansion.text.splitlines() + max_tail(mp, config) + ["halt"]
    return Kernel("rowmax", int(vocab), "\n".join(lines) + "\n", [mp], total,
                  vmem={"packed row": total * PACKED_BYTES}, in_addr=int(in_addr),
                  results={"max": S_MAX})


def packed_input(row, vectors: int) -> np.ndarray:
    """Pack a float32 row (BF16-rounded) and pad it with −inf to ``vectors`` packed vectors."""
    words = pack_rows(np.asarray(row, dtype=np.float32))
    if words.ndim != 1:
        raise ValueError(f"row must be one-dimensional, got shape {np.shape(row)}")
    extra = vectors * LANES - words.size
    if extra < 0:
        raise ValueError(f"row does not fit {vectors} packed vectors")
    return np.concatenate([words, np.full(extra, NEG_INF_PAIR, dtype=np.uint32)])


def scalar_f32(run, reg: str) -> np.float32:
    """A scalar register of a finished Run, read as float32."""
    return np.uint32(run.sreg(int(reg[1:]))).view(np.float32)


def run_kernel(kernel: Kernel, row, config: MachineConfig | None = None, *,
               trace: bool = False):
    """Load ``row`` packed at ``kernel.in_addr``, simulate ``kernel``; returns the Run."""
    from rslab.machine import assemble, simulate

    config = config or MachineConfig()
    row = np.asarray(row, dtype=np.float32)
    if row.ndim != 1 or row.size != kernel.vocab:
        raise ValueError(f"row must have shape ({kernel.vocab},), got {row.shape}")
    vmem = {kernel.in_addr: packed_input(row, kernel.vectors)}
    return simulate(assemble(kernel.text), config=config, vmem=vmem, trace=trace)


def run_rowmax(row, config: MachineConfig | None = None, *, trace: bool = False):
    """Row maximum of ``row`` (float32, BF16-representable) on the machine: (max, Run)."""
    row = np.asarray(row, dtype=np.float32)
    kernel = emit_rowmax(row.size, config)
    run = run_kernel(kernel, row, config, trace=trace)
    return scalar_f32(run, S_MAX), run
