"""slider_figure: one precomputed frame per value, slider and frames linked both ways."""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import ipywidgets  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from rslab.viz.widgets import (  # noqa: E402
    SliderFigure,
    frame_pixels,
    shown_frame,
    slider_figure,
    widget_frames,
)

ROOT = Path(__file__).resolve().parents[1]


def draw_line(slope):
    fig, ax = plt.subplots(figsize=(3, 2))
    x = np.linspace(0, 1, 20)
    ax.plot(x, slope * x)
    ax.set_ylim(-3, 3)
    return fig


def test_one_distinct_frame_per_value_and_figures_closed():
    before = len(plt.get_fignums())
    w = slider_figure(draw_line, [-2, 0, 2], description="slope")
    assert len(plt.get_fignums()) == before
    frames = widget_frames(w)
    assert len(frames) == 3
    assert all(f.startswith(b"\x89PNG") for f in frames)
    assert len({f for f in frames}) == 3
    assert frame_pixels(frames[0]).shape == (160, 240, 4)  # 3x2 inches at dpi 80


def test_setting_slider_changes_shown_frame():
    w = slider_figure(draw_line, [-2, 0, 2], description="slope")
    first = shown_frame(w)
    w.slider.index = 2
    assert w.stack.selected_index == 2
    assert w.value == 2
    assert shown_frame(w) != first
    w.value = 0
    assert w.slider.index == 1 and w.stack.selected_index == 1
    assert not np.array_equal(frame_pixels(shown_frame(w)), frame_pixels(first))


def test_initial_value_and_labels():
    w = slider_figure(draw_line, [0.5, 1.0, 1.5], description="slope", value=1.0)
    assert w.index == 1 and w.stack.selected_index == 1
    assert w.slider.label == "1"
    assert list(w.slider.options) == [("0.5", 0), ("1", 1), ("1.5", 2)]
    w2 = slider_figure(draw_line, [1, 2], description="k", fmt=lambda v: f"k={v}")
    assert w2.slider.label == "k=1"


def test_client_side_link_connects_slider_index_to_stack():
    w = slider_figure(draw_line, [1, 2], description="slope")
    assert isinstance(w, ipywidgets.VBox) and isinstance(w, SliderFigure)
    assert isinstance(w.link, ipywidgets.widgets.widget_link.Link)
    assert w.link.source == (w.slider, "index")
    assert w.link.target == (w.stack, "selected_index")
    assert w.children == (w.slider, w.stack)


def test_redraw_recomputes_the_shown_frame():
    state = {"offset": 0.0}

    def draw(slope):
        fig, ax = plt.subplots(figsize=(2, 2))
        ax.plot([0, 1], [state["offset"], state["offset"] + slope])
        ax.set_ylim(-3, 3)
        return fig

    w = slider_figure(draw, [1, 2], description="slope")
    old = shown_frame(w)
    state["offset"] = 1.0
    new = w.redraw()
    assert new == shown_frame(w) != old
    assert widget_frames(w)[0] == widget_frames(slider_figure(draw, [1, 2], description="s"))[0]
    assert widget_frames(w)[1] != widget_frames(slider_figure(draw, [1, 2], description="s"))[1]


@pytest.mark.parametrize("kwargs, match", [
    (dict(values=[]), "values must not be empty"),
    (dict(values=[1, 2], value=3), "value 3 is not one of"),
    (dict(values=[1, 2], description=""), "description"),
    (dict(values=[1.0, 1.0]), "distinct labels"),
    (dict(values=list(range(100))), "at most"),
    (dict(values=[1], dpi=5), "dpi"),
])
def test_bad_arguments_raise(kwargs, match):
    args = dict(description="slope") | kwargs
    with pytest.raises(ValueError, match=match):
        slider_figure(draw_line, **args)


def test_draw_must_return_a_figure():
    with pytest.raises(ValueError, match="matplotlib Figure"):
        slider_figure(lambda v: None, [1], description="x")
    with pytest.raises(ValueError, match="callable"):
        slider_figure(None, [1], description="x")


def test_setting_unknown_value_raises():
    w = slider_figure(draw_line, [1, 2], description="slope")
    with pytest.raises(ValueError, match="not one of"):
        w.value = 7
    with pytest.raises(ValueError, match="SliderFigure"):
        widget_frames(ipywidgets.IntSlider())


def test_page_runner_reads_slider_frames_from_widget_state(tmp_path):
    from pagerun import execute_page, slider_figures

    header = (ROOT / "book" / "intro.md").read_text().split("---\n")[1]
    page = tmp_path / "page.md"
    cell = ("```{code-cell} ipython3\n"
            "import matplotlib.pyplot as plt\n"
            "from rslab.viz.widgets import slider_figure\n"
            "def draw(k):\n"
            "    fig, ax = plt.subplots(figsize=(2, 1))\n"
            "    ax.plot([0, 1], [0, k * USE])\n"
            "    return fig\n"
            "slider_figure(draw, [1, 2, 3], description='k')\n"
            "```\n")
    page.write_text(f"---\n{header}---\n\n# Page\n\n```{{code-cell}} ipython3\nUSE = 1\n```\n\n"
                    + cell)
    frames = slider_figures(execute_page(page))
    assert len(frames) == 1 and len(frames[0]) == 3 and len(set(frames[0])) == 3
    page.write_text(page.read_text().replace("USE = 1", "USE = 0"))
    with pytest.raises(ValueError, match="same picture for all 3 values"):
        execute_page(page)


def test_page_runner_rejects_glued_numpy_scalars(tmp_path):
    from pagerun import execute_page

    header = (ROOT / "book" / "intro.md").read_text().split("---\n")[1]
    page = tmp_path / "page.md"
    page.write_text(f"---\n{header}---\n\n# Page\n\n```{{code-cell}} ipython3\n"
                    "import numpy as np\nfrom myst_nb import glue\n"
                    "glue('ok', float(np.float64(2.5)), display=False)\n"
                    "glue('bad', np.float64(2.5), display=False)\n```\n")
    with pytest.raises(ValueError, match=r"\('bad', 'np.float64\(2.5\)'\)"):
        execute_page(page)
