"""Trace records, summaries and Chrome export."""

import json
import subprocess
import sys

import numpy as np
import pytest

from rslab.machine import CAUSES, assemble, simulate

LOOP = """
vli v8, 1.0
vexp2 v8
body:
loop 12
  vld v0, [s1 + 0] ; sadd s1, s1, 512
  vadd.f32 v1, v0, v8
  vexp2 v1 ; vpop v2
  vadd.f32 v3, v3, v2
endloop
vpop v4
halt
"""


def traced():
    return simulate(assemble(LOOP), trace=True)


def test_bundle_and_op_records():
    r = traced()
    t = r.trace
    assert len(t.bundles) == r.bundles + 1              # + the halt record
    assert t.bundles[-1].ops == ("halt",)
    assert sum(b.stall for b in t.bundles) == sum(r.stalls.values())
    assert all(b.cause in CAUSES for b in t.bundles if b.stall)
    assert len(t.ops) == r.ops
    for op in t.ops:
        assert op.ready >= op.issue
    loads = [o for o in t.ops if o.text.startswith("vld")]
    assert all(o.ready - o.issue == r.config.latency["ld"] for o in loads)
    assert [o.iters for o in loads] == [(i,) for i in range(12)]


def test_issue_records_are_the_bundle_records():
    t = traced().trace
    assert all(type(rec) is tuple for rec in t.issue_records)
    assert [(b.cycle, b.pc, b.stall, CAUSES.index(b.cause) if b.cause else -1, b.iters)
            for b in t.bundles] == t.issue_records


def test_steady_state_per_iteration():
    r = traced()
    its = r.trace.loop_iterations("body")
    assert len(its) == 12
    ss = r.trace.steady_state("body", warmup=2)
    assert ss["measured"] == 9
    # first principles: ld 4 → add 3 → push, pop waits 13 → add; the pop of the previous
    # push and its accumulation bound the iteration.
    assert ss["cycles_per_iter"] == ss["min"] == ss["max"]
    assert ss["cycles_per_iter"] == 4 + ss["stalls_per_iter"]
    assert ss == r.trace.steady_state(("index", 0), warmup=2)


def test_summary_fifo_and_live_registers():
    r = traced()
    s = r.summary()
    assert s["cycles"] == r.cycles and s["ops"] == r.ops
    assert abs(s["ipc"] - r.ops / r.cycles) < 1e-12
    assert 0 < s["utilisation"]["valu"] <= 1
    cycles, occ = r.trace.fifo_occupancy()
    assert occ.max() == 2 and occ[-1] == 0 and len(cycles) == r.cycles + 1
    _, live = r.trace.live_registers("v")
    assert live.max() >= 2


def test_chrome_export(tmp_path):
    r = traced()
    data = r.trace.to_chrome()
    names = {e["args"]["name"] for e in data["traceEvents"] if e["ph"] == "M"}
    assert {"ld", "valu0", "sfu", "stalls"} <= names
    xs = [e for e in data["traceEvents"] if e["ph"] == "X" and e["cat"] != "stall"]
    assert len(xs) == r.ops
    path = tmp_path / "t.json"
    r.trace.write_chrome(path)
    assert json.loads(path.read_text())["traceEvents"]


def test_trace_off_has_no_trace_and_same_timing():
    a = simulate(assemble(LOOP))
    b = traced()
    assert a.trace is None
    assert (a.cycles, a.stalls, a.ops) == (b.cycles, b.stalls, b.ops)


GARBAGE = """
import gc
from rslab.machine import assemble, simulate
LOOP = {loop!r}
simulate(assemble(LOOP))  # a first run may load the compiled SFU models (numba's garbage)
gc.collect()
gc.set_debug(gc.DEBUG_SAVEALL)
simulate(assemble(LOOP))
gc.collect()
print(sorted({{type(o).__qualname__ for o in gc.garbage}}))
"""


def test_a_run_leaves_no_cycle_for_the_collector():
    # In a fresh interpreter: in this one, another test's thread may leave garbage meanwhile.
    out = subprocess.run([sys.executable, "-c", GARBAGE.format(loop=LOOP)], capture_output=True,
                         text=True, check=True).stdout
    assert out.strip() == "[]"


def test_cycles_by_label_charge_every_cycle_to_a_region():
    text = ("ph_a:\nsli s1, 0\nsli s2, 4096\nsli s3, 64\ndma s2, s1, s3, 1\ndmawait 1\n"
            "ph_b:\nvli v1, 1.0\nvexp2 v1\nvpop v2\nhalt\n")
    r = simulate(assemble(text), hbm=np.zeros(64, np.uint32), trace=True)
    plain = r.trace.cycles_by_label(r"^ph_(\w+)$", default="start")
    assert sum(plain.values()) == r.cycles and set(plain) <= {"start", "a", "b"}
    apart = r.trace.cycles_by_label(r"^ph_(\w+)$", separate={"dma-wait": "waiting"})
    assert sum(apart.values()) == r.cycles
    assert apart["waiting"] == r.stalls["dma-wait"] > 0
    assert apart["a"] == plain["a"] - apart["waiting"] and apart["b"] == plain["b"]


def test_every_stall_cause_has_a_meaning():
    from rslab.machine import stalls

    assert stalls.CAUSES == CAUSES and len(set(CAUSES)) == len(CAUSES)
    assert all(stalls.meaning(c) for c in CAUSES)
    with pytest.raises(ValueError, match="cause must be one of"):
        stalls.meaning("slow")
