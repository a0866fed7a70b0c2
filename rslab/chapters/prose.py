"""A page's prose as MyST: the numbers it cites (``{eval}`` roles) and its solutions.

A page cites a number by a plain variable name, ``{eval}`name```, holding a formatted
string: MyST-NB (inline execution, in the book) and jupyterlab-myst (in Lab) both evaluate
the name in the page's kernel when the sentence is rendered. Solutions are ``solution``
directives (sphinx-exercise); ``strip_solutions`` removes them for the students' book.
"""

import math
import re
from decimal import ROUND_CEILING, ROUND_FLOOR, ROUND_HALF_EVEN, Decimal

EVAL_ROLE = re.compile(r"\{eval\}`([^`]*)`")
NAME = re.compile(r"^[a-zA-Z][a-zA-Z0-9_]*$")
"""What MyST-NB evaluates: a plain name (no expression, no attribute)."""
SOLUTION = re.compile(r"^(?P<fence>:{3,}|`{3,})\{solution\}[^\n]*\n.*?^(?P=fence)[ \t]*$\n?",
                      re.MULTILINE | re.DOTALL)
"""A ``solution`` directive, from its opening fence to the closing fence of the same length."""


ROUNDING = {"nearest": ROUND_HALF_EVEN, "up": ROUND_CEILING, "down": ROUND_FLOOR}
"""How a cited number's last digit rounds: an upper bound up, a threshold below which
something holds down."""


def significant(x: float, digits: int, rounding: str = "nearest") -> tuple[Decimal, int]:
    """Positive ``x`` as (mantissa in [1, 10) with ``digits`` significant digits, exponent),
    its last digit rounded ``rounding`` (a key of :data:`ROUNDING`)."""
    if rounding not in ROUNDING:
        raise ValueError(f"rounding must be one of {sorted(ROUNDING)}, got {rounding!r}")
    value = Decimal(repr(float(x)))
    exponent = value.adjusted()
    step = Decimal(1).scaleb(1 - digits)
    mantissa = value.scaleb(-exponent).quantize(step, ROUNDING[rounding])
    if mantissa >= 10:  # 9.96 up to 10.0: 1.00 of the next power
        mantissa, exponent = (mantissa / 10).quantize(step), exponent + 1
    return mantissa, exponent


SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def power(base: int, exponent: int) -> str:
    """``base`` to the ``exponent`` for prose: "10⁻¹³", "2¹²⁰"."""
    return f"{base}{str(exponent).translate(SUPERSCRIPT)}"


def sci(x: float, digits: int = 2, rounding: str = "nearest") -> str:
    """Positive ``x`` in scientific notation: 1.9e-13 as "1.9 × 10⁻¹³", 1e10 as "10¹⁰";
    ``rounding`` "up" or "down" rounds the last digit that way (an upper bound is printed
    rounded up, a threshold below which something holds rounded down)."""
    mantissa, exponent = significant(x, digits, rounding)
    return power(10, exponent) if mantissa == 1 else f"{mantissa} × {power(10, exponent)}"


def figure(x: float, digits: int = 2, rounding: str = "nearest") -> str:
    """A positive figure for a table or a sentence: plain from 10⁻³ to 10⁴ ("6,700",
    "0.034"), in :func:`sci`'s notation outside, "—" for None or NaN, "∞"."""
    if x is None or math.isnan(x):
        return "—"
    if math.isinf(x):
        return "∞"
    if 1 <= abs(x) < 1e4:
        mantissa, exponent = significant(x, digits, rounding)
        rounded = float(mantissa.scaleb(exponent))
        return f"{rounded:,.0f}" if rounded >= 10 ** (digits - 1) else f"{rounded:g}"
    if 1e-3 <= abs(x) < 1:
        return f"{x:.{digits}g}"
    return sci(x, digits, rounding)


UNIT_NAMES = {"ld": "load port", "st": "store port", "valu": "VALU", "sfu": "SFU",
              "fifo": "SFU FIFO", "recurrence": "recurrence", "xlu": "XLU", "scalar": "scalar",
              "dma": "DMA", "hbm": "HBM"}
"""Each machine resource (a slot, a queue, a bound's term) as a page names it."""


def unit_names(binding: str) -> str:
    """A binding as the schedulers and bounds name it (``"st = valu"``, ``"valu + sfu"``,
    ``"hbm"``) in the page's words: ``"store port = VALU"``."""
    return re.sub(r"[a-z]+", lambda m: UNIT_NAMES.get(m.group(0), m.group(0)), binding)


POINT_LABELS = {"first-reject": "first-step reject"}
"""The test points' names as the pages write them, where they differ from the runs' keys."""


def point_label(name: str) -> str:
    """A test point's name as the page writes it: "first-reject" as "first-step reject"."""
    return POINT_LABELS.get(name, name)


def and_list(items) -> str:
    """Items as a sentence lists them: "a, b and c" (numbers as written)."""
    items = [str(i) for i in items]
    return ", ".join(items[:-1]) + " and " + items[-1] if len(items) > 1 else "".join(items)


def seconds(x: float) -> str:
    """A time (or rate) the page measured, with two significant digits: what a clock
    resolves, and never a number of three digits that could pass for an exercise's answer
    (the students' book's leak search, ``rslab.student``)."""
    mantissa, exponent = significant(x, 2)
    value = mantissa.scaleb(exponent)
    return f"{value:,.0f}" if exponent >= 1 else f"{value:f}"


def eval_names(markdown: str) -> list[str]:
    """The names the ``{eval}`` roles of ``markdown`` cite, in order (repeats kept)."""
    return EVAL_ROLE.findall(markdown)


def bad_eval_names(markdown: str) -> list[str]:
    """Cited ``{eval}`` contents that are not plain names (MyST-NB would not evaluate them)."""
    return [n for n in eval_names(markdown) if not NAME.match(n)]


def solutions(markdown: str) -> list[str]:
    """The text of every ``solution`` directive of ``markdown``."""
    return [m.group(0) for m in SOLUTION.finditer(markdown)]


def strip_solutions(markdown: str) -> str:
    """``markdown`` without its ``solution`` directives."""
    return SOLUTION.sub("", markdown)
