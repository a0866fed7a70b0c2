"""Grading a submission, or a folder of them: correct on every variant, then cycles on the ladder.

For each variant the grader builds the inputs, runs the book's kernel built for that
variant (its cycles set the ladder) and the starting kernel (its bundles set the step
limit) once, then the submission. The result holds one verdict line, the score and the
per-variant figures, and writes itself as Gradescope's ``results.json`` (``tests``: name,
score, max_score, output, visibility; the overall ``score``) and as a CSV row.
"""

from __future__ import annotations

import csv
import functools
import io
from dataclasses import dataclass, field

from rslab.labs.harness import STEP_FACTOR, STEP_SLACK, Verdict, run_program
from rslab.labs.ladder import Ladder
from rslab.labs.submission import Submission
from rslab.labs.variants import Variant

SUFFIXES = (".s", ".asm", ".txt")
"""The files of a folder that are graded."""


@dataclass(frozen=True)
class Baseline:
    """What a variant's ladder needs: the inputs, the book's and the starting kernel's
    cycles, the task's bound and what binds it, and the step limit."""

    case: object
    book: int
    start: int
    bound: int
    binding: str
    max_steps: int


@functools.lru_cache(maxsize=256)
def baseline(lab, variant: Variant) -> Baseline:
    """The variant's :class:`Baseline` (the book's and the starting kernel must be right)."""
    case = lab.case(variant)
    limit = 10**8
    start = run_program(lab, lab.starting_kernel(), "starting kernel", variant, case, limit)
    steps = STEP_FACTOR * start.bundles + STEP_SLACK
    book = run_program(lab, lab.book_kernel(variant, case), "book kernel", variant, case, steps)
    bound, binding = lab.bound(variant)
    return Baseline(case, book.cycles, start.cycles, bound, binding, steps)


@dataclass
class VariantScore:
    variant: Variant
    cycles: int
    base: Baseline
    points: float
    extra: float
    rung: str


@dataclass
class Result:
    """The grade of one file on one lab."""

    lab: str
    label: str
    ladder: Ladder
    variants: list
    verdict: str = ""
    kind: str = ""
    scores: list = field(default_factory=list)

    @property
    def correct(self) -> bool:
        return bool(self.scores) and len(self.scores) == len(self.variants)

    @property
    def cycle_points(self) -> float:
        return sum(s.points for s in self.scores) / len(self.variants) if self.correct else 0.0

    @property
    def extra_points(self) -> float:
        return sum(s.extra for s in self.scores) / len(self.variants) if self.correct else 0.0

    @property
    def score(self) -> float:
        if not self.correct:
            return 0.0
        return round(self.ladder.correct + self.cycle_points + self.extra_points, 2)

    def line(self) -> str:
        """One line: the file, the score and the verdict."""
        return (f"{self.label}: {self.score:g}/{self.ladder.max_points:g} ({self.lab}): "
                f"{self.verdict}")

    def table(self) -> str:
        """Per variant: cycles, the book's, the bound, the starting kernel's, the rung."""
        rows = [f"  {'variant':<12} {'cycles':>9} {'book':>9} {'bound':>9} {'start':>9}  rung"]
        for s in self.scores:
            b = s.base
            rows.append(f"  {s.variant.name:<12} {s.cycles:>9,} {b.book:>9,} {b.bound:>9,} "
                        f"{b.start:>9,}  {s.rung}: {s.points + s.extra:g} points")
        return "\n".join(rows)

    def gradescope(self) -> dict:
        """Gradescope's ``results.json``: a correctness test and one cycles test a variant."""
        n = len(self.variants)
        tests = [{"name": f"{self.lab}: correct outputs on every variant ({n})",
                  "score": self.ladder.correct if self.correct else 0.0,
                  "max_score": self.ladder.correct, "output": self.verdict,
                  "visibility": "visible"}]
        by_name = {s.variant.name: s for s in self.scores}
        for v in self.variants:
            s = by_name.get(v.name)
            output = ("no cycle points: the kernel is not correct on every variant" if s is None
                      else f"{s.cycles:,} cycles; the book's kernel {s.base.book:,}, the task's "
                           f"bound {s.base.bound:,} ({s.base.binding}); {s.rung}")
            if not v.public and s is not None:
                output = f"{s.cycles:,} cycles; {s.rung}"
            tests.append({"name": f"{self.lab}: cycles on {v.describe() if v.public else v.name}",
                          "score": round((s.points + s.extra) / n, 2) if s else 0.0,
                          "max_score": round(self.ladder.cycle_points / n, 2),
                          "output": output,
                          "visibility": "visible" if v.public else "after_published"})
        return {"score": self.score, "output": self.line(), "tests": tests}


def grade(lab, submission: Submission, variants, ladder: Ladder) -> Result:
    """Grade ``submission`` on ``variants``: the first failure is the verdict."""
    result = Result(lab.name, submission.label, ladder, list(variants), kind=submission.kind)
    bases = {}
    for v in variants:
        try:
            bases[v] = baseline(lab, v)
        except Verdict as wrong:  # the book's or the starting kernel: a fault of the package
            raise RuntimeError(f"{lab.name}: the book's or the starting kernel fails on "
                               f"{v.name}: {wrong}") from None
    try:
        for v in variants:
            base, program = bases[v], submission.program(v)
            run = run_program(lab, program, submission.label, v, base.case, base.max_steps)
            for probe in lab.probes(v, base.case):
                run_program(lab, program, submission.label, v, probe, base.max_steps)
            points, extra, rung = ladder.rung(run.cycles, base.book, base.bound)
            result.scores.append(VariantScore(v, run.cycles, base, points, extra, rung))
    except Verdict as verdict:
        result.scores = []
        result.verdict = str(verdict)
        return result
    worst = max(s.cycles / s.base.book for s in result.scores)
    n = len(variants)
    result.verdict = (f"correct on {n} variant{'s' if n > 1 else ''} ({result.kind}); cycles "
                      f"up to {worst:.2f} × the book's kernel")
    return result


def grade_path(lab, path, variants, ladder: Ladder) -> Result:
    """:func:`grade` of the file at ``path`` (a file that cannot be read is a verdict)."""
    try:
        submission = Submission.read(path)
    except Verdict as verdict:
        return Result(lab.name, str(path), ladder, list(variants), verdict=str(verdict))
    return grade(lab, submission, variants, ladder)


def folder_files(folder, suffixes=SUFFIXES) -> list:
    """The files of ``folder`` graded (those ending in ``suffixes``), sorted by name
    (subfolders: one level down)."""
    from pathlib import Path

    folder = Path(folder)
    files = [p for p in folder.iterdir() if p.is_file() and p.suffix in suffixes]
    files += [p for d in folder.iterdir() if d.is_dir() for p in d.iterdir()
              if p.is_file() and p.suffix in suffixes]
    return sorted(files)


def csv_text(results: list) -> str:
    """One row per file: file, lab, score, max_score, correct, verdict, cycles per variant."""
    out = io.StringIO()
    names = [v.name for v in results[0].variants] if results else []
    writer = csv.writer(out)
    writer.writerow(["file", "lab", "score", "max_score", "correct", "verdict"]
                    + [f"cycles {n}" for n in names])
    for r in results:
        cycles = {s.variant.name: s.cycles for s in r.scores}
        writer.writerow([r.label, r.lab, f"{r.score:g}", f"{r.ladder.max_points:g}",
                         int(r.correct), r.verdict] + [cycles.get(n, "") for n in names])
    return out.getvalue()
