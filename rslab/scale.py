"""The scale switch for heavy computations: ``RSLAB_SCALE=quick|book|full``.

``quick`` is for tests, ``book`` for the rendered book, ``full`` for the design
note's own sample counts (command line only).
"""

import os

SCALES = ("quick", "book", "full")
DEFAULT_SCALE = "book"


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
