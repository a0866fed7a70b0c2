"""The note's test points on the full sampler: baseline and optimised programs, side by side.

:func:`run_scenarios` simulates the four runs (two test points × baseline /
optimised) at one vocabulary size and path and returns one row per test point
(the stable keys of ``python -m rslab bench --json``) and the figures of the
optimised loops, once per book build (:mod:`rslab.memo`: the introduction's headline
and the results chapter read the same runs). :func:`run_draws` runs the optimised
program with every draw its rows take (:mod:`rslab.kernels.sampler.draws`) at both test
points, each beside its floor, the Div8 sampler's cycles and the test point's baseline
(the note's sampler, Gumbel-max Div8, in its baseline plan).
"""

from __future__ import annotations

import time

from tqdm import tqdm

from rslab import memo
from rslab.executors import Serial
from rslab.fixtures import TEST_POINTS, scenario_inputs
from rslab.kernels.sampler.draws import DEFAULT_DRAW, SAMPLER_DRAWS
from rslab.kernels.sampler.floor import total_floor
from rslab.kernels.sampler.plans import ALSO_COMPARED, OPTIMISED, baseline_plan
from rslab.kernels.sampler.run import SamplerRun, run_sampler
from rslab.numerics.methods import variant_name

PHASE_OUT = {"max": "max", "sumexp": "sumexp", "acceptance": "accept", "residual": "residual",
             "bonus": "bonus", "dma_wait": "dma_wait", "setup": "setup"}
"""Output key → phase name in ``SamplerRun.phases``."""


def phases_out(run: SamplerRun) -> dict:
    return {key: int(run.phases[name]) for key, name in PHASE_OUT.items()}


def floor_out(run: SamplerRun) -> dict:
    """Per phase (output keys): ``achieved``, ``bound_cycles``, ``binding``, ``ratio``."""
    return {key: dict(run.floors[name]) for key, name in PHASE_OUT.items()}


def dma_out(run: SamplerRun) -> dict:
    """The program's own transfers: ``bytes``, ``transfers``, ``engine_cycles`` (the engine
    alone), and the floor's DMA term (``wait_floor``) beside the cycles waited."""
    f = run.floors["dma_wait"]
    return {"bytes": f["bytes"], "transfers": f["transfers"], "engine_cycles": f["engine_cycles"],
            "wait_floor": f["bound_cycles"], "waited": f["achieved"]}


def scenario_row(name: str, vocab: int, path: str, base: SamplerRun, opt: SamplerRun,
                 others=()) -> dict:
    """One row of the table (the stable keys of ``bench --json`` first); ``others``: runs of
    the baselines the test point is also compared with."""
    tp = TEST_POINTS[name]
    total = total_floor(opt.floors)
    return {
        "name": name, "S": tp.S, "R": tp.R, "vocab": vocab, "path": path,
        "baseline_cycles": int(base.cycles), "optimized_cycles": int(opt.cycles),
        "speedup": round(base.cycles / opt.cycles, 3),
        "tokens_match_reference": bool(base.tokens_match and opt.tokens_match
                                       and all(o.tokens_match for o in others)),
        "baseline": base.kernel.plan.name,
        "baseline_phases": phases_out(base), "optimized_phases": phases_out(opt),
        "optimized_bound_cycles": total["bound_cycles"], "optimized_ratio": total["ratio"],
        "baseline_floor": floor_out(base), "optimized_floor": floor_out(opt),
        "also_against": [{"baseline": o.kernel.plan.name, "cycles": int(o.cycles),
                          "speedup": round(o.cycles / opt.cycles, 3)} for o in others],
        "optimized_dma": dma_out(opt), "optimized_task_bound": dict(opt.task),
        "float_outputs_compared": opt.floats_compared,
        "float_outputs_differing": opt.floats_differing,
        "largest_float_difference": opt.largest_float_difference,
    }


def _speedup_run(task, shared=None) -> dict:
    name, plan, vocab, path, seed = task
    inputs = scenario_inputs(name, V=vocab, seed=seed)
    run = run_sampler(inputs, path, plan, seed=seed, compare=False, figures=False)
    return {"cycles": int(run.cycles), "phases": phases_out(run),
            "tokens_match": bool(run.tokens_match)}


def speedup_rows(vocab: int, path: str = "fast", *, seed: int = 0, executor=None,
                 names=tuple(TEST_POINTS)) -> list[dict]:
    """Per test point of ``names`` the baseline's and the optimised program's cycles and
    phases, the speedup and whether every token equals the reference's: what the
    speedup-against-V figure shows, without the floors, loop figures and other baselines of
    :func:`run_scenarios` (the runs are tasks of ``executor``, default this process)."""
    _check_point(vocab, path)
    unknown = set(names) - set(TEST_POINTS)
    if unknown:
        raise ValueError(f"names: unknown test points {sorted(unknown)}; known: "
                         f"{list(TEST_POINTS)}")
    tasks = [(name, plan, vocab, path, seed) for name in names
             for plan in (baseline_plan(name), OPTIMISED)]
    runs = (executor or Serial()).map(_speedup_run, tasks)
    rows = []
    for i, name in enumerate(names):
        base, opt = runs[2 * i], runs[2 * i + 1]
        tp = TEST_POINTS[name]
        rows.append({"name": name, "S": tp.S, "R": tp.R, "vocab": vocab, "path": path,
                     "baseline": baseline_plan(name).name,
                     "baseline_cycles": base["cycles"], "optimized_cycles": opt["cycles"],
                     "speedup": round(base["cycles"] / opt["cycles"], 3),
                     "tokens_match_reference": base["tokens_match"] and opt["tokens_match"],
                     "baseline_phases": base["phases"], "optimized_phases": opt["phases"]})
    return rows


def loop_row(fig: dict) -> dict:
    return {"ii": fig["ii"], "res_mii": fig["res_mii"], "rec_mii": fig["rec_mii"],
            "stalls_per_iter": fig["stalls_per_iter"], "cycles_per_iter": fig["cycles_per_iter"],
            "per_vector": fig.get("per_vector"), "bound_per_vector": fig.get("bound_per_vector")}


@memo.cached
def optimised_run(name: str, vocab: int, draw: tuple = DEFAULT_DRAW, *,
                  seed: int = 0) -> SamplerRun:
    """The optimised Fast program drawing with ``draw`` at test point ``name`` (once per book
    build: the results chapter and *Beyond the note* run some of the same)."""
    inputs = scenario_inputs(name, V=vocab, seed=seed)
    return run_sampler(inputs, "fast", OPTIMISED, seed=seed, method=draw[0], noise=draw[1])


@memo.cached
def run_scenarios(vocab: int, path: str, *, seed: int = 0, progress: bool = True) -> dict:
    """The four runs (once per book build); returns the benchmark dict plus the runs
    themselves under ``runs``."""
    _check_point(vocab, path)
    rows, runs = [], {}
    four = extra = 0.0
    total = sum(2 + len(ALSO_COMPARED[n]) for n in TEST_POINTS)
    with tqdm(total=total, desc=f"full kernels V={vocab} {path}", disable=not progress,
              leave=False) as bar:
        for name in TEST_POINTS:
            start = time.perf_counter()
            inputs = scenario_inputs(name, V=vocab, seed=seed)
            base = run_sampler(inputs, path, baseline_plan(name), seed=seed)
            bar.update()
            opt = (optimised_run(name, vocab, seed=seed) if path == "fast"
                   else run_sampler(inputs, path, OPTIMISED, seed=seed))
            bar.update()
            four += time.perf_counter() - start
            start = time.perf_counter()
            others = []
            for plan in ALSO_COMPARED[name]:
                others.append(run_sampler(inputs, path, plan, seed=seed))
                bar.update()
            extra += time.perf_counter() - start
            rows.append(scenario_row(name, vocab, path, base, opt, others))
            runs[name] = (base, opt, *others)
    loops = {"sumexp": loop_row(runs["all-accept"][1].loops["loop_sumexp"]),
             "residual_gumbel": loop_row(runs["first-reject"][1].loops["loop_residual"]),
             "bonus_gumbel": loop_row(runs["all-accept"][1].loops["loop_bonus"]),
             "rowmax": loop_row(runs["all-accept"][1].loops["loop_rowmax"])}
    return {"scenarios": rows, "loops": loops, "kernel_seconds": round(four, 1),
            "also_seconds": round(extra, 1), "runs": runs}


def _check_vocab(vocab):
    if isinstance(vocab, bool) or not isinstance(vocab, int) or vocab < 256 or vocab % 256:
        raise ValueError(f"vocab must be a positive multiple of 256, got {vocab!r}")


def _check_point(vocab, path):
    _check_vocab(vocab)
    if path not in ("fast", "exact"):
        raise ValueError(f"path must be 'fast' or 'exact', got {path!r}")


def draw_row(name: str, draw, run: SamplerRun, div8: int, base: SamplerRun | None) -> dict:
    """One draw at one test point: cycles, floor (of the program's own work and transfers),
    the DMA wait, the program's DMA bytes and engine cycles, the task's bound
    (:func:`rslab.kernels.sampler.floor.task_bound`), against Div8 and against the
    baseline (None: not run), and the figures of its bonus and residual loops."""
    total = total_floor(run.floors)
    row = {"draw": variant_name(*draw), "name": name, "cycles": int(run.cycles),
           "bound_cycles": total["bound_cycles"], "ratio": total["ratio"],
           "dma_wait": int(run.phases["dma_wait"]), "vs_div8": round(div8 / run.cycles, 3),
           "baseline": None, "baseline_cycles": None, "speedup": None,
           "dma_bytes": run.floors["dma_wait"]["bytes"],
           "dma_engine_cycles": run.floors["dma_wait"]["engine_cycles"],
           "task_bound_cycles": run.task["bound_cycles"], "task_binding": run.task["binding"],
           "task_ratio": round(run.cycles / run.task["bound_cycles"], 3),
           "phases": phases_out(run), "tokens_match_reference": bool(run.tokens_match),
           "loops": {kind: loop_row(run.loops[f"loop_{kind}"]) for kind in ("bonus", "residual")}}
    if base is not None:
        row.update(baseline=base.kernel.plan.name, baseline_cycles=int(base.cycles),
                   speedup=round(base.cycles / run.cycles, 3))
    return row


def run_draws(vocab: int, draws=SAMPLER_DRAWS, *, seed: int = 0, progress: bool = True,
              known: dict | None = None, baselines: bool = True) -> list[dict]:
    """The optimised Fast program with each of ``draws`` (Div8 always among them) at both
    test points, one :func:`draw_row` each; ``known``: test point → (baseline run, Div8
    optimised run) already simulated on the same inputs and seed (:func:`run_scenarios`);
    ``baselines=False``: the baselines are not run (no speedup)."""
    _check_vocab(vocab)
    draws = [DEFAULT_DRAW] + [d for d in draws if tuple(d) != DEFAULT_DRAW]
    known = known or {}
    rows = []
    with tqdm(total=len(TEST_POINTS) * len(draws), desc=f"draws V={vocab}",
              disable=not progress, leave=False) as bar:
        for name in TEST_POINTS:
            base, div8 = known.get(name, (None, None))
            if base is None and baselines:
                base = run_sampler(scenario_inputs(name, V=vocab, seed=seed), "fast",
                                   baseline_plan(name), seed=seed)
            for draw in draws:  # Div8 first: every row is set beside it
                if draw == DEFAULT_DRAW and div8 is not None:
                    run = div8
                else:
                    run = optimised_run(name, vocab, tuple(draw), seed=seed)
                if draw == DEFAULT_DRAW:
                    div8 = run
                rows.append(draw_row(name, draw, run, div8.cycles, base))
                bar.update()
    return rows
