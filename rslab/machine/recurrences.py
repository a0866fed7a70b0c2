"""The recurrences of a traced hardware loop: the circuits of dependences between its ops.

An op is named by the loop-body op it runs where the program says so (``rslab pipeline``'s
``#@`` notes: label and source iteration), else by its text (and the loop's pass). The
dependences, over the measured passes:

* **registers and the FIFO**: each op's producers in the trace (:mod:`rslab.machine.waits`),
  at the producer's latency;
* **memory**: a store and a later load of the loop body through one base register that
  the loop changes only by ``sadd BASE, BASE, STEP``: the base then moves by the same bytes
  each pass, so the passes between a store and the load of its bytes are solved from the
  two offsets, as the scheduler solves them (:mod:`rslab.schedule.memory`), at the store's
  latency. Accesses through different registers are not compared.

The circuit with the most cycles per source iteration is the loop's recurrence
(:class:`rslab.machine.bottleneck.Floor`), named as ``rslab pipeline`` names it (none
when the circuits are too many to enumerate).
"""

from __future__ import annotations

from typing import NamedTuple

from rslab.machine.bottleneck import MAX_UNROLL, circuits, recurrence
from rslab.machine.decode import reg_write

FAR = 64
"""The most passes between a store and the load of its bytes that count as a dependence."""
MEMORY = {"vld": False, "vld.s": False, "sld": False, "vst": True, "vst.s": True, "sst": True}
"""The memory ops, and whether each stores."""


class _Edge(NamedTuple):
    src: int
    dst: int
    latency: int
    distance: int


class _Nodes:
    """Node ids of the ops, by loop-body label where the program gives it, else by text."""

    def __init__(self):
        self.ids = {}

    def of(self, text: str, source, pc: int, when: int) -> tuple[int, int]:
        """(node, source iteration) of an op (its text and loop-body ``source``) issued in a
        pass of source iteration ``when``."""
        key = source[0] if source is not None else (pc, text)
        at = source[1] if source is not None else when
        return self.ids.setdefault(key, len(self.ids)), at

    def names(self) -> dict:
        return {v: k if isinstance(k, str) else k[1] for k, v in self.ids.items()}


def loop_recurrence(run, pc0: int, passes, deps) -> list:
    """[the Floor of the loop's highest recurrence] (empty when it has none) over the
    bundles of ``passes`` (lists of indices into ``trace.bundles``) of the loop at ``pc0``;
    ``deps``: each op's producers (:func:`rslab.machine.waits.links`)."""
    trace, per = run.trace, run.program.entries[pc0].per_pass
    ops, nodes, edges = trace.ops, _Nodes(), set()
    inside = {b for it in passes for b in it}
    for i, op in enumerate(ops):
        if op.bundle not in inside:
            continue
        for p, _ in deps[i]:
            if ops[p].bundle in inside:
                (a, ta), (b, tb) = (nodes.of(ops[p].text, ops[p].source, ops[p].pc,
                                             ops[p].iters[-1] * per),
                                    nodes.of(op.text, op.source, op.pc, op.iters[-1] * per))
                edges.add(_Edge(a, b, ops[p].ready - ops[p].issue, tb - ta))
    edges |= _memory_edges(run, pc0, nodes)
    try:
        loops = circuits(len(nodes.ids), sorted(edges))
    except ValueError:  # too many circuits to enumerate: no recurrence named
        return []
    found = [recurrence(c, nodes.names()) for c in loops if sum(e.distance for e in c) > 0]
    return [max(found, key=lambda f: f.need)] if found else []


def _memory_edges(run, pc0: int, nodes: _Nodes) -> set:
    """Store → load edges of the loop body through bases it moves by ``sadd`` alone (see the
    module docstring), with the distance in source iterations."""
    entries, config = run.program.entries, run.config
    per = entries[pc0].per_pass
    body = [(pc, j, op) for pc in range(pc0 + 1, entries[pc0].end)
            for j, op in enumerate(entries[pc].ops)]
    sources = {(pc, j): entries[pc].sources[j] for pc, j, _ in body}
    steps, moved = {}, set()
    for pc, _, op in body:
        w = reg_write(op)
        if w is None or w[0] != "s":
            continue
        if op.name == "sadd" and op.operands[1] == w and op.operands[2][0] == "imm":
            steps.setdefault(w[1], []).append((pc, op.operands[2][1]))
        else:
            moved.add(w[1])
    access = [(pc, j, op, *_span(op, config)) for pc, j, op in body if op.name in MEMORY
              and op.operands[1][1] not in moved]
    out = set()
    for s_pc, s_j, s_op, s_base, s_lo, s_hi in access:
        if not MEMORY[s_op.name]:
            continue
        for l_pc, l_j, l_op, l_base, l_lo, l_hi in access:
            if MEMORY[l_op.name] or l_base != s_base:
                continue
            step = sum(x for _, x in steps.get(s_base, ()))
            shift = _moved_by(steps, s_base, s_pc) - _moved_by(steps, l_base, l_pc)
            d = _first_pass(s_lo + shift, s_hi + shift, l_lo, l_hi, step,
                            (l_pc, l_j) > (s_pc, s_j))
            if d is not None:
                a, ta = nodes.of(s_op.text, sources[s_pc, s_j], s_pc, 0)
                b, tb = nodes.of(l_op.text, sources[l_pc, l_j], l_pc, 0)
                out.add(_Edge(a, b, config.latency["st"], tb + d * per - ta))
    return out


def _span(op, config) -> tuple:
    """(base register, first byte, end byte) of an access from its base at the pass's start."""
    _, base, imm = op.operands[1]
    if op.name in ("sld", "sst"):
        return base, imm, imm + 4
    if op.name.endswith(".s"):
        reach = 4 * op.operands[2][1] * (config.lanes - 1)
        return base, imm + min(0, reach), imm + max(0, reach) + 4
    return base, imm, imm + 4 * config.lanes


def _moved_by(steps: dict, base: int, pc: int) -> int:
    """Bytes ``base`` has moved within the pass before the bundle at ``pc``."""
    return sum(x for at, x in steps.get(base, ()) if at < pc)


def _first_pass(s_lo, s_hi, l_lo, l_hi, step: int, later: bool) -> int | None:
    """The fewest passes d ≥ 0 (d = 0 only if the load comes ``later`` in the pass) after
    which a load of bytes [l_lo, l_hi) + step·d meets a store of [s_lo, s_hi); None if not
    within ``FAR`` passes (a recurrence that far apart binds nothing)."""
    for d in range(0 if later else 1, FAR):
        if l_lo + step * d < s_hi and s_lo < l_hi + step * d:
            return d
    return None


def scheduled_period(trace, passes) -> int | None:
    """Source iterations of one scheduled iteration: the fewest m after which every loop-body
    op issues a fixed number of cycles later (None when the program does not say which ops
    they are)."""
    issued = {}
    inside = {b for it in passes for b in it}
    for op in trace.ops:
        if op.bundle in inside and op.source is not None:
            issued.setdefault(op.source[0], {})[op.source[1]] = op.issue
    for m in range(1, MAX_UNROLL + 1):
        gaps = {t[s + m] - t[s] for t in issued.values() for s in t if s + m in t}
        if len(gaps) == 1:
            return m
    return None
