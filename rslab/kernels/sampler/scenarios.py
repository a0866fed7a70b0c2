"""The note's test points on the full sampler: baseline and optimised programs, side by side.

:func:`run_scenarios` simulates the four runs (two test points × baseline /
optimised) at one vocabulary size and path and returns one row per test point
(the stable keys of ``python -m rslab bench --json``) and the figures of the
optimised loops.
"""

from __future__ import annotations

import time

from tqdm import tqdm

from rslab.fixtures import TEST_POINTS, scenario_inputs
from rslab.kernels.sampler.plans import OPTIMISED, baseline_plan
from rslab.kernels.sampler.run import SamplerRun, run_sampler

PHASE_OUT = {"max": "max", "sumexp": "sumexp", "acceptance": "accept", "residual": "residual",
             "bonus": "bonus", "dma_wait": "dma_wait", "setup": "setup"}
"""Output key → phase name in ``SamplerRun.phases``."""
NOTE = {"all-accept": (1_530_302, 128_453), "first-reject": (55_896, 38_032)}
"""The design note's measured cycles (baseline, optimised) — the note's, not ours."""


def phases_out(run: SamplerRun) -> dict:
    return {key: int(run.phases[name]) for key, name in PHASE_OUT.items()}


def scenario_row(name: str, vocab: int, path: str, base: SamplerRun, opt: SamplerRun) -> dict:
    """One row of the table (the stable keys of ``bench --json`` first)."""
    tp = TEST_POINTS[name]
    return {
        "name": name, "S": tp.S, "R": tp.R, "vocab": vocab, "path": path,
        "baseline_cycles": int(base.cycles), "optimized_cycles": int(opt.cycles),
        "speedup": round(base.cycles / opt.cycles, 3),
        "tokens_match_reference": bool(base.tokens_match and opt.tokens_match),
        "baseline": base.kernel.plan.name,
        "baseline_phases": phases_out(base), "optimized_phases": phases_out(opt),
        "float_outputs_compared": opt.floats_compared,
        "float_outputs_differing": opt.floats_differing,
        "largest_float_difference": opt.largest_float_difference,
    }


def loop_row(fig: dict) -> dict:
    return {"ii": fig["ii"], "res_mii": fig["res_mii"], "rec_mii": fig["rec_mii"],
            "stalls_per_iter": fig["stalls_per_iter"], "cycles_per_iter": fig["cycles_per_iter"]}


def run_scenarios(vocab: int, path: str, *, seed: int = 0, progress: bool = True) -> dict:
    """The four runs; returns the benchmark dict plus the runs themselves under ``runs``."""
    if isinstance(vocab, bool) or not isinstance(vocab, int) or vocab < 256 or vocab % 256:
        raise ValueError(f"vocab must be a positive multiple of 256, got {vocab!r}")
    if path not in ("fast", "exact"):
        raise ValueError(f"path must be 'fast' or 'exact', got {path!r}")
    rows, runs = [], {}
    start = time.perf_counter()
    with tqdm(total=2 * len(TEST_POINTS), desc=f"full kernels V={vocab} {path}",
              disable=not progress, leave=False) as bar:
        for name in TEST_POINTS:
            inputs = scenario_inputs(name, V=vocab, seed=seed)
            base = run_sampler(inputs, path, baseline_plan(name), seed=seed)
            bar.update()
            opt = run_sampler(inputs, path, OPTIMISED, seed=seed)
            bar.update()
            rows.append(scenario_row(name, vocab, path, base, opt))
            runs[name] = (base, opt)
    seconds = time.perf_counter() - start
    loops = {"sumexp": loop_row(runs["all-accept"][1].loops["loop_sumexp"]),
             "residual_gumbel": loop_row(runs["first-reject"][1].loops["loop_residual"]),
             "bonus_gumbel": loop_row(runs["all-accept"][1].loops["loop_bonus"]),
             "rowmax": loop_row(runs["all-accept"][1].loops["loop_rowmax"])}
    return {"scenarios": rows, "loops": loops, "kernel_seconds": round(seconds, 1),
            "runs": runs}
