"""The machine chapter: its live figures fit every value of their controls, and the results
it states (the SFU's hold, the burst's formula, the naive loop's op mix) hold."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from rslab.chapters import machine as ch  # noqa: E402
from rslab.machine import MachineConfig, MachineError, assemble, simulate  # noqa: E402
from rslab.machine import examples as ex  # noqa: E402


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


def test_the_hold_delays_only_the_next_push():
    """Only a push waits for the hold: an add issues the cycle after a push, a push one
    bundle later waits for nothing, a push right after a push waits ``sfu_hold`` cycles
    charged to ``sfu-hold`` (on a core with hold 1 and with hold 3)."""
    for hold in (1, 3):
        cfg = MachineConfig().with_(sfu_hold=hold)
        b = simulate(assemble(ch.HOLD_DEMO), cfg, trace=True).trace.bundles
        push0, add, push1, push2 = b[1], b[2], b[3], b[4]
        assert add.cycle == push0.cycle + 1 and add.stall == 0
        assert push1.cycle == push0.cycle + 1 + hold and push1.cause in (None, "sfu-hold")
        assert push1.stall == hold - 1
        assert push2.cycle == push1.cycle + 1 + hold
        assert push2.cause == "sfu-hold" and push2.stall == hold


@pytest.mark.parametrize("hold, latency", [(1, 13), (0, 13), (2, 7), (1, 4), (1, 30)])
def test_the_sfu_burst_follows_its_formula(hold, latency):
    """n pushes then n pops: (1 + hold)(n − 1) + max(latency, n) + pop, for every n the
    FIFO holds; the (n + 1)-th push before any pop is refused."""
    cfg = MachineConfig().with_(sfu_hold=hold, latency={"sfu": latency})
    ns = np.arange(1, cfg.fifo_depth + 1)
    got = [simulate(assemble(ex.sfu_burst(int(n))), cfg).cycles for n in ns]
    assert np.array_equal(got, ch.burst_formula(ns, cfg))
    with pytest.raises(MachineError, match="FIFO"):
        simulate(assemble(ex.sfu_burst(cfg.fifo_depth + 1)), cfg)


def test_the_naive_loop_counts_its_ops_per_packed_vector():
    words, m, _ = ex.sumexp_inputs(6)
    run = simulate(ex.sumexp_naive(6).program(), vmem=words, sregs={2: m}, trace=True)
    assert ch.ops_per_iteration(run.trace, "sumexp", 3) == {
        "ld": 1, "scalar": 1, "valu": 8, "sfu": 2, "pop": 2}
    ss = run.trace.steady_state("sumexp")
    assert {c for c, v in ss["stalls_by_cause"].items() if v} == {"raw", "sfu-hold", "sfu-wait"}


def test_the_chapter_tables_have_human_headers():
    cfg = MachineConfig()
    for table in (ch.config_table(cfg), ch.mnemonics_table(cfg), ch.rejection_table(),
                  ch.bundles_table(simulate(assemble(ch.HOLD_DEMO), trace=True))):
        header = table.splitlines()[0]
        assert "_" not in header and header.split("|")[1].strip()[0].isupper(), header


def test_a_body_runs_through_pipeline_and_sim_as_typed():
    body = ("iterations 64\ncarried m=v50\nbefore: sli s1, 0\nbefore: vli v50, -inf\n"
            "after:  vred.max s3, v50\n\nx = vld [s1 + 0 + 512*i]\nlo = vunpack.lo x\n"
            "hi = vunpack.hi x\nh = vmax.f32 lo, hi\nm = vmax.f32 m[-1], h\n")
    words, m, _ = ex.sumexp_inputs(64)
    plan, run = ch.run_body(body, vmem=words)
    assert plan["binding"].startswith("recurrence") and plan["ii"] == plan["rec_mii"]
    assert run["registers"]["s3"]["f32"] == m


def test_only_multiples_of_the_slots_from_slots_times_latency_fill_the_valu():
    """Interleaved chains, each round in new bundles: 12 and 15 chains keep three slots
    busy at latency 4; 13, 14 and 16 leave the last bundle of every round part-empty."""
    from rslab.exercises import expected
    from rslab.machine import MachineConfig, assemble, simulate

    narrow = MachineConfig().with_(latency={"valu": 4}, slots={"valu": 3})

    def rate(c, m=48):
        ops = [f"vadd.f32 v{1 + i}, v{1 + i}, v63" for i in range(c)]
        text = "\n".join(" ; ".join(ops[k:k + 3]) for _ in range(m) for k in range(0, c, 3))
        return 48 * c / simulate(assemble(text + "\nhalt\n"), narrow).cycles

    assert [c for c in range(9, 17) if rate(c) > 2.9] == [12, 15]
    assert expected("machine-chains", {"valu_latency": 4, "valu_slots": 3}) == 12
