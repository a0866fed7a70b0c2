"""The machine plots draw what the trace holds; the example programs compute what they claim."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from rslab.machine import MachineConfig, assemble, simulate  # noqa: E402
from rslab.machine import examples as ex  # noqa: E402
from rslab.numerics.fastlog import fast_exp2  # noqa: E402
from rslab.viz import machine_plots as mp  # noqa: E402


@pytest.fixture(scope="module")
def naive():
    words, m, values = ex.sumexp_inputs(6)
    run = simulate(ex.sumexp_naive(6).program(), vmem=words, sregs={2: m}, trace=True)
    return run, m, values


def test_naive_sumexp_computes_the_sum(naive):
    run, m, values = naive
    z = ((values - m) * ex.LOG2E).astype(np.float32)
    want = fast_exp2(z).astype(np.float64).sum()
    assert abs(run.sreg_f32(3) - want) / want < 1e-5
    assert run.trace.steady_state("sumexp")["stalls_per_iter"] > 0


def test_resource_bound_body_reaches_res_mii():
    run = simulate(assemble(ex.resource_bound_body(12)), trace=True)
    ss = run.trace.steady_state("body")
    assert ss["cycles_per_iter"] == 10 and ss["stalls_per_iter"] == 0


def test_timeline_has_one_row_per_op(naive):
    run = naive[0]
    fig = mp.plot_timeline(run.trace, first=3, count=10)
    ax = fig.axes[0]
    assert len(ax.get_yticklabels()) == 10
    assert ax.get_yticklabels()[0].get_text().endswith(run.trace.ops[3].text)
    plt.close(fig)
    with pytest.raises(ValueError, match="no ops"):
        mp.plot_timeline(run.trace, first=10_000)


def test_gantt_rows_are_the_slot_instances(naive):
    run = naive[0]
    fig = mp.plot_slot_gantt(run.trace)
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert labels == ["ld", "st", "valu0", "valu1", "sfu", "xlu", "scalar", "stalls"]
    plt.close(fig)


def test_stall_bars_and_occupancy_and_core(naive):
    run = naive[0]
    fig = mp.plot_stalls({"a": run, "b": run})
    heights = sum(p.get_height() for p in fig.axes[0].patches) / 2
    assert heights == pytest.approx(run.bundles + sum(run.stalls.values()))
    plt.close(fig)
    plt.close(mp.plot_occupancy(run.trace))
    fig = mp.draw_core(MachineConfig().with_(latency={"sfu": 21}))
    texts = " ".join(t.get_text() for t in fig.axes[0].texts)
    assert "latency 21" in texts
    plt.close(fig)
