"""Benchmark ``chip``: the sampler on 1 … 64 cores against the chip's bound
(``python -m rslab bench --only chip``).

Every point of the grid (:mod:`rslab.kernels.sampler.chip_curves`: the note's two test
points, both modes, the scale's requests and core counts, ``--vocab``) with its
cycles, the chip's bound, their ratio and whether the tokens are the reference's; then, per
curve, where strong scaling ends and what binds there; then the targets: first-step reject
at R = 2 on 32 cores within 1.5× of the bound (latency), all-accept at R = 64 within 1.3×
(throughput), the check's merge both ways (max-first, online) at R = 2 on 32 cores, the
32-core R = 2 run's wall time (a live figure's update: target 5 s), and
how often the float32 merge of a split row's sum changes an outcome
(:mod:`rslab.numerics.split_effect`, exact per row, over sampled rows).
"""

from __future__ import annotations

import time

from rslab.bench.registry import benchmark
from rslab.executors import make_executor
from rslab.fixtures import first_reject_inputs, sampled_inputs
from rslab.kernels.sampler.chip_curves import (
    TARGETS,
    curve_point,
    curve_points,
    grid,
    scaling_end,
)
from rslab.kernels.sampler.chip_run import run_chip_sampler
from rslab.numerics.fastlog import fast_exp2
from rslab.numerics.split_effect import merge_orders, order_changes
from rslab.numerics.split_sum import MERGES, SplitSum
from rslab.scale import by_scale
from rslab.viz import tables

TABLE_KEYS = ("name", "R", "cores", "mode", "cycles", "bound_cycles", "ratio", "binding",
              "tokens_per_kcycle", "tokens_match_reference")
MERGE_KEYS = ("name", "merge", "cycles", "bound_cycles", "ratio", "exchange_cycles",
              "tokens_match_reference")


def merge_change(vocab: int, rows: int, seed: int = 0) -> dict:
    """Per order of the sum (NumPy's, split over 16 cores max-first and online, over 64), the
    exact probability that it changes the outcome at a position against the one-core order,
    over ``rows`` sampled positions (:func:`rslab.numerics.split_effect.order_changes`)."""
    inputs = sampled_inputs(-(-rows // 2), 2, vocab, seed=seed)
    return order_changes(inputs, merge_orders(vocab), SplitSum((0, vocab)), fast_exp2, rows)


def chip_figures(vocab: int) -> dict:
    start = time.perf_counter()
    with make_executor() as executor:
        points = curve_points(vocab, executor=executor)
    grid_seconds = time.perf_counter() - start
    by = {(p["name"], p["R"], p["cores"], p["mode"]): p for p in points}
    targets = {}
    for what, (name, R, C, mode, target) in TARGETS.items():
        p = by.get((name, R, C, mode))
        targets[what] = {"point": f"{name} R={R} C={C} {mode}", "target_ratio": target,
                         "ratio": p["ratio"] if p else None,
                         "meets_target": bool(p and p["ratio"] <= target)}
    merges = [curve_point(name, 2, 32, "sequential", vocab, merge)
              for name in ("first-reject", "all-accept") for merge in MERGES]
    inputs = first_reject_inputs(R=2, S=4, V=vocab, seed=0)
    run_chip_sampler(inputs, cores=32, figures=False, compare=False)  # programs built once
    start = time.perf_counter()
    run_chip_sampler(inputs, cores=32, figures=False, compare=False)
    live = time.perf_counter() - start
    rows = by_scale(4, 32, 128)
    return {"chip": {"vocab": vocab, "requests_grid": list(grid()[0]),
                     "cores_grid": list(grid()[1]), "points": points,
                     "scaling": scaling_end(points), "targets": targets,
                     "live_update_seconds": round(live, 2), "live_target_seconds": 5.0,
                     "merge_change": merge_change(vocab, rows),
                     "merges": [{k: p[k] for k in MERGE_KEYS} for p in merges],
                     "all_tokens_match": all(p["tokens_match_reference"] for p in points),
                     "grid_seconds": round(grid_seconds, 1)}}


def chip_text(out: dict) -> str:
    c = out["chip"]
    table = [{k: p[k] for k in TABLE_KEYS} for p in c["points"]]
    lines = [f"The sampler on a chip at V = {c['vocab']:,} (R: {c['requests_grid']}, cores: "
             f"{c['cores_grid']}): cycles "
             "against the chip's bound (the task's bytes over the shared HBM, its SFU and "
             "VALU work over the cores, plus the exchange's barriers):",
             tables.markdown_table(table), "", "Where strong scaling ends:",
             tables.markdown_table(c["scaling"]), "", "Targets:"]
    for what, t in c["targets"].items():
        lines.append(f"  {what}: {t['point']}: ratio {t['ratio']} (target {t['target_ratio']}"
                     f"): {'met' if t['meets_target'] else 'NOT met'}")
    lines.append(f"  live update (32 cores, R = 2): {c['live_update_seconds']} s (target "
                 f"{c['live_target_seconds']} s)")
    lines.append("\nThe check's merge both ways (R = 2, 32 cores, sequential):")
    lines.append(tables.markdown_table(c["merges"]))
    lines.append("\nHow often the order of the float32 sum changes an outcome at a position "
                 "(exact per row, against the one-core order):")
    lines.append(tables.markdown_table([{"order": k, **v} for k, v in c["merge_change"].items()]))
    lines.append(f"\nall tokens equal the reference's: {c['all_tokens_match']}; the grid took "
                 f"{c['grid_seconds']} s")
    return "\n".join(lines)


@benchmark("chip", text=chip_text)
def chip(args) -> dict:
    return chip_figures(args.vocab)
