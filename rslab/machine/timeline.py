"""An llvm-mca-style text timeline of a traced run: one row per op, one column per cycle.

In a row, the cycles a bundle stalled before it issued carry the stall cause's
letter (``MARKS``), ``I`` is the issue cycle, ``=`` the cycles in flight and ``R``
the cycle the result is ready (usable by a reader); ``.`` is any other cycle. When the
program says which loop-body op an op runs (``rslab pipeline``'s ``#@`` notes), a
column shows it: ``LABEL iN sK``, the body's op, its source iteration and stage.
"""

from __future__ import annotations

from rslab.machine.stalls import CAUSES, meaning

MARKS = {"raw": "r", "branch": "b", "bank-conflict": "k", "sfu-hold": "h", "fifo-full": "f",
         "sfu-wait": "w", "dma-wait": "d"}
"""Stall cause → its letter in the timeline."""

TEXT_WIDTH = 34
DEFAULT_ROWS = 80


def source_text(source) -> str:
    """A loop-body op as the timeline and trace show it: ``LABEL iN sK``, or ``-``."""
    return "-" if source is None else f"{source[0]} i{source[1]} s{source[2]}"


def _row(op, stall, cause, start, end) -> str:
    cells = ["."] * (end - start)

    def mark(cycle, char):
        if start <= cycle < end:
            cells[cycle - start] = char

    for c in range(op.issue - stall, op.issue):
        mark(c, MARKS[cause])
    for c in range(op.issue + 1, op.ready):
        mark(c, "=")
    if op.ready > op.issue:
        mark(op.ready, "R")
    mark(op.issue, "I")
    return "".join(cells)


def _ruler(start, end, indent) -> list[str]:
    labels, ticks = [" "] * (end - start + 8), [" "] * (end - start)
    for c in range(start, end):
        if c % 10 == 0 or c == start:
            text = str(c)
            labels[c - start:c - start + len(text)] = text
            ticks[c - start] = "|"
    return [indent + "".join(labels).rstrip(), indent + "".join(ticks).rstrip()]


def timeline(trace, start: int = 0, end: int | None = None, *,
             max_rows: int = DEFAULT_ROWS) -> str:
    """The ops whose stall, issue or flight overlaps cycles ``[start, end)`` (default: 40
    cycles), at most ``max_rows`` of them, as text with a ruler and a legend."""
    end = start + 40 if end is None else end
    if not 0 <= start < end:
        raise ValueError(f"timeline window: need 0 <= start < end, got {start}:{end}")
    bundles = trace.bundles
    program = trace.run.program
    shown = [op for op in trace.ops
             if op.issue - bundles[op.bundle].stall < end and max(op.ready, op.issue) >= start]
    total = len(shown)
    shown = shown[:max_rows]
    notes = {id(op): source_text(op.source) for op in shown}
    width = max(map(len, notes.values()), default=0)
    body = f"{'body':<{width}}  " if width else ""
    head = f"{'iter':>8} {'line':>5}  {body}{'op':<{TEXT_WIDTH}}  "
    count = f"the first {max_rows} of {total} ops" if total > max_rows else f"{total} ops"
    lines = [f"Timeline, cycles {start}-{end - 1} ({count}; iter: iteration of each "
             "enclosing hardware loop)", ""]
    lines += _ruler(start, end, " " * len(head))
    for op in shown:
        rec = bundles[op.bundle]
        iters = ",".join(str(i) for i in op.iters) or "-"
        text = op.text if len(op.text) <= TEXT_WIDTH else op.text[:TEXT_WIDTH - 1] + "…"
        line = program.entries[op.pc].line
        note = f"{notes[id(op)]:<{width}}  " if width else ""
        lines.append(f"{'[' + iters + ']':>8} {line:>5}  {note}{text:<{TEXT_WIDTH}}  "
                     + _row(op, rec.stall, rec.cause, start, end))
    lines += ["", "I issue, = in flight, R result ready; stall cycles before issue:"]
    lines += [f"  {MARKS[c]}  {c}: {meaning(c)}" for c in CAUSES]
    return "\n".join(lines)
