"""Sliders over precomputed figures that also work in the static HTML book.

``slider_figure(draw, values, description=...)`` calls ``draw(value)`` once per
value, keeps each figure as a small PNG frame in an ``ipywidgets.Image``, puts the
frames in a ``Stack`` and links the slider's index to the stack's
``selected_index`` twice: on the client (``jslink``, so the slider works in the
rendered book without a kernel) and in the kernel (so Python sees the change and
tests can check it). In Jupyter, ``redraw()`` recomputes the shown frame live.

Test helpers: ``widget_frames(w)`` (all frames, PNG bytes), ``shown_frame(w)``
(the frame on display) and ``frame_pixels(png)`` (decoded RGBA array).
"""

from collections.abc import Callable, Sequence
from io import BytesIO

import ipywidgets
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure

DEFAULT_DPI = 80
MAX_FRAMES = 40


def figure_png(fig: Figure, dpi: int = DEFAULT_DPI) -> bytes:
    """Render ``fig`` to PNG bytes at ``dpi`` and close it."""
    if not isinstance(fig, Figure):
        raise ValueError(f"draw must return a matplotlib Figure, got {type(fig).__name__}")
    buf = BytesIO()
    try:
        fig.savefig(buf, format="png", dpi=dpi)
    finally:
        plt.close(fig)
    return buf.getvalue()


def _label(value) -> str:
    if isinstance(value, float | np.floating):
        return f"{float(value):g}"
    return str(value)


class SliderFigure(ipywidgets.VBox):
    """A slider over ``values`` above a stack of one precomputed figure per value.

    Attributes: ``slider`` (``SelectionSlider``; its ``index`` selects the frame),
    ``stack`` (``Stack`` of ``Image`` frames), ``values`` (tuple), ``draw``.
    """

    def __init__(self, draw: Callable[[object], Figure], values: Sequence, *, description: str,
                 value=None, fmt: Callable[[object], str] | None = None, dpi: int = DEFAULT_DPI):
        if not callable(draw):
            raise ValueError("draw must be callable: draw(value) -> matplotlib Figure")
        values = tuple(values)
        if not values:
            raise ValueError("values must not be empty")
        if len(values) > MAX_FRAMES:
            raise ValueError(f"values has {len(values)} entries; at most {MAX_FRAMES} frames "
                             "keep the page light")
        if not isinstance(description, str) or not description:
            raise ValueError("description must be a non-empty string")
        if not isinstance(dpi, int) or not 20 <= dpi <= 200:
            raise ValueError(f"dpi must be an int in [20, 200], got {dpi!r}")
        labels = [(fmt or _label)(v) for v in values]
        if len(set(labels)) != len(labels):
            raise ValueError(f"values must have distinct labels, got {labels}")
        if value is None:
            index = 0
        else:
            matches = [i for i, v in enumerate(values) if _same(v, value)]
            if not matches:
                raise ValueError(f"value {value!r} is not one of values {labels}")
            index = matches[0]

        self.draw = draw
        self.values = values
        self.dpi = dpi
        frames = [ipywidgets.Image(value=figure_png(draw(v), dpi), format="png",
                                   layout=ipywidgets.Layout(max_width="100%", height="auto"))
                  for v in values]
        self.stack = ipywidgets.Stack(children=frames, selected_index=index)
        self.slider = ipywidgets.SelectionSlider(
            options=list(zip(labels, range(len(values)), strict=True)), index=index,
            description=description, continuous_update=True,
            style={"description_width": "initial"},
            layout=ipywidgets.Layout(width="min(100%, 32em)"))
        self.link = ipywidgets.jslink((self.slider, "index"), (self.stack, "selected_index"))
        self.slider.observe(self._on_index, names="index")
        super().__init__(children=[self.slider, self.stack])

    def _on_index(self, change):
        self.stack.selected_index = change["new"]

    @property
    def index(self) -> int:
        """Index of the value on display."""
        return self.slider.index

    @property
    def value(self):
        """The value on display; setting it moves the slider (and the frame)."""
        return self.values[self.slider.index]

    @value.setter
    def value(self, value):
        for i, v in enumerate(self.values):
            if _same(v, value):
                self.slider.index = i
                return
        raise ValueError(f"value {value!r} is not one of values {list(self.values)}")

    def redraw(self) -> bytes:
        """Recompute the frame on display with ``draw`` (live kernels); return its PNG."""
        png = figure_png(self.draw(self.value), self.dpi)
        self.stack.children[self.index].value = png
        return png


def _same(a, b) -> bool:
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return a is b


def slider_figure(draw: Callable[[object], Figure], values: Sequence, *, description: str,
                  value=None, fmt: Callable[[object], str] | None = None,
                  dpi: int = DEFAULT_DPI) -> SliderFigure:
    """A slider over ``values`` that shows ``draw(value)``; works without a kernel.

    ``draw(value)`` must return a matplotlib ``Figure`` (it is closed after
    rendering). Keep ``values`` short (each is one PNG frame in the page) and the
    figure small. ``value`` is the initial value (default: the first);
    ``fmt(value) -> str`` labels the slider positions.
    """
    return SliderFigure(draw, values, description=description, value=value, fmt=fmt, dpi=dpi)


def widget_frames(widget: SliderFigure) -> list[bytes]:
    """The PNG bytes of every frame of a ``slider_figure`` widget, in slider order."""
    if not isinstance(widget, SliderFigure):
        raise ValueError(f"widget must be a SliderFigure, got {type(widget).__name__}")
    return [bytes(image.value) for image in widget.stack.children]


def shown_frame(widget: SliderFigure) -> bytes:
    """The PNG bytes of the frame the stack currently displays."""
    if not isinstance(widget, SliderFigure):
        raise ValueError(f"widget must be a SliderFigure, got {type(widget).__name__}")
    return bytes(widget.stack.children[widget.stack.selected_index].value)


def frame_pixels(png: bytes) -> np.ndarray:
    """Decode PNG bytes to a float RGBA array (height, width, 4)."""
    return plt.imread(BytesIO(png), format="png")
