"""Modulo scheduling of a loop body for the vector core (Rau 1994; Lam 1988).

A loop body is a list of :class:`Op` in program order. Values are named: an
operand that names a value defined in the body is a dependence, anything else
(``v60``, ``s3``, ``#5``) is a live-in passed through to the assembly text.
A use that comes before its definition in program order reads the previous
iteration's value (loop-carried, distance 1); :class:`Use` states any
distance explicitly. SFU results travel through the in-order FIFO: a push
(``vexp2``, ``vlog2`` …) defines a FIFO token whose name starts with ``@`` and
``vpop`` consumes it.

From the body, :func:`analyse` builds the dependence graph and computes

- **ResMII**: per slot class, the cycles one iteration books divided by the
  units (a push holds the SFU for 1 + hold cycles), plus the FIFO bound
  (pushes in flight must fit the FIFO depth); the binding resource is named;
- **RecMII**: the largest ceil(delay / distance) over the elementary circuits,
  with the critical circuit named.

:func:`modulo_schedule` runs iterative modulo scheduling from II = MII upward
(height-based priority, eviction under a budget) with the modulo reservation
table, the SFU FIFO order (results are popped in push order) and depth as
extra constraints. :func:`expand` turns a schedule into prologue / kernel /
epilogue with modulo variable expansion (the kernel is unrolled until no
register is overwritten before its last read) and emits assembly in the
machine's syntax (DESIGN §5).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

# ---------------------------------------------------------------- machine model

PUSH_OPCODES = ("vexp2", "vexp2.p", "vlog2", "vlog2.p", "vrcp")
POP_OPCODE = "vpop"


def _specs():
    from rslab.machine.isa import SPECS

    return SPECS


def slot_of(opcode: str) -> str:
    """The slot class an opcode issues in (from the machine's ISA table)."""
    spec = _specs().get(opcode)
    if spec is None or spec.slot is None:
        raise ValueError(f"opcode: {opcode!r} is not an op that issues in a slot")
    return spec.slot


def latency_class(opcode: str) -> str:
    """The latency class of an opcode's result (``pop`` for ``vpop``, ``sfu`` for a push)."""
    spec = _specs()[opcode]
    return spec.lat or spec.slot


@dataclass(frozen=True)
class SlotModel:
    """The resources and latencies the scheduler plans with (DESIGN §5 defaults).

    ``units`` counts ops per bundle for each slot class; ``latency`` is the
    cycles from issue until a result is usable, per slot class, with ``pop``
    for ``vpop`` and ``sfu`` the push-to-pop latency; a push holds the SFU
    for ``1 + sfu_hold`` cycles; the FIFO holds ``fifo_depth`` results.
    """

    units: dict = field(default_factory=lambda: {
        "ld": 1, "st": 1, "valu": 2, "sfu": 1, "xlu": 1, "scalar": 1})
    latency: dict = field(default_factory=lambda: {
        "ld": 4, "st": 1, "valu": 3, "pop": 1, "sfu": 13, "xlu": 8, "scalar": 1})
    sfu_hold: int = 1
    fifo_depth: int = 16

    def __post_init__(self):
        for name, value in (("sfu_hold", self.sfu_hold), ("fifo_depth", self.fifo_depth)):
            if not isinstance(value, int) or value < 0:
                raise ValueError(f"{name} must be a non-negative int, got {value!r}")
        if self.fifo_depth < 1:
            raise ValueError(f"fifo_depth must be at least 1, got {self.fifo_depth}")
        for slot, n in self.units.items():
            if not isinstance(n, int) or n < 1:
                raise ValueError(f"units[{slot!r}] must be a positive int, got {n!r}")
        for slot, n in self.latency.items():
            if not isinstance(n, int) or n < 1:
                raise ValueError(f"latency[{slot!r}] must be a positive int, got {n!r}")

    def replace(self, *, units=None, latency=None, **kw) -> SlotModel:
        """A copy with some units / latencies / scalars changed."""
        return SlotModel(units={**self.units, **(units or {})},
                         latency={**self.latency, **(latency or {})},
                         sfu_hold=kw.pop("sfu_hold", self.sfu_hold),
                         fifo_depth=kw.pop("fifo_depth", self.fifo_depth), **kw)

    def op_latency(self, opcode: str) -> int:
        return self.latency[latency_class(opcode)]

    def op_busy(self, opcode: str) -> int:
        """Cycles the op books its slot: 1, or 1 + hold for an SFU push."""
        return 1 + self.sfu_hold if opcode in PUSH_OPCODES else 1

    @classmethod
    def from_config(cls, config) -> SlotModel:
        """The model matching a ``rslab.machine`` ``MachineConfig``."""
        return _slot_model_from_config(config)


def _slot_model_from_config(config) -> SlotModel:
    return SlotModel(units=dict(config.slots), latency=dict(config.latency),
                     sfu_hold=int(config.sfu_hold), fifo_depth=int(config.fifo_depth))


# ---------------------------------------------------------------- the loop body


@dataclass(frozen=True)
class Use:
    """A source operand reading ``name`` from ``distance`` iterations back."""

    name: str
    distance: int = 0

    def __post_init__(self):
        if not isinstance(self.distance, int) or self.distance < 0:
            raise ValueError(f"distance must be a non-negative int, got {self.distance!r}")


@dataclass(frozen=True)
class Addr:
    """A memory operand ``[base + offset + i·stride]`` for iteration i (bytes)."""

    base: str
    offset: int = 0
    stride: int = 0


@dataclass(frozen=True)
class Op:
    """One operation of the body: ``opcode dst, srcs…`` (pushes: no dst register).

    ``dst`` names the value defined (``@name`` for an SFU push's FIFO token);
    ``srcs`` are value names, :class:`Use`, or live-in text; ``addr`` is the
    memory operand of ``vld``/``vst``; ``name`` labels the op (default: dst);
    ``tail`` is extra text appended after the operands (e.g. a stride).
    """

    opcode: str
    dst: str | None = None
    srcs: tuple = ()
    addr: Addr | None = None
    name: str = ""
    tail: str = ""

    @property
    def label(self) -> str:
        return self.name or self.dst or self.opcode

    @property
    def is_push(self) -> bool:
        return self.opcode in PUSH_OPCODES

    @property
    def is_pop(self) -> bool:
        return self.opcode == POP_OPCODE


@dataclass(frozen=True)
class Edge:
    src: int
    dst: int
    latency: int
    distance: int
    kind: str  # "flow", "anti" or "fifo"


@dataclass
class Graph:
    """The dependence graph of a body: ops, slot classes, latencies and edges."""

    ops: list
    edges: list
    model: SlotModel
    producers: dict  # value name -> op index
    fifo_pairs: list  # (push index, pop index)
    rotating: frozenset = frozenset()  # carried values renamed by MVE instead of pinned

    @property
    def n(self) -> int:
        return len(self.ops)

    def slot(self, i: int) -> str:
        return slot_of(self.ops[i].opcode)

    def latency(self, i: int) -> int:
        return self.model.op_latency(self.ops[i].opcode)

    def labels(self) -> list:
        return [op.label for op in self.ops]


def _src_use(src, index: int, producers: dict):
    """Resolve a source operand to (producer, distance) or None for a live-in."""
    if isinstance(src, Use):
        if src.name not in producers:
            raise ValueError(f"srcs: Use({src.name!r}) names no value defined in the body")
        return producers[src.name], src.distance
    if isinstance(src, str) and src in producers:
        p = producers[src]
        return p, (1 if p >= index else 0)
    return None


def build_graph(body, model: SlotModel | None = None, rotating=()) -> Graph:
    """The dependence graph of ``body`` (flow, anti for carried values, FIFO).

    A loop-carried value lives in one register unless it is named in
    ``rotating``. Pinned, every read of it — a later iteration's, or its own
    iteration's after the definition — gets an anti-dependence to the next
    definition that overwrites the register. Rotating, no anti-dependence ties its
    readers to its next definition, and expansion renames it like any other value (the caller
    initialises the copy of iteration −1, :attr:`Expansion.initial`).
    """
    model = model or SlotModel()
    rotating = frozenset(rotating)
    ops = list(body)
    if not ops:
        raise ValueError("body must hold at least one op")
    producers = {}
    labels = set()
    for i, op in enumerate(ops):
        if not isinstance(op, Op):
            raise ValueError(f"body[{i}] must be an Op, got {type(op).__name__}")
        slot_of(op.opcode)
        if op.label in labels:
            raise ValueError(f"body: duplicate op label {op.label!r}")
        labels.add(op.label)
        if op.dst is not None:
            if op.dst in producers:
                raise ValueError(f"body: value {op.dst!r} defined twice")
            if op.is_push != op.dst.startswith("@"):
                raise ValueError(f"body[{i}]: a push (and only a push) defines an @fifo token, "
                                 f"got {op.opcode} {op.dst}")
            producers[op.dst] = i
        if slot_of(op.opcode) not in model.units:
            raise ValueError(f"body[{i}]: slot {slot_of(op.opcode)!r} not in the machine model")
    edges = []
    fifo_pairs = []
    popped = set()
    for i, op in enumerate(ops):
        for src in op.srcs:
            use = _src_use(src, i, producers)
            if use is None:
                if isinstance(src, str) and src.startswith("@"):
                    raise ValueError(f"body[{i}]: {src!r} is not pushed in the body")
                continue
            p, d = use
            producer = ops[p]
            if producer.is_push:
                if not op.is_pop or d != 0 or p > i:
                    raise ValueError(f"body[{i}]: a FIFO token is read only by a vpop of the "
                                     f"same iteration after its push ({producer.dst})")
                if p in popped:
                    raise ValueError(f"body[{i}]: {producer.dst} popped twice")
                popped.add(p)
                fifo_pairs.append((p, i))
            elif op.is_pop:
                raise ValueError(f"body[{i}]: vpop must read an @fifo token")
            edges.append(Edge(p, i, model.op_latency(producer.opcode), d, "flow"))
            if d >= 1 and p != i and producer.dst not in rotating:
                # the next definition must not overwrite the value before this read
                edges.append(Edge(i, p, 0, d - 1, "anti"))
        if op.is_pop and not any(i == b for _, b in fifo_pairs):
            raise ValueError(f"body[{i}]: vpop without a matching push")
    # A pinned carried value is also read in its own iteration (distance 0): that read
    # must issue before the next iteration's definition overwrites the register.
    pinned = {e.src for e in edges
              if e.kind == "flow" and e.distance > 0 and ops[e.src].dst not in rotating}
    edges += [Edge(e.dst, e.src, 0, 1, "anti") for e in list(edges)
              if e.kind == "flow" and e.distance == 0 and e.src in pinned and e.dst != e.src]
    unpopped = [ops[i].dst for i, op in enumerate(ops) if op.is_push and i not in popped]
    if unpopped:
        raise ValueError(f"body: pushes never popped: {unpopped}")
    unknown = rotating - set(producers)
    if unknown:
        raise ValueError(f"rotating: values not defined in the body: {sorted(unknown)}")
    return Graph(ops, edges, model, producers, fifo_pairs, rotating)


# ---------------------------------------------------------------- MII bounds


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


def res_mii(graph: Graph):
    """(ResMII, binding resource, usage per resource) counting the SFU hold and the FIFO."""
    usage = {slot: 0 for slot in graph.model.units}
    for op in graph.ops:
        usage[slot_of(op.opcode)] += graph.model.op_busy(op.opcode)
    per = {slot: math.ceil(usage[slot] / graph.model.units[slot]) for slot in usage}
    pushes = len(graph.fifo_pairs)
    held = graph.model.latency["sfu"] + graph.model.latency["pop"]  # push until the entry frees
    fifo = math.ceil(pushes * held / graph.model.fifo_depth)
    per["fifo"] = fifo
    binding = max(per, key=lambda k: (per[k], k != "fifo"))
    return max(per.values()), binding, usage, fifo


def elementary_circuits(graph: Graph, limit: int = 100_000):
    """All elementary circuits as lists of edges (Johnson-style DFS from each start node)."""
    out_edges = {i: [] for i in range(graph.n)}
    for e in graph.edges:
        out_edges[e.src].append(e)
    circuits = []
    for start in range(graph.n):
        stack = [(start, iter(out_edges[start]), [])]
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
                    raise ValueError("graph has too many circuits to enumerate")
            elif edge.dst > start and edge.dst not in on_path:
                on_path.add(edge.dst)
                stack.append((edge.dst, iter(out_edges[edge.dst]), path + [edge]))
    return circuits


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


def analyse(body_or_graph, model: SlotModel | None = None) -> Bounds:
    """ResMII and RecMII of a body (or of its graph), with what binds."""
    graph = body_or_graph if isinstance(body_or_graph, Graph) else build_graph(body_or_graph,
                                                                                model)
    r, binding, usage, fifo = res_mii(graph)
    c, circuit = rec_mii(graph)
    return Bounds(r, binding, usage, c, circuit, fifo)


# ---------------------------------------------------------------- iterative modulo scheduling


@dataclass
class Schedule:
    """A modulo schedule: issue cycle of each op (iteration 0) at initiation interval II."""

    graph: Graph
    ii: int
    times: list
    bounds: Bounds
    attempts: dict  # II tried -> "ok" or the reason it failed

    @property
    def stages(self) -> list:
        return [t // self.ii for t in self.times]

    @property
    def stage_count(self) -> int:
        return max(self.stages) + 1

    @property
    def length(self) -> int:
        """Cycles from the first issue to the last issue of one iteration, plus one."""
        return max(self.times) + 1

    def mrt(self) -> dict:
        """Modulo reservation table: resource -> II rows of op labels."""
        return _mrt_of(self.graph, self.times, self.ii)

    def stage_table(self, iterations: int | None = None):
        """Which iteration is in which stage: {cycle: [(iteration, stage, label)]} for the
        first ``iterations`` iterations (default: the stage count)."""
        iterations = self.stage_count if iterations is None else iterations
        table = {}
        for i in range(iterations):
            for k, t in enumerate(self.times):
                table.setdefault(t + i * self.ii, []).append(
                    (i, t // self.ii, self.graph.ops[k].label))
        return dict(sorted(table.items()))

    def lifetimes(self) -> dict:
        """value -> cycles from the issue of its definition to the issue of its last read."""
        return _lifetimes(self.graph, self.times, self.ii)

    def fifo_occupancy(self) -> int:
        """Most FIFO entries held (push until the pop frees it) at any cycle of the steady state."""
        return _fifo_occupancy(self.graph, self.times, self.ii)

    def listing(self) -> str:
        """LLVM-style ``cycle c (stage s) label: op`` listing."""
        lines = [f"II = {self.ii}, stages = {self.stage_count}, ResMII = {self.bounds.res_mii}, "
                 f"RecMII = {self.bounds.rec_mii}"]
        for k in sorted(range(self.graph.n), key=lambda k: (self.times[k], k)):
            op = self.graph.ops[k]
            lines.append(f"cycle {self.times[k]:3d} (stage {self.times[k] // self.ii}) "
                         f"{op.label}: {op.opcode}")
        return "\n".join(lines)


def _mrt_of(graph, times, ii):
    table = {slot: [[] for _ in range(ii)] for slot in graph.model.units}
    for k, t in enumerate(times):
        op = graph.ops[k]
        for c in range(graph.model.op_busy(op.opcode)):
            table[slot_of(op.opcode)][(t + c) % ii].append(op.label)
    return table


def _lifetimes(graph, times, ii):
    life = {}
    for e in graph.edges:
        if e.kind != "flow":
            continue
        producer = graph.ops[e.src]
        if producer.is_push:
            continue
        span = times[e.dst] + e.distance * ii - times[e.src]
        life[producer.dst] = max(life.get(producer.dst, 0), span)
    for op in graph.ops:
        if op.dst is not None and not op.is_push:
            life.setdefault(op.dst, 0)
    return life


def _fifo_occupancy(graph, times, ii):
    pairs = [(times[p], times[q]) for p, q in graph.fifo_pairs]
    return _fifo_occupancy_pairs(pairs, ii, graph.model.latency["pop"])


def fifo_order_ok(pairs, ii: int) -> bool:
    """Whether pops, repeated every II cycles, take results in push order.

    ``pairs`` are (push cycle, pop cycle) of one iteration. Push k of iteration
    i issues at T_k + i·II; results leave in push order, so the pops must come
    in the same global order: for every two pairs the number of whole II
    periods between the pushes equals that between the pops.
    """
    for a in range(len(pairs)):
        ta, pa = pairs[a]
        for b in range(a + 1, len(pairs)):
            tb, pb = pairs[b]
            if (ta - tb) % ii == 0 or (pa - pb) % ii == 0:
                return False
            if (ta - tb) // ii != (pa - pb) // ii:
                return False
    return True


class _IMS:
    """Rau's iterative modulo scheduler at one II."""

    def __init__(self, graph: Graph, ii: int, reserved: dict):
        self.g, self.ii = graph, ii
        self.reserved = reserved  # resource -> {row: units taken}
        self.preds = {i: [] for i in range(graph.n)}
        self.succs = {i: [] for i in range(graph.n)}
        for e in graph.edges:
            self.preds[e.dst].append(e)
            self.succs[e.src].append(e)
        self.partner = {}
        for p, q in graph.fifo_pairs:
            self.partner[p] = q
            self.partner[q] = p
        self.height = self._heights()

    def _heights(self):
        n = self.g.n
        h = [0] * n
        for _ in range(n + 1):
            changed = False
            for e in self.g.edges:
                v = h[e.dst] + e.latency - e.distance * self.ii
                if v > h[e.src]:
                    h[e.src] = v
                    changed = True
            if not changed:
                return h
        raise _Infeasible("recurrence exceeds II")

    def _usage(self, k, t):
        op = self.g.ops[k]
        slot = slot_of(op.opcode)
        rows = [(slot, (t + c) % self.ii) for c in range(self.g.model.op_busy(op.opcode))]
        if op.is_pop:
            rows.append(("pop", t % self.ii))
        return rows

    def _capacity(self, res):
        return 1 if res == "pop" else self.g.model.units[res]

    def _resource_conflicts(self, k, t, mrt):
        """Ops that must leave for op k to issue at t; None if the row can never hold it."""
        victims = set()
        for res, row in self._usage(k, t):
            free = self._capacity(res) - self.reserved.get(res, {}).get(row, 0)
            if free <= 0:
                return None
            used = mrt.get((res, row), [])
            if len(used) >= free:
                victims.add(used[0])
        return victims

    def _fifo_conflicts(self, k, t, times, *, depth_error=False):
        """Pops whose order conflicts with op k at t; a depth overflow gives a pseudo-victim
        (or raises ``_Infeasible`` when ``depth_error``)."""
        if k not in self.partner or times[self.partner[k]] is None:
            return set()
        pk = self.partner[k]
        mine = (t, times[pk]) if self.g.ops[k].is_push else (times[pk], t)
        bad = set()
        complete = [(p, q) for p, q in self.g.fifo_pairs
                    if p != k and q != k and times[p] is not None and times[q] is not None]
        for p, q in complete:
            if not fifo_order_ok([mine, (times[p], times[q])], self.ii):
                bad.add(q)
        others = [(times[p], times[q]) for p, q in complete] + [mine]
        if _fifo_occupancy_pairs(others, self.ii, self.g.model.latency["pop"]) > \
                self.g.model.fifo_depth:
            if depth_error:
                raise _Infeasible(f"SFU FIFO depth at {self.g.ops[k].label}")
            bad.add(None)
        return bad

    def run(self, budget):
        n = self.g.n
        times = [None] * n
        last = [None] * n
        mrt = {}
        unscheduled = set(range(n))
        while unscheduled:
            if budget <= 0:
                raise _Infeasible("budget exhausted")
            budget -= 1
            k = max(unscheduled, key=lambda i: (self.height[i], -i))
            estart = 0
            for e in self.preds[k]:
                if times[e.src] is not None:
                    estart = max(estart, times[e.src] + e.latency - e.distance * self.ii)
            chosen = None
            for t in range(estart, estart + self.ii):
                if self._resource_conflicts(k, t, mrt) == set() and \
                        not self._fifo_conflicts(k, t, times):
                    chosen = t
                    break
            if chosen is None:
                chosen = estart if last[k] is None or estart > last[k] else last[k] + 1
                victims = self._resource_conflicts(k, chosen, mrt)
                for _ in range(self.ii):
                    if victims is not None:
                        break
                    chosen += 1
                    victims = self._resource_conflicts(k, chosen, mrt)
                if victims is None:
                    raise _Infeasible(f"no row can hold {self.g.ops[k].label}")
                victims |= self._fifo_conflicts(k, chosen, times, depth_error=True)
                for v in victims:
                    self._unplace(v, times, mrt, unscheduled)
            self._place(k, chosen, times, mrt, unscheduled)
            last[k] = chosen
            for e in self.succs[k]:
                s = e.dst
                if s != k and times[s] is not None and \
                        times[s] < chosen + e.latency - e.distance * self.ii:
                    self._unplace(s, times, mrt, unscheduled)
            for e in self.preds[k]:
                p = e.src
                if p != k and times[p] is not None and \
                        chosen < times[p] + e.latency - e.distance * self.ii:
                    self._unplace(p, times, mrt, unscheduled)
        return times

    def _place(self, k, t, times, mrt, unscheduled):
        times[k] = t
        unscheduled.discard(k)
        for key in self._usage(k, t):
            mrt.setdefault(key, []).append(k)

    def _unplace(self, k, times, mrt, unscheduled):
        if times[k] is None:
            return
        for key in self._usage(k, times[k]):
            mrt[key].remove(k)
        times[k] = None
        unscheduled.add(k)


def _fifo_occupancy_pairs(pairs, ii, pop_latency):
    """Entries held at the fullest cycle: from each push until ``pop_latency`` after its pop."""
    best = 0
    for c in range(ii):
        best = max(best, sum((c - tp) // ii - (c - tq - pop_latency) // ii for tp, tq in pairs))
    return best


class _Infeasible(Exception):
    pass


def _normalise(times, ii):
    """Shift so the earliest op issues in stage 0 (keeps each op's MRT row)."""
    low = min(times)
    shift = -(low // ii) * ii
    return [t + shift for t in times]


def modulo_schedule(body_or_graph, model: SlotModel | None = None, *, max_ii: int | None = None,
                    max_stages: int | None = None, budget_ratio: int = 20,
                    reserve_scalar: int = 0, rotating=()) -> Schedule:
    """The smallest-II modulo schedule found by iterative modulo scheduling.

    ``max_stages`` bounds the stage count (the iterations a register group can
    hold in flight); ``reserve_scalar`` keeps that many scalar slots free in
    the last rows for the loop's pointer increments.
    """
    graph = body_or_graph if isinstance(body_or_graph, Graph) else build_graph(
        body_or_graph, model, rotating)
    if max_stages is not None and (not isinstance(max_stages, int) or max_stages < 1):
        raise ValueError(f"max_stages must be a positive int, got {max_stages!r}")
    if not isinstance(reserve_scalar, int) or reserve_scalar < 0:
        raise ValueError(f"reserve_scalar must be a non-negative int, got {reserve_scalar!r}")
    bounds = analyse(graph)
    start = max(bounds.mii, reserve_scalar, 1)
    max_ii = max_ii or start + sum(graph.latency(i) for i in range(graph.n)) + 1
    attempts = {}
    for ii in range(start, max_ii + 1):
        reserved = {"scalar": {ii - 1 - j: 1 for j in range(reserve_scalar)}}
        try:
            times = _normalise(_IMS(graph, ii, reserved).run(budget_ratio * graph.n), ii)
        except _Infeasible as exc:
            attempts[ii] = str(exc)
            continue
        if max_stages is not None and max(times) // ii + 1 > max_stages:
            attempts[ii] = f"{max(times) // ii + 1} stages > max_stages {max_stages}"
            continue
        attempts[ii] = "ok"
        schedule = Schedule(graph, ii, times, bounds, attempts)
        check_schedule(schedule, reserve_scalar=reserve_scalar)
        return schedule
    raise ValueError(f"no modulo schedule up to II = {max_ii}: {attempts}")


def check_schedule(schedule: Schedule, *, reserve_scalar: int = 0) -> None:
    """Raise ValueError unless every dependence, slot, FIFO order and depth constraint holds."""
    g, ii, times = schedule.graph, schedule.ii, schedule.times
    for e in g.edges:
        if times[e.dst] < times[e.src] + e.latency - e.distance * ii:
            raise ValueError(f"schedule breaks {e.kind} edge {g.ops[e.src].label} → "
                             f"{g.ops[e.dst].label}")
    for slot, rows in schedule.mrt().items():
        for r, row in enumerate(rows):
            extra = 1 if slot == "scalar" and r >= ii - reserve_scalar else 0
            if len(row) + extra > g.model.units[slot]:
                raise ValueError(f"schedule overbooks {slot} in row {r}: {row}")
    pops = [times[q] % ii for _, q in g.fifo_pairs]
    if len(set(pops)) != len(pops):
        raise ValueError("schedule puts two pops in one MRT row")
    pairs = [(times[p], times[q]) for p, q in g.fifo_pairs]
    if not fifo_order_ok(pairs, ii):
        raise ValueError("schedule pops SFU results out of push order")
    if schedule.fifo_occupancy() > g.model.fifo_depth:
        raise ValueError("schedule overflows the SFU FIFO")


# ---------------------------------------------------------------- expansion (MVE) and emission


@dataclass
class Expansion:
    """Prologue / kernel / epilogue code of a modulo-scheduled loop.

    ``bundles`` is a list of entries: a list of op texts (one bundle), or the
    markers ``("loop", K)`` and ``("endloop",)``. ``registers`` maps each
    value to its physical copies (modulo variable expansion).
    """

    schedule: Schedule
    iterations: int
    unroll: int
    kernel_passes: int
    registers: dict
    bundles: list
    pointer_step: dict  # base register -> bytes it advances per kernel pass
    initial: dict = field(default_factory=dict)  # rotating value -> register of iteration −1

    @property
    def text(self) -> str:
        lines = []
        for b in self.bundles:
            if isinstance(b, tuple):
                lines.append(f"loop {b[1]}" if b[0] == "loop" else "endloop")
            else:
                lines.append(" ; ".join(b) if b else "nop")
        return "\n".join(lines) + "\n"

    @property
    def vector_registers(self) -> int:
        """Distinct registers the loop's values occupy (pinned carried ones included)."""
        return len({r for regs in self.registers.values() for r in regs})

    @property
    def static_cycles(self) -> int:
        """Bundles issued if nothing stalls (kernel repeated, markers excluded)."""
        straight = sum(1 for b in self.bundles if not isinstance(b, tuple))
        kernel = self.unroll * self.schedule.ii
        return straight + (self.kernel_passes - 1) * kernel if self.kernel_passes else straight


def register_copies(schedule: Schedule) -> dict:
    """value -> physical copies needed: ceil(lifetime / II), at least 1 (Lam 1988).

    A copy may be rewritten in the same cycle as its last read (reads see the
    bundle's incoming state).
    """
    return {v: max(1, math.ceil(life / schedule.ii)) for v, life in schedule.lifetimes().items()}


def allocate_registers(schedule: Schedule, unroll: int, registers, carried_registers: dict,
                       carried=()) -> dict:
    """value -> one register per kernel copy (iteration mod ``unroll``), shared where possible.

    Each instance occupies its register from the issue of its definition to the
    issue of its last read (a new definition may issue in the bundle of that
    read: bundles read registers before writing). Instances are arcs on the
    circle of ``unroll·II`` cycles, coloured first-fit by start.
    """
    g, ii = schedule.graph, schedule.ii
    period = unroll * ii
    life = schedule.lifetimes()
    arcs = []
    for v, span in life.items():
        if v in carried:
            continue
        t = schedule.times[g.producers[v]]
        for j in range(unroll):
            arcs.append(((t + j * ii) % period, max(span, 1), v, j))
    arcs.sort(key=lambda a: (a[0], -a[1], a[2], a[3]))
    pool = list(registers)
    taken = {r: [] for r in pool}
    out = {v: [carried_registers[v]] for v in carried}
    for start, length, v, j in arcs:
        for r in pool:
            if all(not _arcs_overlap(start, length, s2, l2, period) for s2, l2 in taken[r]):
                taken[r].append((start, length))
                out.setdefault(v, [None] * unroll)[j] = r
                break
        else:
            raise ValueError(f"registers: the pool of {len(pool)} registers is too small for "
                             f"this schedule (II {ii}, unroll {unroll})")
    return out


def _arcs_overlap(s1, l1, s2, l2, period):
    if l1 >= period or l2 >= period:
        return True
    return (s2 - s1) % period < l1 or (s1 - s2) % period < l2


def _carried_values(graph):
    carried = set()
    for e in graph.edges:
        if e.kind == "flow" and e.distance > 0 and graph.ops[e.src].dst not in graph.rotating:
            if e.distance > 1:
                raise ValueError(f"expand: value {graph.ops[e.src].dst!r} is read {e.distance} "
                                 "iterations later; only distance 1 is supported")
            carried.add(graph.ops[e.src].dst)
    return carried


def closure_of_consumers(body, names) -> set:
    """The labels of ops that (transitively, within an iteration) read values of ``names``."""
    dropped = set(names)
    values = set()
    for op in body:
        reads = {s.name if isinstance(s, Use) else s for s in op.srcs}
        if op.label in dropped or reads & values:
            dropped.add(op.label)
            if op.dst:
                values.add(op.dst)
    return dropped


def expand(schedule: Schedule, iterations: int, *, registers, carried_registers=None,
           last_drop=(), pointers_advance: bool = True) -> Expansion:
    """Prologue / kernel / epilogue for ``iterations`` iterations, with MVE.

    ``registers`` is the pool of free vector register names for loop values;
    ``carried_registers`` maps each loop-carried value (e.g. an accumulator)
    to its fixed register, which the caller initialises and reads afterwards;
    ``last_drop`` lists op labels left out of the last iteration (a partial
    last iteration: the remainder); they must be closed under consumers.
    The kernel is unrolled U = max copies times and repeated with a
    zero-overhead ``loop``; iterations that do not fill whole kernel passes
    are emitted as straight-line code. Each memory base register advances once
    per kernel pass in the last bundles (the scalar slots reserved by
    :func:`modulo_schedule` ``reserve_scalar``) when ``pointers_advance``.
    """
    g, ii, times = schedule.graph, schedule.ii, schedule.times
    if not isinstance(iterations, int) or iterations < 1:
        raise ValueError(f"iterations must be a positive int, got {iterations!r}")
    carried_registers = dict(carried_registers or {})
    carried = _carried_values(g)
    missing = carried - set(carried_registers)
    if missing:
        raise ValueError(f"carried_registers: no register for loop-carried {sorted(missing)}")
    labels = {op.label for op in g.ops}
    last_drop = set(last_drop)
    if last_drop - labels:
        raise ValueError(f"last_drop: unknown op labels {sorted(last_drop - labels)}")
    if closure_of_consumers(g.ops, last_drop) != last_drop:
        raise ValueError("last_drop must include every op reading a dropped value")
    copies = register_copies(schedule)
    unroll = max([copies[v] for v in copies if v not in carried] or [1])
    regs = allocate_registers(schedule, unroll, registers, carried_registers, carried)
    bases = sorted({op.addr.base for op in g.ops if op.addr is not None and op.addr.stride})
    sc = schedule.stage_count
    n = iterations
    full_iters = n - 1 if last_drop else n
    # blocks SC-1 .. full_iters-1 hold only complete iterations in every stage
    passes = max(0, full_iters - sc + 1) // unroll
    if passes and pointers_advance and len(bases) > ii:
        raise ValueError("more memory bases than scalar slots in the kernel")
    if passes and not pointers_advance and bases:
        raise ValueError("pointers_advance=False needs a loop without strided memory operands")
    loop_first = sc - 1
    loop_end = loop_first + passes * unroll
    step = {b: 0 for b in bases}
    for op in g.ops:
        if op.addr is not None and op.addr.stride:
            step[op.addr.base] = op.addr.stride * unroll
    inc_rows = {b: ii - 1 - j for j, b in enumerate(bases)}

    def operand(k, src, it):
        use = _src_use(src, k, g.producers)
        if use is None:
            return src
        p, d = use
        copies = regs[g.ops[p].dst]
        return copies[(it - d) % len(copies)]

    def op_text(k, it, block, row, in_loop):
        op = g.ops[k]
        srcs = [operand(k, s, it) for s in op.srcs
                if not (isinstance(s, str) and s.startswith("@"))]
        dst = [] if op.dst is None or op.is_push else [regs[op.dst][it % len(regs[op.dst])]]
        if op.addr is not None:
            a = op.addr
            advanced = 0
            if a.stride and passes:
                if block >= loop_end:
                    advanced = passes * unroll
                elif in_loop and block == loop_first + unroll - 1 and row > inc_rows[a.base]:
                    advanced = unroll
            imm = a.offset + (it - advanced) * a.stride
            mem = [f"[{a.base} + {imm}]" if imm >= 0 else f"[{a.base} - {-imm}]"]
            stored = op.opcode.startswith(("vst", "sst"))  # the stored value comes first
            parts = srcs[:1] + mem + srcs[1:] if stored else dst + mem + srcs
        else:
            parts = dst + srcs
        return op.opcode + (" " + ", ".join(parts) if parts else "") + op.tail

    def block_bundles(block, in_loop):
        out = []
        for row in range(ii):
            bundle = []
            for k in range(g.n):
                t = times[k]
                it = block - t // ii
                if t % ii != row or not 0 <= it < n:
                    continue
                if it == n - 1 and g.ops[k].label in last_drop:
                    continue
                bundle.append(op_text(k, it, block, row, in_loop))
            if in_loop and block == loop_first + unroll - 1:
                bundle += [f"sadd {b}, {b}, {step[b]}" for b, r in inc_rows.items() if r == row]
            out.append(bundle)
        return out

    bundles = []
    for block in range(0, loop_first):
        bundles += block_bundles(block, False)
    if passes:
        bundles.append(("loop", passes))
        for block in range(loop_first, loop_first + unroll):
            bundles += block_bundles(block, True)
        bundles.append(("endloop",))
    for block in range(loop_end if passes else loop_first, n + sc - 1):
        bundles += block_bundles(block, False)
    while bundles and bundles[-1] == []:
        bundles.pop()
    initial = {v: regs[v][-1 % len(regs[v])] for v in g.rotating}
    return Expansion(schedule, n, unroll, passes, regs, bundles,
                     {b: step[b] * passes for b in bases}, initial)
