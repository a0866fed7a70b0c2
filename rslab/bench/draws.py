"""Benchmark ``draws``: every way to draw a token, on the core (``python -m rslab bench``).

For each draw (Gumbel-max div8 / div32 / rangered, the race scaled / naive, the
inverse CDF u24 / wide / wide48) and each row (bonus, residual): II, ResMII, the
binding units, cycles per packed vector (scheduled and measured), and the cycles of
a whole row at ``--vocab`` with whether its token equals the reference's; a bonus
race or inverse CDF adds the row-max pass. Then the whole sampler (the optimised
Fast program) with every draw it takes, at both of the note's test points: cycles,
the floor, against the Div8 sampler and against the test point's baseline (the
note's sampler in its baseline plan), and whether the tokens equal
``rejection_sample(..., method=, noise=)``. Target: a draw at no more cycles than
Div8's (the ``gumbel-div8`` rows).
"""

from __future__ import annotations

import time

from rslab.bench.registry import benchmark
from rslab.kernels.sampler.scenarios import run_draws
from rslab.kernels.studies.draw_loops import KINDS
from rslab.kernels.studies.draw_table import ROW_DRAWS, loop_figures, row_runs
from rslab.viz import tables

SAMPLER_KEYS = ("draw", "name", "cycles", "bound_cycles", "ratio", "dma_wait",
                "task_bound_cycles", "task_binding", "task_ratio", "vs_div8", "baseline",
                "baseline_cycles", "speedup", "tokens_match_reference")


def draws_figures(vocab: int, progress: bool = False) -> dict:
    start = time.perf_counter()
    loops = [loop_figures(k, m, n) for m, n in ROW_DRAWS for k in KINDS]
    rows = row_runs(vocab, progress=progress)
    base = {r["kind"]: r["total_cycles"] for r in rows if r["draw"] == "gumbel-div8"}
    for r in rows:
        r["vs_div8"] = round(base[r["kind"]] / r["total_cycles"], 3)
    row_seconds = time.perf_counter() - start
    sampler = run_draws(vocab, progress=progress)
    return {"draws": {"vocab": vocab, "loops": loops, "rows": rows, "sampler": sampler,
                      "all_tokens_match": all(r["matches_reference"] for r in rows)
                      and all(r["tokens_match_reference"] for r in sampler),
                      "row_seconds": round(row_seconds, 1),
                      "sampler_seconds": round(time.perf_counter() - start - row_seconds, 1)}}


def draws_text(out: dict) -> str:
    d = out["draws"]
    loops = [{k: r[k] for k in ("draw", "kind", "ii", "res_mii", "rec_mii", "binding",
                                "cycles_per_packed", "measured_per_packed")} for r in d["loops"]]
    rows = [{k: r[k] for k in ("draw", "kind", "cycles", "rowmax_cycles", "total_cycles",
                               "vs_div8", "matches_reference")} for r in d["rows"]]
    sampler = [{k: r[k] for k in SAMPLER_KEYS} for r in d["sampler"]]
    return "\n\n".join([
        "Draw loops (cycles per packed vector of 256 tokens):\n" + tables.markdown_table(loops),
        f"Whole rows at V = {d['vocab']:,} (Div8 = gumbel-div8):\n" + tables.markdown_table(rows),
        f"The whole sampler (optimised, Fast path) at the note's test points, V = "
        f"{d['vocab']:,}: cycles against the floor of the program's own work and transfers "
        "(bound_cycles), the bound of the task (task_bound_cycles: bytes that must move, the "
        "draw's per-element arithmetic on the SFU and the VALU), the Div8 sampler and the "
        "test point's baseline (the note's sampler, Gumbel-max Div8):\n"
        + tables.markdown_table(sampler),
        f"All tokens equal the reference's: {d['all_tokens_match']}; rows {d['row_seconds']} s, "
        f"whole samplers {d['sampler_seconds']} s."])


@benchmark("draws", text=draws_text)
def draws_benchmark(args) -> dict:
    return draws_figures(int(args.vocab), progress=not args.json)
