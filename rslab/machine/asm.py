"""The assembler: text → ``Program``.

One bundle per line; ops in a bundle are separated by ``;``; ``#`` starts a
comment; ``name:`` at the start of a line defines a label (ops may follow it).
``loop N`` / ``loop sN`` and ``endloop`` delimit a zero-overhead hardware loop
and stand alone on their line, as does ``halt``. Errors raise ``AssemblyError``
carrying the line number and the offending text.

Two comments are read (``rslab pipeline`` writes them):

- a bundle's ``#@ NOTE ; NOTE ; …``, one note per op in order: ``LABEL iN sK`` (the op
  of the loop body labelled LABEL, for source iteration N in stage K; inside a hardware
  loop, N is that of the loop's first pass) or ``-`` (an op of no body line, such as a
  pointer increment); it becomes the bundle's :attr:`Entry.sources`, one per op;
- a ``loop`` line's ``# U source iteration(s) per pass``: each pass of the loop runs U
  iterations of the source loop (:attr:`Entry.per_pass`).
"""

import functools
import re
import struct
from dataclasses import dataclass

import numpy as np

from rslab.machine.collector import collector_paused
from rslab.machine.isa import BRANCH_OPS, SPECS, did_you_mean

_LABEL = re.compile(r"^\s*([A-Za-z_][\w.]*)\s*:(.*)$")
_REG = re.compile(r"^([vs])(\d+)$")
_MEM = re.compile(r"^\[\s*s(\d+)\s*(?:([+-])\s*([^\]]+?))?\s*\]$")
_NAME = re.compile(r"^[A-Za-z_][\w.]*$")
_NOTES = re.compile(r"^@\s*(?:-|\S+ i\d+ s\d+)(?:\s*;\s*(?:-|\S+ i\d+ s\d+))*\s*$")
_PER_PASS = re.compile(r"#.*?(\d+) source iterations? per pass")
MAX_REG_INDEX = 1023
IMM_RANGE = (-(2**31), 2**32)
"""Integer immediates are 32-bit words: signed or unsigned, ``-2^31 ≤ n < 2^32``."""


class AssemblyError(ValueError):
    """A malformed program: ``line`` (1-based) and ``text`` name the offending line."""

    def __init__(self, line: int, text: str, message: str):
        self.line, self.text, self.message = line, text, message
        super().__init__(f"line {line}: {message}: {text.strip()!r}")


@dataclass(frozen=True)
class Op:
    """One operation: mnemonic, parsed operands, source line and text.

    Operands are tagged tuples: ``("v", i)``, ``("s", i)``, ``("imm", int)``,
    ``("mem", sreg, offset)``, ``("label", name, target_pc)``, or ``None`` for an
    omitted optional operand.
    """

    name: str
    operands: tuple
    line: int
    text: str


@dataclass(frozen=True)
class Entry:
    """One program entry: a ``bundle`` of ops, or a ``loop``/``endloop``/``halt`` directive.

    ``ops`` holds the bundle's ops (empty for ``nop``); for ``loop``, ``count`` is
    ``("imm", n)`` or ``("s", i)``, ``end`` the pc of its ``endloop`` and ``per_pass`` the
    source iterations one pass runs; for ``endloop``, ``start`` is the pc of its ``loop``.
    A bundle's ``note`` is its line's ``#@`` note (checked; ``""``: none), read as
    :attr:`sources`.
    """

    kind: str
    ops: tuple = ()
    line: int = 0
    text: str = ""
    count: tuple | None = None
    start: int = -1
    end: int = -1
    per_pass: int = 1
    note: str = ""

    @functools.cached_property
    def sources(self) -> tuple:
        """Per op, the loop-body op it runs, (label, source iteration, stage), or None."""
        if not self.note:
            return (None,) * len(self.ops)
        out = []
        for note in self.note.split(";"):
            parts = note.split()
            out.append(None if parts == ["-"] else
                       (parts[0], int(parts[1][1:]), int(parts[2][1:])))
        return tuple(out)


@dataclass(frozen=True)
class Program:
    """An assembled program: ``entries`` indexed by pc, ``labels`` name → pc, ``source`` text."""

    entries: tuple
    labels: dict
    source: str

    def __len__(self):
        return len(self.entries)

    @property
    def n_bundles(self) -> int:
        """Number of bundle entries (directives excluded)."""
        return sum(e.kind in ("bundle", "halt") for e in self.entries)

    @functools.cached_property
    def bundle_classes(self) -> tuple[np.ndarray, tuple, tuple]:
        """Bundles with the same text behave alike: per pc, the index of its bundle's text
        among the distinct texts (−1: a directive; a read-only int64 array), the pc where each
        text first appears, and the pcs of the directives."""
        index, firsts, directives, seen = [], [], [], {}
        for pc, e in enumerate(self.entries):
            if e.kind != "bundle":
                index.append(-1)
                directives.append(pc)
                continue
            i = seen.get(e.text)
            if i is None:
                i = seen[e.text] = len(firsts)
                firsts.append(pc)
            index.append(i)
        index = np.array(index, np.int64)
        index.setflags(write=False)
        return index, tuple(firsts), tuple(directives)

    def loops(self) -> list[int]:
        """pcs of the ``loop`` directives, in source order."""
        return [pc for pc, e in enumerate(self.entries) if e.kind == "loop"]

    def listing(self) -> str:
        """The program re-printed one entry per line with its pc."""
        lines = []
        names = {}
        for name, pc in self.labels.items():
            names.setdefault(pc, []).append(name)
        for pc, e in enumerate(self.entries):
            for name in names.get(pc, []):
                lines.append(f"{name}:")
            body = " ; ".join(op.text for op in e.ops) if e.kind == "bundle" else e.text
            lines.append(f"{pc:4d}  {body or 'nop'}")
        return "\n".join(lines)


def parse_number(token: str) -> int:
    """An immediate as a 32-bit word: integers (decimal, 0x hex, negative → two's complement)
    or floats (``1.5``, ``-inf``, ``nan``, ``1e-3``) as their float32 bit pattern."""
    t = token.strip().replace("_", "")
    low = t.lower()
    is_hex = low.lstrip("+-").startswith("0x")
    if not is_hex and any(c in low for c in ".en") or low.lstrip("+-") in ("inf", "nan"):
        value = float(t)
        with np.errstate(over="ignore"):
            rounded = np.float32(value)
        if np.isinf(rounded) and low.lstrip("+-") not in ("inf", "infinity"):
            raise ValueError(f"{token!r} is beyond the float32 range (±3.4028235e38); "
                             "write inf for an infinity")
        return struct.unpack("<I", struct.pack("<f", rounded))[0]
    return _parse_int(t) & 0xFFFFFFFF


def f32_bits(x) -> str:
    """The float32 bit pattern of ``x`` as an assembler immediate (``parse_number``'s inverse)."""
    return hex(int(np.float32(x).view(np.uint32)))


def constant_word(value) -> str:
    """The immediate of a constant: a float32's bit pattern, or an unsigned integer as is."""
    return f32_bits(value) if isinstance(value, np.floating) else str(int(value))


def _parse_int(token: str, low: int = IMM_RANGE[0]) -> int:
    """An integer immediate (decimal or 0x hex) in ``[low, 2^32)``."""
    t = token.strip().replace("_", "")
    value = int(t, 0)
    if not low <= value < IMM_RANGE[1]:
        raise ValueError(f"{token!r} does not fit in 32 bits" if low < 0 else
                         f"{token!r} must be an integer in [{low}, 2**32)")
    return value


def _split_operands(text: str) -> list[str]:
    return [p.strip() for p in text.split(",")] if text.strip() else []


def _operand(kind: str, token: str):
    if kind in ("vd", "va", "sd", "sa"):
        m = _REG.match(token)
        if not m or m.group(1) != kind[0]:
            what = "vector" if kind[0] == "v" else "scalar"
            raise ValueError(f"expected a {what} register, got {token!r}")
        index = int(m.group(2))
        if index > MAX_REG_INDEX:
            raise ValueError(f"register index too large: {token!r}")
        return (kind[0], index)
    if kind in ("sai", "vai"):
        m = _REG.match(token)
        if m:
            if m.group(1) != kind[0]:
                raise ValueError(f"expected a {kind[0]} register or an immediate, got {token!r}")
            return (kind[0], int(m.group(2)))
        return ("imm", _parse_int(token, 0 if kind == "vai" else IMM_RANGE[0]))
    if kind == "imm":
        return ("imm", _parse_int(token))
    if kind == "num":
        return ("imm", parse_number(token))
    if kind == "mem":
        m = _MEM.match(token)
        if not m:
            raise ValueError(f"expected a memory operand [sA + imm], got {token!r}")
        offset = _parse_int(m.group(3)) if m.group(3) else 0
        if m.group(2) == "-":
            offset = -offset
        return ("mem", int(m.group(1)), offset)
    if kind == "label":
        if not _NAME.match(token):
            raise ValueError(f"expected a label, got {token!r}")
        return ("label", token, -1)
    raise AssertionError(kind)


def parse_op(text: str, line: int = 0) -> Op:
    """Parse one op (no ``;``)."""
    text = text.strip()
    head, *rest = text.split(None, 1)
    rest = rest[0] if rest else ""
    name = head.lower()
    spec = SPECS.get(name)
    if spec is None:
        raise AssemblyError(line, text, f"unknown mnemonic {head!r}" + did_you_mean(head))
    tokens = _split_operands(rest)
    need = [k for k in spec.sig if not k.endswith("?")]
    if not len(need) <= len(tokens) <= len(spec.sig):
        raise AssemblyError(line, text, f"{name} takes {len(need)} operand(s)"
                            + (f" (up to {len(spec.sig)})" if len(spec.sig) > len(need) else "")
                            + f", got {len(tokens)}")
    operands = []
    for kind, token in zip(spec.sig, tokens + [None] * (len(spec.sig) - len(tokens)),
                           strict=True):
        if token is None:
            operands.append(None)
            continue
        try:
            operands.append(_operand(kind.rstrip("?"), token))
        except ValueError as exc:
            raise AssemblyError(line, text, f"{name}: {exc}") from None
    return Op(name, tuple(operands), line, text)


def _parse_cached(text: str, line: int, parsed: dict) -> Op:
    """``parse_op`` once per distinct op text of a program (kernels repeat their loops)."""
    op = parsed.get(text)
    if op is None:
        op = parsed[text] = parse_op(text, line)
        return op
    return Op(op.name, op.operands, line, op.text)


def _note(comment: str, count: int, lineno: int, raw: str) -> str:
    """A bundle line's ``#@`` note (see the module docstring), checked: one per op."""
    if not comment.startswith("@"):
        return ""
    if not _NOTES.match(comment):
        raise AssemblyError(lineno, raw, "#@ notes: expected LABEL iN sK or - for each op, "
                            "separated by ';'")
    if comment.count(";") + 1 != count:
        raise AssemblyError(lineno, raw, f"the #@ note names {comment.count(';') + 1} op(s), "
                            f"the bundle has {count}: one note per op, '-' for an op of no "
                            "body line")
    return comment[1:]


def _check_bundle(ops, line, text):
    written = set()
    for op in ops:
        spec = SPECS[op.name]
        if spec.sig and spec.sig[0] in ("vd", "sd"):
            reg = op.operands[0]
            if reg in written:
                raise AssemblyError(line, text, f"two ops in one bundle write {reg[0]}{reg[1]}")
            written.add(reg)
    if sum(op.name in BRANCH_OPS for op in ops) > 1:
        raise AssemblyError(line, text, "at most one branch per bundle")
    for name in ("nop", "bar"):
        if any(op.name == name for op in ops) and len(ops) > 1:
            raise AssemblyError(line, text, f"{name} must be alone in its bundle")


def _directive(head, parts, lineno, raw, entries, stack):
    """Append the ``loop`` / ``endloop`` / ``halt`` directive of one line to ``entries``."""
    if len(parts) > 1:
        raise AssemblyError(lineno, raw, f"{head} must stand alone on its line")
    tokens = parts[0].split(None, 1)
    arg = tokens[1].strip() if len(tokens) > 1 else ""
    if head == "loop":
        try:
            count = _operand("sai", arg) if arg else None
        except ValueError as exc:
            raise AssemblyError(lineno, raw, f"loop: {exc}") from None
        if count is None or count[0] == "v" or (count[0] == "imm" and count[1] < 0):
            raise AssemblyError(lineno, raw, "loop needs a count: a non-negative "
                                "integer or a scalar register")
        stack.append(len(entries))
        m = _PER_PASS.search(raw)
        entries.append(Entry("loop", line=lineno, text=parts[0], count=count,
                             per_pass=int(m.group(1)) if m else 1))
    elif head == "endloop":
        if arg:
            raise AssemblyError(lineno, raw, "endloop takes no operand")
        if not stack:
            raise AssemblyError(lineno, raw, "endloop without a matching loop")
        start = stack.pop()
        if start == len(entries) - 1:
            raise AssemblyError(lineno, raw, "empty loop body")
        entries[start] = Entry("loop", line=entries[start].line, text=entries[start].text,
                               count=entries[start].count, end=len(entries),
                               per_pass=entries[start].per_pass)
        entries.append(Entry("endloop", line=lineno, text="endloop", start=start))
    else:
        if arg:
            raise AssemblyError(lineno, raw, "halt takes no operand")
        entries.append(Entry("halt", line=lineno, text="halt"))


def _strip_labels(body, lineno, raw, labels, label_lines, pc) -> str:
    """Define the labels at the start of a line (at ``pc``); return the rest of the line."""
    while True:
        m = _LABEL.match(body)
        if not m:
            return body
        name = m.group(1)
        if name in labels:
            raise AssemblyError(lineno, raw, f"label {name!r} already defined on line "
                                f"{label_lines[name]}")
        labels[name], label_lines[name] = pc, lineno
        body = m.group(2).strip()


@collector_paused()
def assemble(text: str) -> Program:
    """Assemble ``text`` into a ``Program`` (raises ``AssemblyError`` with the line number)."""
    if not isinstance(text, str):
        raise ValueError(f"text must be a str, got {type(text).__name__}")
    entries: list[Entry] = []
    labels: dict[str, int] = {}
    label_lines: dict[str, int] = {}
    stack: list[int] = []
    parsed: dict[str, Op] = {}
    for lineno, raw in enumerate(text.splitlines(), start=1):
        code, _, comment = raw.partition("#")
        body = _strip_labels(code.strip(), lineno, raw, labels, label_lines, len(entries))
        if not body:
            continue
        parts = [p.strip() for p in body.split(";")]
        if any(not p for p in parts):
            raise AssemblyError(lineno, raw, "empty op between ';'")
        head = parts[0].split(None, 1)[0].lower()
        if head in ("loop", "endloop", "halt"):
            _directive(head, parts, lineno, raw, entries, stack)
            continue
        ops = tuple(_parse_cached(p, lineno, parsed) for p in parts)
        note = _note(comment, len(parts), lineno, raw)
        if len(ops) > 1:
            _check_bundle(ops, lineno, raw)
        if ops[0].name == "nop":
            ops, note = (), ""
        entries.append(Entry("bundle", ops=ops, line=lineno, text=body, note=note))
    if stack:
        e = entries[stack[-1]]
        raise AssemblyError(e.line, e.text, "loop without a matching endloop")
    return Program(tuple(_resolve_labels(entries, labels)), labels, text)


def _enclosing_loops(entries) -> list[tuple]:
    """For each pc, the tuple of pcs of the loops whose body contains it."""
    out, stack = [], []
    for pc, e in enumerate(entries):
        if e.kind == "endloop":
            stack.pop()
        out.append(tuple(stack))
        if e.kind == "loop":
            stack.append(pc)
    return out


def _resolve_labels(entries, labels):
    nest = _enclosing_loops(entries)
    nest.append(())
    resolved = []
    for pc, e in enumerate(entries):
        if e.kind != "bundle" or not any(op.name in BRANCH_OPS for op in e.ops):
            resolved.append(e)
            continue
        ops = []
        for op in e.ops:
            if op.name in BRANCH_OPS:
                label = op.operands[-1][1]
                if label not in labels:
                    raise AssemblyError(op.line, op.text, f"undefined label {label!r}")
                target = labels[label]
                at_endloop = target < len(entries) and entries[target].kind == "endloop"
                to_own_endloop = at_endloop and nest[pc] and nest[pc][-1] == entries[target].start
                if (nest[target] != nest[pc] or at_endloop) and not to_own_endloop:
                    raise AssemblyError(op.line, op.text, f"branch to {label!r} crosses a "
                                        "hardware-loop boundary")
                op = Op(op.name, op.operands[:-1] + (("label", label, target),), op.line,
                        op.text)
            ops.append(op)
        resolved.append(Entry("bundle", ops=tuple(ops), line=e.line, text=e.text, note=e.note))
    return resolved
