"""The loop-body text format of ``rslab pipeline``: one iteration's ops, one per line.

::

    # the sum-exp loop of the pipelining chapter (two packed vectors per iteration)
    iterations 32                   # default trip count (--iterations overrides)
    carried acc0=v50                # loop-carried values and the registers that hold them
    registers v0-v47                # free registers for the other values (default v0-v47)
    before: sli s1, 0               # a bundle of assembly before the loop (repeatable)
    after:  vred.add s3, v50        # a bundle after the loop; halt is appended
    x0 = vld [s1 + 0 + 1024*i]      # VALUE = OPCODE SOURCES; memory [BASE + OFFSET + STRIDE*i]
    l0 = vunpack.lo x0
    z0 = vsub.f32 l0, v60           # names defined in the body are values; v60 is a live-in
    @e0 = vexp2 z0                  # an SFU push defines a FIFO token @NAME ...
    e0 = vpop @e0                   # ... which exactly one vpop takes, in the same iteration
    acc0 = vadd.f32 acc0[-1], e0    # NAME[-d]: the value from d iterations back
    vst e0, [s2 + 0 + 512*i]        # an op that defines no value

Rules: a value is defined once; a read of a value before its definition must be
marked ``[-1]`` (loop-carried), and a loop-carried value needs a ``carried``
register (its loop-carried state; the caller's ``before:`` lines initialise it).
Everything that is not a value (``v60``, ``s1``, ``0.5``) passes through as a
live-in. ``#`` starts a comment. Every error is a ``BodyError`` naming the line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rslab.schedule.body import Addr, Op, Use, build_graph
from rslab.schedule.model import SlotModel, slot_of

_NAME = r"@?[A-Za-z_][\w.]*"
_OP = re.compile(rf"^(?:({_NAME})\s*=\s*)?([a-z][\w.]*)\b\s*(.*)$")
_MEM = re.compile(r"^\[\s*(s\d+)\s*(?:([+-])\s*(\d+))?\s*(?:\+\s*(\d+)\s*\*\s*i)?\s*\]$")
_USE = re.compile(rf"^({_NAME})\[-(\d+)\]$")
_REG_RANGE = re.compile(r"^v(\d+)-v(\d+)$")
_REG = re.compile(r"^v\d+$")
DEFAULT_POOL = tuple(f"v{i}" for i in range(48))


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

    def line_of(self, label: str) -> int:
        """The source line of the op labelled ``label``."""
        return self.lines[[op.label for op in self.ops].index(label)]


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
    return Addr(m.group(1), offset, int(m.group(4) or 0))


def _source(token: str, defined: dict, index: int, all_values: set):
    m = _USE.match(token)
    if m:
        if m.group(1) not in all_values:
            raise ValueError(f"{m.group(1)}[-{m.group(2)}] names no value of the body")
        if int(m.group(2)) < 1:
            raise ValueError(f"{token}: the distance must be at least 1")
        return Use(m.group(1), int(m.group(2)))
    if token in all_values and defined.get(token, index) >= index:
        raise ValueError(f"{token} is read before it is defined: mark the previous "
                         f"iteration's value as {token}[-1]")
    return token


def _op(text: str, defined: dict, index: int, all_values: set) -> Op:
    m = _OP.match(text)
    if not m:
        raise ValueError("expected VALUE = OPCODE SOURCES or OPCODE SOURCES")
    dst, opcode, rest = m.group(1), m.group(2), m.group(3)
    slot_of(opcode)
    srcs, addr = [], None
    for token in _split_operands(rest):
        if token.startswith("["):
            if addr is not None:
                raise ValueError("an op has at most one memory operand")
            addr = _memory(token)
        else:
            srcs.append(_source(token, defined, index, all_values))
    return Op(opcode, dst, tuple(srcs), addr)


def _pool(arg: str) -> tuple:
    regs = []
    for part in arg.replace(",", " ").split():
        m = _REG_RANGE.match(part)
        if m:
            regs += [f"v{i}" for i in range(int(m.group(1)), int(m.group(2)) + 1)]
        elif _REG.match(part):
            regs.append(part)
        else:
            raise ValueError(f"registers: expected vN or vA-vB, got {part!r}")
    if not regs:
        raise ValueError("registers: needs at least one register")
    return tuple(regs)


def _carried(arg: str) -> dict:
    out = {}
    for part in arg.split():
        name, sep, reg = part.partition("=")
        if not sep or not _REG.match(reg):
            raise ValueError(f"carried: expected VALUE=vN, got {part!r}")
        out[name] = reg
    if not out:
        raise ValueError("carried: expected VALUE=vN ...")
    return out


def _directive(head: str, arg: str, body: LoopBody, where: tuple) -> None:
    if head == "iterations":
        if not arg.isdigit() or int(arg) < 1:
            raise ValueError(f"iterations must be a positive integer, got {arg!r}")
        body.iterations = int(arg)
    elif head == "carried":
        pairs = _carried(arg)
        body.carried.update(pairs)
        body.carried_lines.update(dict.fromkeys(pairs, where))
    elif head == "registers":
        body.pool = _pool(arg)
    elif not arg:
        raise ValueError(f"{head}: needs a bundle of assembly")
    else:
        getattr(body, head).append(arg)


_DIRECTIVE = re.compile(r"^(iterations|carried|registers)\s+(.*)$|^(before|after)\s*:\s*(.*)$")


def _lines(text: str):
    """(line number, raw line, code without comment) of the non-empty lines."""
    for n, raw in enumerate(text.splitlines(), start=1):
        code = raw.split("#", 1)[0].strip()
        if code:
            yield n, raw, code


def parse_body(text: str, model: SlotModel | None = None) -> LoopBody:
    """Parse a loop-body file (see the module docstring) and check its dependence graph."""
    if not isinstance(text, str):
        raise ValueError(f"text must be a str, got {type(text).__name__}")
    body = LoopBody([], [], {})
    op_lines = []
    for n, raw, code in _lines(text):
        d = _DIRECTIVE.match(code)
        try:
            if d:
                _directive(d.group(1) or d.group(3), (d.group(2) or d.group(4) or "").strip(),
                           body, (n, raw))
            else:
                op_lines.append((n, raw, code))
        except ValueError as exc:
            raise BodyError(n, raw, str(exc)) from None
    all_values = {m.group(1) for _, _, code in op_lines if (m := _OP.match(code)) and m.group(1)}
    defined = {}
    for index, (n, raw, code) in enumerate(op_lines):
        try:
            op = _op(code, defined, index, all_values)
        except ValueError as exc:
            raise BodyError(n, raw, str(exc)) from None
        if op.dst is not None:
            defined.setdefault(op.dst, index)
        body.ops.append(op)
        body.lines.append(n)
    if not body.ops:
        raise BodyError(1, text.splitlines()[0] if text.strip() else "", "the body has no op")
    _check(body, op_lines, model)
    return body


def _culprit(message: str, ops) -> int:
    """The op a graph error is about: ``body[i]``, else the first value it quotes."""
    m = re.search(r"body\[(\d+)\]", message)
    if m:
        return int(m.group(1))
    quoted = re.findall(r"'(@?[\w.]+)'", message)
    by_value = {op.dst: i for i, op in enumerate(ops) if op.dst}
    return next((by_value[q] for q in quoted if q in by_value), 0)


def _check(body: LoopBody, op_lines, model) -> None:
    """The dependence graph builds, and every loop-carried value has a carried register."""
    try:
        graph = build_graph(body.ops, model)
    except ValueError as exc:
        n, raw, _ = op_lines[_culprit(str(exc), body.ops)]
        raise BodyError(n, raw, re.sub(r"body(\[\d+\])?: ", "", str(exc))) from None
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
