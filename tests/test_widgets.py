"""live_figure's static part: one precomputed frame per value, selector and frames linked both
ways (client-side for the HTML page, kernel-side for Python), and the page runner reads them."""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import ipywidgets  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from rslab.viz.controls import float_control, int_control  # noqa: E402
from rslab.viz.widgets import (  # noqa: E402
    LiveFigure,
    frame_pixels,
    live_figure,
    shown_frame,
    widget_frames,
)

ROOT = Path(__file__).resolve().parents[1]


def draw_line(slope):
    fig, ax = plt.subplots(figsize=(3, 2))
    x = np.linspace(0, 1, 20)
    ax.plot(x, slope * x)
    ax.set_ylim(-3, 3)
    return fig


def slope(frames, value=None, **kw):
    return int_control("slope", -3, 3, frames=frames, value=value, **kw)


def test_one_distinct_frame_per_value_and_figures_closed():
    before = len(plt.get_fignums())
    w = live_figure(draw_line, slope([-2, 0, 2]))
    assert len(plt.get_fignums()) == before
    frames = widget_frames(w)
    assert len(frames) == 3
    assert all(f.startswith(b"\x89PNG") for f in frames)
    assert len(set(frames)) == 3
    assert frame_pixels(frames[0]).shape == (160, 240, 4)  # 3x2 inches at dpi 80


def test_moving_the_selector_changes_the_shown_frame():
    w = live_figure(draw_line, slope([-2, 0, 2]))
    first = shown_frame(w)
    w.selectors[0].index = 2
    assert w.stack.selected_index == 2
    assert shown_frame(w) != first
    assert not np.array_equal(frame_pixels(shown_frame(w)), frame_pixels(first))


def test_initial_value_and_labels():
    w = live_figure(draw_line, float_control("slope", 0.0, 2.0, frames=(0.5, 1.0, 1.5),
                                             value=1.0))
    assert w.selectors[0].index == 1 and w.stack.selected_index == 1
    assert w.selectors[0].label == "1"
    assert list(w.selectors[0].options) == [("0.5", 0), ("1", 1), ("1.5", 2)]
    w2 = live_figure(draw_line, slope([1, 2], fmt=lambda v: f"k={v}"))
    assert w2.selectors[0].label == "k=1"


def test_client_side_link_connects_selector_index_to_stack():
    w = live_figure(draw_line, slope([1, 2]))
    assert isinstance(w, ipywidgets.VBox) and isinstance(w, LiveFigure)
    (link,) = w.links
    assert isinstance(link, ipywidgets.widgets.widget_link.Link)
    assert link.source == (w.selectors[0], "index")
    assert link.target == (w.stack, "selected_index")


@pytest.mark.parametrize("make, match", [
    (lambda: slope([]), "frames must not be empty"),
    (lambda: slope([1, 2], value=3), "value 3 must be one of frames"),
    (lambda: int_control("slope", -3, 3, frames=[1], label=""), "label"),
    (lambda: slope([1, 1]), "distinct"),
    (lambda: live_figure(draw_line, int_control("s", 0, 200, frames=range(100))), "at most"),
    (lambda: live_figure(draw_line, slope([1]), dpi=5), "dpi"),
])
def test_bad_arguments_raise(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_draw_must_return_a_figure():
    with pytest.raises(ValueError, match="matplotlib Figure"):
        live_figure(lambda slope: None, slope([1]))
    with pytest.raises(ValueError, match="callable"):
        live_figure(None, slope([1]))
    with pytest.raises(ValueError, match="LiveFigure"):
        widget_frames(ipywidgets.IntSlider())


def test_page_runner_reads_the_frames_from_widget_state(tmp_path):
    from pagerun import execute_page, slider_figures

    header = (ROOT / "book" / "intro.md").read_text().split("---\n")[1]
    page = tmp_path / "page.md"
    cell = ("```{code-cell} ipython3\n"
            "import matplotlib.pyplot as plt\n"
            "from rslab.viz.controls import int_control\n"
            "from rslab.viz.widgets import live_figure\n"
            "def draw(k):\n"
            "    fig, ax = plt.subplots(figsize=(2, 1))\n"
            "    ax.plot([0, 1], [0, k * USE])\n"
            "    return fig\n"
            "live_figure(draw, int_control('k', 1, 5, frames=[1, 2, 3]))\n"
            "```\n")
    page.write_text(f"---\n{header}---\n\n# Page\n\n```{{code-cell}} ipython3\nUSE = 1\n```\n\n"
                    + cell)
    frames = slider_figures(execute_page(page))
    assert len(frames) == 1 and len(frames[0]) == 3 and len(set(frames[0])) == 3
    page.write_text(page.read_text().replace("USE = 1", "USE = 0"))
    with pytest.raises(ValueError, match="same picture for all 3 values"):
        execute_page(page)
