"""The floor of a run: the fewest cycles the machine allows for the work *this program* did.

A traced run is cut into *parts*, each a stretch of the issue order: a straight-line
*segment* (bundles outside hardware loops) or a *loop run* (one execution of a hardware
loop). Issue is in order, so the parts of a run occupy disjoint stretches of time and a
region of the program takes at least the sum of its parts' floors. A part's floor is
the larger of

- its **resource floor**: for each unit, the cycles its ops book over the unit's slots
  per bundle (an SFU push books the SFU for 1 + hold cycles); the unit that books the
  most *binds*;
- its **latency floor**: for a segment, the critical path of its ops (an op issues no
  sooner than its operands are ready, a ``vpop`` no sooner than its push's result;
  values from before the segment are ready at its start); for a loop run, the
  recurrence its caller states (passes × cycles per pass, e.g. iterations × RecMII of
  the loop's body, :func:`rslab.schedule.analyse`).

Dependences through memory are left out (a floor must not overstate), so a part's
floor is a lower bound on the cycles it took: a ratio of achieved to floor near 1 says
the part runs at what the machine allows for that work.

**The DMA engine** (:func:`dma_replay`): the run's parts replayed in issue order, each at
its floor, with the engine as the simulator models it (transfers serialised, each
``bytes / dma_bytes_per_cycle`` cycles, done ``dma_latency`` later): a transfer starts no
sooner than the floor of the work before its issue and the end of the one before it; the
bundles from a ``dmawait`` to the end of their part start no sooner than its transfers are
done; the run ends no sooner than its last transfer. Each step takes a lower bound to a
lower bound, so the replay's end is a floor of the whole run: of *the program's own* work
and transfers (another program, with other transfers or other work, has another floor).
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, field

import numpy as np

UNITS = ("ld", "st", "valu", "sfu", "xlu", "scalar")


@dataclass
class Part:
    """One segment or loop run of a region: ``first``/``last`` record indices, the loop's
    ``loop_pc`` (None for a segment), its ``passes``, the cycles each unit books
    (``usage``), the segment's critical path ``latency`` and the ``cycles`` it took."""

    region: str
    first: int
    last: int
    loop_pc: int | None = None
    passes: int = 0
    usage: dict = field(default_factory=dict)
    latency: int = 0
    cycles: int = 0

    @property
    def kind(self) -> str:
        return "segment" if self.loop_pc is None else "loop"


def resource_floor(usage: dict, slots) -> tuple[int, str]:
    """(cycles, binding units) of the busiest unit: booked cycles over its slots; units
    within 1 % of the busiest are named with it (``valu = st``)."""
    per = {u: -(-usage.get(u, 0) // slots[u]) for u in UNITS if usage.get(u, 0)}
    if not per:
        return 0, "none"
    top = max(per.values())
    return top, " = ".join(u for u in UNITS if per.get(u, 0) >= 0.99 * top)


def part_floor(part: Part, slots, recurrence) -> tuple[int, str]:
    """(floor, binding) of one part; ``recurrence(loop_pc)`` is the loop's latency floor
    per pass (0 when unknown)."""
    res, unit = resource_floor(part.usage, slots)
    lat, what = part.latency, "latency"
    if part.loop_pc is not None:
        lat, what = part.passes * (recurrence(part.loop_pc) or 0), "recurrence"
    return (lat, what) if lat > res else (res, unit)


def _bundle_usage(trace) -> list:
    """Per pc, (unit, cycles booked) of its bundle (an SFU push books 1 + hold cycles)."""
    hold = 1 + trace.run.config.sfu_hold
    out = []
    for info in trace.op_infos:
        busy = {}
        for op in info:
            if op.slot is not None:
                busy[op.slot] = busy.get(op.slot, 0) + (hold if op.slot == "sfu" else 1)
        out.append(list(busy.items()))
    return out + [[]]


class _Cutter:
    """One pass over a trace's records: the parts, their usage and segment critical paths."""

    def __init__(self, trace, pattern, default):
        run = trace.run
        self.trace, self.config = trace, run.config
        program = run.program
        marks = sorted(((pc, m.group(1)) for name, pc in program.labels.items()
                        if (m := re.compile(pattern).match(name))), key=lambda x: x[0])
        starts = np.array([pc for pc, _ in marks], dtype=np.int64)
        at = np.searchsorted(starts, np.arange(len(program.entries) + 1), side="right") - 1
        self.region_of = [marks[i][1] if i >= 0 else default for i in at.tolist()]
        self.loop_of = [None] * (len(program.entries) + 1)
        for pc, e in enumerate(program.entries):
            if e.kind == "loop":
                for body in range(pc + 1, e.end):
                    if self.loop_of[body] is None:
                        self.loop_of[body] = pc
        self.busy = _bundle_usage(trace)

    def cut(self) -> list[Part]:
        records = self.trace.issue_records
        parts: list[Part] = []
        prev_t, last = 0, len(self.region_of) - 1
        p = None
        for i, (t, pc, _stall, _cause, _iters) in enumerate(records):
            pc = min(pc, last)
            loop_pc, region = self.loop_of[pc], self.region_of[pc]
            if p is None or p.region != region or p.loop_pc != loop_pc:
                p = Part(region, i, i, loop_pc)
                parts.append(p)
            p.last = i
            p.cycles += t - prev_t
            prev_t = t
            usage = p.usage
            for unit, n in self.busy[pc]:
                usage[unit] = usage.get(unit, 0) + n
            if loop_pc is not None and pc == loop_pc + 1:
                p.passes += 1
        for p in parts:
            if p.loop_pc is None:
                p.latency = self.critical_path(records[p.first:p.last + 1])
        return parts

    def critical_path(self, records) -> int:
        """Cycles from the first issue to the last op's earliest issue, plus one, with only
        register and FIFO dependences and the machine's latencies."""
        static, lat = self.trace.op_infos, self.config.latency
        ready, fifo, end = {}, deque(), 0
        for _t, pc, _stall, _cause, _iters in records:
            if pc >= len(static):
                continue
            writes = []  # a bundle reads the registers as they were before it
            for op in static[pc]:
                start = max([ready.get(r, 0) for r in op.reads] or [0])
                if op.name == "vpop" and fifo:
                    start = max(start, fifo.popleft())
                if op.slot == "sfu":
                    fifo.append(start + lat["sfu"])
                if op.write is not None:
                    writes.append((op.write, start + (op.ready or 1)))
                end = max(end, start + 1)
            ready.update(writes)
        return end


def run_parts(trace, pattern, *, default: str = "") -> list[Part]:
    """The parts of a traced run, each in the region its first bundle's label names
    (``pattern`` as in :meth:`rslab.machine.trace.Trace.cycles_by_label`)."""
    return _Cutter(trace, pattern, default).cut()


def _dma_waits(program) -> dict:
    """pc -> the tag its bundle's ``dmawait`` waits for (−1: all)."""
    out = {}
    for pc, e in enumerate(program.entries):
        for op in e.ops if e.kind == "bundle" else ():
            if op.name == "dmawait":
                out[pc] = op.operands[0][1] if op.operands and op.operands[0] else -1
    return out


def _dma_issues(trace) -> dict:
    """(pc, issue cycle) -> the (bytes, tag) of each DMA its bundle started, in order."""
    out: dict = {}
    for pc, t, _start, _done, n, tag in trace.dma_events:
        out.setdefault((pc, t), []).append((n, tag))
    return out


def dma_replay(trace, parts, floors, slots) -> dict:
    """The floor of the whole run with its transfers (see the module docstring) from its
    ``parts`` and their ``floors`` (cycles): ``cycles`` (the replay's end), ``engine_cycles``
    (the engine alone: latency plus every transfer's cycles), ``bytes`` and ``transfers``."""
    cfg = trace.run.config
    records, busy = trace.issue_records, _bundle_usage(trace)
    waits, issues = _dma_waits(trace.run.program), _dma_issues(trace)
    free, done_by_tag, last_done, t_lb = 0, {}, 0, 0
    total_bytes = count = 0
    for part, floor in zip(parts, floors, strict=True):
        start = cursor = t_lb
        end = start + floor
        recs = records[part.first:part.last + 1]
        for i, (t, pc, _stall, _cause, _iters) in enumerate(recs):
            tag = waits.get(pc)
            if tag is not None:
                done = last_done if tag < 0 else done_by_tag.get(tag, 0)
                if done > cursor:
                    cursor = done
                    end = max(end, done + _suffix_floor(recs[i:], busy, slots) - 1)
            for n, dma_tag in issues.get((pc, t), ()):
                begin = max(cursor, free)
                free = begin + -(-n // cfg.dma_bytes_per_cycle)
                done_by_tag[dma_tag] = max(done_by_tag.get(dma_tag, 0), free + cfg.dma_latency)
                last_done = max(last_done, free + cfg.dma_latency)
                total_bytes, count = total_bytes + n, count + 1
        t_lb = end
    engine = sum(-(-n // cfg.dma_bytes_per_cycle) for *_, n, _tag in trace.dma_events)
    return {"cycles": max(t_lb, last_done), "engine_cycles": engine + cfg.dma_latency * bool(count),
            "bytes": total_bytes, "transfers": count}


def _suffix_floor(records, busy, slots) -> int:
    """The resource floor of the bundles of ``records`` (issued in order)."""
    usage: dict = {}
    for _t, pc, *_ in records:
        for unit, n in busy[min(pc, len(busy) - 1)]:
            usage[unit] = usage.get(unit, 0) + n
    return max(1, resource_floor(usage, slots)[0])
