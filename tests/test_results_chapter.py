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
