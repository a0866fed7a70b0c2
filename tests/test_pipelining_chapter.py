"""The software-pipelining chapter's corrected sentences, one test each: the figure each rests
on, computed by the chapter module (rslab.chapters.pipelining) or by the reader's commands."""

import json

import matplotlib
import pytest

matplotlib.use("Agg")

from rslab.chapters import pipelining as ch  # noqa: E402
from rslab.exercises import oracles  # noqa: E402
from rslab.kernels.studies.gumbel_loop import gumbel_program  # noqa: E402
from rslab.kernels.studies.sumexp_loop import sumexp_body  # noqa: E402
from rslab.machine import MachineConfig  # noqa: E402
from rslab.schedule import SlotModel, modulo_schedule  # noqa: E402
from rslab.viz import schedule_plots as sp  # noqa: E402


def _timing(sfu_latency):
    config = MachineConfig().with_(latency={"sfu": sfu_latency})
    sched = modulo_schedule(sumexp_body(), SlotModel.from_config(config), reserve_scalar=1)
    return ch.iteration_timing(sched), sched, ch.span_bound(config, 4)["span"]


def test_the_issue_span_bound_is_the_one_stage_length_at_every_sfu_latency():
    rows = ch.span_rows(sumexp_body(), MachineConfig(), (7, 10, 13, 16, 20, 25))
    for r in rows:
        assert r["span"] == r["chain"] - 3 + 1 + 3 * 2 == r["one_stage"] <= r["length"]
    default = next(r for r in rows if r["sfu"] == 13)
    assert (default["chain"], default["span"], default["length"]) == (30, 34, 37)


def test_the_row_accounting_sums_terms_measured_apart_to_the_runs_cycles():
    s = ch.row_accounting(154880)
    assert (s["short"], s["last_op"], s["partial"]) == (7, 3, 4)
    assert s["partial_labels"][:4] == ["acc0", "acc1", "e0", "e1"]
    assert (s["reduction_bundles"], s["raw"], s["drain"]) == (3, 6, 7)
    assert s["loop_cycles"] == s["predicted_cycles"] - s["short"] + 3 + 6 + 7 == 3069


def test_the_stages_are_the_schedules_length_over_ii_and_the_oracle_agrees():
    for latency in (7, 13, 25):  # the slider's shortest, the hidden and the public variant
        t, sched, bound = _timing(latency)
        assert t["stages"] == sched.stage_count == oracles.sumexp_stages(latency)
        assert bound <= t["length"]
    t, sched, bound = _timing(7)
    assert -(-bound // sched.ii) < t["stages"]  # chain plus push spacing predicts too few


def test_the_residual_index_is_stepped_early_and_read_late_by_the_next_select():
    why = ch.unroll_cause(gumbel_program("residual", 8)[1])
    last_read, opcode, distance = why["reads"][-1]
    assert why["value"] == "i1" and why["def_opcode"] == "vadd.u32"
    assert why["defined"] < why["ii"] and opcode == "vsel" and distance == 1
    assert why["lifetime"] == last_read - why["defined"] > (why["copies"] - 1) * why["ii"]
    assert why["copies"] == why["unroll"]
    assert sorted(op for _, op, d in why["reads"] if d == 1) == ["vadd.u32", "vrand", "vsel"]


def test_the_residual_index_misses_one_copy_fewer_by_a_cycle_its_readers_would_allow():
    why = ch.unroll_cause(gumbel_program("residual", 8)[1])
    margin = why["lifetime"] - (why["copies"] - 1) * why["ii"]
    vrand = next(t for t, op, d in why["reads"] if op == "vrand")
    assert margin == 1 and why["defined"] + margin + MachineConfig().latency["valu"] <= vrand


def test_the_residual_kernel_has_no_free_valu_slot_and_its_next_value_needs_five_copies():
    why = ch.unroll_cause(gumbel_program("residual", 8)[1])
    assert why["valu_free"] == 0 and why["valu_ops"] == 2 * why["ii"] == 50
    assert (why["next"], why["next_lifetime"], why["next_copies"]) == ("i0", 123, 5)
    assert why["next_copies"] == why["copies"] - 1


def test_one_packed_vector_an_iteration_runs_as_fast_with_more_iterations_in_flight():
    two, two0, one, one0 = ch.chain_rows()
    assert one["exp2 chains / iteration"] == 2 and two["exp2 chains / iteration"] == 4
    assert one["cycles / packed vector"] == two["cycles / packed vector"]
    assert one["stall cycles / packed vector"] == 0 == two["stall cycles / packed vector"]
    assert one["stages"] > two["stages"]
    assert 0 < one0["stall cycles / packed vector"] < two0["stall cycles / packed vector"]


def test_one_exp2_chain_an_iteration_runs_as_fast_planned_with_or_without_the_hold():
    low, high = ch.one_chain_rows((1, 3))
    assert low["booked"]["pushes"] == 1
    for plan in (low["booked"], low["blind"]):   # II 3 already spaces pushes 1 + 1 apart
        assert (plan["res_mii"], plan["rec_mii"], plan["ii"]) == (3, 3, 3)
        assert plan["cycles_per_iter"] == 3 and plan["stalls_per_iter"] == 0
    booked, blind = high["booked"], high["blind"]   # hold 3: 1 + hold exceeds the VALU's 3
    assert booked["ii"] == booked["res_mii"] == 4 and booked["stalls_per_iter"] == 0
    assert blind["ii"] == 3 and blind["cycles_per_iter"] == booked["cycles_per_iter"] == 4
    assert blind["hold_stalls_per_iter"] == 1 and blind["other_stalls"] == {}


def test_command_json_names_the_command_on_bad_input(tmp_path):
    bad = tmp_path / "bad.s"
    bad.write_text("x0 = vfrob v1\n")
    with pytest.raises(ValueError, match="rslab pipeline"):
        ch.command_json("pipeline", bad, "-o", tmp_path / "out.s")


def test_the_heuristic_reaches_mii_at_every_valu_latency_of_the_slider():
    lo, hi = ch.VALU_RANGE
    for v in range(lo, hi + 1):
        for p in ch.valu_points(v, (1, 2, 4)):
            assert p["ii"] == max(p["res_mii"], p["rec_mii"]), v


FLOAT_BODY = """iterations 32
carried acc0=v50 acc1=v51
before: sli s1, 0
before: sli s2, 0x0
before: vbcast v60, s2 ; vli v61, 0x3fb8aa3b
before: vli v50, 0 ; vli v51, 0
after:  vadd.f32 v52, v50, v51
after:  vred.add s3, v52

x0 = vld [s1 + 0 + 1024*i]
x1 = vld [s1 + 512 + 1024*i]
z0 = vsub.f32 x0, v60
y0 = vmul.f32 z0, v61
@e0 = vexp2 y0
e0 = vpop @e0
z1 = vsub.f32 x1, v60
y1 = vmul.f32 z1, v61
@e1 = vexp2 y1
e1 = vpop @e1
acc0 = vadd.f32 acc0[-1], e0
acc1 = vadd.f32 acc1[-1], e1
"""


def test_the_float_rows_valu_and_sfu_tie_at_resmii(tmp_path):
    body = tmp_path / "body.s"
    body.write_text(FLOAT_BODY)
    plan = json.loads(ch.command_output("pipeline", body, "--json"))
    cycles = {u: -(-plan["usage"][u] // plan["units"][u]) for u in ("valu", "sfu")}
    assert cycles["valu"] == cycles["sfu"] == plan["res_mii"] == plan["ii"] == 4


def test_the_unroll_3_program_pays_for_its_remainder(tmp_path):
    machine = ("--config", "valu_slots=3", "sfu_hold=0")
    body = ch.EXAMPLES / "sumexp_body.s"
    u3 = ch.unrolled_program(body, 3, machine, tmp_path / "u3.s")
    u1 = ch.unrolled_program(body, 1, machine, tmp_path / "u1.s")
    main, rest = u3["loops"]
    assert rest["iterations"] == 32 % 3 and rest["per_pass"] == 1
    assert rest["cycles_per_source_iter"] > main["cycles_per_source_iter"]
    assert u3["cycles"] > u1["cycles"] and u3["bundles"] > u1["bundles"]
    rem = ch.remainder_loop((tmp_path / "u3.s").read_text(), body)
    assert rem["op_after_op"] and rem["bundles"] == rest["cycles_per_source_iter"]
    assert ch.one_stage_ii("valu_slots=3", "sfu_hold=0") < rem["bundles"]


def test_without_a_remainder_the_unroll_3_is_still_slower_and_unroll_2_is_faster(tmp_path):
    machine = ("--config", "valu_slots=3", "sfu_hold=0")
    body = ch.EXAMPLES / "sumexp_body.s"
    at30 = {k: ch.unrolled_program(body, k, machine + ("--iterations", "30"),
                                   tmp_path / f"u{k}_30.s") for k in (1, 3)}
    assert len(at30[3]["loops"]) == 1 and at30[3]["cycles"] > at30[1]["cycles"]
    tails = {k: ch.file_tail(tmp_path / f"u{k}_30.s") for k in (1, 3)}
    # steady states 210 each; fill 28 and 63, the unrolled epilogue giving back 15 of it
    assert [tails[k]["loop_end"] for k in (1, 3)] == [210 + 28, 210 + 63 - 15]
    assert at30[3]["cycles"] - at30[1]["cycles"] == 63 - 15 - 28
    assert tails[1]["cycles"] - tails[1]["loop_end"] == tails[3]["cycles"] - tails[3]["loop_end"]
    u1, u2 = (ch.unrolled_program(body, k, machine, tmp_path / f"u{k}.s") for k in (1, 2))
    assert u2["bundles"] < u1["bundles"] and u2["cycles"] < u1["cycles"]


def test_unroll_2_reaches_its_bound_and_the_heuristic_ends_above_it_at_3_and_4():
    sweep = json.loads(ch.command_output("pipeline", "--example", "sumexp_body", "--config",
                                         "valu_slots=3", "sfu_hold=0", "--sweep", "--json"))
    best = ch.sweep_best(sweep["rows"])
    assert best[2]["ii"] == best[2]["mii"]
    assert [k for k in (3, 4) if best[k]["ii"] > best[k]["mii"]] == [3, 4]


def test_the_program_bundles_are_the_assemblers_count():
    from rslab.kernels.studies.sumexp_loop import sumexp_program
    from rslab.machine import assemble

    text, _ = sumexp_program(24, 0.0)
    lines = [ln for ln in text.splitlines()
             if ln.strip() and not ln.startswith(("#", "loop", "endloop"))]
    assert text.startswith("# machine") and assemble(text).n_bundles == len(lines)


def test_registers_do_not_grow_with_workers_at_every_valu_latency_nor_hold():
    regs = {v: [p["vector_registers"] for p in ch.valu_points(v, (1, 2, 4))]
            for v in range(ch.VALU_RANGE[0], ch.VALU_RANGE[1] + 1)}
    assert [v for v, r in regs.items() if r[2] <= r[0]] == [2]  # at latency 1 four hold more
    assert regs[1][2] > regs[1][0] and regs[8][2] > regs[8][0]
    by_hold = {h: {p["vector_registers"] for p in ch.hold_points(h, (7, 10, 13, 16, 20))}
               for h in (0, 1, 4)}
    assert len(by_hold[1]) == 1 and by_hold[0] != by_hold[1] != by_hold[4]


def test_the_sweep_plots_tick_only_the_swept_values():
    fig = sp.plot_sweep([1, 2, 4], {"II": [12, 10, 10]}, xlabel="workers", ylabel="cycles")
    assert list(fig.axes[0].get_xticks()) == [1, 2, 4]
    assert fig.axes[0].get_ylabel() == "cycles"


def test_some_kernel_bundles_hold_one_iteration_and_the_loads_sit_beside_the_vmuls():
    from rslab.kernels.studies.sumexp_loop import sumexp_program

    mix = ch.kernel_mix(sumexp_program(24, 0.0)[1].schedule)
    assert mix["single"] == [2, 4, 8] and len(mix["mixed"]) == 7
    assert mix["load_stages"] == [0] and mix["beside_opcodes"] == ["vmul.f32"]
    assert {s for _, s in mix["beside_loads"]} == {1} and mix["push_beside_older_pop"]


def test_over_the_latencies_shown_a_longer_sfu_latency_never_costs_ii_at_any_hold():
    lats = (7, 10, 13, 16, 20)
    flat, iis = [], {}
    for h in range(ch.HOLD_RANGE[0], ch.HOLD_RANGE[1] + 1):
        ps = ch.hold_points(h, lats)
        assert len({p["ii"] for p in ps}) == 1
        assert all(a["stages"] <= b["stages"] for a, b in zip(ps, ps[1:], strict=False))
        regs = [p["vector_registers"] for p in ps]
        assert max(regs) - min(regs) <= 1
        flat += [h] * (len({p["stages"] for p in ps}) == 1)
        assert all(p["stages"] == -(-p["length"] // p["ii"]) for p in ps)
        assert ps[-1]["stages"] - ps[0]["stages"] <= 1
        iis[h] = ps[0]["ii"]
    assert flat == [3, 6]
    assert iis[4] > iis[3] and 4 not in flat and 5 not in flat  # a larger II is no room
    at_hold1 = [p["stages"] for p in ch.hold_points(1, lats)]
    assert at_hold1 == [4, 4, 4, 4, 5]


def test_beyond_the_latencies_shown_the_fifo_binds_and_ii_rises():
    from rslab.kernels.studies import steady as pb

    first = ch.fifo_binds(tuple(range(ch.HOLD_RANGE[0], ch.HOLD_RANGE[1] + 1)), 20)
    assert first[0] == first[1] == {"latency": 40, "res_mii": 11}  # ceil(4 * 41 / 16)
    assert first[6]["latency"] == 112 and all(f["latency"] > 20 for f in first.values())
    assert ch.fifo_entries((33, 34, 39, 40)) == [15, 16, 16, 16]
    for hold in (0, 1):
        before, at = (pb.sumexp_point(sfu_latency=L, hold=hold) for L in (39, 40))
        assert (before["ii"], at["ii"], at["measured_ii"], at["stalls_per_iter"]) == (10, 11, 11, 0)
        assert (before["stages"], at["stages"]) == (7, 6)


def test_between_an_iterations_pushes_only_other_iterations_ops_issue():
    sched = modulo_schedule(sumexp_body(), reserve_scalar=1)
    ops = list(zip(sched.graph.ops, sched.times, strict=True))
    pushes = [t for op, t in ops if op.is_push]
    assert pushes == [13, 15, 17, 19] and {t // sched.ii for t in pushes} == {1}
    assert not [op.label for op, t in ops if not op.is_push and 13 < t < 19]
