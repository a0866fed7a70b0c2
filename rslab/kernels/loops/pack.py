"""Straight-line assembly packed into bundles, in program order.

:func:`pack_lines` merges each op into the bundle before it when the machine allows
and the meaning cannot change: a free slot of its class, no operand written in that
bundle (a bundle reads its registers before it writes them), no register it writes
read or written there, at most one memory access per bundle (so loads and stores stay
in order; the exchange's accesses count), and never across a label, a branch, a DMA, a
barrier, an SFU push or pop, or a line that is already a bundle. Nothing is reordered:
interleave independent chains first.
"""

from __future__ import annotations

from rslab.machine.asm import parse_op
from rslab.machine.config import DEFAULT_SLOTS
from rslab.machine.isa import BRANCH_OPS, SPECS

MEMORY = frozenset(("vld", "vst", "vld.s", "vst.s", "sld", "sst", "xld", "xst", "sxst"))
ALONE = BRANCH_OPS | {"dma", "dmawait", "nop", "vpop", "halt", "bar"}


def _registers(op) -> tuple[set, set]:
    """(written, read) registers of a parsed op."""
    sig = SPECS[op.name].sig
    written, read = set(), set()
    for kind, operand in zip(sig, op.operands, strict=False):
        if operand is None:
            continue
        tag = operand[0]
        if tag in ("v", "s"):
            (written if kind in ("vd", "sd") else read).add(f"{tag}{operand[1]}")
        elif tag == "mem":
            read.add(f"s{operand[1]}")
    return written, read


def pack_lines(lines, slots=DEFAULT_SLOTS) -> list:
    """``lines`` (one op each, or labels / bundles kept as they are) as bundles."""
    out: list = []
    ops: list = []
    used: dict = {}
    written: set = set()
    touched: set = set()
    memory = False

    def flush():
        nonlocal ops, used, written, touched, memory
        if ops:
            out.append(" ; ".join(ops))
        ops, used, written, touched, memory = [], {}, set(), set(), False

    for line in lines:
        text = line.strip()
        if ":" in text or ";" in text or not text:
            flush()
            out.append(line)
            continue
        op = parse_op(text)
        spec = SPECS.get(op.name)
        if spec is None or op.name in ALONE or spec.slot == "sfu":
            flush()
            out.append(line)
            continue
        w, r = _registers(op)
        mem = op.name in MEMORY
        fits = (ops and used.get(spec.slot, 0) < slots[spec.slot] and not (r & written)
                and not (w & touched) and not (mem and memory))
        if not fits:
            flush()
        ops.append(text)
        used[spec.slot] = used.get(spec.slot, 0) + 1
        written |= w
        touched |= w | r
        memory = memory or mem
    flush()
    return out
