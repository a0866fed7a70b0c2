"""Shorter register lifetimes for a modulo schedule: delay ops by whole IIs towards readers."""

from __future__ import annotations

from rslab.schedule.modulo import Schedule, check_schedule


def shorten_lifetimes(schedule: Schedule) -> Schedule:
    """Delay ops by whole multiples of II towards their consumers (as late as possible).

    Iterative modulo scheduling places every op as early as its operands allow,
    so a value computed early and consumed at the end of a long chain (a load,
    an unpack) holds a register for several IIs. Moving an op by k·II keeps its
    row of the modulo reservation table, so the move is always resource-legal;
    it is made only while every consumer still sees the value in time. SFU
    pushes and pops keep their cycles (their order in the FIFO is fixed).
    """
    g, ii = schedule.graph, schedule.ii
    times = list(schedule.times)
    succs = {k: [] for k in range(g.n)}
    for e in g.edges:
        succs[e.src].append(e)
    changed = True
    while changed:
        changed = False
        for k in sorted(range(g.n), key=lambda k: -times[k]):
            op = g.ops[k]
            others = [e for e in succs[k] if e.dst != k]
            if op.is_push or op.is_pop or not others:
                continue
            latest = min(times[e.dst] - e.latency + e.distance * ii for e in others)
            steps = (latest - times[k]) // ii
            if steps > 0:
                times[k] += steps * ii
                changed = True
        # a loop-carried counter and the ops that read it before it is redefined move together
        for k in range(g.n):
            group = {k} | {e.src for e in g.edges if e.kind == "anti" and e.dst == k}
            if len(group) == 1 or any(g.ops[j].is_push or g.ops[j].is_pop for j in group):
                continue
            out = [e for j in group for e in succs[j] if e.dst not in group]
            if not out:
                continue
            steps = min((times[e.dst] - e.latency + e.distance * ii - times[e.src]) // ii
                        for e in out)
            if steps > 0:
                for j in group:
                    times[j] += steps * ii
                changed = True
    low = min(times)
    times = [t - (low // ii) * ii for t in times]
    out = Schedule(g, ii, times, schedule.bounds, schedule.attempts, schedule.reserved_scalar)
    check_schedule(out)
    return out
