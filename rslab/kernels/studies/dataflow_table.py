"""The dataflow table: every sum-exp dataflow measured on the simulator, side by side.

Per variant: cycles per packed BF16 vector (a ResMII-style bound, the
modulo schedule, and the *measured* steady state: the difference of two
simulated runs divided by the packed vectors between them), cycles for a whole
row (simulated, not extrapolated), the resource that binds each pass, the
VMEM footprint, stalls by cause, and the check against NumPy.
"""

import math
from dataclasses import dataclass, field

import numpy as np

from rslab.kernels.studies.kernel import run_kernel, scalar_f32
from rslab.kernels.studies.sumexp import (
    DESCRIPTIONS,
    VARIANTS,
    emit_sumexp,
    reference_sumexp,
    sum_tolerance,
)
from rslab.machine.config import MachineConfig
from rslab.schedule import slot_of

ROW_VOCAB = 154_880
"""The note's vocabulary."""
TABLE_VARIANTS = ("a", "a (conflict-unaware schedule)", "a'", "b", "c")
"""Rows of the table: the four dataflows plus (a) scheduled as if stride-2 stores were free."""
SLOPE_VECTORS = (64, 128)
"""Row lengths (packed vectors, before rounding to whole iterations) of the two runs whose
difference measures the steady state."""
SWEEPS = {
    "valu": "VALU slots per bundle",
    "st": "store ports per bundle",
    "sfu_latency": "SFU latency (cycles)",
    "sfu_hold": "SFU hold (cycles)",
}


def config_with(param: str, value: int, config: MachineConfig | None = None) -> MachineConfig:
    """``config`` with one swept parameter changed (``valu``, ``st``, ``sfu_latency`` or
    ``sfu_hold``)."""
    config = config or MachineConfig()
    if param in ("valu", "st"):
        return config.with_(slots={param: int(value)})
    if param == "sfu_latency":
        return config.with_(latency={"sfu": int(value)})
    if param == "sfu_hold":
        return config.with_(sfu_hold=int(value))
    raise ValueError(f"param must be one of {sorted(SWEEPS)}, got {param!r}")


def _split(variant: str) -> tuple[str, bool]:
    if variant == "a (conflict-unaware schedule)":
        return "a", False
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {TABLE_VARIANTS}, got {variant!r}")
    return variant, True


def pass_bounds(p, config: MachineConfig) -> dict:
    """Cycles per packed vector each resource needs in pass ``p`` (fractional ResMII / unroll).

    Slots: cycles booked per iteration (an SFU push holds the SFU 1 + hold
    cycles, a stride-2 store its port as long as its bank conflict when the
    scheduler knows) over the slot count; ``fifo``: pushes × (SFU latency + pop
    latency) over the FIFO depth (an entry is held from its push until its pop, at
    least the SFU latency later, has freed it); ``recurrence``: RecMII.
    """
    b = p.schedule.bounds
    out = {slot: b.usage[slot] / config.slots[slot] for slot in b.usage if b.usage[slot]}
    pushes = len(p.schedule.graph.fifo_pairs)
    if pushes:
        held = config.latency["sfu"] + config.latency["pop"]
        out["fifo"] = pushes * held / config.fifo_depth
    if b.rec_mii:
        out["recurrence"] = float(b.rec_mii)
    return {k: v / p.per_iteration for k, v in out.items()}


def binding_of(bounds: dict) -> str:
    """The resource(s) with the largest need; ties joined by ``=``."""
    top = max(bounds.values())
    return "=".join(k for k, v in bounds.items() if math.isclose(v, top))


def ops_per_vector(kernel) -> dict:
    """Ops per packed vector by slot class (pops counted as VALU), summed over passes."""
    out = {}
    for p in kernel.passes:
        for op in p.schedule.graph.ops:
            slot = slot_of(op.opcode)
            out[slot] = out.get(slot, 0) + 1 / p.per_iteration
    return out


def test_row(vocab: int, seed: int = 0) -> np.ndarray:
    """A seeded random logits row (float32; the runner rounds it to BF16)."""
    return (np.random.default_rng(seed).standard_normal(vocab) * 3).astype(np.float32)


def slope_runs(variant: str, config: MachineConfig, unroll: tuple, vectors=SLOPE_VECTORS,
               exp2: str = "vexp2", scheduled_on: MachineConfig | None = None) -> list:
    """The two simulated rows of whole iterations a slope is measured on, as (packed vectors,
    kernel, row, run): the kernel emitted for ``scheduled_on`` (default ``config``), run on
    ``config``."""
    base, aware = _split(variant)
    step = math.lcm(*unroll)
    runs = []
    for n in (-(-n // step) * step for n in vectors):
        kernel = emit_sumexp(base, 256 * n, scheduled_on or config, exp2=exp2,
                             bank_aware=aware, unroll=unroll)
        row = test_row(256 * n, seed=n)
        runs.append((n, kernel, row, run_kernel(kernel, row, config)))
    return runs


def per_vector(runs: list) -> float:
    """Cycles per packed vector between two of :func:`slope_runs`' rows: their fill and drain
    cancel."""
    (n1, *_, r1), (n2, *_, r2) = runs
    return (r2.cycles - r1.cycles) / (n2 - n1)


def measured_per_vector(variant: str, config: MachineConfig, unroll: tuple,
                        vectors=SLOPE_VECTORS, exp2: str = "vexp2") -> float:
    """Steady-state cycles per packed vector: (cycles(n2) − cycles(n1)) / (n2 − n1), with the
    unrolls of the row kernel, on two simulated rows of whole iterations."""
    return per_vector(slope_runs(variant, config, unroll, vectors, exp2))


@dataclass
class DataflowRow:
    """One row of the dataflow table."""

    variant: str
    description: str
    passes: list  # [(name, unroll, II)]
    ops: dict  # slot -> ops per packed vector
    bound: float  # cycles per packed vector, ResMII-style lower bound
    scheduled: float  # Σ II / unroll
    measured: float  # steady-state slope of simulated cycles
    binding: str  # per pass, "pass: resource"
    vocab: int
    cycles: int  # simulated cycles for the whole row
    vmem_bytes: int
    vector_registers: int  # most vector registers one pass's loop uses
    stalls: dict = field(default_factory=dict)  # cause -> cycles (non-zero) in the row run
    max_exact: bool = True
    sum_rel_error: float = 0.0
    sum_tolerance: float = 0.0


def dataflow_row(variant: str, config: MachineConfig | None = None, vocab: int = ROW_VOCAB, *,
                 seed: int = 0, exp2: str = "vexp2") -> DataflowRow:
    """Build, simulate and check one variant; see the module docstring."""
    config = config or MachineConfig()
    base, aware = _split(variant)
    kernel = emit_sumexp(base, vocab, config, exp2=exp2, bank_aware=aware)
    row = test_row(vocab, seed)
    run = run_kernel(kernel, row, config)
    m_ref, s_ref = reference_sumexp(row, config, exp2=exp2)
    s = float(scalar_f32(run, "s4"))
    per_pass = [pass_bounds(p, config) for p in kernel.passes]
    unroll = tuple(p.per_iteration for p in kernel.passes)
    return DataflowRow(
        variant=variant, description=DESCRIPTIONS[base],
        passes=[(p.name, p.per_iteration, p.ii) for p in kernel.passes],
        ops=ops_per_vector(kernel),
        bound=sum(max(b.values()) for b in per_pass),
        scheduled=sum(p.cycles_per_vector for p in kernel.passes),
        measured=measured_per_vector(variant, config, unroll, exp2=exp2),
        binding="; ".join(f"{p.name}: {binding_of(b)}"
                          for p, b in zip(kernel.passes, per_pass, strict=True)),
        vocab=int(vocab), cycles=int(run.cycles), vmem_bytes=sum(kernel.vmem.values()),
        vector_registers=max(_registers(p) for p in kernel.passes),
        stalls={k: int(v) for k, v in run.stalls.items() if v},
        max_exact=bool(scalar_f32(run, "s3") == m_ref),
        sum_rel_error=abs(s - s_ref) / s_ref,
        sum_tolerance=sum_tolerance(base, vocab))


def _registers(p) -> int:
    return p.expansion.vector_registers


def dataflow_table(config: MachineConfig | None = None, vocab: int = ROW_VOCAB, *,
                   variants=TABLE_VARIANTS, seed: int = 0) -> list[DataflowRow]:
    """One :class:`DataflowRow` per variant."""
    return [dataflow_row(v, config, vocab, seed=seed) for v in variants]


def sweep(param: str, values, config: MachineConfig | None = None, *,
          variants=VARIANTS, vocab: int = ROW_VOCAB, measure: bool = True) -> dict:
    """{value: {variant: cycles per packed vector}} as one machine parameter changes.

    With ``measure`` the figure is the simulated steady state (two runs per
    variant), else the schedule's Σ II / unroll.
    """
    out = {}
    for value in values:
        cfg = config_with(param, value, config)
        out[value] = {}
        for v in variants:
            kernel = emit_sumexp(_split(v)[0], vocab, cfg, bank_aware=_split(v)[1])
            unroll = tuple(p.per_iteration for p in kernel.passes)
            out[value][v] = (measured_per_vector(v, cfg, unroll) if measure
                             else sum(p.cycles_per_vector for p in kernel.passes))
    return out


def winner(per_variant: dict) -> str:
    """The fastest variant (ties: all of them, joined by ``=``)."""
    best = min(per_variant.values())
    return "=".join(v for v, c in per_variant.items() if math.isclose(c, best))
