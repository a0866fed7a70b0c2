"""The chip: cores sharing an HBM, an exchange and barriers (rslab.machine.chip)."""

import json
import subprocess
import sys

import numpy as np
import pytest

from rslab.machine import MachineError, assemble, simulate
from rslab.machine.asm import AssemblyError
from rslab.machine.chip import simulate_chip
from rslab.machine.config import ChipConfig
from rslab.machine.sections import assemble_sections

SUM_OF_INDICES = """
scid s1
sshl s2, s1, 2
sxst s1, [s2 + 0]
sli s3, 1
bar s3, {n}
xld v1, [s0 + 0]
vcvt.u2f v1, v1
vred.add s4, v1
halt
"""

STREAMS = """
scid s1
sli s6, 0
sli s8, 16384
sshl s9, s1, 14
dma s6, s9, s8, 1
sadd s9, s9, 4096
dma s6, s9, s8, 2
dmawait 1
dmawait 2
halt
"""


def test_the_cores_sum_their_indices_through_the_exchange_after_a_barrier():
    chip = ChipConfig(cores=5)
    run = simulate_chip(assemble_sections(SUM_OF_INDICES.format(n=5), 5), chip)
    assert [r.sreg_f32(4) for r in run.runs] == [10.0] * 5
    (b,) = run.barriers
    assert b["count"] == 5 and b["release"] == max(t for _, t, _ in b["arrivals"]) \
        + chip.barrier_latency(5)
    assert all(r.stalls["barrier"] > 0 for r in run.runs)


def test_the_shared_hbm_never_delivers_more_than_its_bandwidth():
    chip = ChipConfig(cores=16)
    hbm = np.zeros(16 * 16384 // 4 + 1024, np.uint32)
    run = simulate_chip(assemble_sections(STREAMS, 16), chip, hbm=hbm, trace=True)
    per_cycle = run.hbm_bytes()
    assert per_cycle.max() == chip.hbm_bytes_per_cycle  # 16 engines of 128 B ask for more
    assert per_cycle.sum() == 32 * 16384 == sum(t["bytes"] for t in run.transfers)
    for t in run.transfers:  # no engine beyond its own rate, every byte delivered
        assert all(rate <= chip.core.dma_bytes_per_cycle for _, _, rate in t["delivery"])
        assert sum((b - a) * r for a, b, r in t["delivery"]) == t["bytes"]
    assert run.stalls["hbm"] > 0  # some cores waited for the others' transfers
    again = simulate_chip(assemble_sections(STREAMS, 16), chip, hbm=hbm)
    assert again.transfers == run.transfers and again.cycles == run.cycles


def test_the_oldest_transfer_is_served_first():
    chip = ChipConfig(cores=2, hbm_bytes_per_cycle=128)
    text = """
.core 0
sli s1, 0
sli s2, 12800
dma s1, s1, s2, 1
dmawait 1
halt
.core 1
nop
nop
sli s1, 0
sli s2, 128
dma s1, s1, s2, 1
dmawait 1
halt
"""
    run = simulate_chip(assemble_sections(text, 2), chip, hbm=np.zeros(3200, np.uint32))
    first, second = sorted(run.transfers, key=lambda t: t["core"])
    assert (first["start"], first["end"]) == (2, 102)
    served = second["delivery"][0][0]
    assert second["start"] == second["issue"] < served == first["end"]  # core 1 waits its turn
    # the wait is charged to the constraint that binds: the HBM (alone it would end at 205)
    assert {k: v for k, v in run.runs[1].stalls.items() if v} == {"hbm": second["done"] - 5}


def test_one_core_of_a_chip_times_a_program_as_the_lone_core_does():
    text = "sli s1, 0\nsli s2, 4096\ndma s1, s1, s2, 1\nvadd.f32 v1, v1, v2\ndmawait 1\nhalt\n"
    hbm = np.zeros(1024, np.uint32)
    lone = simulate(assemble(text), hbm=hbm)
    chip = simulate_chip([assemble(text)], ChipConfig(cores=1), hbm=hbm)
    assert chip.cycles == lone.cycles
    assert {k: v for k, v in chip.runs[0].stalls.items() if v} == \
        {k: v for k, v in lone.stalls.items() if v}


def test_mismatched_barrier_counts_name_both_cores_and_lines():
    text = "scid s1\nsli s2, 9\nbnz s1, other\nbar s2, 2\nhalt\nother: bar s2, 3\nhalt\n"
    with pytest.raises(MachineError, match=r"core \d \(line \d\): bar waits for \d cores at "
                                           r"barrier 9, but core \d \(line \d\)") as err:
        simulate_chip(assemble_sections(text, 3), ChipConfig(cores=3))
    assert err.value.line in (4, 6)


def test_a_core_that_never_arrives_is_an_error_not_a_hang():
    text = "scid s1\nsli s2, 9\nbnz s1, other\nbar s2, 2\nhalt\nother: halt\n"
    with pytest.raises(MachineError, match=r"deadlock: barrier 9 waits for 2 cores and 1 more "
                                           r"can never arrive; waiting: core 0 \(line 4\); "
                                           r"halted: core 1 \(line 6\)") as err:
        simulate_chip(assemble_sections(text, 2), ChipConfig(cores=2))
    assert err.value.line == 4


def test_two_barriers_waiting_for_each_other_are_a_deadlock():
    text = ("scid s1\nsli s2, 1\nsli s3, 2\nbnz s1, other\nbar s2, 2\nbar s3, 2\nhalt\n"
            "other: bar s3, 2\nbar s2, 2\nhalt\n")
    with pytest.raises(MachineError, match="deadlock: barrier 1 .*; barrier 2 "):
        simulate_chip(assemble_sections(text, 2), ChipConfig(cores=2))


def test_a_barrier_for_more_cores_than_run_is_an_error():
    text = ".core 0\nsli s1, 3\nbar s1, 4\nhalt\n.core 1\nhalt\n"
    with pytest.raises(MachineError, match=r"core 0 \(line 3\): bar waits for 4 cores at "
                                           r"barrier 3; 2 cores run on this chip"):
        simulate_chip(assemble_sections(text, 3), ChipConfig(cores=3))


def test_reading_a_word_before_a_barrier_published_it_is_a_race():
    text = "scid s1\nsshl s3, s1, 2\nsxst s1, [s3 + 0]\nxld v1, [s0 + 0]\nhalt\n"
    with pytest.raises(MachineError, match=r"core \d: race: core \d reads the exchange word "
                                           r"at byte \d, which core \d wrote"):
        simulate_chip(assemble_sections(text, 2), ChipConfig(cores=2))


def test_the_chip_ops_need_a_chip():
    with pytest.raises(MachineError, match="xld needs a chip"):
        simulate(assemble("xld v1, [s0 + 0]\nhalt\n"))
    with pytest.raises(AssemblyError, match="bar must be alone in its bundle"):
        assemble("bar s1, 2 ; sli s2, 1\n")


def test_sections_give_each_core_its_program_and_leave_the_others_idle():
    text = "# two\n.core 0\nsli s1, 5\nhalt\n.cores 2-3\nsli s1, 7\nhalt\n"
    programs = assemble_sections(text, 5)
    assert programs[1] is None and programs[4] is None and programs[2] is programs[3]
    run = simulate_chip(programs, ChipConfig(cores=5))
    assert [None if r is None else r.sreg(1) for r in run.runs] == [5, None, 7, 7, None]
    assert programs[0].entries[0].line == 3  # the file's line numbers
    rest = assemble_sections(".core 1\nsli s1, 1\nhalt\n.cores *\nsli s1, 2\nhalt\n", 3)
    assert [p.entries[0].text for p in rest] == ["sli s1, 2", "sli s1, 1", "sli s1, 2"]
    for bad, message in (("sli s1, 1\n.core 0\nhalt\n", "code before"),
                         (".core 0\nhalt\n.cores 0-1\nhalt\n", "core 0 already has"),
                         (".core 9\nhalt\n", "the chip has cores 0…2"),
                         (".cores 2\nhalt\n", "a section is")):
        with pytest.raises(AssemblyError, match=message):
            assemble_sections(bad, 3)


def test_the_perfetto_trace_has_a_process_per_core_and_the_hbm(tmp_path):
    run = simulate_chip(assemble_sections(STREAMS, 4), ChipConfig(cores=4),
                        hbm=np.zeros(4 * 16384 // 4 + 1024, np.uint32), trace=True)
    doc = run.to_chrome()
    names = {e["pid"]: e["args"]["name"] for e in doc["traceEvents"]
             if e["name"] == "process_name"}
    assert names[0].startswith("chip") and [names[c + 1] for c in range(4)] == \
        [f"core {c}" for c in range(4)]
    counters = [e for e in doc["traceEvents"] if e["ph"] == "C"]
    assert max(e["args"]["bytes"] for e in counters) == run.hbm_bytes().max()


def test_the_command_line_runs_a_chip_and_names_the_core_of_an_error(tmp_path):
    good = tmp_path / "sum.s"
    good.write_text(SUM_OF_INDICES.format(n=4))
    out = subprocess.run([sys.executable, "-m", "rslab", "sim", str(good), "--cores", "4",
                          "--json", "--regs", "s4", "--trace", str(tmp_path / "t.json")],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    rep = json.loads(out.stdout)
    assert rep["active_cores"] == 4 and rep["stalls"]["barrier"]["cycles"] > 0
    assert {row["registers"]["s4"]["f32"] for row in rep["per_core"]} == {6.0}
    assert json.loads((tmp_path / "t.json").read_text())["otherData"]["cores"] == 4
    bad = tmp_path / "bad.s"
    bad.write_text("scid s1\nsli s2, 9\nbnz s1, other\nbar s2, 2\nhalt\nother: halt\n")
    out = subprocess.run([sys.executable, "-m", "rslab", "sim", str(bad), "--cores", "2"],
                         capture_output=True, text=True)
    assert out.returncode == 2 and out.stderr.count("\n") == 1
    assert f"{bad}:4: error: deadlock" in out.stderr and "core 1 (line 6)" in out.stderr
