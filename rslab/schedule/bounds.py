"""Lower bounds on the initiation interval of a loop body: ResMII and RecMII, with what binds.

- **ResMII**: per slot class, the cycles one iteration books divided by the
  units (a push holds the SFU for 1 + hold cycles), plus the FIFO bound
  (pushes in flight must fit the FIFO depth); the binding resource is named;
- **RecMII**: the largest ceil(delay / distance) over the elementary circuits,
  with the critical circuit named;
- the same floors as fractions (:class:`rslab.machine.bottleneck.Floor`), which name the
  loop's bottleneck as ``rslab sim`` names it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from rslab.machine.bottleneck import (
    Floor,
    circuits,
    max_ratio_circuit,
    positive_cycle,
    recurrence,
)
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
    floors: tuple = ()  # the Floor of each unit, the FIFO and the recurrence, per iteration

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
    """All elementary circuits of the graph as lists of edges
    (:func:`rslab.machine.bottleneck.circuits`)."""
    return circuits(graph.n, graph.edges, limit)


def rec_mii(graph: Graph):
    """(RecMII, critical circuit labels, the floor of the recurrences); 0, () and None when
    the body has no circuit. The floor is the circuit of the largest latency per iteration
    (on a tie, the one through the fewest anti-dependences: a value's own recurrence before
    a register's reuse)."""
    best, best_circuit, floor, key = 0, (), None, None
    labels = graph.labels()
    try:
        found = elementary_circuits(graph, CIRCUITS)
    except ValueError:  # too many to enumerate: the exact search instead
        return _searched(graph, labels)
    for circuit in found:
        delay = sum(e.latency for e in circuit)
        distance = sum(e.distance for e in circuit)
        if distance == 0:
            if delay > 0:
                names = [labels[e.src] for e in circuit]
                raise ValueError(f"body: dependence cycle within one iteration: {names}")
            continue
        bound = math.ceil(delay / distance)
        if bound > best:
            best = bound
            best_circuit = tuple(labels[e.src] for e in circuit)
        rank = (Fraction(delay, distance), -sum(e.kind == "anti" for e in circuit))
        if key is None or rank > key:
            key, floor = rank, recurrence(circuit, labels)
    return best, best_circuit, floor


CIRCUITS = 20_000
"""The most elementary circuits ``rec_mii`` enumerates; beyond, it searches for the worst."""


def _searched(graph: Graph, labels) -> tuple:
    """``rec_mii`` by Lawler's search (:func:`rslab.machine.bottleneck.max_ratio_circuit`)."""
    inner = positive_cycle(graph.n, [e for e in graph.edges if e.distance == 0], 1, 0)
    if inner:
        names = [labels[e.src] for e in inner]
        raise ValueError(f"body: dependence cycle within one iteration: {names}")
    ratio, circuit = max_ratio_circuit(graph.n, graph.edges)
    if ratio is None:
        return 0, (), None
    return math.ceil(ratio), tuple(labels[e.src] for e in circuit), recurrence(circuit, labels)


def analyse(body_or_graph, model: SlotModel | None = None, *, reserve_scalar: int = 0) -> Bounds:
    """ResMII and RecMII of a body (or of its graph), with what binds; ``reserve_scalar``
    scalar slots per iteration are booked for the pointer increments of the emitted loop
    (its hardware loop itself issues nothing)."""
    graph = body_or_graph if isinstance(body_or_graph, Graph) else build_graph(body_or_graph,
                                                                                model)
    r, binding, usage, fifo = res_mii(graph, reserve_scalar)
    c, circuit, floor = rec_mii(graph)
    return Bounds(r, binding, usage, c, circuit, fifo, _floors(graph, usage, floor))


def _floors(graph: Graph, usage: dict, recurrence_floor) -> tuple:
    """The floors of one iteration of the graph (:class:`rslab.machine.bottleneck.Floor`):
    each unit it books, the FIFO, its recurrence."""
    m = graph.model
    out = [Floor("unit", slot, Fraction(n, m.units[slot]),
                 tuple(op.label for op in graph.ops if slot_of(op.opcode) == slot))
           for slot, n in usage.items() if n]
    if graph.fifo_pairs:
        held = m.latency["sfu"] + m.latency["pop"]
        out.append(Floor("fifo", "fifo", Fraction(len(graph.fifo_pairs) * held, m.fifo_depth),
                         tuple(graph.ops[p].label for p, _ in graph.fifo_pairs)))
    return tuple(out + ([recurrence_floor] if recurrence_floor else []))
