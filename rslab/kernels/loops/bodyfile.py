"""A loop-body file (the format of ``rslab pipeline``, :mod:`rslab.schedule.bodytext`) made a
whole program: parsed and checked for a machine, modulo-scheduled, expanded, and placed
between its ``before:`` and ``after:`` lines.

:func:`compile_body` is what ``rslab pipeline`` runs and what ``rslab grade`` runs on a
submitted loop body; every error is one ``ValueError`` ``LABEL:LINE: message``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rslab.kernels.loops.emit import strided_bases
from rslab.machine.config import MachineConfig


@dataclass
class CompiledBody:
    """A parsed body, its bounds, the heuristic and the emitted schedules, the exact answers
    tried, the expansion (None for 0 iterations), the trip count and the whole program."""

    body: object
    bounds: object
    heuristic: object
    chosen: object
    tried: list
    expansion: object | None
    iterations: int
    program: str


def _schedule(graph, exact: bool, max_stages: int, reserve: int):
    """(heuristic schedule, the schedule to emit, the exact answers tried)."""
    from rslab.schedule import modulo_schedule
    from rslab.schedule.exact import smallest_exact

    heuristic = modulo_schedule(graph, reserve_scalar=reserve)
    if not exact:
        return heuristic, heuristic, []
    found, tried = smallest_exact(heuristic.graph, max_ii=heuristic.ii, max_stages=max_stages,
                                  reserve_scalar=reserve)
    return heuristic, (found.schedule if found is not None else heuristic), tried


def _located(body, label: str, message: str) -> str:
    """``label:LINE: message`` for a scheduling or expansion error: at the first op the
    message names as ``body[k]`` (every such name read as its line), else at the registers
    line for the pool, else at the first op."""
    named = re.findall(r"body\[(\d+)\]", message)
    if named:
        k = int(named[0])
        message = re.sub(r"body\[(\d+)\]", lambda m: f"line {body.lines[int(m.group(1))]}",
                         re.sub(r"^body\[\d+\]: ", "", message))
        return f"{label}:{body.lines[k]}: {message}: {body.texts[k].strip()!r}"
    if message.startswith("registers") and body.pool_line is not None:
        line, raw = body.pool_line
        return f"{label}:{line}: {message}: {raw.strip()!r}"
    return f"{label}:{body.lines[0]}: {message}"


def _loop_code(body, model, config, exact, max_stages, n):
    """(bounds, heuristic, chosen schedule, exact answers, expansion or None for 0 trips)."""
    from rslab.schedule import analyse, build_graph, expand
    from rslab.schedule.memory import check_addresses

    reserve = len(strided_bases(body.ops))
    far = {v for v, d in body.distances().items() if d > 1}  # renamed: modulo expansion
    memory = body.memory(n, config)
    check_addresses(body.ops, memory)
    graph = build_graph(body.ops, model, rotating=far, memory=memory)
    bounds = analyse(graph, reserve_scalar=reserve)
    heuristic, chosen, tried = _schedule(graph, exact, max_stages, reserve)
    exp = expand(chosen, n, registers=list(body.pool), carried_registers=body.carried,
                 history={v: body.history[v][1:] for v in far}) if n else None
    return bounds, heuristic, chosen, tried, exp


def parse(text: str, label: str, config: MachineConfig):
    """The checked :class:`~rslab.schedule.bodytext.LoopBody` of ``text`` (errors as
    ``label:LINE: message: 'line'``)."""
    from rslab.schedule import SlotModel
    from rslab.schedule.bodytext import BodyError, parse_body

    try:
        return parse_body(text, SlotModel.from_config(config), config)
    except BodyError as exc:
        raise ValueError(f"{label}:{exc.line}: {exc.message}: {exc.text.strip()!r}") from None


def compile_body(text: str, label: str = "<stdin>", config: MachineConfig | None = None,
                 iterations: int | None = None, exact: bool = False, max_stages: int = 8,
                 body=None) -> CompiledBody:
    """The body ``text`` (file ``label``) scheduled for ``config`` and emitted for
    ``iterations`` trips (default: the file's, else 16); ``body``: the already parsed body."""
    from rslab.schedule import SlotModel

    config = config or MachineConfig()
    body = body if body is not None else parse(text, label, config)
    n = iterations if iterations is not None else body.iterations
    n = 16 if n is None else n
    try:
        bounds, heuristic, chosen, tried, exp = _loop_code(body, SlotModel.from_config(config),
                                                           config, exact, max_stages, n)
    except ValueError as exc:
        raise ValueError(_located(body, label, str(exc))) from None
    program = "\n".join(body.before) + ("\n" if body.before else "") \
        + (exp.text if exp else "") \
        + "\n".join(body.after + ["halt"]) + "\n"
    return CompiledBody(body, bounds, heuristic, chosen, tried, exp, n, program)
