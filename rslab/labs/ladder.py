"""The ladder: how a correct kernel's cycles become points, per variant.

Each rung is ``(factor, points)``: a kernel whose cycles are at most ``factor`` times the
book's kernel's on the same variant (built for that variant's V and machine) earns the
rung's points, and every rung it reaches adds up; ``beyond`` is ``(fraction, points)``:
extra points for at most ``book − fraction·(book − bound)`` cycles, where the bound is the
task's (the ops every correct kernel must issue, over the units that issue them; each
lab's contract states it). A kernel wrong on any variant earns no cycle points.
The default (all labs; the instructor's file may change it, ``[ladder]`` and
``[ladder.LAB]``): 40 points for correct outputs, then 10, 10, 10, 15, 15 for at most
4, 2, 1.5, 1.2 and 1.05 times the book's cycles, and 10 extra points halfway from the
book to the bound. The starting kernel, the first translation, stays below the first rung
on the public variants (on short rows or short latencies it can reach it, as the instructor
page says).
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT = {"correct": 40.0, "rungs": ((4.0, 10.0), (2.0, 10.0), (1.5, 10.0), (1.2, 15.0),
                                      (1.05, 15.0)),
           "beyond": (0.5, 10.0)}
KEYS = ("correct", "rungs", "beyond")


def _pair(value, what: str) -> tuple:
    if (not isinstance(value, (list, tuple)) or len(value) != 2
            or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in value)
            or value[0] <= 0 or value[1] < 0):
        raise ValueError(f"{what} must be [positive number, points ≥ 0], got {value!r}")
    return float(value[0]), float(value[1])


@dataclass(frozen=True)
class Ladder:
    """Points for correctness and the rungs of cycles (see the module docstring)."""

    correct: float = DEFAULT["correct"]
    rungs: tuple = DEFAULT["rungs"]
    beyond: tuple | None = DEFAULT["beyond"]

    @classmethod
    def from_settings(cls, data: dict, lab: str) -> Ladder:
        """The ladder of ``lab``: the default, the file's ``[ladder]``, its ``[ladder.LAB]``."""
        where = data.get("file", "the variants file")
        table = dict(data.get("ladder", {}))
        own = table.pop(lab, {})
        merged = {}
        for scope, values in (("ladder", table), (f"ladder.{lab}", own)):
            values = {k: v for k, v in values.items() if not isinstance(v, dict)}
            unknown = sorted(set(values) - set(KEYS))
            if unknown:
                raise ValueError(f"{where}: [{scope}]: unknown key(s) {unknown}; known: "
                                 f"{list(KEYS)}")
            merged |= values
        try:
            correct = float(merged.get("correct", DEFAULT["correct"]))
            rungs = tuple(_pair(r, "a rung") for r in merged.get("rungs", DEFAULT["rungs"]))
            beyond = merged.get("beyond", DEFAULT["beyond"])
            beyond = None if beyond in ([], None) else _pair(beyond, "beyond")
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{where}: [ladder]: {exc}") from None
        if correct < 0:
            raise ValueError(f"{where}: [ladder]: correct must be ≥ 0, got {correct}")
        return cls(correct, tuple(sorted(rungs, reverse=True)), beyond)

    @property
    def cycle_points(self) -> float:
        return sum(p for _, p in self.rungs)

    @property
    def max_points(self) -> float:
        """Correctness and every rung (the extra points of ``beyond`` come on top)."""
        return self.correct + self.cycle_points

    def rung(self, cycles: int, book: int, bound: int) -> tuple[float, float, str]:
        """(points, extra points, which rung) of ``cycles`` against the book's and the bound."""
        points = sum(p for f, p in self.rungs if cycles <= f * book)
        reached = [f for f, _ in self.rungs if cycles <= f * book]
        if reached:
            label = f"≤ {min(reached):g} × book"
        else:
            label = f"> {max(f for f, _ in self.rungs):g} × book" if self.rungs else "no rung"
        extra = 0.0
        if self.beyond is not None and bound < book:
            fraction, bonus = self.beyond
            if cycles <= book - fraction * (book - bound):
                extra, label = bonus, f"beyond the book ({fraction:g} of the way to the bound)"
        return points, extra, label

    def text(self) -> str:
        rungs = ", ".join(f"{p:g} points at ≤ {f:g} × the book's cycles" for f, p in self.rungs)
        beyond = ("" if self.beyond is None else
                  f"; {self.beyond[1]:g} extra points at ≤ book − {self.beyond[0]:g} × "
                  "(book − bound)")
        return (f"{self.correct:g} points for correct outputs on every variant; then, averaged "
                f"over the variants: {rungs} (they add up){beyond}. Total "
                f"{self.max_points:g}" + ("" if self.beyond is None else
                                          f", plus up to {self.beyond[1]:g} extra") + ".")
