"""The Perfetto trace explains itself: args on every slice, the op each stall waited for,
dependency arrows producer → consumer, the time unit in the metadata; and the text timeline."""

import json

import pytest

from rslab.machine import assemble, simulate
from rslab.machine.examples import sumexp_naive
from rslab.machine.stalls import CHIP_CAUSES
from rslab.machine.timeline import MARKS, timeline


@pytest.fixture(scope="module")
def naive(tmp_path_factory):
    run = simulate(sumexp_naive(6).program(), trace=True)
    path = tmp_path_factory.mktemp("trace") / "t.json"
    run.trace.write_chrome(path, flows=(20, 60))
    return run, json.loads(path.read_text())


def test_metadata_states_the_time_unit_and_names_the_tracks(naive):
    run, data = naive
    assert "1 cycle" in data["otherData"]["time_unit"]
    assert data["otherData"]["cycles"] == run.cycles
    meta = [e for e in data["traceEvents"] if e["ph"] == "M"]
    process = next(e for e in meta if e["name"] == "process_name")
    assert "1 us = 1 cycle" in process["args"]["name"]
    tracks = {e["args"]["name"] for e in meta if e["name"] == "thread_name"}
    assert {"ld", "valu0", "valu1", "sfu", "stalls"} <= tracks


def test_every_op_slice_carries_its_args(naive):
    run, data = naive
    ops = [e for e in data["traceEvents"] if e["ph"] == "X" and e["cat"] != "stall"]
    assert len(ops) == run.ops
    lines = {e.line for e in run.program.entries}
    for e in ops:
        a = e["args"]
        assert a["line"] in lines and a["source"] == e["name"]
        assert a["issue_cycle"] == e["ts"] and a["ready_cycle"] >= a["issue_cycle"]
        assert isinstance(a["loop_iteration"], list) and isinstance(a["pc"], int)
    assert any(e["args"]["loop_iteration"] == [3] for e in ops)


def test_stall_slices_name_the_cause_and_the_op_waited_for(naive):
    run, data = naive
    stalls = [e for e in data["traceEvents"] if e.get("cat") == "stall"]
    assert sum(e["dur"] for e in stalls) == run.stall_cycles
    assert {e["args"]["cause"] for e in stalls} >= {"raw", "sfu-wait"}
    for e in stalls:
        a = e["args"]
        assert a["cause"] == e["name"] and a["meaning"] and a["stall_cycles"] == e["dur"]
        assert a["waited_for_issue_cycle"] < a["issue_cycle"]
        if a["cause"] == "raw":  # the producer's result is ready exactly when the bundle issues
            assert a["waited_for_ready_cycle"] == a["issue_cycle"]
        if a["cause"] == "sfu-wait":
            assert a["waited_for"].split()[0] == "vexp2"


def test_flow_arrows_join_a_producer_slice_to_its_consumer_in_the_window(naive):
    _, data = naive
    events = data["traceEvents"]
    slices = {(e["tid"], e["ts"]): e for e in events if e["ph"] == "X"}
    starts = {e["id"]: e for e in events if e["ph"] == "s"}
    ends = {e["id"]: e for e in events if e["ph"] == "f"}
    assert starts and set(starts) == set(ends)
    kinds = set()
    for i, s in starts.items():
        f = ends[i]
        assert f["bp"] == "e" and s["name"] == f["name"] and 20 <= f["ts"] < 60
        producer, consumer = slices[(s["tid"], s["ts"])], slices[(f["tid"], f["ts"])]
        assert s["ts"] < f["ts"]
        if s["name"] == "fifo":
            assert producer["name"].startswith("vexp2") and consumer["name"].startswith("vpop")
        else:
            reg = s["name"].removeprefix("reg ")
            assert producer["name"].split()[1].rstrip(",") == reg and reg in consumer["name"]
        kinds.add(s["name"].split()[0])
    assert kinds == {"reg", "fifo"}


def test_no_arrows_without_a_window():
    run = simulate(sumexp_naive(2).program(), trace=True)
    assert not [e for e in run.trace.to_chrome(flows=None)["traceEvents"] if e["ph"] in "sf"]
    with pytest.raises(ValueError, match="flows"):
        run.trace.to_chrome(flows=(5, 5))


def test_timeline_marks_stalls_issue_flight_and_ready():
    run = simulate(assemble("vadd.f32 v1, v1, v2\nvadd.f32 v1, v1, v2\nhalt\n"), trace=True)
    text = timeline(run.trace, 0, 8)
    rows = [line for line in text.splitlines() if "vadd.f32" in line]
    assert rows[0].endswith("I==R....") and rows[1].endswith(".rrI==R.")
    assert set(MARKS) == set(CHIP_CAUSES) and len(set(MARKS.values())) == len(CHIP_CAUSES)
    with pytest.raises(ValueError, match="window"):
        timeline(run.trace, 4, 2)
