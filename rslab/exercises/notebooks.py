"""The hidden tests: a student's notebook run with the instructor's variants, its checks counted.

:func:`grade_notebook` executes a notebook (``.ipynb``, or a MyST ``.md`` page read by
jupytext) in a fresh kernel with ``RSLAB_GRADING_VARIANTS`` naming the instructor's file
and ``RSLAB_CHECK_LOG`` a log every ``check()`` appends to; a cell that raises does not
stop the others. The exercises graded are those the notebook's code names in a
``check("ID", ...)`` call (and those the folder's other notebooks check or the instructor
lists); each earns its points when its first answer, re-checked here with the oracle, is
right, 0 when it was never answered. ``rslab grade exercises`` is its command.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from rslab.exercises import LOG_ENV, exercise, expected, matches, variant
from rslab.instructor import ENV as VARIANTS_ENV

CHECK_CALL = re.compile(r"""\bcheck\(\s*["']([A-Za-z0-9_-]+)["']""")
SUFFIXES = (".ipynb", ".md")
CELL_TIMEOUT = 1200
"""Seconds a cell may run (a chapter's heaviest cell at the reader's scale takes far less)."""


@dataclass
class NotebookResult:
    """Points per exercise of one notebook, and the errors its cells raised."""

    label: str
    points: dict = field(default_factory=dict)  # id -> (points, max points, note)
    errors: list = field(default_factory=list)
    failure: str = ""

    @property
    def score(self) -> float:
        return round(sum(p for p, _, _ in self.points.values()), 2)

    @property
    def max_score(self) -> float:
        return sum(m for _, m, _ in self.points.values())

    def line(self) -> str:
        what = self.failure or ", ".join(f"{i} {p:g}/{m:g}" for i, (p, m, _) in
                                         self.points.items()) or "no check() call"
        errors = f"; {len(self.errors)} cell(s) raised" if self.errors else ""
        return f"{self.label}: {self.score:g}/{self.max_score:g}: {what}{errors}"

    def gradescope(self) -> dict:
        tests = [{"name": i, "score": p, "max_score": m, "output": note,
                  "visibility": "visible"} for i, (p, m, note) in self.points.items()]
        return {"score": self.score, "output": self.line(), "tests": tests}


def read_notebook(path: Path):
    """The notebook at ``path`` (nbformat v4), a ``.md`` page through jupytext."""
    if path.suffix == ".md":
        import jupytext

        return jupytext.read(path)
    import nbformat

    return nbformat.read(path, as_version=4)


def checked_ids(nb) -> list[str]:
    """The exercise ids the notebook's code cells pass to ``check()``, in order."""
    ids = []
    for cell in nb.cells:
        if cell.cell_type == "code":
            ids += [i for i in CHECK_CALL.findall(cell.source) if i not in ids]
    return ids


def grade_notebook(path, variants: str | None, also=()) -> NotebookResult:
    """Run the notebook at ``path`` with the instructor's file ``variants`` (None: public
    variants) and score the exercises it checks (and those of ``also``)."""
    path = Path(path)
    result = NotebookResult(str(path))
    try:
        nb = read_notebook(path)
    except Exception as exc:  # any malformed file is the student's: one line, no traceback
        result.failure = f"cannot be read as a notebook: {type(exc).__name__}: {exc}"[:300]
        return result
    ids = [i for i in checked_ids(nb) if known(i)] + [exercise(i).id for i in also]
    with tempfile.TemporaryDirectory(prefix="rslab-grade-") as work:
        log = Path(work) / "checks.jsonl"
        env = dict(os.environ, **{LOG_ENV: str(log), "RSLAB_SCALE": os.environ.get(
            "RSLAB_SCALE", "quick")})
        env.pop(VARIANTS_ENV, None)
        if variants is not None:
            env[VARIANTS_ENV] = str(Path(variants).resolve())
        result.errors = _execute(nb, Path(work), env)
        entries = _log_entries(log)
    first = {}
    for e in entries:  # the first answer to each exercise counts (a template's None does not)
        if isinstance(e, dict) and isinstance(e.get("exercise"), str) \
                and e.get("answer") is not None:
            first.setdefault(e["exercise"], e)
    for i in dict.fromkeys(ids):
        most = exercise(i).points
        if i in first:
            right, hidden = rescore(i, first[i].get("answer"), variants)
            note = ("right" if right else "not right") + (
                " (the instructor's variant)" if hidden else "")
            result.points[i] = (most if right else 0.0, most, note)
        else:
            result.points[i] = (0.0, most, "never checked (the cell did not run)")
    return result


def _log_entries(log: Path) -> list:
    """The checks' log, line by line (a line that is not JSON, which only a notebook that
    writes the log itself leaves, is skipped)."""
    entries = []
    for line in log.read_text(errors="replace").splitlines() if log.exists() else ():
        try:
            entries.append(json.loads(line))
        except ValueError:
            continue
    return entries


def rescore(exercise_id: str, answer, variants: str | None) -> tuple[bool, bool]:
    """Whether the logged ``answer`` is right on the instructor's variant (the grader's own
    oracle, not the notebook's word), and whether that variant is a hidden one."""
    e, params = exercise(exercise_id), variant(exercise_id, variants)
    return matches(e, answer, expected(exercise_id, params)), dict(params) != e.params


def shared_answer(exercise_id: str, variants: str | None) -> str | None:
    """Which answer a student can read without computing (the public variant's or the book's
    prose's) is also the right one on the instructor's variant (the file's parameters, or
    the public ones); None when neither is."""
    e, params = exercise(exercise_id), dict(variant(exercise_id, variants))
    want = expected(exercise_id, params)
    shown = ("yes" if want else "no") if e.kind == "yes/no" else \
        f"{int(want):,}" if e.kind == "integer" else f"{float(want):.6g}"
    for name, known_params in (("the public variant's", e.params), ("the book's prose's", e.book)):
        if known_params is not None and matches(e, expected(exercise_id, known_params), want):
            return f"{name} ({shown})"
    return None


def known(exercise_id: str) -> bool:
    """Whether ``exercise_id`` names an exercise of the book."""
    try:
        exercise(exercise_id)
    except ValueError:
        return False
    return True


def _execute(nb, work: Path, env: dict) -> list[str]:
    """Execute ``nb`` in ``work`` with ``env``; the first line of each cell error."""
    from nbclient import NotebookClient

    client = NotebookClient(nb, timeout=CELL_TIMEOUT, allow_errors=True, kernel_name="python3",
                            resources={"metadata": {"path": str(work)}})
    client.execute(env=env)
    errors = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                errors.append(f"{out.get('ename')}: {out.get('evalue')}"[:200])
    return errors
