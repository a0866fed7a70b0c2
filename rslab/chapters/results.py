"""Chapter 7, *Results*: per-loop figures of the two kernels, the floor per phase, the
headline table, the row beyond the note, and the vocabulary sweep live."""

from rslab.executors import make_executor
from rslab.fixtures import VOCAB
from rslab.kernels.sampler.bodies import final_body
from rslab.kernels.sampler.plans import OPTIMISED
from rslab.kernels.sampler.scenarios import run_draws, speedup_rows
from rslab.numerics.methods import RECOMMENDED
from rslab.schedule import slot_of
from rslab.viz import results_plots as rp
from rslab.viz.controls import int_control

BEYOND_DRAW = RECOMMENDED
"""The Fast draw the chapter *Beyond the note* recommends
(:data:`rslab.numerics.methods.RECOMMENDED`): no test gains 0.1 before about 10^11 samples
on any row of its domain."""
LOOPS = (("row max", "loop_rowmax", "rowmax_u"), ("sum-exp", "loop_sumexp", "sumexp_u"),
         ("bonus Gumbel-argmax", "loop_bonus", "final_u"))
"""(name, program label, unroll field of the plan) of each loop the chapter compares."""


def headline(rows, note: dict) -> list[dict]:
    """Per test point: our optimised cycles, its floor and ratio, the speedups against every
    baseline measured, and the design note's optimised cycles and speedup (the note's)."""
    out = []
    for r in rows:
        nb, no = note[r["name"]]
        speedups = [(r["baseline"], r["speedup"])]
        speedups += [(a["baseline"], a["speedup"]) for a in r["also_against"]]
        out.append({"name": r["name"], "optimised": r["optimized_cycles"],
                    "floor": r["optimized_bound_cycles"], "ratio": r["optimized_ratio"],
                    "speedups": speedups, "note_optimised": no, "note_speedup": nb / no,
                    "note_baseline": "first correct implementation" if r["name"] == "all-accept"
                    else "partly optimised baseline"})
    return out


def beyond_rows(vocab: int, runs: dict, draw=BEYOND_DRAW) -> list[dict]:
    """The Div8 sampler and ``draw``'s at both test points, against the baselines of ``runs``
    (:func:`run_scenarios`' runs on the same inputs and seed: only ``draw`` is simulated)."""
    known = {name: (both[0], both[1]) for name, both in runs.items()}
    return run_draws(vocab, [draw], known=known, progress=False)


def per_vector(run, label: str, unroll: int) -> float:
    """Cycles per packed vector of loop ``label``: its II (or measured cycles per iteration
    when it is not modulo scheduled) over the vectors one iteration handles."""
    fig = run.loops[label]
    return fig["ii"] / unroll if fig["ii"] else fig["cycles_per_iter"] / unroll


def loop_items(baseline, optimised, plan=OPTIMISED) -> list[dict]:
    """Per loop: the baseline's and the optimised plan's cycles per packed vector."""
    return [{"loop": name, "baseline_per_vector": per_vector(baseline, label, 1),
             "optimised_per_vector": per_vector(optimised, label, getattr(plan, field))}
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


def valu_ops_per_vector(plan, path: str, kind: str = "bonus") -> float:
    """VALU ops per float32 vector of a final row's loop body under ``plan``."""
    u = 2 if path == "exact" else plan.final_u
    body = final_body(kind, path, u, counters="own" if plan.rotate_counters and path == "fast"
                      else "offsets", argmax=plan.argmax,
                      hoisted=["v0"] * 4 if path == "exact" and plan.hoist_philox else None)
    return sum(slot_of(op.opcode) == "valu" for op in body) / (2 * u)


def task_rows(beyond) -> list[dict]:
    """Per test point and draw (rows of :func:`beyond_rows`): cycles, the floor of the
    program's own work, the task's bound (what any program of that draw must spend) and what
    binds it, and cycles over each."""
    return [{"test point": r["name"], "draw": r["draw"], "cycles": f"{r['cycles']:,}",
             "floor (this program's work)": f"{r['bound_cycles']:,}",
             "cycles / floor": f"{r['ratio']:.2f}",
             "task bound": f"{r['task_bound_cycles']:,} ({r['task_binding']})",
             "cycles / task bound": f"{r['task_ratio']:.2f}"} for r in beyond]


def below_other_floor(beyond) -> list[str]:
    """The runs of :func:`beyond_rows` that take fewer cycles than the Div8 sampler's floor at
    the same test point: a floor bounds its own program, not the machine."""
    floor = {r["name"]: r["bound_cycles"] for r in beyond if r["draw"] == "gumbel-div8"}
    return [f"{r['draw']} at {r['name']} ({r['cycles']:,} cycles against {floor[r['name']]:,})"
            for r in beyond if r["draw"] != "gumbel-div8" and r["cycles"] < floor[r["name"]]]


def exercise_runs(vocab: int = 1024) -> dict:
    """The figures the exercises ask for, at a small ``vocab``: first-step reject against the
    all-accept baseline's plan (``fr_naive_speedup``) and against its own
    (``fr_speedup``); with a third VALU slot, each loop's II (``ii_2``, ``ii_3``, all-accept)
    and the all-accept speedup (``aa_speedup_2``, ``aa_speedup_3``)."""
    from rslab.fixtures import scenario_inputs
    from rslab.kernels.sampler.plans import ALL_ACCEPT_BASELINE, FIRST_REJECT_BASELINE
    from rslab.kernels.sampler.run import run_sampler
    from rslab.machine import MachineConfig

    fr = scenario_inputs("first-reject", V=vocab)
    aa = scenario_inputs("all-accept", V=vocab)
    fr_opt = run_sampler(fr, "fast", OPTIMISED).cycles
    out = {"vocab": vocab,
           "fr_naive_speedup": run_sampler(fr, "fast", ALL_ACCEPT_BASELINE).cycles / fr_opt,
           "fr_speedup": run_sampler(fr, "fast", FIRST_REJECT_BASELINE).cycles / fr_opt}
    for slots, config in ((2, MachineConfig()), (3, MachineConfig().with_(slots={"valu": 3}))):
        opt = run_sampler(aa, "fast", OPTIMISED, config=config)
        base = run_sampler(aa, "fast", ALL_ACCEPT_BASELINE, config=config)
        out[f"ii_{slots}"] = {label: fig["ii"] for label, fig in opt.loops.items()}
        out[f"aa_speedup_{slots}"] = base.cycles / opt.cycles
    return out
