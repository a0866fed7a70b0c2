"""``key=value`` changes of a ``MachineConfig``, as the command line writes them.

A key is a ``MachineConfig`` field (``fifo_depth=8``, ``dma_latency=100``), or a slot
or latency class with the table's name as suffix: ``valu_slots=3`` sets
``slots['valu']``, ``sfu_latency=20`` sets ``latency['sfu']``. Values are integers,
each at most its bound in ``LIMITS`` (a machine the simulator can hold in memory and
a scheduler can search in seconds), checked before any work starts.
"""

from __future__ import annotations

from dataclasses import fields

from rslab.machine.config import LATENCY_CLASSES, SLOT_CLASSES, MachineConfig

SCALAR_FIELDS = tuple(f.name for f in fields(MachineConfig)
                      if f.name not in ("slots", "latency") and not f.name.endswith("_fn"))
"""The integer fields a ``key=value`` may set."""


LIMITS = {"lanes": 4096, "vregs": 1024, "sregs": 1024, "sfu_hold": 1000, "fifo_depth": 1024,
          "vmem_bytes": 2**26, "vmem_banks": 4096, "bank_bytes": 4, "branch_penalty": 1000,
          "loop_depth": 64, "dma_latency": 10**6, "dma_bytes_per_cycle": 2**20,
          "dma_tags": 1024, "slots": 64, "latency": 1000}
"""The largest value of each setting (``slots`` and ``latency``: of every class)."""


def limit(key: str) -> int:
    """The bound of the setting ``key``."""
    if key.endswith("_slots"):
        return LIMITS["slots"]
    if key.endswith("_latency") and key != "dma_latency":
        return LIMITS["latency"]
    return LIMITS[key]


def keys() -> list[str]:
    """Every key ``apply_overrides`` accepts."""
    return (list(SCALAR_FIELDS) + [f"{c}_slots" for c in SLOT_CLASSES]
            + [f"{c}_latency" for c in LATENCY_CLASSES])


def _integer(key, text) -> int:
    try:
        return int(str(text), 0)
    except ValueError:
        raise ValueError(f"{key}={text}: the value must be an integer") from None


def apply_overrides(pairs, base: MachineConfig | None = None) -> MachineConfig:
    """``base`` (default: the default machine) with the ``(key, value)`` changes ``pairs``."""
    base = MachineConfig() if base is None else base
    slots, latency, scalars = {}, {}, {}
    for key, text in pairs:
        value = _integer(key, text)
        if key in keys() and value > limit(key):
            raise ValueError(f"{key}={text}: at most {limit(key):,} on this simulator")
        if key in SCALAR_FIELDS:
            scalars[key] = value
        elif key.endswith("_slots") and key[:-6] in SLOT_CLASSES:
            slots[key[:-6]] = value
        elif key.endswith("_latency") and key[:-8] in LATENCY_CLASSES:
            latency[key[:-8]] = value
        else:
            raise ValueError(f"{key}={text}: unknown machine setting {key!r}; known: "
                             f"{', '.join(keys())}")
    try:
        return base.with_(slots=slots or None, latency=latency or None, **scalars)
    except ValueError as exc:
        raise ValueError(f"machine settings: {exc}") from None
