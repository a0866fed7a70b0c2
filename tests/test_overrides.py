"""key=value machine changes: fields, slot and latency classes, and errors that name the key."""

import pytest

from rslab.machine import MachineConfig
from rslab.machine.config import (
    DEFAULT_LATENCY,
    DEFAULT_SLOTS,
    LATENCY_CLASSES,
    LIMITS,
    SLOT_CLASSES,
)
from rslab.machine.overrides import (
    SCALAR_FIELDS,
    apply_overrides,
    keys,
    machine_line,
    recorded_machine,
)


def test_fields_slots_and_latencies():
    config = apply_overrides([("valu_slots", "3"), ("sfu_latency", "20"), ("dma_latency", "0x40"),
                              ("fifo_depth", "8")])
    assert config.slots["valu"] == 3 and config.latency["sfu"] == 20
    assert config.dma_latency == 64 and config.fifo_depth == 8
    assert apply_overrides([]) == MachineConfig()
    assert "valu_slots" in keys() and "dma_latency" in keys() and "log2_fn" not in keys()


@pytest.mark.parametrize("pair, what", [
    (("log2_fn", "1"), "unknown machine setting 'log2_fn'"),
    (("vpu_slots", "2"), "unknown machine setting 'vpu_slots'"),
    (("sfu_latency", "fast"), "sfu_latency=fast: the value must be an integer"),
    (("lanes", "0"), "lanes must be an integer >= 1"),
])
def test_errors_name_the_setting(pair, what):
    with pytest.raises(ValueError, match=what):
        apply_overrides([pair])


@pytest.mark.parametrize("build, what", [
    (lambda: MachineConfig(slots={**DEFAULT_SLOTS, "valu": 10**12}),
     r"slots\['valu'\] must be at most 64 on this simulator, got 1,000,000,000,000"),
    (lambda: MachineConfig(vmem_bytes=2**50), "vmem_bytes must be at most 67,108,864"),
    (lambda: MachineConfig(vregs=10**8), "vregs must be at most 1,024"),
    (lambda: MachineConfig(latency={**DEFAULT_LATENCY, "sfu": 10**9}),
     r"latency\['sfu'\] must be at most 1,000"),
    (lambda: MachineConfig().with_(sregs=2**40), "sregs must be at most 1,024"),
])
def test_a_config_built_from_python_is_bounded(build, what):
    """The bounds hold for ``MachineConfig(...)`` itself, not only for ``key=value``."""
    with pytest.raises(ValueError, match=what):
        build()


@pytest.mark.parametrize("name", [*SCALAR_FIELDS, *(f"slots:{c}" for c in SLOT_CLASSES),
                                  *(f"latency:{c}" for c in LATENCY_CLASSES)])
def test_every_setting_has_its_bound(name):
    """One past the bound is refused, by ``MachineConfig`` and by ``key=value`` alike; the
    bound itself is accepted."""
    table, _, cls = name.partition(":")
    bound = LIMITS[table]
    if cls:
        config = dict(getattr(MachineConfig(), table))
        with pytest.raises(ValueError, match=rf"{table}\['{cls}'\] must be at most {bound:,}"):
            MachineConfig(**{table: {**config, cls: bound + 1}})
        key = f"{cls}_{table}"
    else:
        with pytest.raises(ValueError, match=f"{table} must be at most {bound:,}"):
            MachineConfig(**{table: bound + 1})
        key = table
    with pytest.raises(ValueError, match=f"{key}={bound + 1}: at most {bound:,}"):
        apply_overrides([(key, str(bound + 1))])
    assert apply_overrides([(key, str(bound))])


@pytest.mark.parametrize("pairs", [[], [("valu_slots", "3"), ("sfu_latency", "20")],
                                   [("lanes", "64"), ("fifo_depth", "1"), ("sfu_hold", "0")]])
def test_the_machine_line_records_the_machine(pairs):
    config = apply_overrides(pairs)
    line = machine_line(config)
    assert line == "# machine: " + (" ".join(f"{k}={v}" for k, v in sorted(
        pairs, key=lambda p: keys().index(p[0]))) or "default")
    assert recorded_machine(f"# a comment\n\n{line}  # scheduled by rslab\nhalt\n") == \
        (3, config)
    assert recorded_machine(f"halt\n{line}\n") is None  # only the lines that open a program


def test_a_key_given_twice_is_refused():
    with pytest.raises(ValueError, match=r"valu_slots is given twice \(valu_slots=2, then "
                                         r"valu_slots=3\)"):
        apply_overrides([("valu_slots", "2"), ("sfu_latency", "9"), ("valu_slots", "3")])
