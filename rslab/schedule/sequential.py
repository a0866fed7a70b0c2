"""What a loop body means: its iterations one after another, op after op, no overlap.

This is the specification ``rslab pipeline`` is checked against (the differential test
``tests/test_pipeline_contract.py``). :func:`sequential_program` writes the loop as
straight-line assembly: the ``before:`` lines; then, for each iteration i, every op of
the body in program order, one op per bundle, each value in a register of its own, each
memory address an immediate (``OFFSET + i·STRIDE``); a read ``NAME[-d]`` reads the d-th
of the value's carried registers, and once the iteration's ops are done the carried
registers shift by one iteration (the value of this iteration into the first); then the
``after:`` lines and ``halt``. The machine's interlocks (an op waits for its operands, a
pop for its push) make what it stores independent of timing.
"""

from __future__ import annotations

import re

from rslab.machine.config import MachineConfig
from rslab.schedule.body import Use

_MENTION = re.compile(r"\b([vs]\d+)\b")


def _named(body) -> set:
    """Every register the body file names: live-ins, bases, carried, before and after."""
    text = [str(s) for op in body.ops for s in op.srcs if not isinstance(s, Use)]
    text += [op.addr.base for op in body.ops if op.addr is not None]
    text += [r for regs in body.history.values() for r in regs] + body.before + body.after
    return set(_MENTION.findall(" ".join(text)))


def _registers(body, machine: MachineConfig) -> dict:
    """value -> a register of its kind that the file names nowhere."""
    named = _named(body)
    free = {kind: iter([r for r in (f"{kind}{i}" for i in range(count)) if r not in named])
            for kind, count in (("v", machine.vregs), ("s", machine.sregs))}
    try:
        return {value: next(free[kind]) for value, kind in body.kinds.items()}
    except StopIteration:
        raise ValueError("sequential_program: too many values for the machine's "
                         "registers") from None


def sequential_program(body, iterations: int, machine: MachineConfig | None = None) -> str:
    """The assembly of ``body`` (a parsed :class:`~rslab.schedule.bodytext.LoopBody`) run for
    ``iterations`` iterations without overlap."""
    if isinstance(iterations, bool) or not isinstance(iterations, int) or iterations < 0:
        raise ValueError(f"iterations must be a non-negative int, got {iterations!r}")
    reg = _registers(body, MachineConfig() if machine is None else machine)
    lines = list(body.before)
    for i in range(iterations):
        for op in body.ops:
            srcs = [body.history[s.name][s.distance - 1] if isinstance(s, Use)
                    else reg.get(s, s) for s in op.register_srcs()]
            dst = None if op.dst is None or op.is_push else reg[op.dst]
            imm = None if op.addr is None else op.addr.offset + i * op.addr.stride
            lines.append(op.assembly(dst, srcs, imm))
        for value, regs in body.history.items():
            move = "vmov" if regs[0][0] == "v" else "smov"
            sources = [reg[value], *regs[:-1]]  # register k takes what k - 1 held
            lines += [f"{move} {r}, {src}" for r, src in zip(regs[::-1], sources[::-1],
                                                             strict=True)]
    return "\n".join(lines + body.after + ["halt"]) + "\n"
