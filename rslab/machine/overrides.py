"""``key=value`` changes of a ``MachineConfig``, as the command line writes them.

A key is a ``MachineConfig`` field (``fifo_depth=8``, ``dma_latency=100``), or a slot
or latency class with the table's name as suffix: ``valu_slots=3`` sets
``slots['valu']``, ``sfu_latency=20`` sets ``latency['sfu']``. Values are integers,
each at most its bound in ``MachineConfig``'s ``LIMITS``, checked before any work starts
(and named as the key was written); a key given twice is refused. On a chip
(``apply_chip_overrides``) the keys of ``ChipConfig`` (``hbm_bytes_per_cycle=576``,
``hop_latency=20``) are settings too.

A program records the machine it was scheduled for in one comment line,
``# machine: sfu_latency=20 valu_slots=3`` (the settings that differ from the default
machine, in the order of ``keys()``) or ``# machine: default``: :func:`machine_line`
writes it, :func:`recorded_machine` reads it back from the comment lines that open a
program.
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
    slots, latency, scalars, given = {}, {}, {}, {}
    for key, text in pairs:
        if key in given:
            raise ValueError(f"{key} is given twice ({key}={given[key]}, then {key}={text}); "
                             "give each setting once")
        given[key] = text
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
            if key in chip:
                raise ValueError(f"{key} is given twice; give each setting once")
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


HEADER = "# machine:"
"""How the line that records a program's machine begins."""


def setting(config: MachineConfig, key: str) -> int:
    """The value of the setting ``key`` (one of ``keys()``) in ``config``."""
    if key in SCALAR_FIELDS:
        return getattr(config, key)
    if key.endswith("_slots"):
        return config.slots[key[:-6]]
    return config.latency[key[:-8]]


def differences(config: MachineConfig) -> list[tuple[str, int]]:
    """``(key, value)`` of every setting of ``config`` that differs from the default
    machine, in the order of ``keys()``."""
    default = MachineConfig()
    return [(k, setting(config, k)) for k in keys() if setting(config, k) != setting(default, k)]


def machine_text(config: MachineConfig) -> str:
    """``sfu_latency=20 valu_slots=3``, or ``default``: the settings that differ."""
    return " ".join(f"{k}={v}" for k, v in differences(config)) or "default"


def machine_line(config: MachineConfig) -> str:
    """The comment line that records ``config`` in a program: ``# machine: ...``."""
    return f"{HEADER} {machine_text(config)}"


def recorded_machine(text: str) -> tuple[int, MachineConfig] | None:
    """(line, machine) of the ``# machine:`` line among the comment and blank lines that
    open the program ``text``; None without one. ``ValueError`` ``LINE: ...`` for a
    malformed or repeated line."""
    found = None
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if line and not line.startswith("#"):
            break
        if not line.startswith(HEADER):
            continue
        if found is not None:
            raise ValueError(f"{number}: a second '{HEADER}' line (the first is line "
                             f"{found[0]})")
        found = (number, _header_machine(line[len(HEADER):].split("#")[0].split(), number))
    return found


def _header_machine(words: list[str], number: int) -> MachineConfig:
    """The machine a ``# machine:`` line's words name."""
    if words == ["default"]:
        return MachineConfig()
    pairs = []
    for word in words:
        key, sep, value = word.partition("=")
        if not sep or not key or not value:
            raise ValueError(f"{number}: '{HEADER}' expects 'default' or key=value settings, "
                             f"got {word!r}")
        pairs.append((key, value))
    if not pairs:
        raise ValueError(f"{number}: '{HEADER}' names no machine (write 'default' or "
                         "key=value settings)")
    try:
        return apply_overrides(pairs)
    except ValueError as exc:
        raise ValueError(f"{number}: '{HEADER}' {exc}") from None
