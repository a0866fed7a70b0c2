"""simulate(..., guard=): loads and stores outside a contract's VMEM regions stop the run."""

import numpy as np
import pytest

from rslab.machine import MachineError, assemble, simulate
from rslab.machine.guard import Guard

GUARD = Guard(readable=[(0, 1024, "row")], writable=[(4096, 4608, "out")])


def run(text):
    return simulate(assemble(text), vmem=np.zeros(2048, np.uint32), guard=GUARD)


def test_accesses_inside_the_regions_run_as_without_a_guard():
    text = ("sli s1, 0\nvld v0, [s1 + 512]\nvst v0, [s1 + 4096]\nvld v1, [s1 + 4096]\n"
            "vld.s v2, [s1 + 0], 2\nsst s1, [s1 + 4604]\nhalt\n")
    guarded, plain = run(text), simulate(assemble(text), vmem=np.zeros(2048, np.uint32))
    assert guarded.cycles == plain.cycles
    assert np.array_equal(guarded.read_vmem(4096, 128), plain.read_vmem(4096, 128))


@pytest.mark.parametrize("op, message", [
    ("vld v0, [s1 + 1024]", "load from VMEM [1024, 1536)"),
    ("vst v0, [s1 + 0]", "store to VMEM [0, 512)"),
    ("vld.s v0, [s1 + 0], 3", "load from VMEM [0, 1528)"),
    ("sst s1, [s1 + 4608]", "store to VMEM [4608, 4612)"),
    ("sld s2, [s1 + 8192]", "load from VMEM [8192, 8196)")])
def test_an_access_outside_stops_the_run_naming_its_line(op, message):
    with pytest.raises(MachineError) as err:
        run(f"sli s1, 0\n{op}\nhalt\n")
    assert message in err.value.message and err.value.line == 2 and err.value.op == op
    assert "outside the contract's" in err.value.message


def test_a_guard_must_be_a_guard_and_its_regions_well_formed():
    with pytest.raises(ValueError, match="guard must be a Guard"):
        simulate(assemble("halt\n"), guard=[(0, 4, "x")])
    with pytest.raises(ValueError, match="start <= end"):
        Guard(readable=[(8, 4, "backwards")], writable=[])
