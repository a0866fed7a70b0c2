"""The scheduler's view of the machine: ops per bundle, latencies, the SFU hold and FIFO.

Nothing here is typed twice: the slot and latency tables come from
:class:`rslab.machine.MachineConfig` (``SlotModel()`` is the default machine,
``SlotModel.from_config(config)`` any other), and which op occupies which slot,
which ops push to the SFU and which pops, from the ISA table :mod:`rslab.machine.isa`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from rslab.machine.config import DEFAULT_LATENCY, DEFAULT_SLOTS, MachineConfig
from rslab.machine.isa import POP_OPS, SFU_OPS, SPECS
from rslab.machine.memory import port_cycles


def slot_of(opcode: str) -> str:
    """The slot class an opcode issues in (from the machine's ISA table)."""
    spec = SPECS.get(opcode)
    if spec is None or spec.slot is None:
        raise ValueError(f"opcode: {opcode!r} is not an op that issues in a slot")
    return spec.slot


def latency_class(opcode: str) -> str:
    """The latency class of an opcode's result (``pop`` for ``vpop``, ``sfu`` for a push)."""
    spec = SPECS[opcode]
    return spec.lat or spec.slot


def lane_stride(op) -> int | None:
    """The lane stride in words of a strided ``vld.s``/``vst.s`` (its last source), else None."""
    return int(op.srcs[-1], 0) if op.opcode in ("vld.s", "vst.s") else None


def is_push(opcode: str) -> bool:
    """Whether the op pushes an operand to the SFU (its result comes back through the FIFO)."""
    return opcode in SFU_OPS


def is_pop(opcode: str) -> bool:
    """Whether the op pops the SFU FIFO's head."""
    return opcode in POP_OPS


@dataclass(frozen=True)
class SlotModel:
    """The resources and latencies the scheduler plans with (the default machine's unless given).

    ``units`` counts ops per bundle for each slot class; ``latency`` is the
    cycles from issue until a result is usable, per latency class, with ``pop``
    for ``vpop`` and ``sfu`` the push-to-pop latency; a push holds the SFU
    for ``1 + sfu_hold`` cycles; the FIFO holds ``fifo_depth`` results; a vector
    load or store holds its port for its bank-conflict degree k (from its lane stride,
    ``lanes`` and ``banks``, as the simulator books it), and a load's result comes k − 1
    cycles later; ``busy`` overrides the cycles an opcode books (``{"vst.s": 1}``: a
    schedule unaware of the strided stores' conflicts).
    """

    units: Mapping = field(default_factory=lambda: dict(DEFAULT_SLOTS))
    latency: Mapping = field(default_factory=lambda: dict(DEFAULT_LATENCY))
    sfu_hold: int = MachineConfig.sfu_hold
    fifo_depth: int = MachineConfig.fifo_depth
    busy: Mapping = field(default_factory=dict)
    lanes: int = MachineConfig.lanes
    banks: int = MachineConfig.vmem_banks

    def __post_init__(self):
        for name, value in (("sfu_hold", self.sfu_hold), ("fifo_depth", self.fifo_depth),
                            ("lanes", self.lanes), ("banks", self.banks)):
            if not isinstance(value, int) or value < 0:
                raise ValueError(f"{name} must be a non-negative int, got {value!r}")
        for name in ("fifo_depth", "lanes", "banks"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        for table in ("units", "latency", "busy"):
            for key, n in getattr(self, table).items():
                if not isinstance(n, int) or n < 1:
                    raise ValueError(f"{table}[{key!r}] must be a positive int, got {n!r}")
        object.__setattr__(self, "units", dict(self.units))
        object.__setattr__(self, "latency", dict(self.latency))
        object.__setattr__(self, "busy", dict(self.busy))

    @classmethod
    def from_config(cls, config: MachineConfig | None = None, *, busy=None) -> SlotModel:
        """The model of a ``MachineConfig`` (default: the default machine)."""
        config = MachineConfig() if config is None else config
        if not isinstance(config, MachineConfig):
            raise ValueError(f"config must be a MachineConfig, got {type(config).__name__}")
        return cls(units=dict(config.slots), latency=dict(config.latency),
                   sfu_hold=config.sfu_hold, fifo_depth=config.fifo_depth, busy=busy or {},
                   lanes=config.lanes, banks=config.vmem_banks)

    def replace(self, *, units=None, latency=None, **kw) -> SlotModel:
        """A copy with some units / latencies / scalars changed."""
        return SlotModel(units={**self.units, **(units or {})},
                         latency={**self.latency, **(latency or {})},
                         sfu_hold=kw.pop("sfu_hold", self.sfu_hold),
                         fifo_depth=kw.pop("fifo_depth", self.fifo_depth),
                         busy=kw.pop("busy", self.busy), lanes=kw.pop("lanes", self.lanes),
                         banks=kw.pop("banks", self.banks), **kw)

    def key(self) -> tuple:
        """A hashable identity of the model (for caches)."""
        return (tuple(sorted(self.units.items())), tuple(sorted(self.latency.items())),
                self.sfu_hold, self.fifo_depth, tuple(sorted(self.busy.items())), self.lanes,
                self.banks)

    def op_latency(self, op) -> int:
        """Cycles from the issue of ``op`` (an ``Op``) until its result is usable (a load with
        a k-way bank conflict: k − 1 more)."""
        extra = self.op_busy(op) - 1 if slot_of(op.opcode) == "ld" else 0
        return self.latency[latency_class(op.opcode)] + extra

    def op_busy(self, op) -> int:
        """Cycles ``op`` (an ``Op``) books its slot: ``busy[opcode]`` if given, else 1 + hold
        for an SFU push, the bank-conflict degree for a vector load or store, 1 otherwise."""
        if op.opcode in self.busy:
            return self.busy[op.opcode]
        if is_push(op.opcode):
            return 1 + self.sfu_hold
        if slot_of(op.opcode) in ("ld", "st"):
            return port_cycles(lane_stride(op), self.lanes, self.banks)
        return 1
