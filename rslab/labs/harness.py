"""One program run under a lab's contract, and the one-line verdict of every way it can fail.

:func:`run_program` assembles a program, runs it on a variant's machine with the contract's
live-in registers and VMEM image, its memory guard (:mod:`rslab.machine.guard`) and a step
limit, and checks its outputs; anything else than a right answer raises :class:`Verdict`,
whose message is one line: it does not assemble, it does not halt, it reads or writes
outside the contract, it stops with a machine error, or it is wrong on the variant.
"""

from __future__ import annotations

from rslab.labs.variants import Variant

STEP_FACTOR, STEP_SLACK = 20, 10_000
"""A run may take ``STEP_FACTOR`` times the starting kernel's bundles plus ``STEP_SLACK``
steps (bundles and loop directives) before it is stopped."""


class Verdict(Exception):
    """Why a submission earns no cycle points (one line)."""


def _where(label: str, exc) -> str:
    line = f":{exc.line}" if exc.line is not None else ""
    return f"{label}{line}: {exc.op!r}" if exc.op else f"{label}{line}"


def machine_verdict(exc, label: str, max_steps: int, variant: Variant) -> Verdict:
    """The verdict of a run the machine stopped (``MachineError``); on a hidden variant it
    names the variant and the line only (its regions and step limit would tell its V)."""
    where = _where(label, exc)
    if exc.message.startswith("step limit reached"):
        kind, detail = "does not halt", f"stopped after {max_steps:,} steps at {where}"
    elif "outside the contract's" in exc.message:
        kind = ("writes" if exc.message.startswith("store") else "reads") + " outside its contract"
        detail = f"{where}: {exc.message}"
    else:
        kind, detail = "stops with a machine error", f"{where}: {exc.message}"
    if not variant.public:
        return Verdict(f"{kind} on hidden variant {variant.name} (at {where})")
    return Verdict(f"{kind} on variant {variant.name} (V = {variant.vocab:,}): {detail}")


def run_program(lab, text: str, label: str, variant: Variant, case, max_steps: int):
    """Run ``text`` on ``variant`` under ``lab``'s contract; the ``Run``, or :class:`Verdict`."""
    from rslab.machine import AssemblyError, MachineError, assemble, simulate

    try:
        program = assemble(text)
    except AssemblyError as exc:
        raise Verdict(f"does not assemble: {label}:{exc.line}: {exc.message}: "
                      f"{exc.text.strip()!r}") from None
    try:
        run = simulate(program, variant.config, vmem=case.vmem, sregs=case.sregs,
                       max_steps=max_steps, guard=lab.guard(variant))
    except MachineError as exc:
        raise machine_verdict(exc, label, max_steps, variant) from None
    wrong = lab.check(run, case, variant)
    if wrong is not None:
        if not variant.public:  # a hidden variant's inputs, V and values stay hidden
            raise Verdict(f"wrong on hidden variant {variant.name}")
        raise Verdict(f"wrong on variant {variant.name} (V = {variant.vocab:,}): {wrong}")
    return run
