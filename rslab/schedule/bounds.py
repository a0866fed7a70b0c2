"""Lower bounds on the initiation interval of a loop body: ResMII and RecMII, with what binds.

- **ResMII**: per slot class, the cycles one iteration books divided by the
  units (a push holds the SFU for 1 + hold cycles), plus the FIFO bound
  (pushes in flight must fit the FIFO depth); the binding resource is named;
- **RecMII**: the largest ceil(delay / distance) over the elementary circuits,
  with the critical circuit named.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from rslab.schedule.body import Graph, build_graph
from rslab.schedule.model import SlotModel, slot_of


@dataclass(frozen=True)
class Bounds:
    """ResMII, RecMII and what binds them."""

    res_mii: int
    res_binding: str
    usage: dict  # resource -> cycles booked per iteration
    rec_mii: int
    critical_circuit: tuple  # op labels around the critical circuit
    fifo_mii: int

    @property
    def mii(self) -> int:
        return max(self.res_mii, self.rec_mii, 1)

    @property
    def binding(self) -> str:
        if self.rec_mii > self.res_mii:
            return "recurrence " + " → ".join(self.critical_circuit)
        return self.res_binding


def increment_slots(graph: Graph, ii: int, bases: int) -> int:
    """The scalar slots kept free in each II for the pointer increments of ``bases`` strided
    bases (one increment per kernel pass each): one per row from row II − 1 up, as many as
    the bases and the scalar slots the body leaves free allow. A pass of U blocks holds U
    times as many, and the kernel unrolls until its passes hold every increment."""
    if not bases:
        return 0
    free = ii * graph.model.units["scalar"] - sum(
        graph.model.op_busy(op) for op in graph.ops if slot_of(op.opcode) == "scalar")
    return max(0, min(bases, ii, free))


def res_mii(graph: Graph, reserve_scalar: int = 0):
    """(ResMII, binding resource, usage per resource) counting the SFU hold, a load or store's
    bank conflicts, the FIFO and, for a loop of ``reserve_scalar`` strided bases, one scalar
    slot the ops leave free (the bases advance once per kernel pass, however unrolled)."""
    usage = {slot: 0 for slot in graph.model.units}
    for op in graph.ops:
        usage[slot_of(op.opcode)] += graph.model.op_busy(op)
    per = {slot: math.ceil((usage[slot] + (slot == "scalar" and reserve_scalar > 0))
                           / graph.model.units[slot]) for slot in usage}
    pushes = len(graph.fifo_pairs)
    held = graph.model.latency["sfu"] + graph.model.latency["pop"]  # push until the entry frees
    fifo = math.ceil(pushes * held / graph.model.fifo_depth)
    per["fifo"] = fifo
    binding = max(per, key=lambda k: (per[k], k != "fifo"))
    return max(per.values()), binding, usage, fifo


def elementary_circuits(graph: Graph, limit: int = 100_000):
    """All elementary circuits as lists of edges (a DFS from each start node through the
    nodes above it that lead back to it; of parallel edges of one latency and distance, the
    first)."""
    out_edges = {i: [] for i in range(graph.n)}
    seen = set()
    for e in graph.edges:
        if (e.src, e.dst, e.latency, e.distance) not in seen:
            seen.add((e.src, e.dst, e.latency, e.distance))
            out_edges[e.src].append(e)
    into = {i: [] for i in range(graph.n)}
    for e in graph.edges:
        into[e.dst].append(e.src)
    circuits = []
    for start in range(graph.n):
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
                circuits.append(path + [edge])
                if len(circuits) > limit:
                    raise ValueError(f"the dependence graph has more than {limit:,} "
                                     "circuits, too many to enumerate for RecMII")
            elif edge.dst > start and edge.dst not in on_path:
                on_path.add(edge.dst)
                stack.append((edge.dst, iter([e for e in out_edges[edge.dst] if e.dst in back]),
                              path + [edge]))
    return circuits


def _leading_back(start: int, into: dict) -> set:
    """``start`` and the nodes above it from which a path through such nodes reaches it."""
    found, todo = {start}, [start]
    while todo:
        for p in into[todo.pop()]:
            if p > start and p not in found:
                found.add(p)
                todo.append(p)
    return found


def rec_mii(graph: Graph):
    """(RecMII, critical circuit labels); 0 and () when the body has no circuit."""
    best, best_circuit = 0, ()
    for circuit in elementary_circuits(graph):
        delay = sum(e.latency for e in circuit)
        distance = sum(e.distance for e in circuit)
        if distance == 0:
            if delay > 0:
                names = [graph.ops[e.src].label for e in circuit]
                raise ValueError(f"body: dependence cycle within one iteration: {names}")
            continue
        bound = math.ceil(delay / distance)
        if bound > best:
            best = bound
            best_circuit = tuple(graph.ops[e.src].label for e in circuit)
    return best, best_circuit


def analyse(body_or_graph, model: SlotModel | None = None, *, reserve_scalar: int = 0) -> Bounds:
    """ResMII and RecMII of a body (or of its graph), with what binds; ``reserve_scalar``
    scalar slots per iteration are booked for the pointer increments of the emitted loop
    (its hardware loop itself issues nothing)."""
    graph = body_or_graph if isinstance(body_or_graph, Graph) else build_graph(body_or_graph,
                                                                                model)
    r, binding, usage, fifo = res_mii(graph, reserve_scalar)
    c, circuit = rec_mii(graph)
    return Bounds(r, binding, usage, c, circuit, fifo)
