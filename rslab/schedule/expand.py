"""From a modulo schedule to code: prologue / kernel / epilogue with modulo variable expansion.

:func:`expand` unrolls the kernel until no register is overwritten before its
last read (Lam 1988), allocates the values' registers by circular-arc colouring,
and emits assembly in the machine's syntax (:mod:`rslab.machine.asm`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from rslab.schedule.body import closure_of_consumers, src_use
from rslab.schedule.modulo import Schedule


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


def _checked_drop(graph, last_drop) -> set:
    labels = {op.label for op in graph.ops}
    last_drop = set(last_drop)
    if last_drop - labels:
        raise ValueError(f"last_drop: unknown op labels {sorted(last_drop - labels)}")
    if closure_of_consumers(graph.ops, last_drop) != last_drop:
        raise ValueError("last_drop must include every op reading a dropped value")
    return last_drop


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
    g = schedule.graph
    if not isinstance(iterations, int) or iterations < 1:
        raise ValueError(f"iterations must be a positive int, got {iterations!r}")
    carried_registers = dict(carried_registers or {})
    carried = _carried_values(g)
    missing = carried - set(carried_registers)
    if missing:
        raise ValueError(f"carried_registers: no register for loop-carried {sorted(missing)}")
    last_drop = _checked_drop(g, last_drop)
    copies = register_copies(schedule)
    unroll = max([copies[v] for v in copies if v not in carried] or [1])
    regs = allocate_registers(schedule, unroll, registers, carried_registers, carried)
    emitter = _Emitter(schedule, iterations, unroll, regs, last_drop)
    if emitter.passes and pointers_advance and len(emitter.bases) > schedule.ii:
        raise ValueError("more memory bases than scalar slots in the kernel")
    if emitter.passes and not pointers_advance and emitter.bases:
        raise ValueError("pointers_advance=False needs a loop without strided memory operands")
    initial = {v: regs[v][-1 % len(regs[v])] for v in g.rotating}
    return Expansion(schedule, iterations, unroll, emitter.passes, regs, emitter.bundles(),
                     {b: emitter.step[b] * emitter.passes for b in emitter.bases}, initial)


class _Emitter:
    """The code of an expanded loop, block by block (block b: cycles b·II … b·II + II − 1)."""

    def __init__(self, schedule, iterations, unroll, regs, last_drop):
        g, ii = schedule.graph, schedule.ii
        self.g, self.ii, self.times, self.n = g, ii, schedule.times, iterations
        self.unroll, self.regs, self.last_drop = unroll, regs, last_drop
        self.sc = schedule.stage_count
        self.bases = sorted({op.addr.base for op in g.ops
                             if op.addr is not None and op.addr.stride})
        full_iters = iterations - 1 if last_drop else iterations
        # blocks SC-1 .. full_iters-1 hold only complete iterations in every stage
        self.passes = max(0, full_iters - self.sc + 1) // unroll
        self.loop_first = self.sc - 1
        self.loop_end = self.loop_first + self.passes * unroll
        self.step = {b: 0 for b in self.bases}
        for op in g.ops:
            if op.addr is not None and op.addr.stride:
                self.step[op.addr.base] = op.addr.stride * unroll
        self.inc_rows = {b: ii - 1 - j for j, b in enumerate(self.bases)}

    def operand(self, k, src, it):
        use = src_use(src, k, self.g.producers)
        if use is None:
            return src
        p, d = use
        copies = self.regs[self.g.ops[p].dst]
        return copies[(it - d) % len(copies)]

    def advanced(self, base, block, row, in_loop) -> int:
        """Iterations by which ``base`` has already advanced at (block, row)."""
        if not self.passes:
            return 0
        if block >= self.loop_end:
            return self.passes * self.unroll
        if in_loop and block == self.loop_first + self.unroll - 1 and row > self.inc_rows[base]:
            return self.unroll
        return 0

    def op_text(self, k, it, block, row, in_loop):
        op, regs = self.g.ops[k], self.regs
        srcs = [self.operand(k, s, it) for s in op.register_srcs()]
        dst = None if op.dst is None or op.is_push else regs[op.dst][it % len(regs[op.dst])]
        imm = None
        if op.addr is not None:
            a = op.addr
            moved = self.advanced(a.base, block, row, in_loop) if a.stride else 0
            imm = a.offset + (it - moved) * a.stride
        return op.assembly(dst, srcs, imm)

    def block_bundles(self, block, in_loop):
        out = []
        for row in range(self.ii):
            bundle = []
            for k in range(self.g.n):
                t = self.times[k]
                it = block - t // self.ii
                if t % self.ii != row or not 0 <= it < self.n:
                    continue
                if it == self.n - 1 and self.g.ops[k].label in self.last_drop:
                    continue
                bundle.append(self.op_text(k, it, block, row, in_loop))
            if in_loop and block == self.loop_first + self.unroll - 1:
                bundle += [f"sadd {b}, {b}, {self.step[b]}" for b, r in self.inc_rows.items()
                           if r == row]
            out.append(bundle)
        return out

    def bundles(self) -> list:
        """Prologue, ``loop passes`` kernel ``endloop``, epilogue (trailing empty bundles cut)."""
        out = []
        for block in range(0, self.loop_first):
            out += self.block_bundles(block, False)
        if self.passes:
            out.append(("loop", self.passes))
            for block in range(self.loop_first, self.loop_first + self.unroll):
                out += self.block_bundles(block, True)
            out.append(("endloop",))
        for block in range(self.loop_end if self.passes else self.loop_first,
                           self.n + self.sc - 1):
            out += self.block_bundles(block, False)
        while out and out[-1] == []:
            out.pop()
        return out
