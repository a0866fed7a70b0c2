"""An llvm-mca-style text timeline of a traced run: one row per op, one column per cycle.

In a row, the cycles a bundle stalled before it issued carry the stall cause's
letter (``MARKS``), ``I`` is the issue cycle, ``=`` the cycles in flight and ``R``
the cycle the result is ready (usable by a reader); ``.`` is any other cycle. When the
program says which loop-body op an op runs (``rslab pipeline``'s ``#@`` notes), a
column shows it: ``LABEL iN sK``, the body's op, its source iteration and stage.
"""

from __future__ import annotations

from rslab.machine.stalls import meaning

MARKS = {"raw": "r", "branch": "b", "bank-conflict": "k", "sfu-hold": "h", "fifo-full": "f",
         "sfu-wait": "w", "dma-wait": "d", "hbm": "m", "barrier": "x"}
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


def _ruler(start, end) -> tuple[str, str]:
    """The cycle labels and their ticks over the columns ``start`` … ``end`` − 1: every
    tenth cycle that has room after the label before it (one blank at least), and START
    too if it has room before the first."""
    tens = [c for c in range(start, end) if c % 10 == 0]
    placed, free = [], 0
    for c in tens:
        if c - start >= free:
            placed.append(c)
            free = c - start + len(str(c)) + 1
    if start % 10 and (not placed or len(str(start)) + 1 <= placed[0] - start):
        placed.insert(0, start)
    labels, ticks = [" "] * (end - start + 24), [" "] * (end - start)
    for c in placed:
        labels[c - start:c - start + len(str(c))] = str(c)
        ticks[c - start] = "|"
    return "".join(labels).rstrip(), "".join(ticks).rstrip()


def timeline(trace, start: int = 0, end: int | None = None, *,
             max_rows: int = DEFAULT_ROWS) -> str:
    """The ops whose stall, issue or flight overlaps cycles ``[start, end)`` (default: 40
    cycles), at most ``max_rows`` of them, as text with column headers, a ruler and a
    legend; every column as wide as its widest cell."""
    end = start + 40 if end is None else end
    if not 0 <= start < end:
        raise ValueError(f"timeline window: need 0 <= start < end, got {start}:{end}")
    bundles = trace.bundles
    program = trace.run.program
    shown = [op for op in trace.ops
             if op.issue - bundles[op.bundle].stall < end and max(op.ready, op.issue) >= start]
    total = len(shown)
    shown = shown[:max_rows]
    iters = ["[" + (",".join(str(i) for i in op.iters) or "-") + "]" for op in shown]
    lines_of = [str(program.entries[op.pc].line) for op in shown]
    named = any(op.source is not None for op in shown)
    notes = [source_text(op.source) if named else "" for op in shown]
    wi = max([len("iter"), *map(len, iters)])
    wl = max([len("line"), *map(len, lines_of)])
    width = max([len("body"), *map(len, notes)]) if named else 0
    body = f"{'body':<{width}}  " if width else ""
    count = f"the first {max_rows} of {total} ops" if total > max_rows else f"{total} ops"
    labels, ticks = _ruler(start, end)
    head = f"{'iter':>{wi}} {'line':>{wl}}  {body}{'op':<{TEXT_WIDTH}}  "
    lines = [f"Timeline, cycles {start}-{end - 1} ({count}; iter: iteration of each "
             "enclosing hardware loop)", "", (head + labels).rstrip(),
             (" " * len(head) + ticks).rstrip()]
    for op, it, line, note in zip(shown, iters, lines_of, notes, strict=True):
        rec = bundles[op.bundle]
        text = op.text if len(op.text) <= TEXT_WIDTH else op.text[:TEXT_WIDTH - 1] + "…"
        note = f"{note:<{width}}  " if width else ""
        lines.append(f"{it:>{wi}} {line:>{wl}}  {note}{text:<{TEXT_WIDTH}}  "
                     + _row(op, rec.stall, rec.cause, start, end))
    lines += ["", "I issue, = in flight, R result ready; stall cycles before issue:"]
    lines += [f"  {MARKS[c]}  {c}: {meaning(c)}" for c in trace.causes]
    return "\n".join(lines)
