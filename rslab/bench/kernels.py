"""Benchmark ``kernels``: the note's table — baseline versus optimised full sampler.

``python -m rslab bench --only kernels [--vocab V] [--path fast|exact] [--json]``
simulates the four full-kernel runs (two test points × baseline / optimised), and
the other first translation for all-accept, and returns ``{"scenarios": [...],
"loops": {...}}`` with stable keys; each scenario row holds, per phase, the achieved
cycles, the floor (``bound_cycles``), what binds it and their ``ratio``, for both
programs (``optimized_floor``, ``baseline_floor``).
"""

from __future__ import annotations

import time

from rslab import note
from rslab.bench.registry import benchmark
from rslab.executors import make_executor
from rslab.kernels.sampler.scenarios import run_scenarios, speedup_rows
from rslab.viz import tables
from rslab.viz.results_plots import floor_table, results_table

LIVE_UPDATE_TARGET = 5
"""Seconds one update of the live vocabulary figure may take at the note's V."""


def kernels_text(out: dict) -> str:
    """The note's table, the cycles per phase and the loop figures, for a terminal."""
    floats = [{"test point": r["name"], "float outputs differing":
               f"{r['float_outputs_differing']} of {r['float_outputs_compared']}",
               "largest difference": f"{r['largest_float_difference']:.3g}"}
              for r in out["scenarios"]]
    phases = []
    for r in out["scenarios"]:
        for which, key in (("baseline", "baseline_phases"), ("optimised", "optimized_phases")):
            phases.append({"program": f"{r['name']} {which}",
                           **{k: f"{v:,}" for k, v in r[key].items()}})
    loops = [{"loop": name, **fig} for name, fig in out["loops"].items()]
    bounds = [{"test point": r["name"], "optimised": f"{r['optimized_cycles']:,}",
               "floor of the program": f"{r['optimized_bound_cycles']:,}",
               "its DMA bytes": f"{r['optimized_dma']['bytes']:,}",
               "engine alone": f"{r['optimized_dma']['engine_cycles']:,}",
               "bound of the task": f"{r['optimized_task_bound']['bound_cycles']:,} "
                                    f"({r['optimized_task_bound']['binding']})",
               "task bytes": f"{r['optimized_task_bound']['bytes']:,}"}
              for r in out["scenarios"]]
    return "\n\n".join([
        results_table(out["scenarios"], note.SCENARIOS), tables.markdown_table(floats),
        "Cycles per phase:\n" + tables.markdown_table(phases),
        "The optimised programs against their floor, per phase:\n"
        + floor_table(out["scenarios"]),
        "The floor of the optimised program's own work and transfers beside the bound of the "
        "task (bytes that must move, the draw's per-element SFU ops):\n"
        + tables.markdown_table(bounds),
        "Loops (optimised):\n" + tables.markdown_table(loops),
        f"The four runs simulated in {out['kernel_seconds']} s "
        f"(the other baselines in {out['also_seconds']} s more).",
        f"The results chapter's live vocabulary figure: one update (the four runs on "
        f"{out['live_update_workers']} core(s), cycles and phases only) took "
        f"{out['live_update_seconds']} s (target ≤ {LIVE_UPDATE_TARGET} s)."])


def live_update(vocab: int, path: str) -> dict:
    """Wall time of one update of the results chapter's speedup-against-V figure at
    ``vocab`` (:func:`rslab.kernels.sampler.scenarios.speedup_rows` on this machine's cores)."""
    with make_executor() as executor:
        start = time.perf_counter()
        speedup_rows(vocab, path, executor=executor)
        return {"live_update_seconds": round(time.perf_counter() - start, 2),
                "live_update_workers": executor.workers}


@benchmark("kernels", text=kernels_text)
def kernels_benchmark(args) -> dict:
    """The note's table at ``--vocab`` on ``--path``; wall time of the four runs and of one
    live update of the vocabulary figure."""
    out = run_scenarios(int(args.vocab), args.path, progress=not args.json)
    out.pop("runs")
    return {**out, **live_update(int(args.vocab), args.path)}
