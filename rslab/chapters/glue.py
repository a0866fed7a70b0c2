"""``glue`` for the book's pages: a number the prose cites, visible wherever the page runs.

During the book build (``RSLAB_BOOK_BUILD=1``, which the book's Sphinx extension sets
for the kernels MyST-NB starts) it is MyST-NB's ``glue`` and nothing more. Outside the
build (Jupyter Lab, a test, a script) it still records the value for MyST-NB when
``myst_nb`` is installed, and also shows ``name = value`` in the cell's output: one line
per cell, growing with each glue, so a notebook reader sees every number the prose's
``{glue:text}`` roles would show.
"""

import os

from IPython import get_ipython
from IPython.display import Markdown, display

BUILD_FLAG = "RSLAB_BOOK_BUILD"

_shown: dict = {"cell": None, "handle": None, "items": []}


def in_book_build() -> bool:
    """True in a kernel started by the book build."""
    return os.environ.get(BUILD_FLAG) == "1"


def _text(value) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    if hasattr(value, "savefig"):
        return "(figure)"
    return str(value)


def _cell() -> object:
    shell = get_ipython()
    return getattr(shell, "execution_count", None)


def _show(name: str, value) -> None:
    cell = _cell()
    if cell is None:  # a plain script: nothing to display into
        return
    if _shown["cell"] != cell:
        _shown.update(cell=cell, handle=None, items=[])
    _shown["items"].append(f"`{name}` = {_text(value)}")
    text = Markdown("glued: " + " · ".join(_shown["items"]))
    if _shown["handle"] is None:
        _shown["handle"] = display(text, display_id=True)
    else:
        _shown["handle"].update(text)


def glue(name: str, value, display: bool = False) -> None:
    """Record ``value`` under ``name`` for the page's ``{glue:...}`` roles (MyST-NB), and
    outside the book build also show it. ``display=True`` also displays the value as
    MyST-NB's glue does."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"name must be a non-empty string, got {name!r}")
    try:
        from myst_nb import glue as myst_glue
    except ImportError:  # a reader without the book extra: show the value only
        myst_glue = None
    if myst_glue is not None:
        myst_glue(name, value, display=display)
    if not in_book_build():
        _show(name, value)
