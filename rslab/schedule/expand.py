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
        use = src_use(src, k, g.producers)
        if use is None:
            return src
        p, d = use
        copies = regs[g.ops[p].dst]
        return copies[(it - d) % len(copies)]

    def op_text(k, it, block, row, in_loop):
        op = g.ops[k]
        srcs = [operand(k, s, it) for s in op.register_srcs()]
        dst = None if op.dst is None or op.is_push else regs[op.dst][it % len(regs[op.dst])]
        imm = None
        if op.addr is not None:
            a = op.addr
            advanced = 0
            if a.stride and passes:
                if block >= loop_end:
                    advanced = passes * unroll
                elif in_loop and block == loop_first + unroll - 1 and row > inc_rows[a.base]:
                    advanced = unroll
            imm = a.offset + (it - advanced) * a.stride
        return op.assembly(dst, srcs, imm)

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
