"""The scale switch for heavy computations: ``RSLAB_SCALE=quick|book|full``.

``quick`` is for tests and for Jupyter Lab (``make lab`` opens the chapters at it: Run All
of a chapter takes from seconds to a few minutes), ``book`` for the rendered book, ``full`` for the
design note's own sample counts (command line only). A page's first cell calls
``use_scale()``, which says the scale the page runs at; ``use_scale("book")`` switches the
running kernel to another scale (the cells after it read the new one).
"""

import os

SCALES = ("quick", "book", "full")
DEFAULT_SCALE = "book"
LAB_SCALE = "quick"
"""The scale ``make lab`` starts Jupyter Lab with (``rslab.lab``)."""


def current_scale() -> str:
    """Return the scale named by ``RSLAB_SCALE`` (default ``book``)."""
    value = os.environ.get("RSLAB_SCALE", DEFAULT_SCALE).strip().lower() or DEFAULT_SCALE
    if value not in SCALES:
        raise ValueError(f"RSLAB_SCALE must be one of {', '.join(SCALES)}, got {value!r}")
    return value


def by_scale(quick, book, full, scale: str | None = None):
    """Pick the value for the current (or the given) scale."""
    scale = current_scale() if scale is None else scale
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {', '.join(SCALES)}, got {scale!r}")
    return {"quick": quick, "book": book, "full": full}[scale]


SCALE_NOTE = {
    "quick": "a reader's scale: Run All takes from seconds to a few minutes a page",
    "book": "the book's scale: the numbers of the rendered book",
    "full": "the design note's scale: hours on this machine",
}


def use_scale(scale: str | None = None):
    """Switch this process to ``scale`` (``None``: keep the current one) and say, as Markdown,
    which scale the page runs at and how to switch."""
    if scale is not None:
        if scale not in SCALES:
            raise ValueError(f"scale must be one of {', '.join(SCALES)}, got {scale!r}")
        os.environ["RSLAB_SCALE"] = scale
    from IPython.display import Markdown

    now = current_scale()
    other = "book" if now != "book" else "quick"
    return Markdown(f"This page runs at scale **{now}** ({SCALE_NOTE[now]}). To run it at "
                    f"scale {other}, change this cell to `use_scale(\"{other}\")` and run all "
                    f"cells again.")
