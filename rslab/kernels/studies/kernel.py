"""A study kernel: a few loops over one packed BF16 row, glued by short straight-line code.

The dataflow chapter's kernels (:mod:`~rslab.kernels.studies.rowmax`,
:mod:`~rslab.kernels.studies.sumexp`) are each a few *passes*: loops over packed
vectors, modulo-scheduled and expanded (:mod:`rslab.kernels.loops`), between
constants and reductions. Each pass picks how many packed vectors one iteration
handles (:func:`widest_pass`): the one with the fewest scheduled cycles that fits
the register file, so each dataflow is written as well as this machine allows.

The row is packed as in :mod:`rslab.machine.bf16` and padded with −inf to a whole
number of loop iterations; −inf changes neither the maximum nor the sum of
exponentials. Registers: the constants at the top (``v63`` LOG2E, ``v62`` the
row max, ``v61`` zero), accumulators just below them, the loop values from ``v0``;
scalars ``s1`` input, ``s2`` landing buffer, ``s3`` max, ``s4`` sum, ``s5`` second input.
"""

import math
from dataclasses import dataclass, field

import numpy as np

from rslab.kernels.loops.emit import emit_loop, schedule_body, search_limit
from rslab.kernels.loops.loop import Loop
from rslab.kernels.ops.rowmax import PACKED_BYTES
from rslab.machine.asm import f32_bits
from rslab.machine.bf16 import LANES, pack_rows, padded_length
from rslab.machine.config import MachineConfig
from rslab.numerics.fastlog import LOG2E
from rslab.schedule import SlotModel

IN_ADDR = 0
"""VMEM byte address of the packed row."""
UNROLLS = (1, 2, 4, 8)
"""Packed vectors per loop iteration that the passes try."""
NEG_INF_PAIR = np.uint32(0xFF80FF80)
"""A packed word holding two BF16 −inf."""
V_LOG2E, V_MAX, V_ZERO = "v63", "v62", "v61"
S_IN, S_OUT, S_MAX, S_SUM, S_IN2 = "s1", "s2", "s3", "s4", "s5"
REGS = {"src": S_IN, "dst": S_OUT, "max": V_MAX, "log2e": V_LOG2E, "zero": V_ZERO}
"""Role → register, for the loop bodies (:mod:`rslab.kernels.ops`)."""


@dataclass
class Kernel:
    """Assembly text of a study kernel plus what the runner and the table need."""

    name: str
    vocab: int
    text: str
    passes: list  # Loop of each pass
    vectors: int  # packed vectors processed (with the −inf padding)
    vmem: dict = field(default_factory=dict)  # region -> bytes
    in_addr: int = IN_ADDR  # VMEM byte address of the packed row
    results: dict = field(default_factory=dict)  # result name -> scalar register


def check_vocab(vocab) -> int:
    if not isinstance(vocab, (int, np.integer)) or isinstance(vocab, bool) or vocab < 1:
        raise ValueError(f"vocab must be a positive integer, got {vocab!r}")
    return int(vocab)


def packed_vectors(vocab: int) -> int:
    """Packed vectors holding a row of ``vocab`` BF16 elements (padded to 256)."""
    return padded_length(check_vocab(vocab)) // (2 * LANES)


def padded_vectors(per_iteration: list[int], vectors: int) -> int:
    """Packed vectors after padding ``vectors`` to whole iterations of every pass."""
    step = math.lcm(*per_iteration)
    return -(-vectors // step) * step


def study_model(config: MachineConfig, bank_aware: bool = True) -> SlotModel:
    """The scheduler's view of ``config``: a ``vst.s`` books its port for its bank-conflict
    degree, or (``bank_aware=False``, a schedule unaware of conflicts) for one cycle."""
    return SlotModel.from_config(config, busy=None if bank_aware else {"vst.s": 1})


CONSTANT_VREGS = 3
"""Vector registers at the top of the file that hold the passes' constants; a loop's values
(its carried ones included) have the rest."""


def accumulator_registers(n: int, config: MachineConfig) -> list[str]:
    """``n`` registers for loop-carried values, below the constants at the top."""
    top = config.vregs - CONSTANT_VREGS
    if n > top:
        raise ValueError(f"config: {config.vregs} vector registers cannot hold {n} accumulators")
    return [f"v{top - 1 - k}" for k in range(n)]


def widest_pass(name: str, body_fn, *, vectors_needed: int, config: MachineConfig,
                bank_aware: bool = True, unrolls=UNROLLS) -> Loop:
    """Schedule ``body_fn(u)`` for each u of ``unrolls``; keep the one with the fewest scheduled
    cycles for this many vectors ((iterations + stages − 1)·II) that fits the registers.

    ``body_fn(u) -> (ops, carried values)``; ``vectors_needed`` is the packed
    vectors the pass must cover (the caller pads to whole iterations).
    """
    candidates, errors = [], []
    model = study_model(config, bank_aware)
    for u in unrolls:
        ops, carried = body_fn(u)
        try:
            schedule = schedule_body(ops, model, max_ii=search_limit(ops, model))
        except ValueError as exc:
            errors.append(f"unroll {u}: {exc}")
            continue
        iterations = math.ceil(vectors_needed / u)
        cost = (iterations + schedule.stage_count - 1) * schedule.ii
        candidates.append((cost, u, iterations, ops, schedule, carried))
    for _, u, iterations, ops, schedule, carried in sorted(candidates, key=lambda c: c[:2]):
        life = schedule.lifetimes()
        if any(life[v] > schedule.ii for v in carried):
            errors.append(f"unroll {u}: an accumulator is read after its next write")
            continue
        regs = accumulator_registers(len(carried), config)
        pool = [f"v{k}" for k in range(config.vregs - CONSTANT_VREGS - len(carried))]
        try:
            loop = emit_loop(ops, iterations, "pipelined",
                             carried=dict(zip(carried, regs, strict=True)), pool=pool,
                             model=model, per_iteration=u, max_ii=search_limit(ops, model))
        except ValueError as exc:
            errors.append(f"unroll {u}: {exc}")
            continue
        loop.name = name
        return loop
    raise ValueError(f"{name}: no unroll fits this machine: {errors}")


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


def preamble(config: MachineConfig, *, carried_init: dict, pointers: dict) -> list[str]:
    """Bundles setting constants, pointers and the initial accumulator values."""
    ops = [("scalar", f"sli {reg}, {addr}") for reg, addr in pointers.items()]
    ops += [("valu", f"vli {V_LOG2E}, {f32_bits(LOG2E)}"), ("valu", f"vli {V_ZERO}, 0")]
    ops += [("valu", f"vli {reg}, {value}") for reg, value in carried_init.items()]
    ops.sort(key=lambda o: o[0] != "scalar")
    return bundle_ops(ops, config)


def accumulator_init(loop: Loop, prefix: str, value: str) -> dict:
    """{register: initial value} for the loop's carried values named ``prefix…``."""
    return {reg: value for v, reg in loop.carried.items() if v.startswith(prefix)}


def check_region(name: str, addr, nbytes: int, config: MachineConfig) -> int:
    """Validate a VMEM region [addr, addr + nbytes): 4-byte aligned and inside VMEM."""
    if not isinstance(addr, (int, np.integer)) or isinstance(addr, bool) or addr < 0 or addr % 4:
        raise ValueError(f"{name} must be a non-negative multiple of 4, got {addr!r}")
    if addr + nbytes > config.vmem_bytes:
        raise ValueError(f"{name}: [{addr}, {addr + nbytes}) does not fit the "
                         f"{config.vmem_bytes}-byte VMEM")
    return int(addr)


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


__all__ = ["CONSTANT_VREGS", "IN_ADDR", "Kernel", "PACKED_BYTES", "REGS", "UNROLLS", "run_kernel",
           "widest_pass"]
