"""Figures with controls for the book: live in a Jupyter kernel, precomputed in the static HTML.

``live_figure(draw, *controls)`` is the one call a page makes. In a live kernel a
change of a control (``rslab.viz.controls``: int and float sliders, dropdowns)
calls ``draw(**values)`` again, with a cache of what was computed, a visible
"computing…" state and the error shown in the widget if ``draw`` fails. For the
static page the same call precomputes ``draw`` at every combination of the
controls' ``frames`` and stacks the PNGs (one ``Stack`` level per control, so two
controls make a small grid), each level selected client-side (``jslink``) by a
selector over the frames. The book's style sheet shows the selectors and hides the
live controls; in Jupyter the figure's own style hides the selectors.

Test helpers: ``widget_frames(w)`` (all frames, PNG bytes), ``shown_frame(w)``
(the frame on display) and ``frame_pixels(png)`` (decoded RGBA array).
"""

import functools
import html
import itertools
import math
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from io import BytesIO

import ipywidgets
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure

from rslab.viz.controls import Control

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


HIDE_SELECTORS = "<style>.rslab-static { display: none; }</style>"
"""In Jupyter the precomputed selectors are hidden; the book's rslab.css shows them instead
(and hides the live controls), since the static page has no kernel to compute with."""
CACHE_SIZE = 64


class LiveFigure(ipywidgets.VBox):
    """A figure that ``draw(**values)`` recomputes when a control changes (see the module).

    Attributes: ``controls`` (the ``Control`` specs), ``inputs`` (live widgets, by name),
    ``image`` (the live picture), ``status`` and ``caption`` (HTML), ``selectors`` (the
    static page's frame selectors, one per control), ``stack`` (the outer ``Stack``),
    ``draw_calls`` (how many times ``draw`` ran), ``last_seconds`` (the last computation's
    time) and ``error`` (the last exception ``draw`` raised, or ``None``).
    """

    def __init__(self, draw: Callable[..., Figure], controls: Sequence[Control], *,
                 dpi: int = DEFAULT_DPI, cache_size: int = CACHE_SIZE):
        if not callable(draw):
            raise ValueError("draw must be callable: draw(**values) -> matplotlib Figure")
        controls = tuple(controls)
        if not controls or not all(isinstance(c, Control) for c in controls):
            raise ValueError("controls must be one or more Control (rslab.viz.controls)")
        names = [c.name for c in controls]
        if len(set(names)) != len(names):
            raise ValueError(f"control names must be distinct, got {names}")
        n_frames = math.prod(len(c.frames) for c in controls)
        if n_frames > MAX_FRAMES:
            raise ValueError(f"the controls' frames make {n_frames} combinations; at most "
                             f"{MAX_FRAMES} keep the page light")
        if not isinstance(dpi, int) or not 20 <= dpi <= 200:
            raise ValueError(f"dpi must be an int in [20, 200], got {dpi!r}")
        if not isinstance(cache_size, int) or cache_size < n_frames:
            raise ValueError(f"cache_size must be an int of at least {n_frames} (the frames)")
        self.draw, self.controls, self.dpi, self.cache_size = draw, controls, dpi, cache_size
        self.draw_calls, self.last_seconds, self.error = 0, 0.0, None
        self._cache: OrderedDict[tuple, tuple[bytes, str]] = OrderedDict()
        frames = {key: self._compute(dict(zip(names, key, strict=True)))
                  for key in itertools.product(*(c.frames for c in controls))}
        self._precomputed = set(frames)
        static = self._static_part(frames)
        self._shown = self._key(self._initial())
        png, text = frames[self._shown]
        self.image = ipywidgets.Image(value=png, format="png", layout=_IMAGE_LAYOUT)
        self.caption = ipywidgets.HTML(value=_caption(text))
        self.status = ipywidgets.HTML(value=self._status("precomputed"))
        self.inputs = {c.name: _live_input(c) for c in controls}
        for widget in self.inputs.values():
            widget.observe(self._on_input, names="value")
        live = ipywidgets.VBox([ipywidgets.HBox(list(self.inputs.values()),
                                                layout=ipywidgets.Layout(flex_flow="row wrap")),
                                self.status, self.image, self.caption,
                                ipywidgets.HTML(value=HIDE_SELECTORS)])
        live.add_class("rslab-live")
        super().__init__(children=[static, live])
        self.add_class("rslab-live-figure")

    # -- the static page: selectors over nested stacks of precomputed frames --
    def _static_part(self, frames: dict) -> ipywidgets.VBox:
        levels: list[list[ipywidgets.Stack]] = [[] for _ in self.controls]
        initial = [c.frames.index(c.value) for c in self.controls]

        def build(prefix: tuple):
            depth = len(prefix)
            if depth == len(self.controls):
                png, _ = frames[prefix]
                return ipywidgets.Image(value=png, format="png", layout=_IMAGE_LAYOUT)
            c = self.controls[depth]
            stack = ipywidgets.Stack(children=[build(prefix + (f,)) for f in c.frames],
                                     selected_index=initial[depth])
            levels[depth].append(stack)
            return stack

        self.stack = build(())
        self.selectors = [_selector(c, i) for c, i in zip(self.controls, initial, strict=True)]
        self.links = []
        for selector, stacks in zip(self.selectors, levels, strict=True):
            self.links += [ipywidgets.jslink((selector, "index"), (s, "selected_index"))
                           for s in stacks]
            selector.observe(functools.partial(_select, stacks), names="index")
        listed = "; ".join(f"{c.label} = " + ", ".join(c.text(f) for f in c.frames)
                           for c in self.controls)
        note = ipywidgets.HTML(value=f"<small>Precomputed in this page: {html.escape(listed)}. "
                                     "Run the chapter in Jupyter to compute other values.</small>")
        box = ipywidgets.VBox([*self.selectors, note, self.stack])
        box.add_class("rslab-static")
        return box

    # -- the live kernel --
    def _initial(self) -> dict:
        return {c.name: c.value for c in self.controls}

    def _key(self, values: dict) -> tuple:
        return tuple(c.normalise(values[c.name]) for c in self.controls)

    @property
    def values(self) -> dict:
        """The controls' current values, by name."""
        return {c.name: c.normalise(self.inputs[c.name].value) for c in self.controls}

    def set(self, **values) -> None:
        """Move controls (what a reader's drag does); unknown names raise ``ValueError``."""
        unknown = set(values) - set(self.inputs)
        if unknown:
            raise ValueError(f"no control named {sorted(unknown)}; controls: {list(self.inputs)}")
        with self.hold_sync():
            for name, value in values.items():
                self.inputs[name].unobserve(self._on_input, names="value")
                try:
                    self.inputs[name].value = value
                finally:
                    self.inputs[name].observe(self._on_input, names="value")
        self.update()

    def _on_input(self, change) -> None:
        self.update()

    def update(self) -> None:
        """Show the figure for the controls' values: from the cache, or computed now."""
        values = self.values
        key = self._key(values)
        if key == self._shown and self.error is None:
            return
        if key in self._cache:
            self._cache.move_to_end(key)
            self._show(key, "precomputed" if key in self._precomputed else "from the cache")
            return
        self.status.value = self._status("computing…", values)
        try:
            self._compute(values)
        except Exception as exc:  # shown in the widget, where the reader looks
            self.error = exc
            self.status.value = self._status(f"failed: {type(exc).__name__}: {exc}", values,
                                             error=True)
            return
        self._show(key, f"computed in {self.last_seconds:.2f} s")

    def _compute(self, values: dict) -> tuple[bytes, str]:
        start = time.perf_counter()
        self.draw_calls += 1
        out = self.draw(**values)
        fig, text = out if isinstance(out, tuple) else (out, "")
        entry = (figure_png(fig, self.dpi), str(text))
        self.last_seconds = time.perf_counter() - start
        self._cache[self._key(values)] = entry
        while len(self._cache) > self.cache_size:
            old = next(k for k in self._cache if k not in self._precomputed)
            del self._cache[old]
        return entry

    def _show(self, key: tuple, how: str) -> None:
        png, text = self._cache[key]
        self.error = None
        self._shown = key
        with self.hold_sync():
            self.image.value = png
            self.caption.value = _caption(text)
            self.status.value = self._status(how, dict(zip(self.inputs, key, strict=True)))

    def _status(self, how: str, values: dict | None = None, *, error: bool = False) -> str:
        values = values or self._initial()
        shown = ", ".join(f"{c.label} = {c.text(values[c.name])}" for c in self.controls)
        colour = "#B00020" if error else "#555555"
        return (f'<span class="rslab-status" style="color:{colour}">{html.escape(shown)}: '
                f"{html.escape(how)}</span>")

    @property
    def png(self) -> bytes:
        """The PNG bytes of the live picture."""
        return bytes(self.image.value)


_IMAGE_LAYOUT = {"max_width": "100%", "height": "auto"}


def _caption(text: str) -> str:
    return f'<span class="rslab-caption">{html.escape(text)}</span>' if text else ""


def _select(stacks, change) -> None:
    for stack in stacks:
        stack.selected_index = change["new"]


def _selector(c: Control, index: int):
    options = [(c.text(f), i) for i, f in enumerate(c.frames)]
    common = dict(options=options, index=index, description=c.label,
                  style={"description_width": "initial"})
    if c.kind == "choice":
        return ipywidgets.Dropdown(**common)
    return ipywidgets.SelectionSlider(**common, continuous_update=True,
                                      layout=ipywidgets.Layout(width="min(100%, 32em)"))


def _live_input(c: Control):
    common = dict(description=c.label, value=c.value, style={"description_width": "initial"})
    if c.kind == "choice":
        return ipywidgets.Dropdown(options=[(c.text(o), o) for o in c.options], **common)
    layout = ipywidgets.Layout(width="min(100%, 32em)")
    if c.kind == "int":
        return ipywidgets.IntSlider(min=c.lo, max=c.hi, step=c.step, continuous_update=False,
                                    layout=layout, **common)
    return ipywidgets.FloatSlider(min=c.lo, max=c.hi, step=c.step, continuous_update=False,
                                  readout_format=f".{_float_digits(c.step)}f", layout=layout,
                                  **common)


def _float_digits(step: float) -> int:
    return max(0, -math.floor(math.log10(step)))


def live_figure(draw: Callable[..., Figure], *controls: Control, dpi: int = DEFAULT_DPI,
                cache_size: int = CACHE_SIZE) -> LiveFigure:
    """A figure that ``draw(**values)`` recomputes live and the static page precomputes.

    ``draw`` gets one keyword per control (``rslab.viz.controls``) and returns a
    matplotlib ``Figure`` (closed after rendering), or ``(Figure, caption)`` with a
    short text shown under it. It runs once per combination of the controls' frames
    when the figure is built, and again whenever a reader moves a control to a value
    not in the cache (``cache_size`` figures).
    """
    return LiveFigure(draw, controls, dpi=dpi, cache_size=cache_size)


def _leaves(widget) -> list:
    if isinstance(widget, ipywidgets.Stack):
        return [leaf for child in widget.children for leaf in _leaves(child)]
    return [widget]


def widget_frames(widget: LiveFigure) -> list[bytes]:
    """The PNG bytes of every precomputed frame of a figure, in selector order (for a
    ``LiveFigure``, the first control varies slowest)."""
    if not isinstance(widget, LiveFigure):
        raise ValueError(f"widget must be a LiveFigure, "
                         f"got {type(widget).__name__}")
    return [bytes(image.value) for image in _leaves(widget.stack)]


def shown_frame(widget: LiveFigure) -> bytes:
    """The PNG bytes of the precomputed frame the static page currently displays."""
    if not isinstance(widget, LiveFigure):
        raise ValueError(f"widget must be a LiveFigure, "
                         f"got {type(widget).__name__}")
    shown = widget.stack
    while isinstance(shown, ipywidgets.Stack):
        shown = shown.children[shown.selected_index]
    return bytes(shown.value)


def frame_pixels(png: bytes) -> np.ndarray:
    """Decode PNG bytes to a float RGBA array (height, width, 4)."""
    return plt.imread(BytesIO(png), format="png")
