"""Claims: a qualitative sentence of a page, checked by the page's own numbers.

``claim(condition, sentence)`` raises ``ClaimError`` (an ``AssertionError``) naming the
sentence when ``condition`` is false, so a change of the model that breaks a sentence
fails the page's execution and the book build. Every checked claim is recorded in the
process (one kernel per page): ``checked()`` lists them, which is how a test counts the
claims of each page.
"""

import numpy as np


class ClaimError(AssertionError):
    """A sentence of the book that its own numbers contradict."""


_checked: list[str] = []


def claim(condition, sentence: str) -> None:
    """Check that ``condition`` holds for ``sentence`` (what the prose says); record it."""
    if not isinstance(sentence, str) or not sentence.strip():
        raise ValueError(f"sentence must be a non-empty string, got {sentence!r}")
    if isinstance(condition, np.ndarray):
        raise ValueError(f"condition must be one truth value, not an array (use .all() or "
                         f".any()): {sentence!r}")
    if not bool(condition):
        raise ClaimError(f"the page's numbers contradict its sentence: {sentence!r}")
    _checked.append(sentence)


def checked() -> list[str]:
    """The sentences checked so far in this process, in order."""
    return list(_checked)
