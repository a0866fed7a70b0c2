"""From a modulo schedule to code: prologue / kernel / epilogue with modulo variable expansion.

:func:`expand` unrolls the kernel until no register is overwritten before its
last read (Lam 1988), allocates the values' registers by circular-arc colouring,
and emits assembly in the machine's syntax (:mod:`rslab.machine.asm`).

A loop-carried value is either *pinned* (one register for every iteration: its
next definition waits for every read of the current one) or *rotating*
(:func:`~rslab.schedule.body.build_graph` ``rotating``): renamed like any other
value, so a counter's update need not wait for the last read of its previous
value. Given a caller's register (``carried_registers``), a rotating value enters
the loop from it and leaves the loop in it, exactly like a pinned one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from rslab.machine.isa import SPECS
from rslab.schedule.body import closure_of_consumers, src_use, strided_bases
from rslab.schedule.model import slot_of
from rslab.schedule.modulo import Schedule
from rslab.schedule.unroll import split_copy

NOTE = " #@"
"""Between an op's text and its body note in :attr:`Expansion.bundles` (``label|it|stage``)."""


@dataclass
class Expansion:
    """Prologue / kernel / epilogue code of a modulo-scheduled loop.

    ``bundles`` is a list of entries: a list of op texts (one bundle; an op of the body
    followed by ``NOTE`` and its label, iteration and stage), or the markers
    ``("loop", K)`` and ``("endloop",)``; ``text`` gives every bundle holding an op of the
    body the ``#@`` note of :mod:`rslab.machine.asm`, and each ``loop`` line says
    how many iterations of the body one pass holds (``# U source iterations per pass``,
    which ``rslab sim`` reads to report cycles per source iteration: ``unroll`` times the
    ``source_iterations`` of one iteration of the body). ``registers`` maps each
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
    increments: dict = field(default_factory=dict)  # base -> (block of a pass, row) of its sadd
    source_iterations: int = 1  # source iterations one iteration of the body holds
    first_iteration: int = 0  # the source iteration of the body's iteration 0

    @property
    def text(self) -> str:
        lines = []
        per = self.unroll * self.source_iterations
        for b in self.bundles:
            if isinstance(b, tuple):
                lines.append(f"loop {b[1]}  # {per} source iteration"
                             f"{'s' if per > 1 else ''} per pass"
                             if b[0] == "loop" else "endloop")
            else:
                lines.append(self._line(b))
        return "\n".join(lines) + "\n"

    def _line(self, bundle: list) -> str:
        """A bundle's text: its ops, then (if one comes from the body) the ``#@`` note of each
        (:mod:`rslab.machine.asm`): ``LABEL iN sK``, N the source iteration."""
        if not bundle:
            return "nop"
        ops, notes = zip(*(text.partition(NOTE)[::2] for text in bundle), strict=True)
        if not any(notes):
            return " ; ".join(ops)
        return " ; ".join(ops) + "  #@ " + " ; ".join(self._note(n) for n in notes)

    def _note(self, note: str) -> str:
        if not note:
            return "-"
        label, it, stage = note.split("|")
        k = self.source_iterations
        name, copy = split_copy(label) if k > 1 else (label, 0)
        return f"{name} i{self.first_iteration + int(it) * k + copy} s{stage}"

    @property
    def vector_registers(self) -> int:
        """Distinct registers the loop's values occupy (pinned carried ones included)."""
        return len({r for regs in self.registers.values() for r in regs})

    @property
    def static_cycles(self) -> int:
        """Bundles issued if nothing stalls (kernel repeated, markers excluded)."""
        straight = sum(1 for b in self.bundles if not isinstance(b, tuple))
        kernel = self.unroll * self.schedule.ii
        return straight + sum((b[1] - 1) * kernel for b in self.bundles
                              if isinstance(b, tuple) and b[0] == "loop")


def register_copies(schedule: Schedule) -> dict:
    """value -> physical copies needed: ceil(lifetime / II), at least 1 (Lam 1988).

    A copy may be rewritten in the same cycle as its last read (reads see the
    bundle's incoming state).
    """
    return {v: max(1, math.ceil(life / schedule.ii)) for v, life in schedule.lifetimes().items()}


def allocate_registers(schedule: Schedule, unroll: int, registers, carried_registers: dict,
                       carried=(), entry=None, exclusive=()) -> dict:
    """value -> one register per kernel copy (iteration mod ``unroll``), shared where possible.

    Each instance occupies its register from the issue of its definition to the
    issue of its last read (a new definition may issue in the bundle of that
    read: bundles read registers before writing). Instances are arcs on the
    circle of ``unroll·II`` cycles, coloured first-fit by start, from the pool's registers
    of the value's kind (a scalar register for an op that writes one, such as
    ``vred.add``; a vector register otherwise). A rotating value
    in ``entry`` has its last copy (the one iteration −1 would use) in its entry
    register, so the first iteration reads the caller's value there. The copies of an
    ``exclusive`` value share their registers with no other value (they still hold its last
    iterations when the loop's code ends).
    """
    entry = {v: [r] if isinstance(r, str) else list(r) for v, r in (entry or {}).items()}
    g, ii = schedule.graph, schedule.ii
    period = unroll * ii
    life = schedule.lifetimes()
    arcs = []
    for v, span in life.items():
        if v in carried:
            continue
        t = schedule.times[g.producers[v]]
        for j in range(unroll):
            arcs.append(((t + j * ii) % period, period if v in exclusive else max(span, 1), v, j))
    arcs.sort(key=lambda a: (a[0], -a[1], a[2], a[3]))
    pool = list(registers)
    taken = {r: [] for r in pool}
    out = {v: [carried_registers[v]] for v in carried}
    for start, length, v, j in arcs:
        if v in entry and unroll - 1 - j < len(entry[v]):
            out.setdefault(v, [None] * unroll)[j] = entry[v][unroll - 1 - j]
            continue
        kind = "s" if SPECS[g.ops[g.producers[v]].opcode].sig[:1] == ("sd",) else "v"
        for r in (r for r in pool if r[0] == kind):
            if all(not _arcs_overlap(start, length, s2, l2, period) for s2, l2 in taken[r]):
                taken[r].append((start, length))
                out.setdefault(v, [None] * unroll)[j] = r
                break
        else:
            what = "scalar" if kind == "s" else "vector"
            have = sum(r[0] == kind for r in pool)
            raise ValueError(f"registers: the pool's {have} {what} registers are too few for "
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
           last_drop=(), pointers_advance: bool = True, gates=None,
           history=None) -> Expansion:
    """Prologue / kernel / epilogue for ``iterations`` iterations, with MVE.

    ``registers`` is the pool of free vector register names for loop values;
    ``carried_registers`` maps each loop-carried value (e.g. an accumulator)
    to its fixed register, which the caller initialises and reads afterwards;
    a rotating value named there is read from it by the first iteration (its
    last copy is that register) and copied back to it from the last (a ``vmov``
    in a free VALU slot of the epilogue, or a bundle of its own);
    ``last_drop`` lists op labels left out of the last iteration (a partial
    last iteration: the remainder); they must be closed under consumers.
    The kernel is unrolled U = max copies times and repeated with a
    zero-overhead ``loop``; iterations that do not fill whole kernel passes
    are emitted as straight-line code. Each memory base register advances once
    per kernel pass when ``pointers_advance``, in the scalar slots the schedule keeps
    free (:attr:`Schedule.reserved_scalar`, the last rows of the last blocks of the
    pass: the kernel unrolls until its passes hold every base's increment).
    ``gates`` maps an iteration to an op (e.g. ``dmawait 6``) issued before any op of
    it: the loop waits for data arriving in chunks without draining the pipeline (the
    blocks where a gate waits are straight-line code, the loop resumes after them).
    ``history`` maps a rotating value read more than one iteration back (``Use(v, d)``)
    to the caller's registers holding its values of iterations −2, −3, …: the kernel
    is unrolled at least once per register, and those copies are those registers.
    """
    g = schedule.graph
    if not isinstance(iterations, int) or iterations < 1:
        raise ValueError(f"iterations must be a positive int, got {iterations!r}")
    bad = [g for g in (gates or {}) if not isinstance(g, int) or not 0 < g < iterations]
    if bad:
        raise ValueError(f"gates: iterations {bad} are not in 1 … {iterations - 1}")
    carried_registers = dict(carried_registers or {})
    carried = _carried_values(g)
    missing = carried - set(carried_registers)
    if missing:
        raise ValueError(f"carried_registers: no register for loop-carried {sorted(missing)}")
    last_drop = _checked_drop(g, last_drop)
    history = {v: list(r) for v, r in (history or {}).items()}
    bad = sorted(v for v in history if v not in g.rotating or v not in carried_registers)
    if bad:
        raise ValueError(f"history: {bad} must be rotating values with a carried register")
    copies = register_copies(schedule)
    bases = len(strided_bases(g.ops)) if pointers_advance else 0
    unroll = max([copies[v] for v in copies if v not in carried]
                 + [1 + len(r) for r in history.values()] + [1]
                 + [-(-bases // max(schedule.reserved_scalar, 1))])
    entry = {v: [carried_registers[v], *history.get(v, [])] for v in g.rotating
             if v in carried_registers}
    held = {v for v, r in entry.items() if len(r) > 1}  # handed back after the code
    regs = allocate_registers(schedule, unroll, registers, carried_registers, carried, entry,
                              exclusive=held)
    emitter = _Emitter(schedule, iterations, unroll, regs, last_drop, gates)
    if emitter.passes and bases and not schedule.reserved_scalar:
        raise ValueError("pointers: the schedule keeps no scalar slot for the pointer "
                         "increments (modulo_schedule's reserve_scalar)")
    if emitter.passes and not pointers_advance and emitter.bases:
        raise ValueError("pointers_advance=False needs a loop without strided memory operands")
    dropped = sorted(v for v in entry if g.ops[g.producers[v]].label in last_drop)
    if dropped:
        raise ValueError(f"last_drop: rotating values {dropped} must be defined in the last "
                         "iteration to leave the loop")
    emitter.entry = {v: r[0] for v, r in entry.items() if v not in held}
    emitter.history = {v: entry[v] for v in held}
    emitter.temps = [r for r in registers if r not in {x for c in regs.values() for x in c}]
    initial = {v: entry[v][0] if v in entry else regs[v][-1 % len(regs[v])] for v in g.rotating}
    return Expansion(schedule, iterations, unroll, emitter.passes, regs, emitter.bundles(),
                     {b: emitter.step[b] * emitter.passes for b in emitter.bases}, initial,
                     emitter.inc_at if emitter.passes else {})


def parallel_moves(moves: dict, opcode: str, width: int, temps) -> list:
    """Bundles of at most ``width`` ``opcode`` moves that give every register ``dst`` of
    ``moves`` (dst -> src) the value ``src`` held before the first bundle. A bundle reads
    its registers before it writes them, so moves whose destinations no other move still
    reads go first, and a cycle goes in one bundle if it fits, else through a free register
    of ``temps`` (else by swaps, two moves a bundle)."""
    todo = {d: s for d, s in moves.items() if d != s}
    out = []
    while todo:
        read = set(todo.values())
        free = [d for d in todo if d not in read]
        if free:
            group = free[:width]
        elif len(todo) <= width:
            group = list(todo)
        elif temps:
            d = next(iter(todo))
            out.append([f"{opcode} {temps[0]}, {d}"])  # keep d's value, then d is free
            todo = {x: temps[0] if s == d else s for x, s in todo.items()}
            continue
        elif width >= 2:
            d = next(iter(todo))
            s = todo[d]  # swap d and s: d is done, s now holds what d held
            out.append([f"{opcode} {d}, {s}", f"{opcode} {s}, {d}"])
            del todo[d]
            todo = {x: y for x, y in ((x, s if y == d else y) for x, y in todo.items()) if x != y}
            continue
        else:
            raise ValueError(f"registers: no free register to rotate {sorted(todo)} after "
                             "the loop")
        out.append([f"{opcode} {d}, {todo[d]}" for d in group])
        for d in group:
            del todo[d]
    return out


class _Emitter:
    """The code of an expanded loop, block by block (block b: cycles b·II … b·II + II − 1).

    Block b holds stage s of iteration b − s. Blocks whose stages all hold complete
    iterations may run as passes of a hardware loop (``unroll`` blocks a pass); the
    others, and the blocks where a gate waits, are straight-line code.
    """

    def __init__(self, schedule, iterations, unroll, regs, last_drop, gates=None):
        g, ii = schedule.graph, schedule.ii
        self.g, self.ii, self.times, self.n = g, ii, schedule.times, iterations
        self.unroll, self.regs, self.last_drop = unroll, regs, last_drop
        self.sc = schedule.stage_count
        self.gates = dict(gates or {})
        self.bases = strided_bases(g.ops)
        self.full = iterations - 1 if last_drop else iterations
        self.stretches = self._stretches()
        self.passes = sum(p for _, p in self.stretches)
        self.step = {}
        for op in g.ops:
            if op.addr is not None and op.addr.base in self.bases:
                stride = self.step.setdefault(op.addr.base, op.addr.stride * unroll) // unroll
                if stride != op.addr.stride:
                    raise ValueError(f"memory: base {op.addr.base} is used with strides "
                                     f"{stride} and {op.addr.stride}; it advances by one")
        per = max(schedule.reserved_scalar, 1)
        self.inc_at = {b: (unroll - 1 - j // per, ii - 1 - j % per)
                       for j, b in enumerate(self.bases)}  # base -> (block of the pass, row)
        self.entry = {}  # rotating value -> the caller's register it enters and leaves by
        self.history = {}  # rotating value -> the caller's registers of iterations −1, −2, …
        self.temps = []  # pool registers no value of the loop uses
        self.life = schedule.lifetimes()
        self.at = {}  # straight-line block -> index of its first bundle in the code

    def _stretches(self) -> list:
        """(first block, passes) of each hardware loop: runs of blocks SC−1 … full−1 (only
        complete iterations in every stage) between gate blocks, in whole passes."""
        out, block = [], self.sc - 1
        cuts = sorted(g for g in self.gates if block <= g < self.full) + [self.full]
        for cut in cuts:
            passes = max(0, cut - block) // self.unroll
            if passes:
                out.append((block, passes))
            block = cut + 1
        return out

    def operand(self, k, src, it):
        use = src_use(src, k, self.g.producers)
        if use is None:
            return src
        p, d = use
        copies = self.regs[self.g.ops[p].dst]
        return copies[(it - d) % len(copies)]

    def op_text(self, k, it, row, moved, in_pass):
        op, regs = self.g.ops[k], self.regs
        srcs = [self.operand(k, s, it) for s in op.register_srcs()]
        dst = None if op.dst is None or op.is_push else regs[op.dst][it % len(regs[op.dst])]
        imm = None
        if op.addr is not None:
            a = op.addr
            ahead = self.unroll if a.stride and in_pass is not None \
                and (in_pass, row) > self.inc_at[a.base] else 0
            imm = a.offset + (it - (moved + ahead if a.stride else 0)) * a.stride
        note = f"{op.label}|{it}|{self.times[k] // self.ii}"
        return op.assembly(dst, srcs, imm) + NOTE + note

    def block_bundles(self, block, moved, in_pass=None):
        """One block's bundles; ``moved``: iterations the bases have advanced by; in block
        ``in_pass`` of a kernel pass the bases advance in their reserved rows."""
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
                bundle.append(self.op_text(k, it, row, moved, in_pass))
            if in_pass is not None:
                bundle += [f"sadd {b}, {b}, {self.step[b]}" for b, at in self.inc_at.items()
                           if at == (in_pass, row)]
            out.append(bundle)
        return out

    def straight(self, out, block, moved):
        self.at[block] = len(out)
        bundles = self.block_bundles(block, moved)
        if block in self.gates:
            first = bundles[0]
            scalar = sum(slot_of(t.split()[0]) == "scalar" for t in first)
            if scalar < self.g.model.units["scalar"]:
                first.append(self.gates[block])
            else:
                bundles.insert(0, [self.gates[block]])
                self.at[block] += 1
        out += bundles

    def bundles(self) -> list:
        """Prologue, the hardware loops between straight-line blocks, epilogue (trailing empty
        bundles cut)."""
        out, moved, block = [], 0, 0
        for first, passes in self.stretches:
            for b in range(block, first):
                self.straight(out, b, moved)
            out.append(("loop", passes))
            for b in range(first, first + self.unroll):
                out += self.block_bundles(b, moved, in_pass=b - first)
            out.append(("endloop",))
            moved += passes * self.unroll
            block = first + passes * self.unroll
        for b in range(block, self.n + self.sc - 1):
            self.straight(out, b, moved)
        while out and out[-1] == []:
            out.pop()
        for value, register in sorted(self.entry.items()):
            self.leave(out, value, register)
        for value, registers in sorted(self.history.items()):
            out += self.hand_back(value, registers)
        return out

    def hand_back(self, value, registers) -> list:
        """Bundles after the code that leave ``value``'s iterations −1, −2, … (counted from the
        loop's end) in ``registers``, in that order: a parallel move from the copies that
        hold them (the caller's own registers for iterations before the loop)."""
        copies = self.regs[value]
        moves = {r: copies[(self.n - 1 - j) % len(copies)] for j, r in enumerate(registers)}
        kind = registers[0][0]
        slot = "valu" if kind == "v" else "scalar"
        temps = [r for r in self.temps if r[0] == kind]
        return parallel_moves(moves, "vmov" if kind == "v" else "smov",
                              self.g.model.units[slot], temps)

    def leave(self, out, value, register):
        """Copy the last iteration's ``value`` into ``register`` while that copy is live (from
        its result until its next iteration's read would be): in a bundle of the straight-line
        code after the loop with a slot free (VALU for ``vmov``, scalar for ``smov``), else in
        a bundle of its own inserted before the copy can be overwritten (or after the code, if
        it outlives the code)."""
        k, last = self.g.producers[value], self.n - 1
        copies = self.regs[value]
        if copies[last % len(copies)] == register:
            return
        opcode = "vmov" if register[0] == "v" else "smov"
        move = f"{opcode} {register}, {copies[last % len(copies)]}"
        defined = last * self.ii + self.times[k]
        top = defined + max(self.life[value], 1)
        slot = slot_of(opcode)
        units = self.g.model.units[slot]
        slots = [self._index(c) for c in range(top, defined + self.g.latency(k) - 1, -1)]
        for at in slots:
            if at is not None and at < len(out) and sum(
                    slot_of(t.split()[0]) == slot for t in out[at]) < units:
                out[at].append(move)
                return
        at = self._index(top)
        out.insert(min(at, len(out)) if at is not None else len(out), [move])

    def _index(self, cycle: int):
        """The code index of the bundle at ``cycle``: its block's if straight-line code, past
        the end if the code ends before it, None inside a hardware loop."""
        block, row = divmod(cycle, self.ii)
        if block in self.at:
            return self.at[block] + row
        return math.inf if block >= self.n + self.sc - 1 else None
