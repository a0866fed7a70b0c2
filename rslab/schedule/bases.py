"""The base registers of a loop's memory operands: which advance in place, which get a copy.

An operand ``[sB + OFFSET + STRIDE*i]`` addresses byte b + OFFSET + STRIDE·i in iteration i
(b: the value of sB when the loop starts). The emitted loop advances a base register once
per kernel pass, so every operand on one advancing register needs the same stride. A base
keeps advancing in place when all its operands have one non-zero stride and nothing reads
it as a value (an op of the body or an ``after:`` line: the body's meaning never moves it).
Otherwise each non-zero stride of the base gets a scalar register of its own, set to the
base's value before the loop (``smov``) and advanced instead of it; operands of stride 0
keep the base itself, which the loop then never changes.
"""

from __future__ import annotations

from dataclasses import replace


def base_copies(ops, read=(), pool=()) -> tuple[list, dict]:
    """(``ops`` with each operand on its base's copy, copy register -> base) for the bases that
    cannot advance in place (see the module docstring); ``read`` names the registers read as
    values, ``pool`` the scalar registers free for the copies, taken from its end."""
    strides = {}
    for op in ops:
        if op.addr is not None:
            strides.setdefault(op.addr.base, []).append(op.addr.stride)
    free = [r for r in pool if r[0] == "s"]
    copies, register = {}, {}
    for base, seen in sorted(strides.items()):
        moving = sorted(set(s for s in seen if s), key=seen.index)
        if not moving or (len(moving) == 1 and 0 not in seen and base not in read):
            continue
        for stride in moving:
            if not free:
                raise ValueError(f"registers: {base} is read with strides "
                                 f"{sorted(set(seen))} (or as a value): each non-zero one "
                                 "needs a scalar register of the pool for its copy, and the "
                                 "pool has none left")
            copy = free.pop()
            copies[copy], register[base, stride] = base, copy
    out = [op if op.addr is None or (op.addr.base, op.addr.stride) not in register
           else replace(op, addr=replace(op.addr, base=register[op.addr.base, op.addr.stride]))
           for op in ops]
    return out, copies
