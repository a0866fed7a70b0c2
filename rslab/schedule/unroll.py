"""A loop body unrolled k times: one iteration of the new body is k iterations of the old.

Copy c (0 … k−1) of each op does the work of source iteration k·j + c in iteration j of the
new body: its values are renamed ``NAME:c``, its memory operands read ``OFFSET + c·STRIDE``
with stride ``k·STRIDE``, and a read ``NAME[-d]`` in copy c reads copy c − d of the same
iteration, or copy c − d + D·k of D iterations back. A carried value's registers hold its
iterations −1, −2, … (:mod:`rslab.schedule.bodytext`); register j of them goes to the copy
of the last source iteration it holds, so after the new loop every register holds what it
holds after the old one. An integer II of the new body spread over k source iterations
removes the rounding of a bound like 2.5 cycles per iteration.
"""

from __future__ import annotations

from dataclasses import replace

from rslab.schedule.body import Addr, Op, Use


def copy_name(name: str, c: int) -> str:
    """The name of value (or label) ``name`` in copy ``c``."""
    return f"{name}:{c}"


def split_copy(label: str) -> tuple[str, int]:
    """(the body's label, the copy) of a label of the unrolled body (``copy_name``'s inverse)."""
    name, _, copy = label.rpartition(":")
    return name, int(copy)


def _read(src, c: int, k: int, values: set):
    """A source of copy ``c``: a value of an earlier copy, one iterations back, or a live-in."""
    name, d = (src.name, src.distance) if isinstance(src, Use) else (src, 0)
    if not isinstance(name, str) or name not in values:
        return src
    back, copy = divmod(c - d, k)
    return Use(copy_name(name, copy), -back) if back else copy_name(name, copy)


def _op(op: Op, c: int, k: int, values: set) -> Op:
    addr = op.addr if op.addr is None else Addr(op.addr.base,
                                                op.addr.offset + c * op.addr.stride,
                                                op.addr.stride * k)
    return Op(op.opcode, None if op.dst is None else copy_name(op.dst, c),
              tuple(_read(s, c, k, values) for s in op.srcs), addr,
              copy_name(op.name, c) if op.name else "")


def unroll_body(body, k: int):
    """``body`` (a :class:`~rslab.schedule.bodytext.LoopBody`) unrolled ``k`` times, its trip
    count ``body.iterations // k`` (the caller runs the remainder)."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"unroll must be a positive int, got {k!r}")
    values = {op.dst for op in body.ops if op.dst is not None}
    ops = [_op(op, c, k, values) for c in range(k) for op in body.ops]
    history, carried, lines = {}, {}, {}
    for value, registers in body.history.items():
        for j, register in enumerate(registers):  # iteration -(j + 1)
            back, copy = divmod(-(j + 1), k)
            name = copy_name(value, copy)
            history.setdefault(name, []).append(register)
            assert len(history[name]) == -back
            lines[name] = body.carried_lines.get(value)
    carried = {name: regs[0] for name, regs in history.items()}
    kinds = {copy_name(v, c): kind for v, kind in body.kinds.items() for c in range(k)}
    return replace(body, ops=ops, lines=body.lines * k, texts=body.texts * k, carried=carried,
                   history={v: tuple(r) for v, r in history.items()}, carried_lines=lines,
                   kinds=kinds, iterations=None)
