"""Philox4x32-10 on the VALU (the Exact path's generator, :func:`rslab.numerics.rng.philox4x32`).

Each round: two ``mulhi``/``mullo`` pairs by the Philox multipliers and four xors
with the round keys, which the caller has stored as broadcast vectors in VMEM
(k0 of rounds 0..9, then k1) at ``regs['keys']``; ``regs['m0']``, ``regs['m1']`` hold
the multipliers.

:func:`philox_split` separates what a loop can hoist when only some counter
words vary (a sampler row varies c0 and keeps c1, c2, c3): an op whose inputs are
all invariant moves out of the loop, and a pair of xors ``(a ^ b) ^ k`` with two
invariant operands becomes one xor with their precomputed xor (xor is
associative, so the words are the same bits).
"""

from rslab.kernels.ops.rowmax import PACKED_BYTES
from rslab.schedule import Addr, Op

ROUNDS = 10


def philox_ops(counter, regs, tag: str = "") -> tuple[list, list]:
    """(ops, the four output words) of Philox4x32-10 on the counter words ``counter``."""
    ops = []
    x = list(counter)
    for r in range(ROUNDS):
        k0, k1 = f"pk0_{r}{tag}", f"pk1_{r}{tag}"
        ops += [Op("vld", k0, addr=Addr(regs["keys"], r * PACKED_BYTES, 0)),
                Op("vld", k1, addr=Addr(regs["keys"], (ROUNDS + r) * PACKED_BYTES, 0))]
        n = f"{r}{tag}"
        m0, m1 = regs["m0"], regs["m1"]
        ops += [Op("vmulhi.u32", f"ph0_{n}", (m0, x[0])), Op("vmullo.u32", f"pl0_{n}", (m0, x[0])),
                Op("vmulhi.u32", f"ph1_{n}", (m1, x[2])), Op("vmullo.u32", f"pl1_{n}", (m1, x[2])),
                Op("vxor", f"pa_{n}", (f"ph1_{n}", x[1])), Op("vxor", f"py0_{n}", (f"pa_{n}", k0)),
                Op("vxor", f"pb_{n}", (f"ph0_{n}", x[3])), Op("vxor", f"py2_{n}", (f"pb_{n}", k1))]
        x = [f"py0_{n}", f"pl1_{n}", f"py2_{n}", f"pl0_{n}"]
    return ops, x


def philox_split(counter, varying, regs) -> tuple[list, list, list, list]:
    """(hoisted ops, loop ops, output words, live-ins the hoisted ops define) of Philox on
    ``counter`` when only the words at indices ``varying`` change between iterations.

    Round-key loads stay in the loop where the loop reads them (a register each
    would not pay), and are repeated in the hoisted ops that read them.
    """
    ops, out = philox_ops(counter, regs)
    invariant = {w for i, w in enumerate(counter) if i not in varying}
    invariant |= {regs["m0"], regs["m1"]} | {op.dst for op in ops if op.opcode == "vld"}
    by_value = {op.dst: op for op in ops}
    hoisted, loop, fused = [], [], {}
    for op in ops:
        if op.opcode == "vld":
            continue
        if all(s in invariant for s in op.srcs):
            hoisted.append(op)
            invariant.add(op.dst)
            continue
        first = by_value.get(op.srcs[0]) if op.opcode == "vxor" else None
        if first is not None and first.dst in fused:
            a, b = fused.pop(first.dst)
            hoisted.append(Op("vxor", f"hx_{op.dst}", (b, op.srcs[1])))
            loop.append(Op("vxor", op.dst, (a, f"hx_{op.dst}")))
            continue
        inv = [s for s in op.srcs if s in invariant]
        if op.opcode == "vxor" and len(inv) == 1 and _feeds_only_xor(op, ops, invariant):
            fused[op.dst] = ([s for s in op.srcs if s not in invariant][0], inv[0])
            continue
        loop.append(op)
    if fused:
        raise AssertionError(f"philox_split: xors left unfused: {sorted(fused)}")
    live_ins = [op.dst for op in hoisted if op.dst in {s for o in loop for s in o.srcs}]
    loads = [op for op in ops if op.opcode == "vld"]
    return (_needed(loads + hoisted, live_ins), _needed(loads + loop, [o.dst for o in loop]),
            out, live_ins)


def _feeds_only_xor(op, ops, invariant) -> bool:
    """Whether ``op``'s value is read once, by a xor with an invariant other operand."""
    readers = [o for o in ops if op.dst in o.srcs]
    return (len(readers) == 1 and readers[0].opcode == "vxor"
            and readers[0].srcs[0] == op.dst and readers[0].srcs[1] in invariant)


def _needed(ops, wanted) -> list:
    """The ops of ``ops`` that ``wanted`` values depend on, loads first, then in order."""
    need = set(wanted)
    keep = []
    for op in reversed(ops):
        if op.dst in need:
            keep.append(op)
            need |= set(op.srcs)
    return keep[::-1]
