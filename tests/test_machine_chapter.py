"""The machine chapter's live figures: their axes fit every value of their controls."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from rslab.chapters import machine as ch  # noqa: E402


@pytest.mark.parametrize("figure, run, control", [
    (ch.latency_figure, ch.latency_run, ch.valu_latency_control("latency")),
    (ch.slots_figure, ch.slots_run, ch.valu_slots_control()),
])
def test_every_value_of_the_slider_fits_the_timeline(figure, run, control):
    for value in range(int(control.lo), int(control.hi) + 1):
        fig, caption = figure(value)
        lo, hi = fig.axes[0].get_xlim()
        ops = run(value).trace.ops
        assert lo <= min(op.issue for op in ops) and max(op.ready for op in ops) <= hi, \
            f"{control.label} = {value}: ops beyond the x-axis [{lo}, {hi}]"
        plt.close(fig)


def test_the_latency_slider_reaches_the_figures_maximum():
    assert ch.valu_latency_control("latency").hi == ch.LATENCY_MAX
