"""Memory dependences of a loop body: the iteration distances at which two accesses meet.

An access ``[sB + OFFSET + STRIDE*i]`` of iteration i starts at byte b + OFFSET + STRIDE·i,
b being the value of sB when the loop starts, and covers ``width`` bytes from there: 4 for
``sld``/``sst``, a vector for ``vld``/``vst``, the whole span from the first lane to the
last for a strided ``vld.s``/``vst.s``. Two accesses of which at least one is a store
*meet* at distance d when the bytes of the first in iteration i and of the second in
iteration i + d share a byte, both iterations within the trip count. They are ordered as
the body's sequential loop orders them (:mod:`rslab.schedule.sequential`): d = 0 in program
order, d > 0 the first before the second d iterations later, d < 0 the reverse. Only the
smallest distance in each direction becomes an edge (it orders every larger one too, as
d = 0 orders every d > 0).

- **One base register, or two whose values at the loop's entry are known** (``bases``),
  with one stride: the distances solve ``lo < c + stride·d < hi``, an interval of integers
  (the strong SIV test of a compiler), all of them, however far apart.
- **Known bases, different strides**: accesses whose bytes over the whole trip are apart
  never meet; others are ordered at every distance (edges at d = 0 and d = ±1).
- **Another base whose value is unknown**: they may meet anywhere, so they are ordered at
  every distance, as the sequential loop orders them.

Latencies: store → load the store's (cycles until memory holds the data), load → store and
store → store one cycle. The simulator reads and writes memory when an op issues, and the ops
of one bundle in their text order, which the emitter does not choose by iteration: so the
later access issues in a later bundle.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from rslab.schedule.model import SlotModel


@dataclass(frozen=True)
class Memory:
    """What the scheduler knows of a loop's memory: the trip count, the bytes of a vector and
    of VMEM (the machine's), and the value of each base register it knows when the loop
    starts."""

    iterations: int
    vector_bytes: int
    vmem_bytes: int
    bases: Mapping = field(default_factory=dict)


@dataclass(frozen=True)
class _Access:
    index: int
    store: bool
    base: str  # "" when the address is absolute (its base's value is known)
    start: int  # bytes from the base (absolute when base is "") in iteration 0
    stride: int
    first: int  # bytes covered: [start + stride·i + first, start + stride·i + end)
    end: int


def _span(op, vector_bytes: int) -> tuple[int, int]:
    """(first, end) bytes an access covers from its address (a strided one: first lane to
    last)."""
    if op.opcode in ("sld", "sst"):
        return 0, 4
    if op.opcode.endswith(".s"):
        reach = 4 * int(op.srcs[-1], 0) * (vector_bytes // 4 - 1)
        return min(0, reach), max(0, reach) + 4
    return 0, vector_bytes


def _accesses(ops, memory: Memory) -> list:
    out = []
    for k, op in enumerate(ops):
        if op.addr is None:
            continue
        a = op.addr
        known = a.base in memory.bases
        out.append(_Access(k, op.opcode.startswith(("vst", "sst")), "" if known else a.base,
                           a.offset + (memory.bases[a.base] if known else 0), a.stride,
                           *_span(op, memory.vector_bytes)))
    return out


def _solve(c: int, e: int, lo: int, hi: int) -> tuple[float, float]:
    """The integers x with lo < c + e·x < hi, as (first, last) (empty: first > last)."""
    if e == 0:
        return (-float("inf"), float("inf")) if lo < c < hi else (1, 0)
    if e < 0:
        c, e, lo, hi = -c, -e, -hi, -lo
    return (lo - c) // e + 1, -((c - hi) // e) - 1


def _distances(a: _Access, b: _Access, n: int) -> tuple[float, float]:
    """(first, last) of the distances d at which ``a`` (iteration i) and ``b`` (i + d) meet,
    within the trip count (-1 … 1 when they may meet at every distance: it orders them all)."""
    lo, hi = a.first - b.end, a.end - b.first  # b's bytes minus a's must fall in (lo, hi)
    if a.stride == b.stride:
        first, last = _solve(b.start - a.start, a.stride, lo, hi)
        return max(first, 1 - n), min(last, n - 1)
    reach = [(x.start + min(0, x.stride * (n - 1)) + x.first,
              x.start + max(0, x.stride * (n - 1)) + x.end) for x in (a, b)]
    apart = reach[0][1] <= reach[1][0] or reach[1][1] <= reach[0][0]
    return (1, 0) if apart else (max(-1, 1 - n), min(1, n - 1))


def _edge(ops, model: SlotModel, src: _Access, dst: _Access, distance: int) -> tuple:
    if src.store and not dst.store:
        return (src.index, dst.index, model.op_latency(ops[src.index]), distance,
                "memory flow")
    return src.index, dst.index, 1, distance, "memory output" if src.store else "memory anti"


def check_addresses(ops, memory: Memory) -> None:
    """A ``ValueError`` naming the first access through a base of known value that is not
    word-aligned or leaves VMEM in some iteration (the simulator would stop there)."""
    n = memory.iterations
    for x in _accesses(ops, memory):
        if x.base or not n:
            continue
        what = "store" if x.store else "load"
        if x.start % 4 or (x.stride % 4 and n > 1):
            i = 0 if x.start % 4 else 1
            raise ValueError(f"body[{x.index}]: in iteration {i} this {what} is at byte "
                             f"{x.start + i * x.stride}, not a multiple of 4")
        for i in (0, n - 1):
            lo, hi = x.start + i * x.stride + x.first, x.start + i * x.stride + x.end
            if lo < 0 or hi > memory.vmem_bytes:
                raise ValueError(f"body[{x.index}]: in iteration {i} this {what} touches bytes "
                                 f"[{lo:,}, {hi:,}), outside VMEM [0, {memory.vmem_bytes:,})")


def memory_edges(ops, model: SlotModel, memory: Memory) -> list:
    """The memory dependences of ``ops`` (a loop body): (src, dst, latency, distance, kind)
    of each edge (see the module docstring)."""
    accesses = _accesses(ops, memory)
    edges = []
    for j, b in enumerate(accesses):
        for a in accesses[:j]:
            if not (a.store or b.store):
                continue
            n = memory.iterations
            first, last = _distances(a, b, n) if a.base == b.base \
                else (max(-1, 1 - n), min(1, n - 1))  # of unknown distance: every one
            if first > last:
                continue
            if first <= 0 <= last:  # a comes first in the body (and in every later pair)
                edges.append(_edge(ops, model, a, b, 0))
            elif first >= 1:
                edges.append(_edge(ops, model, a, b, int(first)))
            if first <= -1:
                edges.append(_edge(ops, model, b, a, int(-min(last, -1))))
    return _reduced(edges)


def _reduced(edges: list) -> list:
    """The edges less each one that two others imply: u → w → v, no more iterations apart
    and no fewer cycles. Tried first: the edges to a later iteration, the nearest first,
    then those within one, the farthest first; so k stores to one address keep k edges
    (each to the next, the last to the first of the next iteration), not k²."""
    out = {}  # u -> {v: (latency, distance)}: one edge per ordered pair
    for u, v, latency, distance, _ in edges:
        out.setdefault(u, {})[v] = (latency, distance)
    removed = set()
    for edge in sorted(edges, key=lambda e: (-e[3], abs(e[1] - e[0]) * (1 if e[3] else -1))):
        u, v, latency, distance, _ = edge
        if any(v in out.get(w, {}) and l1 + out[w][v][0] >= latency
               and d1 + out[w][v][1] <= distance for w, (l1, d1) in out[u].items()):
            del out[u][v]
            removed.add(edge)
    return [e for e in edges if e not in removed]
