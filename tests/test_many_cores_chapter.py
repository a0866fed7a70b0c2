"""The functions the chapter "Many cores" calls (rslab.chapters.many_cores), on small rows."""

import matplotlib
import numpy as np
import pytest

from rslab.chapters import many_cores as mc

matplotlib.use("Agg")


def test_the_chip_and_its_sources():
    rows = mc.chip_rows()
    assert rows[0][0] == "cores" and "1152 B/cycle" in rows[1][1]
    src = mc.sources()
    assert {s["field"] for s in src} == {"hbm_bytes_per_cycle", "hop_latency",
                                         "endpoint_latency", "exchange_bytes"}
    by = {s["field"]: s["value"] for s in src}
    assert by["hbm_bytes_per_cycle"] == 9 * 128 and by["exchange_bytes"] == 256  # KiB
    assert "GDDR6" in src[0]["public figure"] and "two" in src[0]["public figure"]
    assert all(s["source"].startswith("tenstorrent/tt-isa-documentation") for s in src)


def test_what_merges_exactly():
    a = mc.merge_algebra(vocab=4864, cores=4, rows=3)
    assert a["max_equal"] == a["argmax_equal"] == a["integer_total_equal"] == 3
    assert 0 <= a["sum_equal"]["max-first"] <= 3
    # each core quantises its own blocks: only at the merged exponent do the totals add up
    assert a["integer_total_own_exponent"] < 3


def test_the_live_figure_runs_a_chip_and_draws_its_cores():
    fig, caption = mc.live_figure(vocab=2048)(cores=4, requests=2, mode="sequential", hbm=576)
    assert "cycles; the chip's bound" in caption and "equal to the reference's" in caption
    run = mc.live_run(4, 2, "parallel", 1152, vocab=2048)
    segments = mc.core_segments(run)
    assert set(segments) == set(run.plan.active)
    for segs in segments.values():  # in order, not overlapping, ending at the core's end
        assert all(a[1] <= b[0] for a, b in zip(segs, segs[1:], strict=False))
    assert {p for s in segments.values() for _, _, p in s} >= {"max", "residual"}


def test_the_curve_figure_marks_the_cores():
    points = mc.curves(vocab=1280, requests=(2,), cores=(1, 2), names=("first-reject",),
                       modes=("sequential",))
    fig, caption = mc.curve_figure(points)(2)
    assert caption.startswith("2 cores: R = 2") and mc.targets(points) == []


def test_the_lowest_core_merge_is_numpys_argmax_with_ties():
    rng = np.random.default_rng(1)
    rows = rng.integers(0, 4, size=(200, 1000)).astype(np.float32)
    assert all(mc.merge_argmax(r, k) == int(np.argmax(r)) for r in rows for k in (1, 3, 7))


def test_a_row_split_over_cores_is_faster_and_its_tables_read_as_prose():
    points = mc.curves(vocab=8192, requests=(2,), cores=(1, 8), names=("first-reject",))
    by = {(p["mode"], p["cores"]): p for p in points}
    assert all(p["tokens_match_reference"] for p in points)
    assert by[("sequential", 8)]["cycles"] < by[("sequential", 1)]["cycles"]
    assert by[("parallel", 1)]["bound_cycles"] >= by[("sequential", 1)]["bound_cycles"]
    rows = mc.scaling_rows(mc.scaling(points)) + mc.mode_rows(points)
    assert all("_" not in key for row in rows for key in row)
    merged = mc.merge_rows(mc.merge_algebra(vocab=2048, cores=4, rows=2))
    assert merged[0]["rows equal to one core's"] == "2 of 2"


def test_the_tighter_estimate_lets_the_checks_merges_overlap_the_q_rows():
    from rslab.fixtures import VOCAB
    from rslab.kernels.sampler.chip_bound import chip_bound
    from rslab.kernels.sampler.chip_plan import plan_rows
    from rslab.machine.config import ChipConfig
    plan, chip = plan_rows(2, 4, VOCAB, 32), ChipConfig(cores=32)
    b = chip_bound(plan, chip, np.zeros(2, int))
    point = {"name": "first-reject", "mode": "sequential", "cores_per_row": plan.cores_per_row,
             **{k: b[k] for k in ("dma_cycles", "hbm_cycles")}}
    tight = mc.tail_estimate(point, chip)
    assert tight == b["hbm_cycles"] + 2 * chip.barrier_latency(16) < b["bound_cycles"]
    with pytest.raises(ValueError, match="point"):
        mc.tail_estimate(point | {"name": "all-accept"})


def test_the_drawing_core_works_longest_after_the_last_merge():
    """The tighter estimate leaves out the draw after the totals' merge: measured on the
    32-core first-step reject, it is the core that ends last's tail, one core per request,
    and with it the run is within its 1.5x target of the estimate."""
    from rslab.fixtures import VOCAB
    from rslab.kernels.sampler.chip_bound import chip_bound
    from rslab.kernels.sampler.chip_plan import plan_rows
    from rslab.machine.config import ChipConfig
    crit = mc.critical_waits("first-reject", 2, 32)
    after = crit["after_barriers"]
    draw = after[crit["core"]]
    assert len(after) == 32 and sorted(after.values()).count(draw) == 2
    assert min(after.values()) < draw
    plan, chip = plan_rows(2, 4, VOCAB, 32), ChipConfig(cores=32)
    b = chip_bound(plan, chip, np.zeros(2, int))
    point = {"name": "first-reject", "mode": "sequential", "cores_per_row": plan.cores_per_row,
             **{k: b[k] for k in ("dma_cycles", "hbm_cycles")}}
    tight = mc.tail_estimate(point, chip)
    assert crit["cycles"] / (tight + draw) <= 1.5
    assert -(-crit["cycles"] // 1.5) - tight < min(after.values())


def test_parallel_mode_reads_every_row_whatever_the_outcome():
    fr, aa = mc.mode_bytes("first-reject", vocab=2048), mc.mode_bytes("all-accept", vocab=2048)
    assert fr["parallel"] == aa["parallel"] > aa["sequential"] > fr["sequential"]
    assert mc.grid_runs() == 2 * 2 * len(mc.page_grid()["requests"]) * len(
        mc.page_grid()["cores"])


def test_a_printed_bound_is_rounded_up():
    assert [mc.upper_text(x) for x in (3e-5, 3.2e-5, 9.5e-5, 1e-4)] == [
        "3e-05", "4e-05", "1e-04", "1e-04"]
    assert all(float(mc.upper_text(x)) >= x for x in np.geomspace(1e-9, 1e-2, 200))


def test_the_bound_at_every_core_count_is_lowest_where_the_engines_outrun_the_hbm():
    from rslab.fixtures import VOCAB
    from rslab.machine.config import ChipConfig
    bound = mc.bound_curve(vocab=VOCAB, cores=range(1, 17))  # the plan alone: no run
    chip, low = ChipConfig(), min(bound, key=bound.get)
    dma = chip.core.dma_bytes_per_cycle
    assert (low - 1) * dma < chip.hbm_bytes_per_cycle <= low * dma
    points = mc.curves(vocab=8192, requests=(2,), cores=(4,), names=("first-reject",),
                       modes=("sequential",))
    assert mc.bound_curve(vocab=8192, cores=(4,))[4] == points[0]["bound_cycles"]
    assert bound[low - 1] > bound[low] and bound[16] >= bound[low]
    assert mc.TARGETS[0][:3] == ("first-reject", 2, 32)


def test_the_sources_give_the_core_to_router_latency_each_way():
    src = {s["field"]: s for s in mc.sources()}["endpoint_latency"]
    assert "each way" in src["public figure"] and src["value"] == 5


@pytest.mark.heavy
def test_where_parallel_mode_wins_at_all_accept_the_bet_on_acceptance_wins_back():
    from rslab.fixtures import VOCAB
    from rslab.kernels.sampler.chip_curves import curve_point
    par, seq = (curve_point("all-accept", 1, 32, m, VOCAB) for m in ("parallel", "sequential"))
    bet = curve_point("all-accept", 1, 32, "sequential", VOCAB, guess="accept")
    assert bet["tokens_match_reference"]
    assert bet["cycles"] < par["cycles"] < seq["cycles"]


def test_both_bytes_terms_add_one_dma_latency():
    from rslab.exercises import expected, variant
    from rslab.kernels.sampler.chip_bound import chip_bound, plan_bytes
    from rslab.kernels.sampler.chip_plan import plan_rows
    from rslab.machine.config import ChipConfig
    chip, plan, none = ChipConfig(cores=4), plan_rows(2, 4, 8192, 4), np.zeros(2, int)
    nbytes, latency = plan_bytes(plan, none), chip.core.dma_latency
    b = chip_bound(plan, chip, none)
    assert b["hbm_cycles"] == latency + -(-nbytes // chip.hbm_bytes_per_cycle)
    assert b["dma_cycles"] == latency + -(-nbytes // (4 * chip.core.dma_bytes_per_cycle))
    v = variant("cores-bytes-term")
    rate = min(v.cores * chip.core.dma_bytes_per_cycle, v.hbm_bytes_per_cycle)
    fr = plan_bytes(plan_rows(2, 4, 154_880, 1), none)
    assert expected("cores-bytes-term") == latency + -(-fr // rate)


@pytest.mark.heavy
def test_half_the_hbm_and_the_online_merge_at_32_cores():
    from rslab.fixtures import VOCAB
    from rslab.kernels.sampler.chip_curves import curve_point
    at32 = curve_point("first-reject", 2, 32, "sequential", VOCAB)
    half = curve_point("first-reject", 2, 32, "sequential", VOCAB,
                       settings=(("hbm_bytes_per_cycle", 576),))
    grow = half["cycles"] / at32["cycles"]
    assert 1 < grow < 2 and at32["hbm_cycles"] < at32["cycles"]  # the hbm term: a share
    assert half["hbm_cycles"] / at32["hbm_cycles"] > grow
    online = curve_point("first-reject", 2, 32, "sequential", VOCAB, merge="online")
    a, o = at32["last_waits"], online["last_waits"]
    assert o["barrier"] < a["barrier"] and o["hbm"] > a["hbm"]
    assert o["hbm"] - a["hbm"] < a["barrier"] - o["barrier"]  # not all become HBM waits


def test_the_first_step_reject_reads_each_requests_next_row_too():
    from rslab.kernels.sampler.chip_curves import curve_point
    from rslab.kernels.sampler.layout import SamplerLayout
    task, row = mc.mode_bytes("first-reject", vocab=8192)["sequential"], SamplerLayout(
        2, 4, 8192).row_bytes
    points = [curve_point("first-reject", 2, c, "sequential", 8192, guess=g)
              for c, g in ((1, "reject"), (8, "reject"), (8, "accept"))]
    for p in points:
        rows, rest = divmod(p["hbm_bytes"] - task, row)
        assert rows == 2 and 0 < rest < 100 * p["cores"]  # one row per request, small reads
    assert points[1]["hbm_bytes"] == points[2]["hbm_bytes"]  # either bet reads it


@pytest.mark.heavy
def test_the_online_merge_changes_more_positions_on_the_readers_sixteen():
    rates = {r["order"]: r for r in mc.change_rates(positions=16)}
    online, split, numpy = rates["split16-online"], rates["split16"], rates["numpy"]
    assert online["positions"] == 16
    assert online["positions_changed"] > split["positions_changed"]
    assert online["mean"] > 1.5 * split["mean"] and online["max"] <= split["max"]
    assert split["mean"] / 2 <= numpy["mean"] <= 2 * split["mean"]


def test_split_rows_read_parallel_modes_bytes_at_all_accept_and_lose_less_after_them():
    from rslab.kernels.sampler.chip_curves import curve_point
    seq, par = (curve_point("all-accept", 2, 8, m, 8192) for m in ("sequential", "parallel"))
    whole = curve_point("all-accept", 2, 2, "sequential", 8192)
    assert seq["cores_per_row"] > 1 and whole["cores_per_row"] == 1
    assert abs(seq["hbm_bytes"] - par["hbm_bytes"]) < 0.01 * par["hbm_bytes"]
    assert whole["hbm_bytes"] < par["hbm_bytes"] / 2  # whole requests: the task's bytes only
    assert par["core_bytes_max"] > seq["core_bytes_max"] and par["last_byte"] > seq["last_byte"]
    assert par["cycles"] - par["last_byte"] > seq["cycles"] - seq["last_byte"]
    rows = mc.traffic_rows([seq, par])
    assert [r["mode"] for r in rows] == ["parallel", "sequential"]
    assert rows[1]["bytes from the HBM"] == f"{seq['hbm_bytes']:,}"


def test_the_bootstrap_interval_of_a_ratio_of_means():
    a = np.array([1.0, 2.0, 3.0, 4.0])
    assert mc.mean_ratio_interval(a, a) == (1.0, 1.0)
    lo, hi = mc.mean_ratio_interval(2 * a, a[::-1], seed=1)
    assert lo < 2 < hi and mc.mean_ratio_interval(2 * a, a[::-1], seed=1) == (lo, hi)
    assert mc.mean_ratio_interval([1.0, 0.0], [0.0, 0.0])[1] == np.inf
    with pytest.raises(ValueError, match="a, b"):
        mc.mean_ratio_interval([1.0], [1.0, 2.0])


def test_the_critical_core_s_dma_waits_split_by_phase():
    """On one core the DMA waits per phase add up to the core's DMA-wait stalls, and at the
    first-step reject most fall in the residuals (each waits for its q row)."""
    c = mc.critical_waits("first-reject", 2, 1, vocab=4096)
    assert sum(c["dma_by_phase"].values()) == c["dma_wait"] > 0
    assert c["dma_by_phase"]["residual"] > c["dma_wait"] / 2
