"""``MachineConfig``: every number of the simulated vector core in one place.

The defaults are the machine chapter's table (``MachineConfig().table()``). The
description is flat and
data-driven: a slot-limit table (how many ops of each slot class one bundle may
hold) and one latency per op class (cycles after issue until the result can be
used). Everything else is a named scalar field.
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from types import MappingProxyType

from rslab.numerics.fastlog import (
    DEFAULT_FASTLOG2,
    fast_exp2,
    fast_rcp,
    precise_exp2,
    precise_log2,
)

SLOT_CLASSES = ("ld", "st", "valu", "sfu", "xlu", "scalar")
LATENCY_CLASSES = ("ld", "st", "valu", "pop", "sfu", "xlu", "scalar")

DEFAULT_SLOTS = {"ld": 1, "st": 1, "valu": 2, "sfu": 1, "xlu": 1, "scalar": 1}
DEFAULT_LATENCY = {"ld": 4, "st": 1, "valu": 3, "pop": 1, "sfu": 13, "xlu": 8, "scalar": 1}

LIMITS = {"lanes": 4096, "vregs": 1024, "sregs": 1024, "sfu_hold": 1000, "fifo_depth": 1024,
          "vmem_bytes": 2**26, "vmem_banks": 4096, "bank_bytes": 4, "branch_penalty": 1000,
          "loop_depth": 64, "dma_latency": 10**6, "dma_bytes_per_cycle": 2**20,
          "dma_tags": 1024, "slots": 64, "latency": 1000}
"""The largest value of each integer setting (``slots`` and ``latency``: of every class): a
machine the simulator can hold in memory and a scheduler can search in seconds."""


def _checked(name: str, value, minimum: int, maximum: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if value > maximum:
        raise ValueError(f"{name} must be at most {maximum:,} on this simulator, got {value:,}")


def _frozen(mapping: Mapping, keys: tuple, name: str, minimum: int) -> Mapping:
    unknown = set(mapping) - set(keys)
    if unknown:
        raise ValueError(f"{name}: unknown classes {sorted(unknown)}; known: {list(keys)}")
    missing = set(keys) - set(mapping)
    if missing:
        raise ValueError(f"{name}: missing classes {sorted(missing)}")
    for key, value in mapping.items():
        _checked(f"{name}[{key!r}]", value, minimum, LIMITS[name])
    return MappingProxyType({k: mapping[k] for k in keys})


@dataclass(frozen=True)
class MachineConfig:
    """The simulated core. Use ``config.with_(...)`` to change a few numbers. Every integer
    setting is checked against its bound in :data:`LIMITS` (``ValueError`` naming it)."""

    lanes: int = 128
    """Lanes per vector register; each lane holds one 32-bit word."""
    vregs: int = 64
    """Number of vector registers v0..v{vregs-1}."""
    sregs: int = 32
    """Number of scalar registers s0..s{sregs-1}; each holds a 32-bit word."""
    slots: Mapping = field(default_factory=lambda: dict(DEFAULT_SLOTS))
    """Slot-limit table: at most this many ops of each slot class in one bundle."""
    latency: Mapping = field(default_factory=lambda: dict(DEFAULT_LATENCY))
    """Cycles from issue until the result is usable, per op class (``sfu``: push to FIFO head;
    ``pop``: pop to register; ``st``: store to memory)."""
    sfu_hold: int = 1
    """Cycles after an SFU push during which no other push may issue (hold-issue)."""
    fifo_depth: int = 16
    """SFU result FIFO entries; an entry is occupied from its push until its pop frees it."""
    vmem_bytes: int = 4 * 1024 * 1024
    """On-chip vector memory (VMEM) size in bytes."""
    vmem_banks: int = 128
    """VMEM banks; 32-bit word w lives in bank ``w % vmem_banks``."""
    bank_bytes: int = 4
    """Width of one bank access in bytes (one 32-bit word)."""
    branch_penalty: int = 2
    """Extra cycles before the bundle after a taken branch can issue."""
    loop_depth: int = 4
    """Maximum nesting depth of zero-overhead hardware loops."""
    dma_latency: int = 200
    """Cycles from a ``dma`` starting until its first bytes land (HBM → VMEM)."""
    dma_bytes_per_cycle: int = 128
    """DMA bandwidth; transfers are serialised on one DMA engine."""
    dma_tags: int = 8
    """Number of DMA tags ``dma ..., tag`` / ``dmawait tag`` can name."""
    log2_fn: Callable = DEFAULT_FASTLOG2
    """The SFU's fast log2 (``vlog2``): the calibrated FastLog2 emulator."""
    log2_precise_fn: Callable = precise_log2
    """``vlog2.p``: correctly rounded float32 log2."""
    exp2_fn: Callable = fast_exp2
    """The SFU's fast exp2 (``vexp2``)."""
    exp2_precise_fn: Callable = precise_exp2
    """``vexp2.p``: correctly rounded float32 exp2."""
    rcp_fn: Callable = fast_rcp
    """``vrcp``: the SFU's reciprocal."""

    def __post_init__(self):
        object.__setattr__(self, "slots", _frozen(self.slots, SLOT_CLASSES, "slots", 1))
        object.__setattr__(self, "latency",
                           _frozen(self.latency, LATENCY_CLASSES, "latency", 1))
        for f in fields(self):
            if f.name in LIMITS and f.name not in ("slots", "latency"):
                minimum = 0 if f.name in ("sfu_hold", "branch_penalty", "dma_latency") else 1
                _checked(f.name, getattr(self, f.name), minimum, LIMITS[f.name])
        if self.bank_bytes != 4:
            raise ValueError("bank_bytes must be 4 (banks hold 32-bit words), "
                             f"got {self.bank_bytes}")
        if self.vmem_bytes % (4 * self.lanes):
            raise ValueError(f"vmem_bytes must be a multiple of {4 * self.lanes}, "
                             f"got {self.vmem_bytes}")
        for name in ("log2_fn", "log2_precise_fn", "exp2_fn", "exp2_precise_fn", "rcp_fn"):
            if not callable(getattr(self, name)):
                raise ValueError(f"{name} must be callable")

    def __hash__(self):
        return hash(tuple((f.name, tuple(v.items()) if isinstance(v, Mapping) else v)
                          for f in fields(self) for v in (getattr(self, f.name),)))

    def with_(self, *, slots: Mapping | None = None, latency: Mapping | None = None, **changes):
        """A copy with some fields changed; ``slots``/``latency`` are merged into the tables."""
        known = {f.name for f in fields(self)}
        unknown = set(changes) - known
        if unknown:
            raise ValueError(f"unknown MachineConfig fields {sorted(unknown)}")
        if slots is not None:
            changes["slots"] = {**self.slots, **slots}
        if latency is not None:
            changes["latency"] = {**self.latency, **latency}
        return replace(self, **changes)

    @property
    def vector_bytes(self) -> int:
        """Bytes in one vector register (lanes × 4)."""
        return 4 * self.lanes

    def table(self) -> list[tuple[str, str, str]]:
        """(resource, value, note) rows describing this configuration, for the book."""
        slot = ", ".join(f"{k} {v}" for k, v in self.slots.items())
        lat = ", ".join(f"{k} {v}" for k, v in self.latency.items())
        return [
            ("lanes", f"{self.lanes} × 32 bit", "packed BF16: two elements per lane"),
            ("vector / scalar registers", f"{self.vregs} / {self.sregs}", ""),
            ("bundle slots", slot, "VLIW: ops in one bundle issue together"),
            ("latency (cycles)", lat, "result usable that many cycles after issue"),
            ("SFU", f"1 push per bundle; a push waits {self.sfu_hold} cycle(s) after the "
             f"previous push; FIFO depth {self.fifo_depth}",
             "exp2 / log2 / rcp; in-order results; other ops issue during the wait"),
            ("pop", "vpop on a valu slot", "pops the FIFO head"),
            ("VMEM", f"{self.vmem_bytes // 2**20} MiB, {self.vmem_banks} banks × "
             f"{self.bank_bytes} B", "a k-way bank conflict holds the port k cycles"),
            ("DMA", f"latency {self.dma_latency}, {self.dma_bytes_per_cycle} B/cycle",
             "HBM → VMEM, asynchronous"),
            ("loops", f"hardware loops nest {self.loop_depth} deep; taken branch "
             f"+{self.branch_penalty} cycles", "zero-overhead loops"),
        ]
