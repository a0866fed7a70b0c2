"""The results chapter's findings, one test each: the recommended draw, the words for a
slowdown, Amdahl measured, each step credited to the phase that moved, the model beside the
note, the exercises' vocabulary, the sampler's input contract."""

import re

import pytest
from pagerun import ROOT

from rslab import note
from rslab.chapters import results
from rslab.fixtures import TEST_POINTS, VOCAB
from rslab.kernels.sampler.floor import machine_task_bound
from rslab.kernels.sampler.layout import SamplerLayout
from rslab.kernels.sampler.scenarios import speedup_rows
from rslab.machine import MachineConfig
from rslab.numerics.methods import RECOMMENDED


def test_the_chapter_runs_the_recommended_draw():
    """A1: the draw run beside Div8 is the one Beyond the note recommends."""
    assert results.BEYOND_DRAW == RECOMMENDED


def test_a_slowdown_is_called_a_slowdown():
    """A3: at V = 1,024 first-step reject goes 1,732 → 1,844 cycles."""
    assert results.change(1732, 1844) == "1.06× slower"
    assert results.change(96466, 33456) == "2.88× faster"
    assert results.change(5, 5) == "no faster"


def test_amdahl_by_hand():
    """Finding 36: everything but the residual row caps the speedup, however fast that row."""
    base = {"max": 10, "sumexp": 20, "acceptance": 5, "residual": 900, "bonus": 0,
            "dma_wait": 60, "setup": 5}
    opt = dict(base, residual=300, dma_wait=55)
    a = results.amdahl({"baseline_cycles": 1000, "optimized_cycles": 395,
                        "baseline_phases": base, "optimized_phases": opt})
    assert a["unchanged"] == 35 and a["same"] and a["rest"] == 100
    assert a["cap"] == pytest.approx(10) and a["rest_change"] == -5
    assert a["residual_gain"] == pytest.approx(3) and a["residual_share"] == pytest.approx(0.9)


def test_at_the_notes_v_the_residual_row_not_amdahl_limits_first_step_reject():
    """Finding 36, measured: at V = 154,880 the cap is far above the speedup, which follows
    the residual row's own gain; the model's speedup is about twice the note's."""
    row = speedup_rows(VOCAB, names=("first-reject",))[0]
    a = results.amdahl(row)
    assert a["same"] and a["cap"] > 3 * a["speedup"]
    assert a["speedup"] < a["residual_gain"] < 1.5 * a["speedup"]
    note_base, note_opt = note.SCENARIOS["first-reject"]
    assert 1.5 < a["speedup"] / (note_base / note_opt) < 2.5


def test_each_step_is_credited_to_the_phase_that_moved():
    """Finding 37: the phase with the largest change, with its own change."""
    steps = [{"step": "a", "cycles": 100, "phases": {"max": 40, "sumexp": 60}},
             {"step": "b", "cycles": 70, "phases": {"max": 15, "sumexp": 55}},
             {"step": "c", "cycles": 75, "phases": {"max": 15, "sumexp": 60}}]
    credits = results.step_credits(steps)
    assert [(c["phase"], c["phase_change"], c["saved"]) for c in credits] == [
        ("row max", -25, 30), ("sum-exp", 5, -5)]
    header = results.credits_table(steps, steps).splitlines()[0]
    columns = [c.strip() for c in header.strip("|").split("|")]
    assert len(set(columns)) == len(columns)
    assert "all-accept: phase that moved most" in columns
    assert "first-step reject: phase that moved most" in columns


def test_the_wider_step_removes_the_recurrences_of_the_row_max_and_sum_exp():
    """Finding 37's cause: pipelined at one vector and one accumulator per iteration, the row
    max (two maxes per packed vector) and sum-exp are bound by their recurrences, the row max
    three times over; two vectors and more accumulators remove both."""
    rec = results.recurrences()
    pipe, wide = "loops software-pipelined", "2 vectors / iteration, 4 accumulators"
    assert rec[(pipe, "max")] == {"rec": 6, "res": 2}
    assert rec[(pipe, "sumexp")]["rec"] > rec[(pipe, "sumexp")]["res"]
    assert all(rec[(wide, lp)]["rec"] < rec[(wide, lp)]["res"] for lp in ("max", "sumexp"))


def test_the_notes_all_accept_lies_below_the_models_task_bound():
    """Finding 4: no program of the Div8 draw reaches the note's all-accept cycles on the
    model, and the note's bonus rows took less per packed vector than the draw's fewest
    operations on the model's units."""
    tp = TEST_POINTS["all-accept"]
    bound = machine_task_bound(MachineConfig(), SamplerLayout(tp.R, tp.S, VOCAB),
                               results.accepted_at("all-accept"))
    assert bound["bound_cycles"] > note.SCENARIOS["all-accept"][1]
    loops = {k: {"bound_per_vector": v} for k, v in (("rowmax", 2.0), ("sumexp", 4.0),
                                                     ("bonus_gumbel", 17.5),
                                                     ("residual_gumbel", 19.5))}
    gap = {g["name"]: g for g in results.note_gap(loops)}
    aa, fr = gap["all-accept"], gap["first-reject"]
    assert aa["model_loops"] == 605 * (32 * 6 + 8 * 17.5)
    assert aa["note_final_at_most"] < aa["final_sfu_pace"] <= aa["task_final_pace"]
    assert fr["model_loops"] < fr["note"] and fr["natural_pace"] > fr["final_pace"]


def test_the_exercises_run_at_the_vocabulary_their_prompts_state():
    """Finding 41: the prompts name the V the solutions are computed at."""
    text = (ROOT / "book" / "09_results.md").read_text()
    stated = {int(v.replace("_", "")) for v in re.findall(r'scenario_inputs\("[\w-]+", '
                                                           r'V=([\d_]+)\)', text)}
    assert stated == {results.EXERCISE_VOCAB}
    assert "ch.exercise_runs(ch.EXERCISE_VOCAB)" in text


def test_every_input_the_sampler_refuses_raises_its_own_error():
    rows = results.rejection_rows()
    assert len(rows) == len(results.SAMPLER_REJECTS)
    assert all(kind == "ValueError" and msg for _, _, kind, msg in rows)
    assert "\\|" in results.rejection_table()  # the messages' bars do not split the table


def test_a_tie_of_units_is_explained_whatever_their_order():
    """Review 09 #5: the floor names a tie in its units' order (``st = valu``); the chapter's
    explanation of it is found."""
    from rslab.machine.floor import resource_floor

    slots = MachineConfig().slots
    cycles, binding = resource_floor({"valu": 8, "st": 4}, slots)
    assert binding == "st = valu" and results.binding_why(binding)
    assert results.binding_why("valu = st") == results.binding_why(binding)
    words = results.binding_words({"max": {"binding": binding}, "sumexp": {"binding": "sfu = valu"},
                                   "bonus": {"binding": "valu"}})
    assert "lands the float32 halves" in words and "4 exp2 pushes" in words


def test_the_sum_exp_tie_is_counted_from_its_body():
    """Review 09 r2 #1: the optimised sum-exp body holds sixteen VALU ops (subtract, multiply,
    pop, add for four float32 vectors) against four exp2 pushes of two cycles: eight cycles
    on each unit, its ResMII."""
    from rslab.kernels.sampler.bodies import sumexp_loop_body
    from rslab.kernels.sampler.plans import OPTIMISED
    from rslab.schedule import analyse

    body = sumexp_loop_body("fast", OPTIMISED.sumexp_workers, OPTIMISED.sumexp_u,
                            landed=OPTIMISED.land_fp32)
    assert analyse(body).res_mii == 8
    assert results.sumexp_tie() == ("4 exp2 pushes of 2 cycles each, 8 cycles, per 16 VALU "
                                    "ops on 2 slots, 8 cycles")
    assert results.binding_why("valu = sfu") == results.sumexp_tie()


def test_the_floor_above_the_task_bound_splits_by_op_kind():
    """Review 09 #3, r2 #2: at the note's V the counted work's cycles of the VALU-bound task
    bound sum to it; the checked rows' conversion (1 VALU op per float32 vector) is the row
    max's, which lands the halves, their subtract, multiply and pop sum-exp's (3), the bonus
    rows' 11 cycles per packed vector; the max and the sum are reductions left out."""
    tp = TEST_POINTS["all-accept"]
    task = machine_task_bound(MachineConfig(), SamplerLayout(tp.R, tp.S, VOCAB),
                              results.accepted_at("all-accept"))
    floors = {"max": 39424, "sumexp": 78528, "bonus": 85392, "acceptance": 2560,
              "dma_wait": 1737, "setup": 22}
    row = {"name": "all-accept", "R": tp.R, "S": tp.S, "vocab": VOCAB,
           "optimized_task_bound": task,
           "optimized_floor": {ph: {"bound_cycles": c} for ph, c in floors.items()}}
    parts = {p["part"]: p for p in results.floor_over_task(row)}
    assert parts["row max"]["task"] == 32 * 605 * 1
    assert parts["sum-exp"]["task"] == 32 * 605 * 3
    assert parts["bonus Gumbel"]["task"] == 8 * 605 * 11
    assert sum(p["task"] for p in parts.values()) == task["bound_cycles"]
    assert parts["row max"]["over"] == 39424 - 19360 and parts["sum-exp"]["over"] == 20448
    assert parts["row max"]["reduction"] == parts["sum-exp"]["reduction"] == 32 * 605 * 1
    assert sum(p["over"] for p in parts.values()) == sum(floors.values()) - task["bound_cycles"]
    with pytest.raises(ValueError, match="dma-bound"):
        results.floor_over_task(dict(row, optimized_task_bound=dict(task, binding="dma")))


def test_the_notes_all_accept_margin_is_less_than_one_op_per_bonus_vector():
    """Review 09 #6: the note's all-accept lies below the task bound by less than what one
    VALU op per float32 vector of the bonus rows costs on two VALU slots."""
    tp = TEST_POINTS["all-accept"]
    bound = machine_task_bound(MachineConfig(), SamplerLayout(tp.R, tp.S, VOCAB),
                               results.accepted_at("all-accept"))["bound_cycles"]
    margin = bound - note.SCENARIOS["all-accept"][1]
    assert 0 < margin < tp.R * (VOCAB // 256) * 2 / 2


def test_the_dma_waits_floor_is_not_a_bound_on_the_wait():
    """Review 09 #1: at V = 1,024 first-step reject waits less for its DMAs than the wait's
    floor, while its total stays above the sum of the floors."""
    from rslab.fixtures import scenario_inputs
    from rslab.kernels.sampler.floor import total_floor
    from rslab.kernels.sampler.plans import OPTIMISED
    from rslab.kernels.sampler.run import run_sampler

    run = run_sampler(scenario_inputs("first-reject", V=1024), "fast", OPTIMISED)
    assert run.floors["dma_wait"]["ratio"] < 1
    assert total_floor(run.floors)["bound_cycles"] <= run.cycles


def test_the_first_translation_loses_first_step_reject_in_its_residual_row():
    """Review 09 #2: against the partly optimised baseline, the first translation's plan
    spends its extra cycles mostly in the residual row, none in the acceptance check."""
    ex = results.exercise_runs(4096, third_valu=False)
    gap = ex["fr_naive_over_own"]
    assert max(gap, key=gap.get) == "residual Gumbel"
    assert abs(gap["acceptance"]) < 0.01 * sum(gap.values())
    assert ex["fr_naive_speedup"] > ex["fr_speedup"]


def test_philox_in_the_loop_costs_more_than_the_exact_paths_net_ops():
    """Review 09 #7: hoisted, Philox takes 17.5 VALU ops per float32 vector (20 before
    hoisting); the Exact body's net is less, the Fast noise's ops it drops."""
    from rslab.kernels.sampler.plans import OPTIMISED

    net = (results.valu_ops_per_vector(OPTIMISED, "exact")
           - results.valu_ops_per_vector(OPTIMISED, "fast"))
    assert results.philox_valu_per_vector() == 17.5
    assert 0 < net < results.philox_valu_per_vector() < 20


def test_raw_logit_bias_shows_long_before_a_step_of_one():
    """Review 09 #8: at logits of 1e6 (a score step of 0.125) 40,000 draws are measurably
    not uniform; at the limit they are not."""
    from rslab import reference

    n = 40_000
    assert results.uniformity_p(results.raw_bonus_frequencies(1e6, n), n) < 1e-3
    assert results.uniformity_p(
        results.raw_bonus_frequencies(reference.BONUS_LOGIT_LIMIT, n), n) > 1e-3


def test_the_speedup_tends_to_the_baselines_growth_over_the_loops():
    """Review 09 r2 #4: between two vocabularies the baseline adds, per packed vector of every
    row, its loops' chains (32 × 12 + 32 × 55 + 8 × 145 = 3,304) and 160 cycles of DMA wait;
    the optimised loops add 32 × 2 + 32 × 4 + 8 × 17.5 = 332 at their IIs: the limit is
    3,464 / 332 = 10.43×, above the loops' own 9.95×."""
    items = [{"baseline_per_vector": 12.0, "optimised_per_vector": 2.0},
             {"baseline_per_vector": 55.0, "optimised_per_vector": 4.0},
             {"baseline_per_vector": 145.0, "optimised_per_vector": 17.5}]

    def row(base, opt, base_dma, opt_dma):
        return [{"name": "all-accept", "baseline_cycles": base, "optimized_cycles": opt,
                 "baseline_phases": {"dma_wait": base_dma},
                 "optimized_phases": {"dma_wait": opt_dma}}]

    sweep = {1024: row(27154, 11277, 8804, 1019), 4096: row(68722, 14517, 10724, 267),
             16384: row(234994, 30493, 18404, 307), VOCAB: row(2109018, 211574, 104964, 1668)}
    lim = results.speedup_limit(sweep, items)
    assert lim["vocabs"] == (16384, VOCAB)
    assert lim["baseline"] == pytest.approx(3464) and lim["dma"] == pytest.approx(160)
    assert lim["loops_baseline"] == 3304 and lim["loops_optimised"] == 332
    assert lim["limit"] == pytest.approx(3464 / 332)
    assert lim["limit"] > lim["loops_limit"] == pytest.approx(3304 / 332)
    # Review 09 r3 #2: the optimised program's own growth, wait included, gives 10.35×.
    assert lim["optimised_dma"] == pytest.approx(2.5, abs=0.05)
    assert lim["optimised"] == pytest.approx(334.7, abs=0.05)
    assert lim["optimised"] == pytest.approx(332 + lim["optimised_dma"], rel=0.02)
    assert lim["baseline"] / lim["optimised"] == pytest.approx(10.35, abs=0.005)


def test_a_third_valu_slot_leaves_the_one_op_per_bundle_baseline_unchanged():
    """Review 09 r3 #1: each op of the first translation has a bundle of its own, so a
    third VALU slot changes none of its cycles."""
    from rslab.fixtures import scenario_inputs
    from rslab.kernels.sampler.plans import ALL_ACCEPT_BASELINE
    from rslab.kernels.sampler.run import run_sampler

    aa = scenario_inputs("all-accept", V=1024)
    two, three = (run_sampler(aa, "fast", ALL_ACCEPT_BASELINE, config=config, figures=False)
                  for config in (MachineConfig(), MachineConfig().with_(slots={"valu": 3})))
    assert two.cycles == three.cycles


def test_two_accumulators_alone_leave_the_row_max_on_its_recurrence():
    rec = results.recurrences()
    wide = rec[("2 vectors / iteration, 4 accumulators", "max")]
    assert rec[("chain", "max")] == {"rec": 3.0, "res": 2.0}
    assert wide["rec"] < wide["res"] < rec[("chain", "max")]["rec"]


def test_a_third_valu_slot_brings_the_task_bound_below_the_notes_all_accept():
    two, three = results.task_bound_slots(2), results.task_bound_slots(3)
    note_cycles = note.SCENARIOS["all-accept"][1]
    assert three["bound_cycles"] < note_cycles < two["bound_cycles"]
    assert three["binding"] == "dma" and three["transcendentals_on_valu"] > 0


def test_a_rejected_zero_probability_draft_leaves_an_exactly_zero_residual():
    import numpy as np

    from rslab.reference import rejection_sample

    logits = np.array([[[-np.inf, 0, 0, -np.inf]] * 2], np.float32)
    q = np.array([[[0, 0.5, 0.5, 0]]], np.float32)
    for seed in range(4):
        r = rejection_sample(logits, q, np.zeros((1, 1), np.int64), path="exact", seed=seed)
        assert r.num_accepted[0] == 0 and r.tokens[0, 0] in (1, 2)


def test_the_check_cells_loop_is_sfu_bound_at_four_valu_slots():
    from rslab.exercises.oracles import residual_row_ii

    by_slots = {s: results.check_loop_bound(s) for s in (2, 3, 4)}
    assert {s: b["ii"] for s, b in by_slots.items()} == {s: residual_row_ii(s) for s in by_slots}
    assert [b["binding"] for b in by_slots.values()] == ["valu", "valu", "sfu"]
    four = by_slots[4]
    assert four["ii"] == four["sfu_cycles"] > four["valu_cycles"]


def test_the_sum_exp_loops_ii_covers_its_packed_vectors():
    from types import SimpleNamespace

    from rslab.kernels.sampler.plans import OPTIMISED

    loops = {label: {"ii": 8, "cycles_per_iter": 9} for _, label, _ in results.LOOPS}
    run = SimpleNamespace(loops=loops)
    sumexp = results.loop_items(run, run)[1]
    assert sumexp["optimised_ii"] == 8 and sumexp["unroll"] == OPTIMISED.sumexp_u
    assert sumexp["optimised_per_vector"] == 8 / OPTIMISED.sumexp_u


def test_the_acceptance_glue_does_not_shrink_and_leads_the_optimised_program_on_short_rows():
    """At V = 1,024 the acceptance glue is the largest phase of the optimised all-accept
    program, and it takes the same cycles whatever V (so at the note's V it is small)."""
    short, longer = (speedup_rows(v, names=("all-accept",))[0] for v in (1024, 4096))
    assert results.largest_phases(short["optimized_phases"])[0][0] == "acceptance"
    assert short["optimized_phases"]["acceptance"] == longer["optimized_phases"]["acceptance"]
    assert short["baseline_phases"]["acceptance"] == longer["baseline_phases"]["acceptance"]
    names = [n for n, _ in results.largest_phases(longer["optimized_phases"], n=7)]
    assert names.index("acceptance") > 0
    assert results.shares_words([("a", 0.5), ("b", 0.25)]) == "a (50 %) and b (25 %)"


def test_the_raw_bonus_skew_shows_before_the_step_reaches_the_noises_spread():
    """Review 09 (second) #2: 4,000 draws first resolve the skew at 1e7 (a step of 1, about
    half the noise's standard deviation), 40,000 already at 1e6 (a step of 0.125)."""
    from rslab import reference

    values = (reference.BONUS_LOGIT_LIMIT, 1e5, 1e6, 1e7, 1e8)
    quick, book = (results.raw_bonus_skew(values, n) for n in (4_000, 40_000))
    assert quick["first"] == 1e7 and book["first"] == 1e6
    assert book["step"] == 0.125 and quick["step"] == 1
    assert 0.5 < quick["step_over_sigma"] < 0.6 and book["step_over_sigma"] < 0.1
    assert results.GUMBEL_SIGMA == pytest.approx(1.8504, abs=1e-4)


def test_with_one_op_a_transcendental_every_split_past_the_least_reaches_the_bound():
    """Review 09 (second) #4: with k = 1 the VALU's cycles do not depend on the split, so
    compute_bound's figure is the fewest transcendentals that reach the bound."""
    from fractions import Fraction

    from rslab.kernels.sampler.floor import compute_bound

    split = results.split_exercise()
    valu_ops, total = Fraction(split["valu_ops"]), split["transcendentals"]
    config = MachineConfig()
    per_push = 1 + config.sfu_hold
    least = compute_bound(split["valu_ops"], total, config, per_transcendental=1)
    bound = max(least["sfu_cycles"], least["valu_cycles"])

    def cost(on_valu):
        return max(per_push * (total - on_valu), (valu_ops + total) / config.slots["valu"])

    moved = Fraction(least["transcendentals_on_valu"]).limit_denominator()
    assert all(cost(m) <= bound for m in (moved, (moved + total) / 2, total))
    assert cost(moved - 1) > bound


def test_the_note_directions_name_the_side_of_each_test_point():
    """Review 09 round 6 #3: the model's speedup beside the note's, at the note's V only."""
    aa_base, aa_opt = note.SCENARIOS["all-accept"]
    fr_base, fr_opt = note.SCENARIOS["first-reject"]
    rows = [{"name": "all-accept", "vocab": VOCAB, "baseline_cycles": aa_base,
             "optimized_cycles": 2 * aa_opt},
            {"name": "first-reject", "vocab": VOCAB, "baseline_cycles": 2 * fr_base,
             "optimized_cycles": fr_opt}]
    sides = [(d["name"], d["side"]) for d in results.note_directions(rows)]
    assert sides == [("all-accept", "below"), ("first-step reject", "above")]
    with pytest.raises(ValueError, match="note's V"):
        results.note_directions([{**rows[0], "vocab": 1024}])


def test_the_note_table_gives_each_rows_figures_their_own_v():
    """The model's row at its V, the note's at the note's: no cell mixes the two."""
    row = {"name": "all-accept", "vocab": 1024, "baseline_cycles": 300,
           "optimized_cycles": 100}
    lines = results.note_table([row]).splitlines()[2:]
    aa_base, aa_opt = note.SCENARIOS["all-accept"]
    assert lines[0] == "| all-accept | model | 1,024 | 300 | 100 | 3.00× |"
    assert lines[1] == (f"| all-accept | the note's | {note.VOCAB:,} | {aa_base:,} | "
                        f"{aa_opt:,} | {aa_base / aa_opt:.2f}× |")


def test_bundling_shortens_the_acceptance_glue_and_issuing_ahead_lengthens_it():
    """Review 09 round 6 #4: the optimised acceptance glue is slower because the step that
    bundles it also issues the next transfers from it."""
    from rslab.fixtures import scenario_inputs
    from rslab.kernels.sampler.plans import ALL_ACCEPT_BASELINE, OPTIMISED
    from rslab.kernels.sampler.run import run_sampler

    inputs = scenario_inputs("all-accept", V=1024)
    first, opt = (run_sampler(inputs, "fast", plan, figures=False, compare=False)
                  .phases["accept"] for plan in (ALL_ACCEPT_BASELINE, OPTIMISED))
    glue = results.glue_split("all-accept", 1024)
    assert glue["bundled"] < first < opt < glue["ahead"]


@pytest.mark.heavy
def test_against_the_first_translation_first_step_reject_gains_more_than_all_accept():
    """Review 09 round 6 #1: at the note's V first-step reject's smaller speedup is its
    baseline's; against all-accept's baseline plan it gains more than all-accept."""
    aa = speedup_rows(VOCAB, names=("all-accept",))[0]
    ex = results.exercise_runs(VOCAB, third_valu=False)
    assert ex["fr_speedup"] < aa["speedup"] < ex["fr_naive_speedup"]


def test_the_whole_split_threshold_is_where_moving_one_transcendental_stops_paying():
    """Below the threshold one whole transcendental on the VALU lowers the busier unit's
    cycles; from it on, none does (k = 4 moves the real optimum's 146, rounded)."""
    split = results.split_exercise(results.EXERCISE_VOCAB)
    k = results.whole_split_threshold(split)
    assert results.whole_split_cycles(split, k - 1, 1) < results.whole_split_cycles(split, k - 1, 0)
    assert results.whole_split_cycles(split, k, 1) >= results.whole_split_cycles(split, k, 0)
    assert results.whole_split_cycles(split, 4, 146) == max(split["by_k"][4]["sfu_cycles"],
                                                       split["by_k"][4]["valu_cycles"])


def test_a_speedup_below_one_is_said_slower():
    assert results.speedup_cell(2.5) == "2.50×"
    assert results.speedup_cell(0.94) == "1.06× slower" == results.change(100, 106.38)
