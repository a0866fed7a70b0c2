"""key=value machine changes: fields, slot and latency classes, and errors that name the key."""

import pytest

from rslab.machine import MachineConfig
from rslab.machine.overrides import apply_overrides, keys


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
    (("lanes", "0"), "lanes must be a positive integer"),
])
def test_errors_name_the_setting(pair, what):
    with pytest.raises(ValueError, match=what):
        apply_overrides([pair])
