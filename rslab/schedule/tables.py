"""A modulo schedule as text: the reservation table and the stage table (``rslab pipeline``)."""

from __future__ import annotations

from rslab.schedule.model import slot_of
from rslab.schedule.modulo import Schedule


def _cells(schedule: Schedule) -> dict:
    """(slot, row) → the labels an op books there, ``label (stage)`` at its issue row and
    ``label hold`` in the rows an SFU push keeps the unit busy."""
    g, ii = schedule.graph, schedule.ii
    cells = {}
    for k, t in enumerate(schedule.times):
        op = g.ops[k]
        for c in range(g.model.op_busy(op)):
            text = f"{op.label} ({t // ii})" if c == 0 else f"{op.label} hold"
            cells.setdefault((slot_of(op.opcode), (t + c) % ii), []).append(text)
    return cells


def mrt_text(schedule: Schedule, reserved: dict | None = None) -> str:
    """The modulo reservation table: one line per kernel row, one column per slot class; a
    cell lists the ops issued there with their stage. ``reserved`` maps (slot, row) to a
    note (the pointer increments)."""
    g, ii = schedule.graph, schedule.ii
    cells = _cells(schedule)
    for key, note in (reserved or {}).items():
        cells.setdefault(key, []).append(note)
    slots = [s for s in g.model.units if any(k[0] == s for k in cells)]
    width = {s: max([len(s)] + [len(", ".join(cells.get((s, r), []))) for r in range(ii)])
             for s in slots}
    head = "row | " + " | ".join(f"{s:<{width[s]}}" for s in slots)
    lines = [f"Modulo reservation table, II = {ii} (op (stage); a push holds the SFU: hold)",
             head, "-" * len(head)]
    for r in range(ii):
        lines.append(f"{r:>3} | " + " | ".join(
            f"{', '.join(cells.get((s, r), [])):<{width[s]}}" for s in slots))
    return "\n".join(lines)


def stage_text(schedule: Schedule, iterations: int | None = None) -> str:
    """Which stage each iteration is in, block by block (block b = cycles b·II … b·II+II−1),
    and the ops of each stage."""
    ii, sc = schedule.ii, schedule.stage_count
    n = sc + 2 if iterations is None else iterations
    lines = [f"Stage table, II = {ii}, {sc} stages (S: the stage iteration i is in)",
             f"{'block':>5} {'cycles':>11}  " + " ".join(f"{'i' + str(i):>4}" for i in range(n))]
    for b in range(n + sc - 1):
        row = [f"S{b - i}" if 0 <= b - i < sc else "." for i in range(n)]
        kernel = "  kernel" if sc - 1 <= b < n else ""
        lines.append(f"{b:>5} {f'{b * ii}-{b * ii + ii - 1}':>11}  "
                     + " ".join(f"{c:>4}" for c in row) + kernel)
    lines.append("")
    for s in range(sc):
        labels = [op.label for k, op in enumerate(schedule.graph.ops)
                  if schedule.times[k] // ii == s]
        lines.append(f"stage {s}: {' '.join(labels)}")
    return "\n".join(lines)
