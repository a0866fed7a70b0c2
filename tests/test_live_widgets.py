"""live_figure: controls that re-run draw in a kernel, precomputed frames for the static page."""

import matplotlib

matplotlib.use("Agg")

import ipywidgets  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from rslab.viz.controls import choice_control, float_control, int_control  # noqa: E402
from rslab.viz.widgets import LiveFigure, live_figure, shown_frame, widget_frames  # noqa: E402


class Recorder:
    """A draw that counts its calls and draws a line whose slope is its argument."""

    def __init__(self):
        self.calls = []

    def __call__(self, slope, offset=0.0):
        self.calls.append((slope, offset))
        fig, ax = plt.subplots(figsize=(2, 1.5))
        ax.plot([0, 1], [offset, offset + slope])
        ax.set_ylim(-10, 10)
        return fig, f"slope {slope:g}, offset {offset:g}"


def test_frames_are_precomputed_and_a_new_value_is_computed_live():
    draw = Recorder()
    w = live_figure(draw, float_control("slope", -5, 5, frames=(-2, 0, 2), value=0, step=0.5))
    assert isinstance(w, LiveFigure) and len(draw.calls) == 3
    assert len(set(widget_frames(w))) == 3 and w.png == shown_frame(w)
    assert isinstance(w.inputs["slope"], ipywidgets.FloatSlider)
    assert w.inputs["slope"].continuous_update is False
    w.inputs["slope"].value = 1.5          # what a reader's drag does
    assert draw.calls[-1] == (1.5, 0.0) and len(draw.calls) == 4
    assert "computed in" in w.status.value and "slope = 1.5" in w.status.value
    assert w.caption.value.endswith("slope 1.5, offset 0</span>")
    assert w.png not in widget_frames(w)
    w.set(slope=2.0)                        # a precomputed value: no new call
    assert len(draw.calls) == 4 and "precomputed" in w.status.value
    assert w.png == widget_frames(w)[2]
    w.set(slope=1.5)                        # cached
    assert len(draw.calls) == 4 and "from the cache" in w.status.value


def test_two_controls_make_a_grid_of_nested_stacks_linked_to_their_selectors():
    draw = Recorder()
    w = live_figure(draw, int_control("slope", 1, 9, frames=(1, 2, 3)),
                    choice_control("offset", (0.0, 1.0), value=1.0))
    assert len(draw.calls) == 6 and len(widget_frames(w)) == 6
    assert [type(s).__name__ for s in w.selectors] == ["SelectionSlider", "Dropdown"]
    inner = w.stack.children
    assert len(inner) == 3 and all(isinstance(s, ipywidgets.Stack) for s in inner)
    assert len(w.links) == 1 + 3
    assert w.links[0].source == (w.selectors[0], "index")
    assert {link.target[0] for link in w.links[1:]} == set(inner)
    w.selectors[0].index = 2
    w.selectors[1].index = 0
    assert shown_frame(w) == widget_frames(w)[2 * 2 + 0]
    w.set(slope=7, offset=0.0)
    assert draw.calls[-1] == (7, 0.0)
    assert "slope = 7, offset = 0" in w.status.value


def test_static_part_says_which_values_are_precomputed_and_hides_in_jupyter():
    w = live_figure(Recorder(), int_control("slope", 1, 9, frames=(1, 4), label="k"))
    static, live = w.children
    assert "rslab-static" in static._dom_classes and "rslab-live" in live._dom_classes
    note = [c for c in static.children if isinstance(c, ipywidgets.HTML)][0]
    assert "Precomputed in this page: k = 1, 4" in note.value
    assert any(".rslab-static { display: none; }" in c.value for c in live.children
               if isinstance(c, ipywidgets.HTML))


def test_an_error_in_draw_is_shown_in_the_widget_and_the_next_value_recovers():
    def draw(x):
        if x == 3:
            raise RuntimeError("the simulator refused x = 3")
        fig, ax = plt.subplots(figsize=(1, 1))
        ax.plot([0, x])
        return fig

    w = live_figure(draw, int_control("x", 1, 5, frames=(1, 2)))
    shown = w.png
    w.set(x=3)
    assert isinstance(w.error, RuntimeError)
    assert "failed: RuntimeError: the simulator refused x = 3" in w.status.value
    assert w.png == shown
    w.set(x=4)
    assert w.error is None and "computed in" in w.status.value and w.png != shown


def test_cache_is_bounded_and_keeps_the_precomputed_frames():
    draw = Recorder()
    w = live_figure(draw, int_control("slope", 1, 9, frames=(1, 2)), cache_size=3)
    for s in (3, 4, 5):
        w.set(slope=s)
    assert len(w._cache) == 3 and (1,) in w._cache and (2,) in w._cache
    calls = len(draw.calls)
    w.set(slope=4)
    assert len(draw.calls) == calls + 1  # evicted, recomputed


@pytest.mark.parametrize("make, match", [
    (lambda: int_control("x", 5, 1, frames=(2,)), "lo must be below hi"),
    (lambda: int_control("x", 1, 5, frames=(7,)), "frame 7 is outside 1..5"),
    (lambda: int_control("x", 1, 5, frames=()), "frames must not be empty"),
    (lambda: int_control("x", 1, 5, frames=(2, 2)), "frames must be distinct"),
    (lambda: int_control("x", 1, 5, frames=(2,), value=3), "value 3 must be one of frames"),
    (lambda: int_control("x", 1.5, 5, frames=(2,)), "lo must be an int"),
    (lambda: int_control("not a name", 1, 5, frames=(2,)), "name must be a Python identifier"),
    (lambda: float_control("x", 0, 1, frames=(0.5,), step=2), "step must be in"),
    (lambda: float_control("x", 0, float("inf"), frames=(0.5,)), "hi must be a finite number"),
    (lambda: choice_control("x", ("a",)), "at least two values"),
])
def test_bad_controls_raise_with_the_argument_named(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_bad_live_figure_arguments_raise():
    c = int_control("x", 1, 50, frames=tuple(range(1, 42)))
    with pytest.raises(ValueError, match="41 combinations"):
        live_figure(Recorder(), c)
    with pytest.raises(ValueError, match="callable"):
        live_figure(None, int_control("x", 1, 5, frames=(1,)))
    with pytest.raises(ValueError, match="one or more Control"):
        live_figure(Recorder())
    with pytest.raises(ValueError, match="distinct"):
        live_figure(Recorder(), int_control("x", 1, 5, frames=(1,)),
                    int_control("x", 1, 5, frames=(2,)))
    w = live_figure(lambda x: plt.figure(figsize=(1, 1)), int_control("x", 1, 5, frames=(1,)))
    with pytest.raises(ValueError, match=r"no control named \['y'\]"):
        w.set(y=2)
    with pytest.raises(ValueError, match="matplotlib Figure"):
        live_figure(lambda x: None, int_control("x", 1, 5, frames=(1,)))
