"""The loop-body text format of ``rslab pipeline``: one iteration's ops, one per line.

::

    # the sum-exp loop of the pipelining chapter (two packed vectors per iteration)
    iterations 32                   # default trip count (--iterations overrides)
    carried acc0=v50                # loop-carried values and the registers that hold them
    registers v0-v47 s20-s27        # free registers for the other values (default below)
    before: sli s1, 0 ; sli s2, 65536   # a bundle of assembly before the loop (repeatable)
    after:  vred.add s3, v50        # a bundle after the loop; halt is appended
    x0 = vld [s1 + 0 + 1024*i]      # VALUE = OPCODE SOURCES; memory [BASE + OFFSET + STRIDE*i]
    l0 = vunpack.lo x0
    z0 = vsub.f32 l0, v60           # names defined in the body are values; v60 is a live-in
    @e0 = vexp2 z0                  # an SFU push defines a FIFO token @NAME ...
    e0 = vpop @e0                   # ... which exactly one vpop takes, in the same iteration
    acc0 = vadd.f32 acc0[-1], e0    # NAME[-d]: the value from d iterations back
    vst e0, [s2 + 0 + 512*i]        # an op that defines no value

The meaning of a body is its iterations run one after another, op after op
(``rslab.schedule.sequential``); the pipelined program computes exactly that.

Rules: a value is defined once; a read of a value before its definition must be
marked ``[-1]`` (loop-carried), and a loop-carried value needs a ``carried``
register (its loop-carried state; the caller's ``before:`` lines initialise it, the
``after:`` lines read the last iteration's value there). ``NAME[-d]`` reads the value
of d iterations back (d ≤ 8); such a value needs d registers, ``carried
acc=v50,v51`` for ``acc[-2]``: its values of iterations −1, −2, … in that order. The
``before:`` lines set them; after the loop, for every trip count n, the k-th register
holds the value of iteration n − k (for n < k, the value the (k − n)-th register held
before the loop), so the ``after:`` lines may read every one. An op may read ``X[-1]``
and ``X`` (the value of this iteration, after its definition); the loop renames a
carried value that one register cannot hold (modulo variable expansion).
An op that writes a register
(``vld``, ``vadd.f32``, ``vred.add`` …) defines a value; a store or a push does
not (a push defines its ``@TOKEN``). A value is a vector register, or a scalar one
when its op writes a scalar (``s = vred.add x``). Everything that is not a value
(``v60``, ``s1``, ``0.5``) passes through as a live-in, checked against the
instruction table. The pool (default v0-v47 and s16-s31, less every register the
file names) must hold neither a live-in nor a carried register nor a register the
``after:`` lines read; a pool too small for the schedule raises its II, at last to the
body run op after op, and only a pool too small for that is refused. The FIFO is in
order: the k-th pop of an iteration takes the k-th push's result, whatever token it
names (the report notes a pop that names another), and each pop comes after its push;
one iteration run op after op never holds more results in the FIFO than it has
entries. A value's name is not a register's (``v1 = ...`` is refused). ``before:`` and
``after:`` lines hold bundles of the machine's assembly (no label, no loop directive),
each within the machine's slots. A body holds at most 256 ops in at most 1 MiB of text.
``#`` starts a comment. Every error is a ``BodyError`` naming the line.

Memory: a base register's operands may have several strides (0 too), and the body and
its ``after:`` lines may read the base as a value: the loop never moves it then, and
each non-zero stride gets a copy of it (a scalar register of the pool, set before the
loop) that advances instead; a base with one stride that nothing reads advances itself,
once per kernel pass. A vector load or store books its port for its bank-conflict
degree, from its lane stride (``vld.s [...], 128``: all lanes in one bank, 128
cycles). Loads and stores keep the order of the body's sequential loop wherever their
bytes may meet: for a store and another access, the scheduler solves for the iteration
distances d (within the trip count) at which they touch a common byte (a ``vld.s`` or
``vst.s`` counts its whole span, first lane to last) and makes the later one wait d
iterations later: a load the store's latency, a store one cycle. It solves this for two
operands on one base register, or on two whose values when the loop starts are known
(set by ``sli`` of one value in the ``before:`` lines, or never written there: 0);
known bases with different strides whose bytes over the whole trip meet are ordered at
every distance. A store and another access through different base registers, one of
them of unknown value, are ordered at every distance (they may meet anywhere). An access
through a base of known value that is not word-aligned or leaves VMEM in some iteration
is refused, naming its line. Loads through a base
of unknown value are the body's to keep inside VMEM: outside it, the program stops where
the body run iteration after iteration would (``rslab sim`` names the op).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from rslab.machine.asm import AssemblyError, assemble, parse_op
from rslab.machine.config import MachineConfig
from rslab.machine.decode import reg_reads, reg_write
from rslab.machine.isa import BRANCH_OPS, DIRECTIVES, SPECS, did_you_mean
from rslab.schedule.body import Addr, Op, Use, build_graph
from rslab.schedule.memory import Memory
from rslab.schedule.model import SlotModel

_NAME = r"@?[A-Za-z_][\w.]*"
_OP = re.compile(rf"^(?:({_NAME})\s*=\s*)?([a-z][\w.]*)\b\s*(.*)$")
_MEM = re.compile(r"^\[\s*(s\d+)\s*(?:([+-])\s*(\d+))?\s*(?:\+\s*(\d+)\s*\*\s*i)?\s*\]$")
_USE = re.compile(rf"^({_NAME})\[-(\d+)\]$")
_REG_RANGE = re.compile(r"^([vs])(\d+)-([vs])(\d+)$")
_REG = re.compile(r"^[vs]\d+$")
_MENTION = re.compile(r"\b([vs]\d+)\b")
DEFAULT_POOL = tuple(f"v{i}" for i in range(48)) + tuple(f"s{i}" for i in range(16, 32))
MAX_DISTANCE = 8
"""The furthest a body may read back: ``NAME[-8]``."""
MAX_ITERATIONS = 10**9
"""The largest trip count ``rslab pipeline`` emits (the ``iterations`` line or ``--iterations``)."""
MAX_OPS = 256
"""The most ops a body holds (the scheduler answers in seconds)."""
MAX_BYTES = 2**20
"""The longest body file, in characters (1 MiB)."""


class BodyError(ValueError):
    """A malformed loop body: ``line`` (1-based) and ``text`` name the offending line."""

    def __init__(self, line: int, text: str, message: str):
        self.line, self.text, self.message = line, text, message
        super().__init__(f"line {line}: {message}: {text.strip()!r}")


@dataclass
class LoopBody:
    """A parsed loop-body file: the ops (``rslab.schedule.Op``), the line of each op, the
    carried registers, the register pool, the default trip count and the code around."""

    ops: list
    lines: list
    carried: dict
    pool: tuple = DEFAULT_POOL
    iterations: int | None = None
    before: list = field(default_factory=list)
    after: list = field(default_factory=list)
    carried_lines: dict = field(default_factory=dict)  # carried value -> (line, text)
    pool_line: tuple | None = None  # (line, text) of the registers directive
    kinds: dict = field(default_factory=dict)  # value -> "v" or "s"
    before_lines: list = field(default_factory=list)  # (line, text) of each before: bundle
    after_lines: list = field(default_factory=list)  # (line, text) of each after: bundle
    history: dict = field(default_factory=dict)  # carried value -> registers of -1, -2, ...
    texts: list = field(default_factory=list)  # the source text of each op's line

    def distances(self) -> dict:
        """carried value -> the furthest back the body reads it (1 for ``NAME[-1]``)."""
        out = {}
        for op in self.ops:
            for s in op.srcs:
                if isinstance(s, Use):
                    out[s.name] = max(out.get(s.name, 0), s.distance)
        return out

    def line_of(self, label: str) -> int:
        """The source line of the op labelled ``label``."""
        return self.lines[[op.label for op in self.ops].index(label)]

    def registers_read(self) -> set:
        """The registers the ops read as values (not as a memory operand's base) and those
        the after: lines read."""
        out = {s for op in self.ops for s in op.register_srcs()
               if isinstance(s, str) and _REG.match(s)}
        for code in self.after:
            out |= {f"{kind}{index}" for op in _around(code) for kind, index in reg_reads(op)}
        return out

    def memory(self, iterations: int, machine: MachineConfig) -> Memory:
        """What the scheduler knows of the loop's memory: the trip count, the vector's bytes,
        and each base register's value when the loop starts where the before: lines make it
        known: written there only by ``sli`` of one value, or not at all (0, the value every
        register starts with)."""
        values = {}  # scalar register -> the values the before: lines give it (None: not sli)
        for code in self.before:
            for op in _around(code):
                reg = reg_write(op)
                if reg is not None and reg[0] == "s":
                    values.setdefault(f"s{reg[1]}", set()).add(
                        op.operands[1][1] if op.name == "sli" else None)
        known = {}
        for base in {op.addr.base for op in self.ops if op.addr is not None}:
            given = values.get(base, {0})
            if len(given) == 1 and None not in given:
                known[base] = given.pop()
        return Memory(iterations, machine.vector_bytes, machine.vmem_bytes, known)


def _split_operands(text: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += (ch == "[") - (ch == "]")
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def _memory(token: str) -> Addr:
    m = _MEM.match(token)
    if not m:
        raise ValueError(f"memory operand {token!r} must read [sN + OFFSET + STRIDE*i]")
    offset = int(m.group(3) or 0) * (-1 if m.group(2) == "-" else 1)
    stride = int(m.group(4) or 0)
    for name, value in (("offset", offset), ("stride", stride)):
        if not -(2**31) <= value < 2**31:
            raise ValueError(f"memory operand {token!r}: the {name} must fit in 32 bits")
    return Addr(m.group(1), offset, stride)


def _source(token: str, defined: dict, index: int, all_values: set):
    m = _USE.match(token)
    if m:
        if m.group(1) not in all_values:
            raise ValueError(f"{m.group(1)}[-{m.group(2)}] names no value of the body")
        if not 1 <= int(m.group(2)) <= MAX_DISTANCE:
            raise ValueError(f"{token}: the distance must be 1 … {MAX_DISTANCE}")
        return Use(m.group(1), int(m.group(2)))
    if token in all_values and defined.get(token, index) >= index:
        raise ValueError(f"{token} is read before it is defined: mark the previous "
                         f"iteration's value as {token}[-1]")
    return token


def _spec(opcode: str):
    spec = SPECS.get(opcode)
    if spec is None:
        raise ValueError(f"unknown opcode {opcode!r}" + did_you_mean(opcode))
    if spec.slot is None or spec.lat is None or opcode in BRANCH_OPS:
        raise ValueError(f"{opcode} cannot be in a loop body (no result a later op waits for)")
    return spec


def _op(text: str, defined: dict, index: int, all_values: set, line: int) -> Op:
    m = _OP.match(text)
    if not m:
        raise ValueError("expected VALUE = OPCODE SOURCES or OPCODE SOURCES")
    dst, opcode, rest = m.group(1), m.group(2), m.group(3)
    if rest.startswith(":"):
        raise ValueError(f"{opcode}: is a label: a loop body has none (the loop is the body)")
    if dst is not None and _REG.match(dst):
        raise ValueError(f"{dst} names a register: give the value another name (a register "
                         "in a body is a live-in)")
    if opcode in DIRECTIVES:
        raise ValueError(f"{opcode} is an assembly directive: write it in a before: or "
                         "after: line")
    spec = _spec(opcode)
    writes = spec.sig[:1] in (("vd",), ("sd",))
    if writes and dst is None:
        raise ValueError(f"{opcode} writes a register: give its value a name, "
                         f"NAME = {opcode} ... (the pool supplies the register)")
    if dst is not None and not writes and spec.slot != "sfu":
        raise ValueError(f"{opcode} defines no value: drop '{dst} ='")
    srcs, addr = [], None
    for token in _split_operands(rest):
        if token.startswith("["):
            if addr is not None:
                raise ValueError("an op has at most one memory operand")
            addr = _memory(token)
        else:
            srcs.append(_source(token, defined, index, all_values))
    return Op(opcode, dst, tuple(srcs), addr, name="" if dst else f"{opcode}:{line}")


def _pool(arg: str) -> tuple:
    regs = []
    for part in arg.replace(",", " ").split():
        m = _REG_RANGE.match(part)
        if m and m.group(1) == m.group(3):
            lo, hi = int(m.group(2)), int(m.group(4))
            if lo > hi or hi > 1023:
                raise ValueError(f"registers: {part} is not a range of registers of the "
                                 "machine (at most 1024 of each kind)")
            regs += [f"{m.group(1)}{i}" for i in range(lo, hi + 1)]
        elif _REG.match(part):
            regs.append(part)
        else:
            raise ValueError(f"registers: expected vN, sN or vA-vB, got {part!r}")
    if not regs:
        raise ValueError("registers: needs at least one register")
    return tuple(dict.fromkeys(regs))


def _carried(arg: str) -> dict:
    """value -> its registers: the previous iteration's value, then the one before, ..."""
    out = {}
    for part in arg.split():
        name, sep, regs = part.partition("=")
        regs = tuple(regs.split(","))
        if not sep or not all(_REG.match(r) for r in regs) or len(set(regs)) < len(regs):
            raise ValueError(f"carried: expected VALUE=vN or VALUE=vN,vM,... (distinct "
                             f"registers), got {part!r}")
        out[name] = regs
    if not out:
        raise ValueError("carried: expected VALUE=vN ...")
    return out


def _directive(head: str, arg: str, body: LoopBody, where: tuple) -> None:
    if head == "iterations":
        if not arg.isdigit() or int(arg) > MAX_ITERATIONS:
            raise ValueError(f"iterations must be an integer in 0 … {MAX_ITERATIONS:,}, "
                             f"got {arg!r}")
        body.iterations = int(arg)
    elif head == "carried":
        pairs = _carried(arg)
        body.history.update(pairs)
        body.carried.update({v: regs[0] for v, regs in pairs.items()})
        body.carried_lines.update(dict.fromkeys(pairs, where))
    elif head == "registers":
        body.pool = _pool(arg)
        body.pool_line = where
    elif not arg:
        raise ValueError(f"{head}: needs a bundle of assembly")
    else:
        getattr(body, head).append(arg)
        getattr(body, f"{head}_lines").append(where)


_DIRECTIVE = re.compile(r"^(iterations|carried|registers)\b\s*(.*)$|^(before|after)\s*:\s*(.*)$")


def _lines(text: str):
    """(line number, raw line, code without comment) of the non-empty lines."""
    for n, raw in enumerate(text.splitlines(), start=1):
        code = raw.split("#", 1)[0].strip()
        if code:
            yield n, raw, code


def parse_body(text: str, model: SlotModel | None = None,
               machine: MachineConfig | None = None) -> LoopBody:
    """Parse a loop-body file (see the module docstring) and check it against the instruction
    table, the registers of ``machine`` (default: the default machine) and its dependence
    graph."""
    if not isinstance(text, str):
        raise ValueError(f"text must be a str, got {type(text).__name__}")
    if len(text) > MAX_BYTES:
        n = text.count("\n", 0, MAX_BYTES) + 1
        raise BodyError(n, text.splitlines()[n - 1][:80], f"the body is {len(text):,} "
                        f"characters long, at most {MAX_BYTES:,}: this line crosses the bound")
    machine = MachineConfig() if machine is None else machine
    body = LoopBody([], [], {})
    op_lines = _directives(text, body)
    _values(op_lines, body, text)
    _check(body, op_lines, model, machine.fifo_depth)
    for (n, raw, _), op in zip(op_lines, body.ops, strict=True):
        try:
            _check_operands(op, body.kinds, machine)
        except ValueError as exc:
            raise BodyError(n, raw, str(exc)) from None
    _check_around(body, machine)
    _check_registers(body, op_lines, machine, text)
    return body


def _directives(text: str, body: LoopBody) -> list:
    """Read the directive lines into ``body``; (line, raw line, code) of the op lines."""
    op_lines = []
    for n, raw, code in _lines(text):
        d = _DIRECTIVE.match(code)
        try:
            if d:
                _directive(d.group(1) or d.group(3), (d.group(2) or d.group(4) or "").strip(),
                           body, (n, raw))
            elif len(op_lines) == MAX_OPS:
                raise ValueError(f"a body holds at most {MAX_OPS} ops: this is one more")
            else:
                op_lines.append((n, raw, code))
        except ValueError as exc:
            raise BodyError(n, raw, str(exc)) from None
    return op_lines


def _values(op_lines: list, body: LoopBody, text: str) -> None:
    """Parse the op lines into ``body``'s ops, their lines and the kind of each value."""
    all_values = {m.group(1) for _, _, code in op_lines if (m := _OP.match(code)) and m.group(1)}
    defined = {}
    for index, (n, raw, code) in enumerate(op_lines):
        try:
            op = _op(code, defined, index, all_values, n)
            if op.dst in defined:
                raise ValueError(f"{op.dst} is defined on line {body.lines[defined[op.dst]]} "
                                 "already: a value is defined once")
        except ValueError as exc:
            raise BodyError(n, raw, str(exc)) from None
        if op.dst is not None:
            defined[op.dst] = index
        if op.dst is not None and not op.is_push:
            body.kinds[op.dst] = "s" if SPECS[op.opcode].sig[0] == "sd" else "v"
        body.ops.append(op)
        body.lines.append(n)
        body.texts.append(raw)
    if not body.ops:
        raise BodyError(1, text.splitlines()[0] if text.strip() else "", "the body has no op")


def _check_operands(op: Op, kinds: dict, machine: MachineConfig) -> None:
    """The op, with a register of its kind for every value, is an op of the instruction
    table (operand count and kinds, immediates, registers of the machine)."""
    spec = SPECS[op.opcode]
    names = {}
    for src in op.register_srcs():
        name = src.name if isinstance(src, Use) else src
        if name in kinds:
            names[name] = f"{kinds[name]}0"
    srcs = [names.get(s.name if isinstance(s, Use) else s, s) for s in op.register_srcs()]
    dst = None if op.dst is None or op.is_push else f"{kinds[op.dst]}0"
    imm = None if op.addr is None else op.addr.offset
    text = op.assembly(dst, srcs, imm)
    try:
        parse_op(text)
    except AssemblyError as exc:
        message = exc.message
        for name, placeholder in names.items():
            kind = "vector" if placeholder[0] == "v" else "scalar"
            message = message.replace(f"got {placeholder!r}", f"got {name} (a {kind} value)")
        if "takes" in message:
            message += f" ({op.opcode} {', '.join(spec.sig)})"
        raise ValueError(message) from None
    for token in srcs + ([op.addr.base] if op.addr else []):
        if isinstance(token, str) and _REG.match(token) and token not in names.values():
            _exists(token, machine)


def _exists(reg: str, machine: MachineConfig) -> None:
    count = machine.vregs if reg[0] == "v" else machine.sregs
    if int(reg[1:]) >= count:
        raise ValueError(f"{reg} is not a register of the machine ({reg[0]}0-{reg[0]}{count - 1})")


def _live_ins(body: LoopBody) -> dict:
    """register -> index of the first op reading it as a live-in (memory bases included)."""
    out = {}
    for i, op in enumerate(body.ops):
        tokens = [s for s in op.srcs if isinstance(s, str) and s not in body.kinds]
        tokens += [op.addr.base] if op.addr else []
        for token in tokens:
            if _REG.match(token):
                out.setdefault(token, i)
    return out


@functools.lru_cache(maxsize=4096)
def _around(code: str) -> tuple:
    """The ops of one before: or after: line: a bundle of the machine's assembly."""
    head = code.split(None, 1)[0].lower()
    if head in ("loop", "endloop"):
        raise ValueError(f"{head}: a before: or after: line holds a bundle of ops, not a "
                         "loop directive (the body is the loop)")
    try:
        program = assemble(code)
    except AssemblyError as exc:
        raise ValueError(exc.message) from None
    if program.labels:
        raise ValueError("no branch can reach a label here: drop it")
    return program.entries[0].ops if program.entries else ()


def _check_around(body: LoopBody, machine: MachineConfig) -> None:
    """The before: and after: lines are bundles of the machine's assembly, each within the
    machine's slots, on registers of the machine."""
    for head in ("before", "after"):
        for code, (n, raw) in zip(getattr(body, head), getattr(body, f"{head}_lines"),
                                  strict=True):
            try:
                ops = _around(code)
                for op in ops:
                    regs = reg_reads(op) + ([reg_write(op)] if reg_write(op) else [])
                    for kind, index in regs:
                        _exists(f"{kind}{index}", machine)
                _within_slots(ops, machine)
            except ValueError as exc:
                raise BodyError(n, raw, f"{head}: {exc}") from None


def _within_slots(ops, machine: MachineConfig) -> None:
    """The ops of one bundle fit the machine's slots (as the simulator counts them)."""
    used = {}
    for op in ops:
        slot = SPECS[op.name].slot
        if slot is None:
            continue
        used[slot] = used.get(slot, 0) + 1
        if used[slot] > machine.slots[slot]:
            raise ValueError(f"this bundle needs {used[slot]} {slot} slots, the machine has "
                             f"{machine.slots[slot]}: split it over two lines")


def _check_registers(body: LoopBody, op_lines, machine: MachineConfig, text: str) -> None:
    """Carried registers of the right kind and of the machine; a pool of machine registers
    holding no live-in, no carried register and nothing the after: lines read (the default
    pool leaves out every register the file names)."""
    live = _live_ins(body)
    for value, reg in ((v, r) for v, regs in body.history.items() for r in regs):
        n, raw = body.carried_lines[value]
        try:
            _exists(reg, machine)
        except ValueError as exc:
            raise BodyError(n, raw, f"carried {value}: {exc}") from None
        if reg[0] != body.kinds[value]:
            raise BodyError(n, raw, f"carried {value}={reg}: {value} is a "
                            f"{'vector' if body.kinds[value] == 'v' else 'scalar'} value")
        if reg in live:
            n2, raw2, _ = op_lines[live[reg]]
            raise BodyError(n2, raw2, f"{reg} holds the carried {value}: read {value}[-1] "
                            "(or its value of this iteration) instead")
    if body.pool_line is None:
        named = set(_MENTION.findall("\n".join(c for _, _, c in _lines(text))))
        body.pool = tuple(r for r in DEFAULT_POOL if r not in named)
        n, raw = 1, text.splitlines()[0]
    else:
        n, raw = body.pool_line
        for reg in body.pool:
            try:
                _exists(reg, machine)
            except ValueError as exc:
                raise BodyError(n, raw, f"registers: {exc}") from None
        carried = {reg: v for v, regs in body.history.items() for reg in regs}
        after = {r for code in body.after for r in _MENTION.findall(code)}
        for reg in body.pool:
            if reg in live:
                raise BodyError(n, raw, f"registers: {reg} is a live-in of the body (line "
                                f"{op_lines[live[reg]][0]}): leave it out of the pool")
            if reg in carried:
                raise BodyError(n, raw, f"registers: {reg} holds the carried "
                                f"{carried[reg]}: leave it out of the pool")
            if reg in after:
                raise BodyError(n, raw, f"registers: {reg} is read by an after: line: "
                                "leave it out of the pool")
    for kind, what in (("v", "vector"), ("s", "scalar")):
        if any(k == kind for v, k in body.kinds.items() if v not in body.carried) \
                and not any(r[0] == kind for r in body.pool):
            raise BodyError(n, raw, f"registers: the body has {what} values but the pool "
                            f"has no {what} register")


def _culprit(message: str, ops) -> int:
    """The op a graph error is about: ``body[i]``, else the first value it quotes."""
    m = re.search(r"body\[(\d+)\]", message)
    if m:
        return int(m.group(1))
    quoted = re.findall(r"'(@?[\w.]+)'", message)
    by_value = {op.dst: i for i, op in enumerate(ops) if op.dst}
    return next((by_value[q] for q in quoted if q in by_value), 0)


def _check(body: LoopBody, op_lines, model, fifo_depth: int) -> None:
    """The dependence graph builds, one iteration run op after op never pushes to a full SFU
    FIFO, and every loop-carried value has a carried register."""
    try:
        graph = build_graph(body.ops, model)
    except ValueError as exc:
        n, raw, _ = op_lines[_culprit(str(exc), body.ops)]
        raise BodyError(n, raw, re.sub(r"body(\[\d+\])?: ", "", str(exc))) from None
    waiting = 0
    for (n, raw, _), op in zip(op_lines, body.ops, strict=True):
        waiting += op.is_push - op.is_pop
        if waiting > fifo_depth:
            raise BodyError(n, raw, f"this push would be result {waiting} waiting in the SFU "
                            f"FIFO (depth {fifo_depth}): run op after op, the body deadlocks "
                            "the in-order core; pop earlier results first")
    carried = {graph.ops[e.src].dst: e.src for e in graph.edges
               if e.kind == "flow" and e.distance > 0}
    for value, src in carried.items():
        if value not in body.carried:
            n, raw, _ = op_lines[src]
            raise BodyError(n, raw, f"{value} is loop-carried: give it a register with "
                            f"'carried {value}=vN'")
    for value in sorted(set(body.carried) - set(carried)):
        n, raw = body.carried_lines[value]
        raise BodyError(n, raw, f"{value} is not a loop-carried value of the body")
    for value, d in body.distances().items():
        if d > len(body.history[value]):
            n, raw = body.carried_lines[value]
            regs = list(body.history[value]) + ["vN"] * (d - len(body.history[value]))
            raise BodyError(n, raw, f"{value} is read {d} iterations back: give it {d} "
                            f"registers, its values of iterations -1 … -{d}: carried "
                            f"{value}={','.join(regs)}")
