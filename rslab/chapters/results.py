"""The chapter *Results*: the whole sampler's figures, and the tables and sentences its page
shows (the headline, the phases, the steps, the floor and the task bound, the model beside
the note, the recommended draw, the vocabulary sweep live, what the sampler accepts)."""

import math
from itertools import count, pairwise

import numpy as np

from rslab import note
from rslab.chapters.prose import and_list, point_label, unit_names
from rslab.executors import make_executor
from rslab.fixtures import TEST_POINTS, VOCAB
from rslab.kernels.sampler.bodies import final_body, rowmax_body, sumexp_loop_body
from rslab.kernels.sampler.floor import (
    CONVERT,
    SHIFT,
    VALU_PER_TRANSCENDENTAL,
    compute_bound,
    element_work,
    machine_task_bound,
    split_cycles,
    task_work,
)
from rslab.kernels.sampler.layout import BLOCK, SamplerLayout
from rslab.kernels.sampler.plans import OPTIMISED, optimisation_steps
from rslab.kernels.sampler.scenarios import run_draws, speedup_rows
from rslab.kernels.studies.draw_loops import draw_body, draw_loop
from rslab.machine import MachineConfig
from rslab.numerics.methods import RECOMMENDED, variant_name
from rslab.reference import LOG2E, rejection_sample
from rslab.schedule import SlotModel, analyse, slot_of
from rslab.viz import results_plots as rp
from rslab.viz.controls import int_control
from rslab.viz.tables import markdown_table

BEYOND_DRAW = RECOMMENDED
"""The Fast draw the chapter *Beyond the note* recommends
(:data:`rslab.numerics.methods.RECOMMENDED`): no test gains 0.1 before about 10^11 samples
on any row of its domain."""
LOOPS = (("row max", "loop_rowmax", "rowmax_u"), ("sum-exp", "loop_sumexp", "sumexp_u"),
         ("bonus Gumbel-argmax", "loop_bonus", "final_u"))
"""(name, program label, unroll field of the plan) of each loop the chapter compares."""
UNCHANGED = ("max", "sumexp", "acceptance")
"""The phases the first-step-reject baseline already runs as the optimised program does."""
NOTE_SUMEXP_PACKED = 2
"""Packed vectors per iteration of the note's sum-exp loop (its two unpack chains: the
note's decision 4; the pipelining chapter reproduces its II with two)."""
EXERCISE_VOCAB = 16_384
"""The vocabulary the exercises have the student run: a few seconds per program."""
PHASE_NAMES = {**rp.PHASE_LABELS, "accept": "acceptance"}
"""A phase key of :func:`rslab.kernels.sampler.run.run_steps` or of a table row → its name."""


def change(before: float, after: float) -> str:
    """``before`` → ``after`` cycles in words: how much faster, or slower."""
    if before > after:
        return f"{before / after:.2f}× faster"
    return f"{after / before:.2f}× slower" if after > before else "no faster"


def speedup_cell(speedup: float) -> str:
    """A speedup as a table prints it; a slowdown as the prose says it (:func:`change`)."""
    return f"{speedup:.2f}×" if speedup >= 1 else f"{1 / speedup:.2f}× slower"


def headline(rows, note_figures: dict) -> list[dict]:
    """Per test point: our optimised cycles, its floor and ratio, the speedups against every
    baseline measured, and the design note's optimised cycles and speedup (the note's)."""
    out = []
    for r in rows:
        nb, no = note_figures[r["name"]]
        speedups = [(r["baseline"], r["speedup"])]
        speedups += [(a["baseline"], a["speedup"]) for a in r["also_against"]]
        out.append({"name": r["name"], "optimised": r["optimized_cycles"],
                    "floor": r["optimized_bound_cycles"], "ratio": r["optimized_ratio"],
                    "speedups": speedups, "note_optimised": no, "note_speedup": nb / no,
                    "note_baseline": "first correct implementation" if r["name"] == "all-accept"
                    else "partly optimised baseline"})
    return out


def model_table(rows) -> str:
    """The model's table: per test point and V its shape, the baseline's and the optimised
    program's cycles, the speedup (also against the baselines of ``also_against``, where a
    row has them), the tokens."""
    out = []
    for r in rows:
        also = "; ".join(f"{speedup_cell(a['speedup'])} against {a['baseline']}"
                         for a in r.get("also_against", ()))
        out.append({"test point": point_label(r["name"]), "V": f"{r['vocab']:,}",
                    "requests × drafts": f"{r['R']} × {r['S']}",
                    "baseline (its plan)": f"{r['baseline_cycles']:,} ({r['baseline']})",
                    "optimised": f"{r['optimized_cycles']:,}",
                    "speedup": speedup_cell(r["speedup"]) + (f" ({also})" if also else ""),
                    "tokens = reference": "yes" if r["tokens_match_reference"] else "NO"})
    return markdown_table(out)


def note_table(rows, note_figures: dict = note.SCENARIOS) -> str:
    """The model's cycles beside the note's: per test point a row of each, each with its V
    (the note's labelled so, at the note's V)."""
    out = []
    for r in rows:
        nb, no = note_figures[r["name"]]
        for source, v, base, opt in (("model", r["vocab"], r["baseline_cycles"],
                                      r["optimized_cycles"]),
                                     ("the note's", note.VOCAB, nb, no)):
            out.append({"test point": point_label(r["name"]), "figures": source, "V": f"{v:,}",
                        "baseline (cycles)": f"{base:,}", "optimised (cycles)": f"{opt:,}",
                        "speedup": speedup_cell(base / opt)})
    return markdown_table(out)


def note_directions(rows, note_figures: dict = note.SCENARIOS) -> list[dict]:
    """Per row at the note's V: its test point in words (``name``), the model's speedup
    (``model``), the note's (``note``) and on which ``side`` of the note's the model's lies."""
    out = []
    for r in rows:
        if r["vocab"] != VOCAB:
            raise ValueError(f"rows must be at the note's V = {VOCAB:,}, got V = {r['vocab']:,}")
        nb, no = note_figures[r["name"]]
        model, theirs = r["baseline_cycles"] / r["optimized_cycles"], nb / no
        side = "below" if model < theirs else "above" if model > theirs else "equal to"
        out.append({"name": point_label(r["name"]),
                    "model": model, "note": theirs, "side": side})
    return out


def glue_split(name: str = "all-accept", vocab: int = 1024) -> dict:
    """The acceptance glue's cycles under the first translation with only one half of the
    step "glue bundled, DMAs ahead": the glue bundled (``bundled``), or the next row's and
    the q row's first transfers issued from the glue (``ahead``). The glue does not depend
    on V, so a short row suffices."""
    from dataclasses import replace

    from rslab.fixtures import scenario_inputs
    from rslab.kernels.sampler.plans import ALL_ACCEPT_BASELINE
    from rslab.kernels.sampler.run import run_sampler

    inputs = scenario_inputs(name, V=vocab)
    return {key: run_sampler(inputs, "fast", replace(ALL_ACCEPT_BASELINE, **change),
                             figures=False, compare=False).phases["accept"]
            for key, change in (("bundled", {"bundle_glue": True}),
                                ("ahead", {"prefetch": True}))}


def largest_phases(phases: dict, n: int = 3) -> list[tuple[str, float]]:
    """The ``n`` largest of ``phases`` (phase → cycles) as (name, share of all the phases'
    cycles), largest first."""
    total = sum(phases.values())
    top = sorted(phases, key=phases.get, reverse=True)[:n]
    return [(PHASE_NAMES[ph], phases[ph] / total) for ph in top]


def shares_words(top) -> str:
    """:func:`largest_phases` in words: "sum-exp (51 %), bonus Gumbel (33 %) and row max
    (11 %)"."""
    parts = [f"{name} ({100 * share:.0f} %)" for name, share in top]
    return ", ".join(parts[:-1]) + f" and {parts[-1]}" if len(parts) > 1 else parts[0]


def amdahl(row) -> dict:
    """First-step reject's phases against Amdahl's law: the cycles of the phases both programs
    run alike (``unchanged``; ``same``: equal in both), the cycles of every phase but the
    residual row (``rest``, and its ``share`` of the baseline; the DMA waits and setup
    change by ``rest_change`` cycles), the cap ``1 / share`` they put on the speedup however
    fast the residual row, the speedup, and the residual row's own gain and share."""
    base, opt = row["baseline_phases"], row["optimized_phases"]
    rest = row["baseline_cycles"] - base["residual"]
    share = rest / row["baseline_cycles"]
    return {"unchanged": sum(base[ph] for ph in UNCHANGED), "rest": rest, "share": share,
            "rest_change": sum(opt[ph] - base[ph] for ph in opt if ph != "residual"),
            "cap": 1 / share, "same": all(base[ph] == opt[ph] for ph in UNCHANGED),
            "speedup": row["baseline_cycles"] / row["optimized_cycles"],
            "residual_gain": base["residual"] / opt["residual"],
            "residual_share": base["residual"] / row["baseline_cycles"]}


def sumexp_tie(plan=OPTIMISED) -> str:
    """Why ``plan``'s sum-exp loop ties the SFU and the VALU, counted from its body: its
    exp2 pushes at 1 + hold cycles each, against its VALU ops over the VALU's slots."""
    body = sumexp_loop_body("fast", plan.sumexp_workers, plan.sumexp_u, landed=plan.land_fp32)
    config = MachineConfig()
    units = [slot_of(op.opcode) for op in body]
    pushes, valu = units.count("sfu"), units.count("valu")
    push = (1 + config.sfu_hold) / config.slots["sfu"]
    return (f"{pushes} exp2 pushes of {push:g} cycles each, {pushes * push:g} cycles, per "
            f"{valu} VALU ops on {config.slots['valu']} slots, "
            f"{valu / config.slots['valu']:g} cycles")


def check_loop_bound(valu_slots: int) -> dict:
    """The resource bound of the check cell's loop (the study's residual Gumbel row,
    ``draw_loop("residual", "gumbel", "div8", ...)``) on a core with ``valu_slots`` VALU
    slots: its VALU ops and their cycles, its SFU pushes and theirs (1 + hold each), what
    binds, and the II the scheduler reaches."""
    config = MachineConfig().with_(slots={"valu": valu_slots})
    model = SlotModel.from_config(config)
    body = draw_body("residual", "gumbel", "div8", "logits")
    units = [slot_of(op.opcode) for op in body]
    valu, pushes = units.count("valu"), units.count("sfu")
    return {"valu_ops": valu, "valu_cycles": valu / valu_slots, "pushes": pushes,
            "sfu_cycles": pushes * (1 + config.sfu_hold) / config.slots["sfu"],
            "binding": analyse(body, model).res_binding,
            "ii": draw_loop("residual", "gumbel", "div8", 8, model).ii}


BINDING_WHY = {
    frozenset({"st", "valu"}): "it lands the float32 halves: as many stores as VALU ops over "
                               "their slots",
    frozenset({"sfu", "valu"}): sumexp_tie,
    frozenset({"valu"}): "the VALU alone",
    frozenset({"latency"}): "the fill and drain around the loop, latency-bound, outweigh its "
                            "own work at this V"}
"""Why a loop phase's floor is bound by what binds it (:func:`binding_words`), keyed by the
binding's units in any order (``st = valu`` as :func:`rslab.machine.floor.resource_floor`
names it); a function computes its words from the optimised plan's body."""


def binding_why(binding: str) -> str | None:
    """:data:`BINDING_WHY` of a binding as the floor names it (``"st = valu"``), or None."""
    why = BINDING_WHY.get(frozenset(binding.split(" = ")))
    return why() if callable(why) else why


def binding_words(floors: dict, phases=("max", "sumexp", "bonus")) -> str:
    """What binds each loop phase's floor, phases with the same binding named together."""
    names = {"max": "the row max", "sumexp": "sum-exp", "bonus": "the bonus rows",
             "residual": "the residual rows"}
    groups: dict = {}
    for ph in phases:
        groups.setdefault(floors[ph]["binding"], []).append(names[ph])
    parts = []
    for binding, who in groups.items():
        why = binding_why(binding)
        named = and_list(who)
        parts.append(named + f" by {unit_names(binding)}" + (f" ({why})" if why else ""))
    return "; ".join(parts)


def step_credits(steps) -> list[dict]:
    """Per step after the first: its cycles, the cycles it saved (negative: lost), and the
    phase whose cycles changed most, with that change and its share of the step's change."""
    out = []
    for prev, cur in pairwise(steps):
        moved = {ph: cur["phases"][ph] - prev["phases"][ph] for ph in cur["phases"]}
        top = max(moved, key=lambda ph: abs(moved[ph]))
        total = cur["cycles"] - prev["cycles"]
        out.append({"step": cur["step"], "cycles": cur["cycles"], "saved": -total,
                    "phase": PHASE_NAMES[top], "phase_change": moved[top],
                    "share": moved[top] / total if total and moved[top] * total > 0 else None,
                    "moved": moved})
    return out


def _credit_cell(c) -> str:
    if not c["phase_change"]:
        return "—"
    return f"{c['phase']} {c['phase_change']:+,}"


def credits_table(steps_aa, steps_fr) -> str:
    """Per step, at each test point: its cycles, their change, and the phase that moved most
    (with its own change)."""
    rows = []
    for a, f in zip(step_credits(steps_aa), step_credits(steps_fr), strict=True):
        rows.append({"step": a["step"],
                     "all-accept: cycles (change)": f"{a['cycles']:,} ({-a['saved']:+,})",
                     "all-accept: phase that moved most": _credit_cell(a),
                     "first-step reject: cycles (change)":
                     f"{f['cycles']:,} ({-f['saved']:+,})",
                     "first-step reject: phase that moved most": _credit_cell(f)})
    return markdown_table(rows)


def recurrences() -> dict:
    """RecMII and ResMII per packed vector of the row max and sum-exp bodies, one vector and
    one accumulator per iteration (the pipelined step) and as the next step widens them."""
    plans = dict(optimisation_steps())
    out = {}
    for when in ("loops software-pipelined", "2 vectors / iteration, 4 accumulators"):
        plan = plans[when]
        for loop, body, u in (
                ("max", rowmax_body(plan.rowmax_u, land=plan.land_fp32), plan.rowmax_u),
                ("sumexp", sumexp_loop_body("fast", plan.sumexp_workers, plan.sumexp_u,
                                            landed=plan.land_fp32), plan.sumexp_u)):
            b = analyse(body)
            out[(when, loop)] = {"rec": b.rec_mii / u, "res": b.res_mii / u}
    wide = plans["2 vectors / iteration, 4 accumulators"]
    b = analyse(rowmax_chain_body(wide.rowmax_u))
    out[("chain", "max")] = {"rec": b.rec_mii / wide.rowmax_u, "res": b.res_mii / wide.rowmax_u}
    return out


def rowmax_chain_body(u: int) -> list:
    """The wide row max body (``u`` packed vectors, one accumulator each) in the chain order
    of the pipelined step, ``acc = max(max(acc, lo), hi)``, instead of the tree order the
    wide step uses, ``acc = max(acc, max(lo, hi))``: more accumulators without the new order."""
    import dataclasses

    out = []
    for op in rowmax_body(u):
        if op.opcode == "vmax.f32" and op.dst.startswith("t"):
            k = op.dst[1:]
            out.append(dataclasses.replace(op, dst=f"a{k}", srcs=(f"acc{k}", f"lo{k}")))
        elif op.opcode == "vmax.f32":
            k = op.dst[3:]
            out.append(dataclasses.replace(op, srcs=(f"a{k}", f"hi{k}")))
        else:
            out.append(op)
    return out


def beyond_rows(vocab: int, runs: dict, draw=BEYOND_DRAW) -> list[dict]:
    """The Div8 sampler and ``draw``'s at both test points, against the baselines of ``runs``
    (:func:`run_scenarios`' runs on the same inputs and seed: only ``draw`` is simulated)."""
    known = {name: (both[0], both[1]) for name, both in runs.items()}
    return run_draws(vocab, [draw], known=known, progress=False)


def beyond_table(rows) -> str:
    """Per test point: the baseline, the Div8 sampler and the other draw, each speedup against
    the baseline, and the other draw's cycles over Div8's."""
    by = {(r["draw"], r["name"]): r for r in rows}
    draw = next(r["draw"] for r in rows if r["draw"] != "gumbel-div8")
    out = []
    for name in dict.fromkeys(r["name"] for r in rows):
        d8, r = by[("gumbel-div8", name)], by[(draw, name)]
        out.append({"test point": point_label(name), "baseline": f"{r['baseline_cycles']:,}",
                    "Div8 sampler (speedup)": f"{d8['cycles']:,} ({speedup_cell(d8['speedup'])})",
                    f"{draw} (speedup)": f"{r['cycles']:,} ({speedup_cell(r['speedup'])})",
                    f"{draw} / Div8, cycles": f"{r['cycles'] / d8['cycles']:.2f}",
                    "tokens = reference": "yes" if r["tokens_match_reference"]
                    and d8["tokens_match_reference"] else "NO"})
    return markdown_table(out)


def per_vector(run, label: str, unroll: int) -> float:
    """Cycles per packed vector of loop ``label``: its II (or measured cycles per iteration
    when it is not modulo scheduled) over the vectors one iteration handles."""
    fig = run.loops[label]
    return fig["ii"] / unroll if fig["ii"] else fig["cycles_per_iter"] / unroll


def loop_items(baseline, optimised, plan=OPTIMISED) -> list[dict]:
    """Per loop: the baseline's and the optimised plan's cycles per packed vector, and the
    optimised loop's II with the packed vectors one of its iterations handles."""
    return [{"loop": name, "baseline_per_vector": per_vector(baseline, label, 1),
             "optimised_per_vector": per_vector(optimised, label, getattr(plan, field)),
             "optimised_ii": optimised.loops[label]["ii"], "unroll": getattr(plan, field)}
            for name, label, field in LOOPS]


def vocab_caption(vocab: int, rows) -> str:
    """The two test points' speedups at one vocabulary size."""
    by = {r["name"]: r for r in rows}
    return f"V = {vocab:,}: " + ", ".join(
        f"{n} {by[n]['speedup']:.2f}× ({by[n]['baseline_cycles']:,} → "
        f"{by[n]['optimized_cycles']:,} cycles)" for n in ("all-accept", "first-reject"))


def vocab_figure(sweep: dict, path: str = "fast"):
    """``draw(vocab)`` for the speedup-against-V figure: a vocabulary not in ``sweep`` runs
    both kernels at both test points (:func:`speedup_rows`, on this machine's cores) and
    joins the curve."""
    def draw(vocab: int):
        if vocab not in sweep:
            with make_executor() as executor:
                sweep[vocab] = speedup_rows(vocab, path, executor=executor)
        return rp.speedup_vs_vocab(sweep, highlight=vocab), vocab_caption(vocab, sweep[vocab])
    return draw


LIVE_VOCAB = VOCAB
"""The largest vocabulary the live slider offers: the note's."""


def vocab_control(vocabs):
    """The vocabulary from 256 to ``LIVE_VOCAB`` in steps of 256; the ``vocabs`` of the sweep
    in that range are the precomputed frames, the largest of them shown first."""
    frames = sorted(v for v in vocabs if v <= LIVE_VOCAB)
    return int_control("vocab", 256, LIVE_VOCAB, step=256, frames=frames, value=frames[-1],
                       label="vocab V", fmt=lambda v: f"{v:,}")


def floor_items(rows) -> list[dict]:
    """Per test point and phase (with cycles): the baseline's and the optimised program's
    cycles, the optimised program's floor, its binding and achieved / floor."""
    out = []
    for r in rows:
        for ph in rp.PHASE_ORDER:
            f = r["optimized_floor"][ph]
            base = r["baseline_phases"][ph]
            if f["achieved"] or f["bound_cycles"] or base:
                out.append({"name": r["name"], "phase": ph, "baseline": base,
                            "optimised": f["achieved"], "floor": f["bound_cycles"],
                            "binding": f["binding"], "ratio": f["ratio"]})
    return out


def _row_body(plan, kind: str, path: str = "fast") -> tuple[list, int]:
    """(one iteration's ops, packed vectors per iteration) of a final row's loop under
    ``plan``, from where the program's row reads (:class:`~rslab.kernels.sampler.final_rows.
    FinalRow`: e stored, the landed halves, or the packed row)."""
    u = 2 if path == "exact" else plan.final_u
    source = "packed"
    if kind == "residual":
        source = "e" if plan.store_e else "landed" if plan.land_fp32 and path == "fast" \
            else "packed"
    body = final_body(kind, path, u, source=source,
                      counters="own" if plan.rotate_counters and path == "fast" else "offsets",
                      argmax=plan.argmax,
                      hoisted=["v0"] * 4 if path == "exact" and plan.hoist_philox else None)
    return body, u


def valu_ops_per_vector(plan, path: str, kind: str = "bonus") -> float:
    """VALU ops per float32 vector of a final row's loop body under ``plan``."""
    body, u = _row_body(plan, kind, path)
    return sum(slot_of(op.opcode) == "valu" for op in body) / (2 * u)


def row_pace(plan, kind: str, path: str = "fast") -> float:
    """A final row's loop at its resource bound under ``plan``: ResMII per packed vector."""
    body, u = _row_body(plan, kind, path)
    return analyse(body).res_mii / u


def task_rows(beyond) -> list[dict]:
    """Per test point and draw (rows of :func:`beyond_rows`): cycles, the floor of the
    program's own work, the task's bound (what any program of that draw must spend) and what
    binds it, and cycles over each."""
    return [{"test point": point_label(r["name"]), "draw": r["draw"], "cycles": f"{r['cycles']:,}",
             "floor (this program's work)": f"{r['bound_cycles']:,}",
             "cycles / floor": f"{r['ratio']:.2f}",
             "task bound": f"{r['task_bound_cycles']:,} ({unit_names(r['task_binding'])})",
             "cycles / task bound": f"{r['task_ratio']:.2f}"} for r in beyond]


def below_other_floor(beyond) -> list[str]:
    """The runs of :func:`beyond_rows` that take fewer cycles than the Div8 sampler's floor at
    the same test point: a floor bounds its own program, not the machine."""
    floor = {r["name"]: r["bound_cycles"] for r in beyond if r["draw"] == "gumbel-div8"}
    return [f"{r['draw']} at {point_label(r['name'])} ({r['cycles']:,} cycles against "
            f"{floor[r['name']]:,})"
            for r in beyond if r["draw"] != "gumbel-div8" and r["cycles"] < floor[r["name"]]]


GLUE = ("acceptance", "dma_wait", "setup")
"""The phases outside the loops: per-position and per-row work, and the waits."""


REDUCTIONS = {"max": "vmax.f32", "sumexp": "vadd.f32"}
"""The op of each checked-row loop that reduces its row (the max, the sum): the task bound
leaves reductions out."""
CONVERTS = ("vunpack.lo", "vunpack.hi")
"""The ops that convert a packed BF16 vector to float32: the task bound counts them."""


def checked_loop_ops(plan=OPTIMISED) -> dict:
    """Per checked-row loop (``max``, ``sumexp``) of ``plan``: its VALU ops per float32
    vector, the conversions among them and its reduction's (:data:`REDUCTIONS`)."""
    bodies = {"max": (rowmax_body(plan.rowmax_u, land=plan.land_fp32), plan.rowmax_u),
              "sumexp": (sumexp_loop_body("fast", plan.sumexp_workers, plan.sumexp_u,
                                          landed=plan.land_fp32), plan.sumexp_u)}
    out = {}
    for loop, (body, u) in bodies.items():
        codes = [op.opcode for op in body if slot_of(op.opcode) == "valu"]
        out[loop] = {"valu": len(codes) / (2 * u),
                     "convert": sum(c in CONVERTS for c in codes) / (2 * u),
                     "reduction": codes.count(REDUCTIONS[loop]) / (2 * u)}
    return out


def _unit_load(valu, trans, task: dict, config) -> float:
    """Cycles that ``valu`` VALU ops and ``trans`` transcendentals take on the task bound's
    binding unit, the transcendentals split as the task bound splits them (its load on that
    unit is linear in the work, so the parts' loads sum to the bound before rounding up)."""
    on_valu = task["transcendentals_on_valu"] / task["transcendentals"] \
        if task["transcendentals"] else 0.0
    if task["binding"] == "sfu":
        return float((1 + config.sfu_hold) / config.slots["sfu"] * trans * (1 - on_valu))
    k = VALU_PER_TRANSCENDENTAL
    return float((valu + trans * (1 - on_valu) + k * trans * on_valu) / config.slots["valu"])


def floor_over_task(row, draw=("gumbel", "div8"), plan=OPTIMISED) -> list[dict]:
    """Where the optimised program's floor (row of :func:`run_scenarios`) lies above its
    task bound, part by part, by op kind: each loop phase's floor beside the task bound's
    cycles of the counted work it does (``task``: on the binding unit; a checked row's
    conversion from BF16 is the row max's where ``plan`` lands the float32 halves, its
    subtract, multiply and exp2 with its pop sum-exp's), the cycles of its reduction, which
    the bound leaves out (``reduction``: the max, the sum, at the VALU's pace), and the
    glue (acceptance, DMA wait, setup), which the bound leaves out. Only for a task bound
    set by the SFU or the VALU; the ``task`` cycles then sum to the bound's before
    rounding up."""
    task = row["optimized_task_bound"]
    unit = task["binding"]
    if unit not in ("sfu", "valu"):
        raise ValueError(f"{row['name']}: the task bound is {unit}-bound; only an SFU- or "
                         "VALU-bound task bound splits by rows")
    config, floors = MachineConfig(), row["optimized_floor"]
    vectors = 2 * SamplerLayout(row["R"], row["S"], row["vocab"]).n_packed
    checked = sum(min(a + 1, row["S"]) for a in accepted_at(row["name"])) * vectors
    final = "bonus" if row["name"] == "all-accept" else "residual"
    ops = checked_loop_ops(plan)
    convert = {"max": ops["max"]["convert"], "sumexp": ops["sumexp"]["convert"]}
    if convert["max"] + convert["sumexp"] != CONVERT:
        raise ValueError(f"the plan's checked-row loops convert {convert} times per float32 "
                         f"vector; the task bound counts {CONVERT}")
    valu, trans = element_work(final, "fast", draw)
    counted = {"max": _unit_load(checked * convert["max"], 0, task, config),
               "sumexp": _unit_load(checked * (convert["sumexp"] + SHIFT), checked, task,
                                    config),
               final: _unit_load(row["R"] * vectors * valu, row["R"] * vectors * trans, task,
                                 config)}
    reduction = {lp: checked * ops[lp]["reduction"] / config.slots["valu"]
                 for lp in ("max", "sumexp")}
    parts = [("row max", floors["max"]["bound_cycles"], counted["max"], reduction["max"]),
             ("sum-exp", floors["sumexp"]["bound_cycles"], counted["sumexp"],
              reduction["sumexp"]),
             (f"{final} Gumbel", floors[final]["bound_cycles"], counted[final], 0.0),
             ("glue (acceptance, DMA wait, setup)",
              sum(floors[ph]["bound_cycles"] for ph in GLUE), 0.0, 0.0)]
    return [{"part": name, "floor": f, "task": t, "reduction": red, "over": f - t}
            for name, f, t, red in parts]


def floor_over_task_table(parts) -> str:
    """:func:`floor_over_task` as a table, with the totals."""
    total = {"part": "whole program", "floor": sum(p["floor"] for p in parts),
             "task": sum(p["task"] for p in parts), "over": sum(p["over"] for p in parts)}
    total["reduction"] = sum(p["reduction"] for p in parts)
    return markdown_table([{"part": p["part"], "floor (cycles)": f"{p['floor']:,.0f}",
                            "work the task bound counts (cycles)": f"{p['task']:,.0f}",
                            "floor above it (cycles)": f"{p['over']:,.0f}",
                            "of which reductions": f"{p['reduction']:,.0f}"
                            if p["reduction"] else "—"}
                           for p in [*parts, total]])


def loops_gain(row, loops=("max", "sumexp", "bonus")) -> dict:
    """The loop phases together: their cycles in the baseline and the optimised program,
    their gain, and their share of the baseline's cycles."""
    base = sum(row["baseline_phases"][ph] for ph in loops)
    opt = sum(row["optimized_phases"][ph] for ph in loops)
    return {"baseline": base, "optimised": opt, "gain": base / opt,
            "share": base / row["baseline_cycles"]}


def speedup_limit(sweep: dict, items, name: str = "all-accept") -> dict:
    """What the speedup at test point ``name`` tends to as V grows, from the two largest
    vocabularies of ``sweep`` (V → rows of :func:`run_scenarios`) and the loops' cycles per
    packed vector (:func:`loop_items`: row max, sum-exp, bonus row): each program's cycles
    added per packed vector of every row (``baseline``, ``optimised``), the baseline's DMA
    wait's part (``dma``: it waits for each transfer when issued) and the optimised
    program's (``optimised_dma``), the loops' cycles per packed vector of every row at their
    chains (``loops_baseline``) and at their IIs (``loops_optimised``), and the limits:
    ``limit`` (the baseline's growth over the optimised loops'), ``loops_limit`` (the
    loops' alone)."""
    small, large = sorted(sweep)[-2:]
    by = {v: next(r for r in sweep[v] if r["name"] == name) for v in (small, large)}
    tp = TEST_POINTS[name]
    packed = (SamplerLayout(tp.R, tp.S, large).n_packed
              - SamplerLayout(tp.R, tp.S, small).n_packed)

    def grows(key: str, phase: str | None = None) -> float:
        a, b = by[small], by[large]
        if phase:
            return (b[key][phase] - a[key][phase]) / packed
        return (b[key] - a[key]) / packed

    checked = sum(min(a + 1, tp.S) for a in accepted_at(name))
    rows = (checked, checked, tp.R)
    base = sum(n * it["baseline_per_vector"] for n, it in zip(rows, items, strict=True))
    opt = sum(n * it["optimised_per_vector"] for n, it in zip(rows, items, strict=True))
    return {"vocabs": (small, large), "baseline": grows("baseline_cycles"),
            "optimised": grows("optimized_cycles"),
            "dma": grows("baseline_phases", "dma_wait"),
            "optimised_dma": grows("optimized_phases", "dma_wait"),
            "loops_baseline": base, "loops_optimised": opt,
            "limit": grows("baseline_cycles") / opt, "loops_limit": base / opt}


def philox_valu_per_vector() -> float:
    """VALU ops per float32 vector of the Exact final rows' Philox once its row invariants
    are hoisted (one call per iteration gives the four words of four float32 vectors)."""
    from rslab.kernels.ops.philox import philox_split
    from rslab.kernels.sampler.registers import REGS, V_C1, V_C2, V_C3

    _, ops, out, _ = philox_split(("c0", V_C1, V_C2, V_C3), (0,), REGS)
    return sum(slot_of(op.opcode) == "valu" for op in ops) / len(out)


# ----------------------------------------------------------------- the model beside the note

def accepted_at(name: str) -> list[int]:
    """Drafts accepted per request at test point ``name``: all, or none."""
    tp = TEST_POINTS[name]
    return [tp.S if name == "all-accept" else 0] * tp.R


NATURAL_STEP = "float32 landed (a′)"
"""The last step whose final rows keep their natural body (p recomputed, an argmax per
stream, one packed vector per iteration), on the landed float32 halves: the loops at their
bounds, the rows not yet lowered."""


def note_gap(loops: dict, vocab: int = VOCAB, draw=("gumbel", "div8"),
             note_packed: int = NOTE_SUMEXP_PACKED) -> list[dict]:
    """Per test point at ``vocab``: the rows the task reads (checked, final), the model's
    loops at their floors per packed vector (``loops``: :func:`run_scenarios`' loop figures,
    which do not depend on V; ``natural_pace``: the final row's natural body), those loops'
    cycles over the task's rows, the model's task bound of ``draw`` (no simulation), its
    final row's least cycles per packed vector (``task_final_pace``; ``final_sfu_pace``:
    the SFU's alone, every transcendental there), the note's optimised cycles, and what they leave
    the note's final row per packed vector if its checked rows ran at its sum-exp loop's
    pace, ``note_packed`` packed vectors per iteration of its II (the model's reading,
    :data:`NOTE_SUMEXP_PACKED`: the note does not say)."""
    packed = vocab // BLOCK
    checked_pace = loops["rowmax"]["bound_per_vector"] + loops["sumexp"]["bound_per_vector"]
    note_checked = note.SUMEXP_II / note_packed
    natural = dict(optimisation_steps())[NATURAL_STEP]
    config = MachineConfig()
    out = []
    for name, tp in TEST_POINTS.items():
        accepted = accepted_at(name)
        checked = sum(min(a + 1, tp.S) for a in accepted)
        final = "bonus" if name == "all-accept" else "residual"
        pace = loops[f"{final}_gumbel"]["bound_per_vector"]
        natural_pace = row_pace(natural, final)
        valu, trans = element_work(final, "fast", draw)
        task_pace = compute_bound(2 * valu, 2 * trans, config)
        push = (1 + config.sfu_hold) / config.slots["sfu"]
        note_cycles = note.SCENARIOS[name][1]
        out.append({
            "name": name, "checked_rows": checked, "final_rows": tp.R, "final": final,
            "packed": packed, "checked_pace": checked_pace, "final_pace": pace,
            "natural_pace": natural_pace,
            "task_final_pace": max(task_pace["sfu_cycles"], task_pace["valu_cycles"]),
            "final_sfu_pace": 2 * trans * push,
            "model_loops": packed * (checked * checked_pace + tp.R * pace),
            "natural_loops": packed * (checked * checked_pace + tp.R * natural_pace),
            "task": machine_task_bound(config, SamplerLayout(tp.R, tp.S, vocab), accepted,
                                       path="fast", draw=draw),
            "note": note_cycles,
            "note_final_at_most": (note_cycles / packed - checked * note_checked) / tp.R})
    return out


def task_bound_slots(valu_slots: int, name: str = "all-accept", vocab: int = VOCAB,
                     draw=("gumbel", "div8")) -> dict:
    """The model's task bound of ``draw`` at test point ``name`` and ``vocab`` (as in
    :func:`note_gap`) on a core with ``valu_slots`` VALU slots."""
    tp = TEST_POINTS[name]
    config = MachineConfig().with_(slots={"valu": valu_slots})
    return machine_task_bound(config, SamplerLayout(tp.R, tp.S, vocab), accepted_at(name),
                              path="fast", draw=draw)


def gap_table(gap) -> str:
    """The model's loops at their floors (with the optimised and the natural final row) and
    its task bound at the note's V, beside the note's cycles (labelled so)."""
    return markdown_table([{
        "test point": g["name"],
        "rows read": f"{g['checked_rows']} checked + {g['final_rows']} {g['final']}",
        "model: loops at their floors": f"{g['model_loops']:,.0f}",
        "… with the natural final row": f"{g['natural_loops']:,.0f}",
        "model: task bound": f"{g['task']['bound_cycles']:,} "
                             f"({unit_names(g['task']['binding'])})",
        "the note's cycles": f"{g['note']:,}"} for g in gap])


def note_point(rows, name: str = "first-reject") -> dict:
    """Test point ``name`` at the note's V: its row of ``rows`` if they are at that V, else
    the two programs run there without their floors (first-step reject: a few seconds)."""
    row = next(r for r in rows if r["name"] == name)
    return row if row["vocab"] == VOCAB else speedup_rows(VOCAB, names=(name,))[0]


def step_cycles(step: str, name: str, vocab: int = VOCAB) -> int:
    """Cycles of the whole program of optimisation step ``step`` (of ``optimisation_steps``)
    at test point ``name`` and ``vocab`` (no floors: a few seconds at the note's V)."""
    from rslab.fixtures import scenario_inputs
    from rslab.kernels.sampler.run import run_sampler

    run = run_sampler(scenario_inputs(name, V=vocab), "fast", dict(optimisation_steps())[step],
                      figures=False)
    if not run.tokens_match:
        raise AssertionError(f"{name} at V = {vocab}: step {step!r}'s tokens differ from the "
                             "reference's")
    return run.cycles


def step_saving(step: str, name: str, vocab: int = VOCAB) -> int:
    """Cycles optimisation step ``step`` saves (negative: costs) over the step before it, at
    test point ``name`` and ``vocab`` (:func:`step_cycles` of both)."""
    labels = [label for label, _ in optimisation_steps()]
    i = labels.index(step)
    if i == 0:
        raise ValueError(f"step: {step!r} is the first step; it saves nothing over another")
    return step_cycles(labels[i - 1], name, vocab) - step_cycles(step, name, vocab)


def draw_ratio(name: str, vocab: int, draw=BEYOND_DRAW) -> float:
    """Cycles of the optimised program drawing with ``draw`` over the Div8 sampler's, at test
    point ``name`` and ``vocab`` (no floors: first-step reject runs in a second or two at the
    note's V)."""
    from rslab.fixtures import scenario_inputs
    from rslab.kernels.sampler.run import run_sampler

    inputs = scenario_inputs(name, V=vocab)
    runs = [run_sampler(inputs, "fast", OPTIMISED, figures=False, compare=False,
                        method=m, noise=n) for m, n in (draw, ("gumbel", "div8"))]
    if not all(r.tokens_match for r in runs):
        raise AssertionError(f"{name} at V = {vocab}: a program's tokens differ from the "
                             "reference's")
    return runs[0].cycles / runs[1].cycles


def float_table(rows) -> str:
    """Per test point: the optimised program's float32 outputs compared with the reference's,
    how many are not bit-identical, and the largest difference."""
    return markdown_table([{
        "test point": point_label(r["name"]),
        "float32 outputs compared": f"{r['float_outputs_compared']:,}",
        "not bit-identical": f"{r['float_outputs_differing']:,}",
        "largest difference": f"{r['largest_float_difference']:.2g}"} for r in rows])


# ----------------------------------------------------------------- the exercises

def exercise_runs(vocab: int = EXERCISE_VOCAB, *, third_valu: bool = True) -> dict:
    """The figures the exercises ask for at ``vocab``: first-step reject against the
    all-accept baseline's plan (``fr_naive_speedup``) and against its own (``fr_speedup``),
    the cycles per phase the first plan's baseline takes more than the second's
    (``fr_naive_over_own``, by phase name);
    with ``third_valu``, at all-accept on two and three VALU slots: each loop's II and stage
    count (``ii_2``, ``stages_2``...), the optimised program's cycles per phase
    (``phases_2``...), both programs' cycles (``opt_2``, ``base_2``...) and the speedup
    (``aa_speedup_2``, ``aa_speedup_3``)."""
    from rslab.fixtures import scenario_inputs
    from rslab.kernels.sampler.plans import ALL_ACCEPT_BASELINE, FIRST_REJECT_BASELINE
    from rslab.kernels.sampler.run import run_sampler

    fr = scenario_inputs("first-reject", V=vocab)
    fr_opt = run_sampler(fr, "fast", OPTIMISED, figures=False).cycles
    naive, own = (run_sampler(fr, "fast", plan, figures=False)
                  for plan in (ALL_ACCEPT_BASELINE, FIRST_REJECT_BASELINE))
    out = {"vocab": vocab, "fr_naive_speedup": naive.cycles / fr_opt,
           "fr_speedup": own.cycles / fr_opt,
           "fr_naive_over_own": {PHASE_NAMES[ph]: naive.phases[ph] - own.phases[ph]
                                 for ph in naive.phases}}
    if not third_valu:
        return out
    aa = scenario_inputs("all-accept", V=vocab)
    for slots, config in ((2, MachineConfig()), (3, MachineConfig().with_(slots={"valu": 3}))):
        opt = run_sampler(aa, "fast", OPTIMISED, config=config)
        base = run_sampler(aa, "fast", ALL_ACCEPT_BASELINE, config=config, figures=False)
        out[f"ii_{slots}"] = {label: fig["ii"] for label, fig in opt.loops.items()}
        out[f"stages_{slots}"] = {label: fig["stage_count"] for label, fig in opt.loops.items()}
        out[f"phases_{slots}"] = {PHASE_NAMES[ph]: c for ph, c in opt.phases.items()}
        out[f"opt_{slots}"], out[f"base_{slots}"] = opt.cycles, base.cycles
        out[f"aa_speedup_{slots}"] = base.cycles / opt.cycles
    return out


def split_exercise(vocab: int = EXERCISE_VOCAB, draw=("race", "scaled")) -> dict:
    """The task bound's split for ``draw`` at all-accept and ``vocab``: the bonus row's and a
    checked row's VALU ops and transcendentals per float32 vector, the task's totals (``valu_ops``,
    ``transcendentals``), :func:`compute_bound` for a VALU transcendental of 4 ops, of 1 and
    of 1000 (``by_k``), the SFU's cycles with every transcendental there, and how many the
    split moves for the Div8 draw."""
    tp = TEST_POINTS["all-accept"]
    layout, accepted = SamplerLayout(tp.R, tp.S, vocab), accepted_at("all-accept")
    config = MachineConfig()
    work = task_work(layout, accepted, "fast", draw)
    div8 = task_work(layout, accepted, "fast", ("gumbel", "div8"))
    return {"per_vector": element_work("bonus", "fast", draw),
            "checked_per_vector": element_work("checked", "fast", draw),
            "valu_ops": float(work["valu_ops"]), "transcendentals": work["transcendentals"],
            "by_k": {k: compute_bound(work["valu_ops"], work["transcendentals"], config,
                                      per_transcendental=k) for k in (4, 1, 1000)},
            "all_on_sfu": work["transcendentals"] * (1 + config.sfu_hold),
            "div8_moved": compute_bound(div8["valu_ops"], div8["transcendentals"],
                                        config)["transcendentals_on_valu"]}


def whole_split_cycles(split: dict, k: int, moved: int) -> int:
    """Cycles of the busier unit, each rounded up, with ``moved`` whole transcendentals of
    :func:`split_exercise`'s task on the VALU at ``k`` ops each."""
    return max(math.ceil(c) for c in split_cycles(split["valu_ops"], split["transcendentals"],
                                                     MachineConfig(), moved,
                                                     per_transcendental=k))


def whole_split_threshold(split: dict) -> int:
    """The least k from which moving one whole transcendental no longer lowers
    :func:`whole_split_cycles`."""
    return next(k for k in count(1)
                if whole_split_cycles(split, k, 1) >= whole_split_cycles(split, k, 0))


# ----------------------------------------------------------------- what the sampler accepts

def _sampler_case(logits=None, q=None, ids=None, **kw):
    """A call of ``rejection_sample`` on the two-token example, with some inputs replaced."""
    l0 = np.zeros((1, 2, 4), np.float32)
    q0 = np.full((1, 1, 4), 0.25, np.float32)
    ids0 = np.zeros((1, 1), np.int64)
    return lambda: rejection_sample(l0 if logits is None else logits, q0 if q is None else q,
                                    ids0 if ids is None else ids, **kw)


SAMPLER_REJECTS = (
    ("bonus row of four logits 1e7", "the noise cannot resolve its scores (shift invariance)",
     _sampler_case(logits=np.full((1, 2, 4), 1e7, np.float32))),
    ("a NaN logit", "no probability to give it", _sampler_case(
        logits=np.array([[[0, np.nan, 0, 0]] * 2], np.float32))),
    ("a +inf logit", "softmax undefined", _sampler_case(
        logits=np.array([[[0, np.inf, 0, 0]] * 2], np.float32))),
    ("a row of −inf logits", "no token to emit", _sampler_case(
        logits=np.full((1, 2, 4), -np.inf, np.float32))),
    ("float64 logits", "the float32 semantics are the contract", _sampler_case(
        logits=np.zeros((1, 2, 4)))),
    ("draft row summing to 0.5", "q must be a distribution", _sampler_case(
        q=np.full((1, 1, 4), 0.125, np.float32))),
    ("a negative draft probability", "q must be a distribution", _sampler_case(
        q=np.array([[[0.5, 0.75, -0.25, 0]]], np.float32))),
    ("draft id 4 with V = 4", "no such token", _sampler_case(ids=np.full((1, 1), 4))),
    ("noise div(1e-50)", "the divisor is 0 in float32: the noise would be NaN",
     _sampler_case(path="fast", noise="div(1e-50)")),
    ("seed −1", "seeds are 64-bit words", _sampler_case(seed=-1)),
)
"""(input, why it is rejected, the call) for each kind of input ``rejection_sample`` rejects."""


def rejection_rows(cases=SAMPLER_REJECTS) -> list[tuple[str, str, str, str]]:
    """(input, why, error type, message) for each case: the message is the one the code
    raises on that input (a case that is accepted raises an AssertionError here)."""
    rows = []
    for label, why, call in cases:
        try:
            call()
        except ValueError as exc:
            rows.append((label, why, type(exc).__name__, str(exc)))
        else:
            raise AssertionError(f"{label}: accepted")
    return rows


def rejection_table(cases=SAMPLER_REJECTS) -> str:
    """:func:`rejection_rows` as a table (a ``|`` in a message escaped)."""
    return markdown_table([{"input": label, "why": why, "error": f"`{kind}`",
                            "message": msg.replace("|", "\\|")}
                           for label, why, kind, msg in rejection_rows(cases)])


RAW_LOGITS = 4
"""The equal logits of a raw-logit bonus row."""


def raw_bonus_tokens(value: float, requests: int, path: str = "exact", V: int = RAW_LOGITS,
                     seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(tokens, unrounded) of the raw-logit bonus draw ``argmax(l·LOG2E + g)`` (the product
    rounded to float32) over V equal logits ``value`` — what the sampler would emit if it did
    not reject the row (the noise rows are the reference's own) — and the winners of the
    noise alone, which the equal logits leave unchanged in exact arithmetic."""
    from rslab.reference import BONUS, gumbel_noise, sample_scores

    g = gumbel_noise(path, seed, np.arange(requests), 0, BONUS, np.arange(V))
    with np.errstate(over="ignore"):
        x = np.full((requests, V), value, np.float32) * LOG2E
    return sample_scores(x, g).argmax(axis=-1), np.asarray(g, np.float64).argmax(axis=-1)


def _shares(tokens, V: int = RAW_LOGITS) -> np.ndarray:
    """Each of V tokens' share of the draws ``tokens``."""
    return np.bincount(tokens, minlength=V) / len(tokens)


def raw_bonus_frequencies(value: float, requests: int, path: str = "exact", V: int = RAW_LOGITS,
                          seed: int = 0) -> np.ndarray:
    """Token frequencies of :func:`raw_bonus_tokens`' draws."""
    return _shares(raw_bonus_tokens(value, requests, path, V, seed)[0], V)


def uniformity_p(frequencies, requests: int) -> float:
    """The χ² test's p-value of token frequencies over ``requests`` draws against equal
    shares (small: the draws are measurably not uniform)."""
    from scipy.stats import chisquare

    return float(chisquare(np.rint(np.asarray(frequencies) * requests)).pvalue)


SKEW_P = 1e-3
"""The χ² p-value below which the page calls the raw bonus draws measurably skewed."""
GUMBEL_SIGMA = float(np.pi / np.sqrt(6) / np.log(2))
"""The standard deviation of base-2 Gumbel noise: π/√6 in nats, over ln 2."""


def logit_step(v: float) -> float:
    """The float32 step of a raw logit's score term ``v·LOG2E``: how coarsely the draw sees
    ``v``."""
    return float(np.spacing(np.float32(v * LOG2E)))


def raw_bonus_skew(values, requests: int) -> dict:
    """The raw-logit bonus draws at each logit of ``values`` over ``requests`` draws:
    ``frequencies``, χ² ``p`` and the draws whose winner the rounding changed (``changed``)
    by value, the noise alone's winners' frequencies (``unrounded``, the same noise for every
    value), the values whose p is below :data:`SKEW_P` in order (``skewed``), and for the
    first of them (``first``) the float32 step of its l·LOG2E (``step``) over the noise's
    standard deviation (``step_over_sigma``); ``first`` and both are None where none is
    skewed."""
    draws = {v: raw_bonus_tokens(v, requests) for v in values}
    freq = {v: _shares(t) for v, (t, _) in draws.items()}
    changed = {v: int((t != u).sum()) for v, (t, u) in draws.items()}
    unrounded = _shares(draws[values[0]][1])
    p = {v: uniformity_p(f, requests) for v, f in freq.items()}
    skewed = [v for v in values if p[v] < SKEW_P]
    first = skewed[0] if skewed else None
    step = None if first is None else logit_step(first)
    return {"frequencies": freq, "p": p, "changed": changed, "unrounded": unrounded,
            "skewed": skewed, "first": first, "step": step,
            "step_over_sigma": None if step is None else step / GUMBEL_SIGMA}


def raw_bonus_table(frequencies: dict, requests: int) -> str:
    """Per logit value (``frequencies``: value → token frequencies over ``requests`` draws):
    the float32 step of the score's logit term, each token's share of the draws, and the
    χ² p-value of equal shares."""
    return markdown_table([{
        "four equal logits of": f"{v:.6g}",
        "float32 step of l·LOG2E": f"{logit_step(v):.3g}",
        **{f"token {i}": f"{f:.3f}" for i, f in enumerate(freq)},
        "χ² p of equal shares": f"{uniformity_p(freq, requests):.2g}"}
        for v, freq in frequencies.items()])


def fastlog_worst_error(fastlog) -> tuple[float, float]:
    """(x, |fastlog(x) − log2 x|) at the largest absolute error over every float32 x in
    [0.5, 2), the plateau near 1 included (``error_bound`` leaves it out)."""
    bits = np.arange((126 << 23), (128 << 23), dtype=np.uint32)
    x = bits.view(np.float32)
    err = np.abs(fastlog(x).astype(np.float64) - np.log2(x.astype(np.float64)))
    i = int(np.argmax(err))
    return float(x[i]), float(err[i])


RECOMMENDED_NAME = variant_name(*RECOMMENDED)
"""The recommended draw's name, read from :data:`rslab.numerics.methods.RECOMMENDED`."""
