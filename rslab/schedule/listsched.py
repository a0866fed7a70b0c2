"""List scheduling of one iteration of a loop body, with no overlap between iterations.

A plain (not software-pipelined) loop: each cycle, the ready ops are placed by
priority while their slots are free; iteration i + 1 starts only after the last
bundle of iteration i.
"""

from __future__ import annotations

from dataclasses import replace

from rslab.schedule.body import Graph
from rslab.schedule.model import slot_of


def list_schedule(graph: Graph, *, by_depth: bool = False) -> list:
    """Cycle-by-cycle list schedule of one iteration (no overlap with the next).

    Each cycle, ready ops (operands available) are placed by priority (longest
    latency path to the end of the iteration) while their slots are free; an
    SFU push may go whenever the SFU is free, and a pop only takes the FIFO
    head, so results leave in push order.

    ``by_depth``: ops are grouped by dependence depth as if every result but the
    SFU's were ready the next cycle (what a programmer does who pairs independent
    ops by hand and leaves the waiting to the scoreboard), and the empty cycles
    are removed: the times are bundle indices, not cycles.
    """
    model = graph.model
    n = graph.n
    preds = {i: [] for i in range(n)}
    succs = {i: [] for i in range(n)}
    for e in graph.edges:
        if e.distance == 0 and e.src != e.dst:
            if by_depth and not graph.ops[e.src].is_push:
                e = replace(e, latency=min(e.latency, 1))
            preds[e.dst].append(e)
            succs[e.src].append(e)
    height = [0] * n
    for k in reversed(range(n)):
        height[k] = max([graph.latency(k)] + [e.latency + height[e.dst] for e in succs[k]])
    pop_of = {p: q for p, q in graph.fifo_pairs}
    times = [None] * n
    busy: dict = {}
    fifo: list = []  # push indices in push order, not yet popped
    t = 0
    while any(x is None for x in times):
        ready = [k for k in range(n) if times[k] is None and all(
            times[e.src] is not None and times[e.src] + e.latency <= t for e in preds[k])]
        for k in sorted(ready, key=lambda k: (-height[k], k)):
            op = graph.ops[k]
            slot = slot_of(op.opcode)
            span = model.op_busy(op)
            if any(busy.get((slot, t + c), 0) >= model.units[slot] for c in range(span)):
                continue
            if op.is_pop:
                if not fifo or pop_of[fifo[0]] != k or busy.get(("pop", t)):
                    continue
                fifo.pop(0)
                busy[("pop", t)] = 1
            if op.is_push:
                fifo.append(k)
            for c in range(span):
                busy[(slot, t + c)] = busy.get((slot, t + c), 0) + 1
            times[k] = t
        t += 1
    if by_depth:
        rank = {c: i for i, c in enumerate(sorted(set(times)))}
        return [rank[c] for c in times]
    return times
