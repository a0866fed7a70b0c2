"""The controls of a live figure: what a reader can change, over which range, and which
values the static page precomputes.

``int_control``, ``float_control`` and ``choice_control`` return a ``Control``; a
``LiveFigure`` (``rslab.viz.widgets.live_figure``) turns each into a live widget
(``IntSlider``, ``FloatSlider``, ``Dropdown``) and into the frame selector of the
static HTML page. Every argument is checked here, so a bad control fails where the
page builds it, with the argument's name.
"""

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

KINDS = ("int", "float", "choice")


@dataclass(frozen=True)
class Control:
    """One control: ``name`` is the keyword ``draw`` receives, ``label`` what the reader reads.

    ``kind`` is ``"int"``, ``"float"`` or ``"choice"``; ``lo``/``hi``/``step`` bound a
    slider (``None`` for a choice); ``options`` are a choice's values; ``frames`` the
    values precomputed for the static page (a choice precomputes all its options);
    ``value`` the initial value, one of ``frames``.
    """

    name: str
    label: str
    kind: str
    frames: tuple
    value: object
    lo: float | None = None
    hi: float | None = None
    step: float | None = None
    options: tuple = ()
    fmt: Callable[[object], str] | None = None

    def text(self, value) -> str:
        """``value`` as the page shows it."""
        if self.fmt is not None:
            return self.fmt(value)
        if isinstance(value, float | np.floating):
            return f"{float(value):g}"
        return str(value)

    def normalise(self, value):
        """``value`` as a cache key: ints stay ints, floats are rounded to the step."""
        if self.kind == "int":
            return int(value)
        if self.kind == "float":
            return round(float(value), _decimals(self.step))
        return value


def _decimals(step: float) -> int:
    return max(0, -math.floor(math.log10(step)) + 2)


def _check_name(name, label):
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"name must be a Python identifier (the keyword draw receives), "
                         f"got {name!r}")
    if label is not None and (not isinstance(label, str) or not label):
        raise ValueError(f"label must be a non-empty string, got {label!r}")
    return label or name


def _check_frames(frames, value, inside, what):
    frames = tuple(frames)
    if not frames:
        raise ValueError("frames must not be empty (the static page shows these values)")
    for f in frames:
        if not inside(f):
            raise ValueError(f"frame {f!r} is outside {what}")
    if len(set(frames)) != len(frames):
        raise ValueError(f"frames must be distinct, got {frames}")
    if value is None:
        value = frames[0]
    if value not in frames:
        raise ValueError(f"value {value!r} must be one of frames {frames} "
                         "(the static page opens on it)")
    return frames, value


def int_control(name: str, lo: int, hi: int, *, frames: Sequence[int], value: int | None = None,
                step: int = 1, label: str | None = None,
                fmt: Callable[[object], str] | None = None) -> Control:
    """An integer slider over ``lo..hi`` (every ``step``); ``frames`` are precomputed."""
    label = _check_name(name, label)
    for arg, v in (("lo", lo), ("hi", hi), ("step", step)):
        if isinstance(v, bool) or not isinstance(v, int | np.integer):
            raise ValueError(f"{arg} must be an int, got {v!r}")
    if not lo < hi:
        raise ValueError(f"lo must be below hi, got lo={lo}, hi={hi}")
    if step < 1:
        raise ValueError(f"step must be at least 1, got {step}")
    frames = tuple(int(f) for f in frames)
    frames, value = _check_frames(frames, value, lambda f: lo <= f <= hi and (f - lo) % step == 0,
                                  f"{lo}..{hi} (step {step})")
    return Control(name, label, "int", frames, int(value), int(lo), int(hi), int(step), fmt=fmt)


def float_control(name: str, lo: float, hi: float, *, frames: Sequence[float],
                  value: float | None = None, step: float | None = None,
                  label: str | None = None,
                  fmt: Callable[[object], str] | None = None) -> Control:
    """A float slider over ``[lo, hi]`` (default ``step`` (hi − lo) / 100); ``frames`` are
    precomputed."""
    label = _check_name(name, label)
    for arg, v in (("lo", lo), ("hi", hi)):
        if not isinstance(v, int | float | np.floating) or not math.isfinite(v):
            raise ValueError(f"{arg} must be a finite number, got {v!r}")
    if not lo < hi:
        raise ValueError(f"lo must be below hi, got lo={lo}, hi={hi}")
    step = (hi - lo) / 100 if step is None else step
    if not isinstance(step, int | float) or not 0 < step <= hi - lo:
        raise ValueError(f"step must be in (0, hi − lo], got {step!r}")
    frames = tuple(float(f) for f in frames)
    frames, value = _check_frames(frames, None if value is None else float(value),
                                  lambda f: lo <= f <= hi, f"[{lo:g}, {hi:g}]")
    return Control(name, label, "float", frames, value, float(lo), float(hi), float(step), fmt=fmt)


def choice_control(name: str, options: Sequence, *, value=None, label: str | None = None,
                   fmt: Callable[[object], str] | None = None) -> Control:
    """A dropdown over ``options``; every option is precomputed."""
    label = _check_name(name, label)
    options = tuple(options)
    if len(options) < 2:
        raise ValueError(f"options must hold at least two values, got {options}")
    options, value = _check_frames(options, value, lambda f: True, "the options")
    texts = [fmt(o) if fmt else str(o) for o in options]
    if len(set(texts)) != len(texts):
        raise ValueError(f"options must have distinct labels, got {texts}")
    return Control(name, label, "choice", options, value, options=options, fmt=fmt)
