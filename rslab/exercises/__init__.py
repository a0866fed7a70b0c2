"""Checked answers: ``check(exercise_id, answer)`` against the oracle on the exercise's variant.

In a page or in Lab a student runs::

    from rslab.exercises import check, variant
    v = variant("machine-chains")          # the variant the exercise states
    check("machine-chains", 12)           # ✓ or ✗, with the points

Conventions of Otter-Grader and nbgrader: ``check()`` is the **public check** (the public
variant, in the student's session); the instructor's grading run executes the student's
notebook with the instructor's file (``RSLAB_GRADING_VARIANTS``, section ``[exercise.ID]``)
— the **hidden test**: the same exercise on other parameters, so an answer typed in as a
number passes the public check only, an answer the student's code computes from
``variant(ID)`` passes both. Each exercise has its points (``rslab.exercises.registry``);
``rslab grade exercises NOTEBOOK|DIR`` collects them. A wrong answer is told it is wrong, not
what is right; an answer that is the prose's number (the book's machine) is told so.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass

from rslab import instructor
from rslab.exercises.registry import EXERCISES

LOG_ENV = "RSLAB_CHECK_LOG"
"""A file every ``check()`` appends its result to (one JSON line): the grading run's record."""


def exercise(exercise_id: str):
    if exercise_id not in EXERCISES:
        raise ValueError(f"unknown exercise {exercise_id!r}; the exercises: "
                         f"{', '.join(EXERCISES)}")
    return EXERCISES[exercise_id]


class Variant(Mapping):
    """An exercise's parameters (read-only), read as ``v["valu_slots"]`` or ``v.valu_slots``."""

    def __init__(self, params: dict):
        self._params = dict(params)

    def __getitem__(self, key):
        return self._params[key]

    def __iter__(self):
        return iter(self._params)

    def __len__(self) -> int:
        return len(self._params)

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self._params[name]
        except KeyError:
            raise AttributeError(name) from None

    def __repr__(self) -> str:
        return f"Variant({self._params!r})"


def _hidden(exercise_id: str, file=None) -> dict:
    """The instructor's parameters of an exercise (``{}`` without a file or a section); the
    file is ``file``, else ``$RSLAB_GRADING_VARIANTS``."""
    data = instructor.read(file)
    where = data.get("file", "")
    section = data.get("exercise", {}).get(exercise_id, {})
    e = exercise(exercise_id)
    unknown = sorted(set(section) - set(e.params))
    if unknown:
        raise ValueError(f"{where}: [exercise.{exercise_id}]: unknown parameter(s) {unknown}; "
                         f"known: {sorted(e.params)}")
    for key, value in section.items():
        if not isinstance(value, type(e.params[key])) and not (
                isinstance(e.params[key], float) and isinstance(value, int)):
            raise ValueError(f"{where}: [exercise.{exercise_id}]: {key} must be a "
                             f"{type(e.params[key]).__name__}, got {value!r}")
    return dict(section)


def variant(exercise_id: str, file=None) -> Variant:
    """The parameters the exercise is asked on: the public variant, or the instructor's (in
    ``file``, else in ``$RSLAB_GRADING_VARIANTS``)."""
    e = exercise(exercise_id)
    return Variant({**e.params, **_hidden(exercise_id, file)})


def question(exercise_id: str) -> str:
    """The question as its variant asks it."""
    return exercise(exercise_id).text(variant(exercise_id))


@functools.lru_cache(maxsize=64)
def _oracle(exercise_id: str, params: tuple):
    return exercise(exercise_id).oracle(**dict(params))


def expected(exercise_id: str, params: dict | None = None):
    """The oracle's answer on ``params`` (default: the exercise's variant)."""
    params = dict(variant(exercise_id) if params is None else params)
    return _oracle(exercise_id, tuple(sorted(params.items())))


def _yes_no(answer) -> bool | None:
    if isinstance(answer, bool) or type(answer).__name__ == "bool_":
        return bool(answer)
    if isinstance(answer, str) and answer.strip().lower() in ("yes", "no"):
        return answer.strip().lower() == "yes"
    return None


def matches(e, answer, want) -> bool:
    """Whether ``answer`` is right for the oracle's ``want`` (``e``'s kind and tolerance)."""
    if e.kind == "yes/no":
        return _yes_no(answer) == bool(want)
    if isinstance(answer, bool) or _yes_no(answer) is not None:
        return False
    try:
        value = float(answer)
    except (TypeError, ValueError):
        return False
    if e.kind == "integer":
        return value == int(want)
    return abs(value - float(want)) <= e.rel_tol * abs(float(want))


@dataclass(frozen=True)
class CheckResult:
    """What ``check()`` found: the exercise, whether the answer is right, the points."""

    exercise: str
    correct: bool
    points: float
    max_points: float
    message: str
    answer: object = None

    def __bool__(self) -> bool:
        return self.correct

    def __repr__(self) -> str:
        return self.message

    def _ipython_display_(self) -> None:
        """Nothing more in a notebook: :func:`check` has printed the message."""


def check(exercise_id: str, answer) -> CheckResult:
    """Check ``answer`` against the oracle on the exercise's variant; prints one line and
    returns a :class:`CheckResult` (true when right)."""
    e = exercise(exercise_id)
    params = variant(exercise_id)
    if os.environ.get(LOG_ENV):  # being graded: the grader checks the answer, and tells it
        _record(exercise_id, answer)
        message = f"… {exercise_id}: answer recorded for grading"
        print(message)
        return CheckResult(exercise_id, False, 0.0, e.points, message, answer)
    right = matches(e, answer, expected(exercise_id, params))
    if answer is None:
        message = (f"… {exercise_id}: no answer yet: set `answer` and run the cell again; "
                   f"the question: {e.text(params)}")
    elif right:
        message = f"✓ {exercise_id}: right ({e.points:g} point{'s' if e.points != 1 else ''})"
    elif e.book is not None and matches(e, answer, expected(exercise_id, e.book)):
        message = (f"✗ {exercise_id}: {answer!r} is the answer for the book's prose "
                   f"({', '.join(f'{k} = {v}' for k, v in e.book.items())}); this exercise "
                   f"asks: {e.text(params)}")
    else:
        message = f"✗ {exercise_id}: {answer!r} is not right; the question: {e.text(params)}"
    print(message)
    return CheckResult(exercise_id, right, e.points if right else 0.0, e.points, message, answer)


def loggable(answer):
    """``answer`` as the grader's log keeps it: a bool, a number or a string (else its repr,
    which no oracle matches)."""
    if answer is None or isinstance(answer, (bool, int, float, str)):
        return answer
    try:
        return float(answer)
    except (TypeError, ValueError):
        return repr(answer)


def _record(exercise_id: str, answer) -> None:
    """Append the answer to the grader's log (``$RSLAB_CHECK_LOG``)."""
    entry = {"exercise": exercise_id, "answer": loggable(answer)}
    with open(os.environ[LOG_ENV], "a", encoding="utf-8") as log:
        log.write(json.dumps(entry) + "\n")


__all__ = ["CheckResult", "EXERCISES", "check", "expected", "question", "variant"]
