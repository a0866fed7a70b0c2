"""What binds a loop, in the words ``rslab pipeline`` (from its schedule) and ``rslab sim`` (from
a traced run) both use.

A loop's cycles per source iteration have floors, each a fraction: a unit's booked cycles
over its units (a push books 1 + ``sfu_hold``, a load or store its bank-conflict degree),
the SFU FIFO's (results pushed × cycles an entry is held, over the depth), and each
recurrence's (a circuit of dependences: its latencies over the iterations it spans). The
largest is the *bottleneck*; its *critical sequence* lists the ops that make it, as
llvm-mca's bottleneck analysis lists a critical sequence. An integer II rounds a floor
such as 4.5 up; k source iterations scheduled as one (the smallest k that makes k times
the floor an integer) remove that rounding. Cycles above the rounded floor are the
schedule's, or a run's stalls.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

MAX_UNROLL = 8
"""The largest unroll proposed to remove an II's rounding."""


@dataclass(frozen=True)
class Floor:
    """One floor on a loop's cycles per source iteration: ``kind`` ``unit``, ``fifo`` or
    ``recurrence``; ``name`` the unit, ``fifo``, or the circuit ``a → b → a``; ``need`` the
    cycles per source iteration (a Fraction); ``sequence`` the ops that make it: the
    circuit's ops with the latency after each, or the ops booking the unit."""

    kind: str
    name: str
    need: Fraction
    sequence: tuple = ()


def circuits(n: int, edges, limit: int = 100_000) -> list:
    """The elementary circuits of a graph on nodes 0 … n−1 as lists of edges (each with
    ``src``, ``dst``): a DFS from each start node through the nodes above it that lead back
    to it; of parallel edges of one latency and distance, the first."""
    out_edges, seen = {i: [] for i in range(n)}, set()
    for e in edges:
        if (e.src, e.dst, e.latency, e.distance) not in seen:
            seen.add((e.src, e.dst, e.latency, e.distance))
            out_edges[e.src].append(e)
    into = {i: [] for i in range(n)}
    for e in edges:
        into[e.dst].append(e.src)
    found = []
    for start in range(n):
        back = _leading_back(start, into)
        stack = [(start, iter([e for e in out_edges[start] if e.dst in back]), [])]
        on_path = {start}
        while stack:
            node, it, path = stack[-1]
            edge = next(it, None)
            if edge is None:
                stack.pop()
                on_path.discard(node)
                continue
            if edge.dst == start:
                found.append(path + [edge])
                if len(found) > limit:
                    raise ValueError(f"the dependence graph has more than {limit:,} "
                                     "circuits, too many to enumerate for RecMII")
            elif edge.dst > start and edge.dst not in on_path:
                on_path.add(edge.dst)
                stack.append((edge.dst, iter([e for e in out_edges[edge.dst]
                                              if e.dst in back]), path + [edge]))
    return found


def max_ratio_circuit(n: int, edges) -> tuple:
    """(the most latency per iteration over the circuits of a graph on nodes 0 … n−1 that span
    an iteration or more, as a Fraction, and one circuit that has it) without enumerating
    the circuits (Lawler's search: a circuit of more than λ cycles per iteration is a
    positive cycle of the weights latency − λ·distance, which Bellman–Ford finds); (None, [])
    when no circuit spans an iteration. The caller rules out circuits within one iteration
    of positive latency first (``positive_cycle`` of the distance-0 edges)."""
    edges = list(edges)
    total = sum(e.latency for e in edges) + 1
    if not positive_cycle(n, edges, 1, -total):  # no circuit spans an iteration
        return None, []
    span = sum(e.distance for e in edges)  # the most iterations a circuit spans
    lo, hi = Fraction(-1), Fraction(total)
    while hi - lo >= Fraction(1, 2 * span * span):
        mid = (lo + hi) / 2
        if positive_cycle(n, edges, mid.denominator, mid.numerator):
            lo = mid
        else:
            hi = mid
    return hi.limit_denominator(span), positive_cycle(n, edges, lo.denominator, lo.numerator)


def positive_cycle(n: int, edges, q: int, p: int) -> list:
    """A circuit whose weights q·latency − p·distance add up to more than zero (its edges in
    order), or [] (Bellman–Ford for the longest paths from every node at once)."""
    best, pred = [0] * n, [None] * n
    last = None
    for _ in range(n + 1):
        last = None
        for e in edges:
            w = best[e.src] + q * e.latency - p * e.distance
            if w > best[e.dst]:
                best[e.dst], pred[e.dst], last = w, e, e.dst
        if last is None:
            return []
    for _ in range(n):  # walk back into the cycle
        last = pred[last].src
    cycle, node = [], last
    while True:
        e = pred[node]
        cycle.append(e)
        node = e.src
        if node == last:
            return cycle[::-1]


def _leading_back(start: int, into: dict) -> set:
    """``start`` and the nodes above it from which a path through such nodes reaches it."""
    found, todo = {start}, [start]
    while todo:
        for p in into[todo.pop()]:
            if p > start and p not in found:
                found.add(p)
                todo.append(p)
    return found


def recurrence(circuit, names) -> Floor:
    """The floor of one circuit (its edges carry ``latency`` and ``distance``); ``names``:
    node → op name. The circuit is named from its first op by name, so that a schedule and
    a run name it alike."""
    delay = sum(e.latency for e in circuit)
    distance = sum(e.distance for e in circuit)
    first = min(range(len(circuit)), key=lambda i: names[circuit[i].src])
    circuit = circuit[first:] + circuit[:first]
    labels = [names[e.src] for e in circuit]
    return Floor("recurrence", " → ".join(labels + labels[:1]), Fraction(delay, distance),
                 tuple(f"{names[e.src]} ({e.latency})" for e in circuit)
                 + (f"({delay} cycles over {distance} iteration{'s' * (distance > 1)})",))


def binding(floors) -> Floor:
    """The highest floor (on a tie: a recurrence, then a unit, then the FIFO)."""
    rank = {"recurrence": 2, "unit": 1, "fifo": 0}
    return max(floors, key=lambda f: (f.need, rank[f.kind]))


def rounding_unroll(need: Fraction) -> int | None:
    """The fewest source iterations scheduled as one that make ``need`` times them an integer
    (None when ``need`` is one already, or needs more than ``MAX_UNROLL``)."""
    k = need.denominator
    return k if 1 < k <= MAX_UNROLL else None


def verdict(top: Floor, achieved: Fraction, per_scheduled: int | None = None) -> dict:
    """What binds a loop that takes ``achieved`` cycles per source iteration: the floor
    ``top``, the rounding of an integer II (``per_scheduled`` source iterations a scheduled
    iteration, when known) and the unroll that removes it, and the cycles above them."""
    rounded = top.need if per_scheduled is None else Fraction(
        math.ceil(top.need * per_scheduled), per_scheduled)
    out = {"kind": top.kind, "name": top.name, "need": float(top.need),
           "achieved": float(achieved), "sequence": list(top.sequence),
           "rounding": float(rounded - top.need), "above": float(achieved - rounded),
           "unroll": rounding_unroll(top.need)}
    return out


def sentence(v: dict) -> str:
    """A verdict of :func:`verdict` in one line."""
    what = {"unit": f"the {v['name']} unit", "fifo": "the SFU FIFO's depth",
            "recurrence": f"the recurrence {v['name']}"}[v["kind"]]
    text = f"bound by {what}: {_cycles(v['need'])} per source iteration"
    if v["rounding"] > 1e-9:
        text += f", rounded up to {v['need'] + v['rounding']:g} by an integer II"
        if v["unroll"]:
            text += (f" ({v['unroll']} source iterations scheduled as one remove the "
                     f"rounding: rslab pipeline --unroll {v['unroll']})")
    if v["above"] > 1e-9:
        text += f"; {_cycles(v['above'])} more per source iteration"
    return text


def sequence_text(v: dict) -> str:
    """The critical sequence of a verdict in one line: a recurrence's ops with the latency
    after each, or the ops on the binding unit or FIFO."""
    seq = v["sequence"]
    if v["kind"] == "recurrence":
        return "critical sequence (latency after each op): " + " → ".join(seq[:-1]) \
            + " " + seq[-1]
    return "critical sequence (the ops on it): " + ", ".join(seq)


def _cycles(x: float) -> str:
    return f"{x:g} cycle" + ("" if x == 1 else "s")
