"""A loop-body file (the format of ``rslab pipeline``, :mod:`rslab.schedule.bodytext`) made a
whole program: parsed and checked for a machine, then pipelined
(:func:`rslab.schedule.pipeliner.pipeline_body`: scheduled, expanded, and placed between its
``before:`` and ``after:`` lines).

:func:`compile_body` is what ``rslab pipeline`` runs and what ``rslab grade`` runs on a
submitted loop body; every error is one ``ValueError`` ``LABEL:LINE: message``.
"""

from __future__ import annotations

import re

from rslab.machine.config import MachineConfig


def located(body, label: str, message: str) -> str:
    """``label:LINE: message`` for a scheduling or expansion error: at the first op the
    message names as ``body[k]`` (every such name read as its line; of an unrolled body,
    the op it copies), else at the registers line for the pool, else at the first op the
    message names by its label, else at the first op."""
    n = len(body.ops)
    named = re.findall(r"body\[(\d+)\]", message)
    if named:
        k = int(named[0]) % n
        message = re.sub(r"body\[(\d+)\]", lambda m: f"line {body.lines[int(m.group(1)) % n]}",
                         re.sub(r"^body\[\d+\]: ", "", message))
        return f"{label}:{body.lines[k]}: {message}: {body.texts[k].strip()!r}"
    if message.startswith("registers") and body.pool_line is not None:
        line, raw = body.pool_line
        return f"{label}:{line}: {message}: {raw.strip()!r}"
    labels = {op.label: k for k, op in enumerate(body.ops)}
    k = next((labels[w] for w in re.findall(r"[@\w.:]+", message) if w in labels), 0)
    return f"{label}:{body.lines[k]}: {message}: {body.texts[k].strip()!r}"


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
                 body=None, ii: int | None = None, unroll: int = 1):
    """The body ``text`` (file ``label``) pipelined for ``config`` and ``iterations`` trips
    (default: the file's, else 16): a :class:`~rslab.schedule.pipeliner.Pipelined`, its
    ``program`` the whole program; ``body``: the already parsed body."""
    from rslab.schedule import SlotModel
    from rslab.schedule.pipeliner import pipeline_body

    config = config or MachineConfig()
    body = body if body is not None else parse(text, label, config)
    n = iterations if iterations is not None else body.iterations
    n = 16 if n is None else n
    try:
        return pipeline_body(body, SlotModel.from_config(config), config, n, exact=exact,
                             max_stages=max_stages, ii=ii, unroll=unroll)
    except ValueError as exc:
        raise ValueError(located(body, label, str(exc))) from None
