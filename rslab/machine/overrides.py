"""``key=value`` changes of a ``MachineConfig``, as the command line writes them.

A key is a ``MachineConfig`` field (``fifo_depth=8``, ``dma_latency=100``), or a slot
or latency class with the table's name as suffix: ``valu_slots=3`` sets
``slots['valu']``, ``sfu_latency=20`` sets ``latency['sfu']``. Values are integers,
each at most its bound in ``MachineConfig``'s ``LIMITS``, checked before any work starts
(and named as the key was written). On a chip (``apply_chip_overrides``) the keys of
``ChipConfig`` (``hbm_bytes_per_cycle=576``, ``hop_latency=20``) are settings too.
"""

from __future__ import annotations

from dataclasses import fields

from rslab.machine.config import (
    CHIP_LIMITS,
    LATENCY_CLASSES,
    LIMITS,
    SLOT_CLASSES,
    ChipConfig,
    MachineConfig,
)

SCALAR_FIELDS = tuple(f.name for f in fields(MachineConfig)
                      if f.name not in ("slots", "latency") and not f.name.endswith("_fn"))
"""The integer fields a ``key=value`` may set."""


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


CHIP_KEYS = tuple(k for k in CHIP_LIMITS if k != "cores")
"""The chip's settings a ``key=value`` may set (its cores are the command's ``--cores``)."""


def apply_chip_overrides(pairs, cores: int) -> ChipConfig:
    """The default chip with ``cores`` cores and the ``(key, value)`` changes ``pairs``: the
    chip's keys (``CHIP_KEYS``) and, for every core, the machine's."""
    chip = {}
    for key, text in pairs:
        if key in CHIP_KEYS:
            value = _integer(key, text)
            if value > CHIP_LIMITS[key]:
                raise ValueError(f"{key}={text}: at most {CHIP_LIMITS[key]:,} on this simulator")
            chip[key] = value
    try:
        core = apply_overrides([(k, v) for k, v in pairs if k not in CHIP_KEYS])
    except ValueError as exc:
        if "unknown machine setting" not in str(exc):
            raise
        raise ValueError(f"{exc}; the chip's: {', '.join(CHIP_KEYS)}") from None
    try:
        return ChipConfig(cores=cores, core=core, **chip)
    except ValueError as exc:
        raise ValueError(f"chip settings: {exc}") from None
