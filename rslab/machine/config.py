"""``MachineConfig``: every number of the simulated vector core in one place.

The defaults are the machine chapter's table (``MachineConfig().table()``). The
description is flat and
data-driven: a slot-limit table (how many ops of each slot class one bundle may
hold) and one latency per op class (cycles after issue until the result can be
used). Everything else is a named scalar field.
"""

from __future__ import annotations

import math
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


CHIP_LIMITS = {"cores": 64, "hbm_bytes_per_cycle": 2**20, "hop_latency": 1000,
               "endpoint_latency": 1000, "exchange_bytes": 2**20}
"""The largest value of each integer setting of the chip (``cores``: the simulator runs up to
64; a Wormhole exposes 64, 72 or 80)."""

WORMHOLE = "tenstorrent/tt-isa-documentation, WormholeB0/"
"""The public documentation the chip's defaults come from (paths below it)."""


@dataclass(frozen=True)
class ChipConfig:
    """The chip: ``cores`` copies of the machine chapter's core (``core``, each with its VMEM
    and its DMA engine), the HBM their engines share, and the network-on-chip that carries the
    exchange and the barrier. Every integer is checked against :data:`CHIP_LIMITS`.

    The defaults were fixed from one public accelerator before anything was measured:
    Tenstorrent's Wormhole (:data:`WORMHOLE`), whose cores, like this one, move data with
    their own engines over a 2D-torus network. What carries over is a *ratio* of one core's
    bandwidth to the chip's and the network's latencies in cycles; the core's own numbers
    stay the machine chapter's."""

    cores: int = 64
    """Cores on the chip (1…64)."""
    core: MachineConfig = field(default_factory=MachineConfig)
    """Every core: the machine chapter's, with its VMEM and its DMA engine of
    ``core.dma_bytes_per_cycle``."""
    hbm_bytes_per_cycle: int = 1152
    """The HBM bandwidth all the cores' DMA engines share: 9 × a core's 128 B/cycle. On a
    Wormhole a core's NoC link carries one 256-bit flit, 32 B, per cycle (32 GB/s at the 1 GHz
    AI clock: ``NoC/README.md``, *Performance*) and its twelve GDDR6 channels 288 GB/s in all
    (``DRAMTile/README.md``, *Performance*): 288 B per cycle, the bandwidth of 9 cores'
    links. The same ratio on this core's engine gives 9 × 128."""
    hop_latency: int = 9
    """Cycles for a message from one NoC router to the next (Wormhole: 9, ``NoC/README.md``)."""
    endpoint_latency: int = 5
    """Cycles between a core and its router, each way (Wormhole: ~5, ``NoC/README.md``)."""
    exchange_bytes: int = 262144
    """The exchange (:mod:`rslab.machine.exchange`): a region of every core's local memory
    that the cores' posted writes are multicast into (a Wormhole core has 1464 KiB of L1,
    ``TensixTile/README.md``; 256 KiB of it here)."""

    def __post_init__(self):
        for name, maximum in CHIP_LIMITS.items():
            minimum = 0 if name in ("hop_latency", "endpoint_latency") else 1
            _checked(name, getattr(self, name), minimum, maximum)
        if not isinstance(self.core, MachineConfig):
            raise ValueError(f"core must be a MachineConfig, got {type(self.core).__name__}")
        if self.exchange_bytes % (4 * self.core.lanes):
            raise ValueError(f"exchange_bytes must be a multiple of {4 * self.core.lanes}, "
                             f"got {self.exchange_bytes}")

    def with_(self, **changes) -> ChipConfig:
        """A copy with some fields changed."""
        unknown = set(changes) - {f.name for f in fields(self)}
        if unknown:
            raise ValueError(f"unknown ChipConfig fields {sorted(unknown)}")
        return replace(self, **changes)

    def grid(self, k: int) -> tuple[int, int]:
        """(columns, rows) of the block of the chip's grid ``k`` cores occupy: the squarest."""
        _checked("k", k, 1, self.cores)
        cols = math.isqrt(k - 1) + 1
        return cols, -(-k // cols)

    def one_way(self, k: int) -> int:
        """Cycles for a message between the farthest two of ``k`` cores: to the router, the
        hops of a one-directional torus (every column and row but one), from the router."""
        cols, rows = self.grid(k)
        return 2 * self.endpoint_latency + self.hop_latency * (cols - 1 + rows - 1)

    def barrier_latency(self, k: int) -> int:
        """Cycles from the last of ``k`` cores arriving at a barrier to its release at every one:
        the arrivals' trip to the barrier's counter and the release's trip back."""
        return 2 * self.one_way(k)

    def table(self) -> list[tuple[str, str, str]]:
        """(resource, value, note) rows describing the chip, for the book."""
        cols, rows = self.grid(self.cores)
        return [
            ("cores", f"{self.cores} on a {cols} × {rows} grid", "each the machine chapter's core"),
            ("HBM", f"{self.hbm_bytes_per_cycle} B/cycle shared",
             f"{self.hbm_bytes_per_cycle / self.core.dma_bytes_per_cycle:g} cores' DMA engines"),
            ("network", f"hop {self.hop_latency}, endpoint {self.endpoint_latency} cycles",
             f"farthest trip {self.one_way(self.cores)} cycles"),
            ("barrier", f"{self.barrier_latency(self.cores)} cycles after the last arrival",
             "two trips: to the counter and back"),
            ("exchange", f"{self.exchange_bytes // 1024} KiB", "posted writes, read after a "
             "barrier"),
        ]
