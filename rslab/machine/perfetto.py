"""A traced run as Chrome trace JSON that explains itself in Perfetto (ui.perfetto.dev).

* One track per slot instance (``valu0``, ``valu1``, ``sfu`` …) and one for stalls.
  Time: one cycle of the core is shown as 1 µs (``ts``/``dur`` in cycles), as the
  metadata says (``otherData.time_unit`` and the process name).
* Every op slice carries ``args``: pc, source line and text, the iteration of each
  enclosing hardware loop, issue and ready cycles, and, when the program says so
  (``rslab pipeline``'s ``#@`` notes), the loop-body op it runs: ``body_op`` (its
  label), ``source_iteration`` and ``stage``.
* Every stall slice carries its cause and the cause's meaning (:mod:`rslab.machine.stalls`)
  and the op it waited for (:mod:`rslab.machine.waits`): text, pc, line, issue cycle.
* Flow arrows from producer to consumer (a register, or ``fifo`` for a push and its
  pop) for the ops issued in a window of cycles.
* A trace may cover a window of cycles only (the ops issued and the stalls ended in it);
  :func:`bounded_window` cuts a window at ``MAX_TRACE_OPS`` ops (a trace takes about 240
  bytes per op: a 600,000-op run wrote 143 MB).

A chip's run (:func:`chip_trace`) is one process per core, each with the tracks above, and
a ``chip`` process with the shared HBM's bytes per cycle (a counter track) and a track of
the barriers (each instance from its first arrival to its release).
"""

from __future__ import annotations

from rslab.machine.stalls import meaning
from rslab.machine.waits import links

TIME_UNIT = "1 us in this trace = 1 cycle of the core (ts and dur count cycles)"
DEFAULT_FLOW_WINDOW = (0, 64)
PID = 0
MAX_TRACE_OPS = 100_000
"""The most ops a trace written by ``rslab sim --trace`` holds (about 24 MB)."""


def bounded_window(trace, window: tuple[int, int] | None = None) -> tuple[tuple, int, bool]:
    """``(window, ops, cut)``: the cycles ``window`` (None: the whole run) ended early
    enough that at most ``MAX_TRACE_OPS`` ops issue in it, how many do, and whether it
    was cut."""
    start, end = window or (0, trace.run.cycles + 1)
    issued = [op.issue for op in trace.ops if start <= op.issue < end]
    if len(issued) <= MAX_TRACE_OPS:
        return (start, end), len(issued), False
    end = sorted(issued)[MAX_TRACE_OPS]
    return (start, end), sum(1 for c in issued if c < end), True


def _line(program, pc) -> int | None:
    return program.entries[pc].line if 0 <= pc < len(program.entries) else None


def _op_args(trace, op) -> dict:
    program = trace.run.program
    args = {"pc": op.pc, "line": _line(program, op.pc), "source": op.text,
            "loop_iteration": list(op.iters), "issue_cycle": op.issue, "ready_cycle": op.ready}
    if op.source is not None:
        args.update(zip(("body_op", "source_iteration", "stage"), op.source, strict=True))
    return args


def _slot_tracks(trace, window, pid: int = PID) -> tuple[dict, dict, list]:
    """(track name → tid, op index → tid, the slices of every op that occupies a slot and
    issues in ``window``)."""
    rows = trace.slot_rows()
    slotted = [i for i, op in enumerate(trace.ops) if op.slot is not None]
    tids, op_tid, events = {}, {}, []
    for i, (name, start, dur, text) in zip(slotted, rows, strict=True):
        if not window[0] <= start < window[1]:
            continue
        tid = tids.setdefault(name, len(tids) + 1)
        op_tid[i] = tid
        events.append({"name": text, "ph": "X", "ts": start, "dur": dur, "pid": pid, "tid": tid,
                       "cat": name, "args": _op_args(trace, trace.ops[i])})
    return tids, op_tid, events


def _stall_events(trace, waited, tid, window, pid: int = PID) -> list:
    program, ops = trace.run.program, trace.ops
    events = []
    for b, rec in enumerate(trace.bundles):
        if rec.cause is None or not window[0] <= rec.cycle < window[1]:
            continue
        args = {"cause": rec.cause, "meaning": meaning(rec.cause), "stall_cycles": rec.stall,
                "pc": rec.pc, "line": _line(program, rec.pc), "bundle": " ; ".join(rec.ops),
                "loop_iteration": list(rec.iters), "issue_cycle": rec.cycle}
        if b in waited:
            w = ops[waited[b]]
            args.update(waited_for=w.text, waited_for_pc=w.pc,
                        waited_for_line=_line(program, w.pc), waited_for_issue_cycle=w.issue,
                        waited_for_ready_cycle=w.ready)
        events.append({"name": rec.cause, "ph": "X", "ts": rec.cycle - rec.stall,
                       "dur": rec.stall, "pid": pid, "tid": tid, "cat": "stall", "args": args})
    return events


def _flow_events(trace, deps, op_tid, window, pid: int = PID) -> list:
    start, end = window
    events, flow_id = [], 0
    for i, op in enumerate(trace.ops):
        if not start <= op.issue < end or i not in op_tid:
            continue
        for p, what in deps[i]:
            if p not in op_tid:
                continue
            flow_id += 1
            name = "fifo" if what == "fifo" else f"reg {what}"
            producer = trace.ops[p]
            events.append({"name": name, "cat": "dependency", "ph": "s", "id": flow_id,
                           "ts": producer.issue, "pid": pid, "tid": op_tid[p]})
            events.append({"name": name, "cat": "dependency", "ph": "f", "bp": "e",
                           "id": flow_id, "ts": op.issue, "pid": pid, "tid": op_tid[i]})
    return events


def _checked_window(name, window) -> None:
    if len(window) != 2 or not 0 <= window[0] < window[1]:
        raise ValueError(f"{name} must be a window (start, end) with 0 <= start < end, "
                         f"got {window!r}")


def _core_events(trace, flows, window, pid: int, process: str) -> list:
    """The metadata and events of one core's tracks in the cycles ``window``."""
    found = links(trace)
    tids, op_tid, op_events = _slot_tracks(trace, window, pid)
    stall_tid = len(tids) + 1
    meta = [{"name": "process_name", "ph": "M", "pid": pid, "args": {"name": process}}]
    meta += [{"name": "thread_name", "ph": "M", "pid": pid, "tid": tid, "args": {"name": n}}
             for n, tid in list(tids.items()) + [("stalls", stall_tid)]]
    events = op_events + _stall_events(trace, found.waited, stall_tid, window, pid)
    if flows is not None:
        events += _flow_events(trace, found.deps, op_tid, flows, pid)
    return meta + events


def chrome_trace(trace, flows: tuple[int, int] | None = DEFAULT_FLOW_WINDOW,
                 window: tuple[int, int] | None = None) -> dict:
    """The Chrome trace JSON object of a ``Trace``: the ops issued and the stalls ended in
    cycles ``window = (start, end)`` (None: all); dependency arrows for the ops issued in
    cycles ``flows`` (None: no arrows)."""
    if flows is not None:
        _checked_window("flows", flows)
    if window is not None:
        _checked_window("window", window)
    window = window or (0, trace.run.cycles + 1)
    run = trace.run
    return {"traceEvents": _core_events(trace, flows, window, PID,
                                               "rslab vector core (1 us = 1 cycle)"),
            "otherData": {"time_unit": TIME_UNIT, "cycles": run.cycles, "bundles": run.bundles,
                          "ops": run.ops, "window": list(window),
                          "flow_window": list(flows) if flows else None,
                          "stall_causes": {c: meaning(c) for c in run.stalls}}}


def _chip_events(chip_run, pid: int) -> list:
    """The chip's process: the HBM's bytes per cycle (a counter) and the barriers."""
    events = [{"name": "process_name", "ph": "M", "pid": pid,
               "args": {"name": "chip: shared HBM and barriers"}},
              {"name": "thread_name", "ph": "M", "pid": pid, "tid": 1,
               "args": {"name": "barriers"}}]
    per_cycle = chip_run.hbm_bytes()
    changes = [0] + [int(i) for i in (per_cycle[1:] != per_cycle[:-1]).nonzero()[0] + 1]
    events += [{"name": "HBM bytes/cycle", "ph": "C", "pid": pid, "ts": t,
                "args": {"bytes": int(per_cycle[t])}} for t in changes if t < per_cycle.size]
    events += [{"name": "HBM bytes/cycle", "ph": "C", "pid": pid, "ts": int(per_cycle.size),
                "args": {"bytes": 0}}]
    for b in chip_run.barriers:
        first = min(t for _, t, _ in b["arrivals"])
        events.append({"name": f"barrier {b['name']}", "ph": "X", "ts": first,
                       "dur": b["release"] - first, "pid": pid, "tid": 1, "cat": "barrier",
                       "args": {"count": b["count"], "release": b["release"],
                                "arrivals": [{"core": c, "cycle": t} for c, t, _ in
                                             b["arrivals"]]}})
    return events


def chip_trace(chip_run, flows: tuple[int, int] | None = None) -> dict:
    """The Chrome trace JSON object of a chip's traced run: a process per core (pid = core
    + 1), and the chip's (pid 0)."""
    if flows is not None:
        _checked_window("flows", flows)
    events = _chip_events(chip_run, PID)
    for c, run in enumerate(chip_run.runs):
        if run is None:
            continue
        if run.trace is None:
            raise ValueError("the chip's run has no trace: simulate_chip(..., trace=True)")
        events += _core_events(run.trace, flows, (0, run.cycles + 1), c + 1, f"core {c}")
    causes = {c for r in chip_run.runs if r is not None for c in r.stalls}
    return {"traceEvents": events,
            "otherData": {"time_unit": TIME_UNIT, "cycles": chip_run.cycles,
                          "cores": chip_run.config.cores,
                          "flow_window": list(flows) if flows else None,
                          "stall_causes": {c: meaning(c) for c in sorted(causes)}}}
