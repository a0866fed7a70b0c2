"""A loop body as the scheduler sees it: ops on named values, and their dependence graph.

A loop body is a list of :class:`Op` in program order. Values are named: an
operand that names a value defined in the body is a dependence, anything else
(``v60``, ``s3``, ``#5``) is a live-in passed through to the assembly text.
A use that comes before its definition in program order reads the previous
iteration's value (loop-carried, distance 1); :class:`Use` states any
distance explicitly. SFU results travel through the in-order FIFO: a push
(``vexp2``, ``vlog2`` …) defines a FIFO token whose name starts with ``@`` and
``vpop`` consumes it. :func:`build_graph` turns a body into a :class:`Graph` of
flow, anti and FIFO edges, and, given what is known of the loop's memory, of the memory
dependences of :mod:`rslab.schedule.memory`.
"""

from __future__ import annotations

from dataclasses import dataclass

from rslab.schedule.memory import Memory, memory_edges
from rslab.schedule.model import SlotModel, is_pop, is_push, slot_of


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
    memory operand of ``vld``/``vst`` (a strided one's lane stride is its last source);
    ``name`` labels the op (default: dst).
    """

    opcode: str
    dst: str | None = None
    srcs: tuple = ()
    addr: Addr | None = None
    name: str = ""

    @property
    def label(self) -> str:
        return self.name or self.dst or self.opcode

    @property
    def is_push(self) -> bool:
        return is_push(self.opcode)

    @property
    def is_pop(self) -> bool:
        return is_pop(self.opcode)

    def assembly(self, dst: str | None, srcs: list, imm: int | None = None) -> str:
        """The op as assembly text with registers ``dst`` and ``srcs`` (the FIFO tokens left
        out) and, for a memory op, the address immediate ``imm`` (bytes)."""
        dst_part = [] if dst is None else [dst]
        if self.addr is None:
            parts = dst_part + list(srcs)
        else:
            mem = f"[{self.addr.base} + {imm}]" if imm >= 0 else f"[{self.addr.base} - {-imm}]"
            stored = self.opcode.startswith(("vst", "sst"))  # the stored value comes first
            parts = (list(srcs[:1]) + [mem] + list(srcs[1:]) if stored
                     else dst_part + [mem] + list(srcs))
        return self.opcode + (" " + ", ".join(parts) if parts else "")

    def register_srcs(self) -> list:
        """The sources that name registers or values (FIFO tokens left out)."""
        return [s for s in self.srcs if not (isinstance(s, str) and s.startswith("@"))]


@dataclass(frozen=True)
class Edge:
    src: int
    dst: int
    latency: int
    distance: int
    kind: str  # "flow", "anti", "fifo", or "memory flow" / "memory anti" / "memory output"


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
        return self.model.op_latency(self.ops[i])

    def labels(self) -> list:
        return [op.label for op in self.ops]

    def renamed(self) -> Graph:
        """The graph with every loop-carried value renamed: no anti-dependence (a reader of
        the previous iteration's value need not come before the new value)."""
        carried = {self.ops[e.src].dst for e in self.edges if e.kind == "flow" and e.distance}
        return Graph(self.ops, [e for e in self.edges if e.kind != "anti"], self.model,
                     self.producers, self.fifo_pairs, self.rotating | carried)


def src_use(src, index: int, producers: dict):
    """Resolve a source operand to (producer, distance) or None for a live-in."""
    if isinstance(src, Use):
        if src.name not in producers:
            raise ValueError(f"srcs: Use({src.name!r}) names no value defined in the body")
        return producers[src.name], src.distance
    if isinstance(src, str) and src in producers:
        p = producers[src]
        return p, (1 if p >= index else 0)
    return None


def _producers(ops, model) -> dict:
    """value name → index of the op defining it, checking every op of the body."""
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
    return producers


def _fifo_pairs(ops, producers) -> list:
    """(push, pop) pairs: the k-th pop of an iteration takes the k-th push's result (the FIFO
    is in order, whatever token the pop names)."""
    for i, op in enumerate(ops):
        tokens = [s for s in op.srcs if isinstance(s, str) and s.startswith("@")
                  or isinstance(s, Use) and s.name.startswith("@")]
        for token in tokens:
            if not op.is_pop or isinstance(token, Use):
                raise ValueError(f"body[{i}]: a FIFO token is read only by a vpop of the same "
                                 f"iteration ({getattr(token, 'name', token)})")
            if token not in producers:
                raise ValueError(f"body[{i}]: {token!r} is not pushed in the body")
        if op.is_pop and not tokens:
            raise ValueError(f"body[{i}]: vpop must read an @fifo token")
    pushes = [i for i, op in enumerate(ops) if op.is_push]
    pops = [i for i, op in enumerate(ops) if op.is_pop]
    if len(pops) > len(pushes):
        raise ValueError(f"body[{pops[len(pushes)]}]: vpop without a matching push: the "
                         f"iteration pushes {len(pushes)} result(s) and pops {len(pops)}")
    if len(pushes) > len(pops):
        raise ValueError(f"body: pushes never popped: {[ops[p].dst for p in pushes[len(pops):]]}")
    for p, q in zip(pushes, pops, strict=True):
        if q < p:
            raise ValueError(f"body[{q}]: this vpop takes the result of {ops[p].dst}, pushed "
                             f"later in the iteration (body[{p}]): the FIFO returns results in "
                             "push order, so pop each push's result after it")
    return list(zip(pushes, pops, strict=True))


def _flow_edges(ops, producers, model, rotating) -> tuple[list, list]:
    """(flow and anti edges, FIFO (push, pop) pairs) of the reads of the body."""
    fifo_pairs = _fifo_pairs(ops, producers)
    edges = [Edge(p, q, model.op_latency(ops[p]), 0, "flow") for p, q in fifo_pairs]
    for i, op in enumerate(ops):
        for src in op.register_srcs():
            use = src_use(src, i, producers)
            if use is None:
                continue
            p, d = use
            producer = ops[p]
            edges.append(Edge(p, i, model.op_latency(producer), d, "flow"))
            if d >= 1 and p != i and producer.dst not in rotating:
                # the next definition must not overwrite the value before this read
                edges.append(Edge(i, p, 0, d - 1, "anti"))
    return edges, fifo_pairs


def build_graph(body, model: SlotModel | None = None, rotating=(),
                memory: Memory | None = None) -> Graph:
    """The dependence graph of ``body`` (flow, anti for carried values, FIFO, and memory
    dependences given ``memory``; without it the caller keeps its stores apart from every
    other access of the loop, as the kernels' layouts do).

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
    producers = _producers(ops, model)
    edges, fifo_pairs = _flow_edges(ops, producers, model, rotating)
    # A pinned carried value is also read in its own iteration (distance 0): that read
    # must issue before the next iteration's definition overwrites the register.
    pinned = {e.src for e in edges
              if e.kind == "flow" and e.distance > 0 and ops[e.src].dst not in rotating}
    edges += [Edge(e.dst, e.src, 0, 1, "anti") for e in list(edges)
              if e.kind == "flow" and e.distance == 0 and e.src in pinned and e.dst != e.src]
    unknown = rotating - set(producers)
    if unknown:
        raise ValueError(f"rotating: values not defined in the body: {sorted(unknown)}")
    if memory is not None:
        edges += [Edge(*e) for e in memory_edges(ops, model, memory)]
    return Graph(ops, edges, model, producers, fifo_pairs, rotating)


def renamed_values(body, model: SlotModel | None = None, rotating=(),
                   memory: Memory | None = None) -> frozenset:
    """``rotating`` and every carried value that one register cannot hold: one whose previous
    iteration's value is read after its new value is made (``d = vsub m[-1], m``). Pinned,
    its anti-dependence closes a circuit of zero iterations; renamed, it has none."""
    rotating = frozenset(rotating)
    while True:
        graph = build_graph(body, model, rotating, memory)
        now = graph.edges
        within = {e.src: [] for e in now}
        for e in now:
            if e.distance == 0:
                within.setdefault(e.src, []).append(e.dst)
        stuck = {graph.ops[e.dst].dst for e in now if e.kind == "anti" and e.distance == 0
                 and _reaches(within, e.dst, e.src)}
        if not stuck:
            return rotating
        rotating |= stuck


def _reaches(succ: dict, a: int, b: int) -> bool:
    """Whether a path of ``succ`` leads from ``a`` to ``b``."""
    seen, todo = {a}, [a]
    while todo:
        for x in succ.get(todo.pop(), ()):
            if x == b:
                return True
            if x not in seen:
                seen.add(x)
                todo.append(x)
    return False


def strided_bases(body) -> list:
    """The base registers of the body's strided memory operands (each advances per pass)."""
    return sorted({op.addr.base for op in body if op.addr is not None and op.addr.stride})


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
