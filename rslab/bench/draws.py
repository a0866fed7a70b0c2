"""Benchmark ``draws``: every way to draw a token, on the core (``python -m rslab bench``).

For each draw (Gumbel-max div8 / div32 / rangered, the race scaled / naive, the
inverse CDF u24 / wide) and each row (bonus, residual): II, ResMII, the binding
units, cycles per packed vector (scheduled and measured), and the cycles of a
whole row at ``--vocab`` with whether its token equals the reference's; a bonus
race or inverse CDF adds the row-max pass. Target: a draw at no more row cycles
than Div8's (the ``gumbel-div8`` rows).
"""

from __future__ import annotations

import time

from rslab.bench.registry import benchmark
from rslab.kernels.studies.draw_loops import KINDS
from rslab.kernels.studies.draw_table import ROW_DRAWS, loop_figures, row_runs
from rslab.viz import tables


def draws_figures(vocab: int, progress: bool = False) -> dict:
    start = time.perf_counter()
    loops = [loop_figures(k, m, n) for m, n in ROW_DRAWS for k in KINDS]
    rows = row_runs(vocab, progress=progress)
    base = {r["kind"]: r["total_cycles"] for r in rows if r["draw"] == "gumbel-div8"}
    for r in rows:
        r["vs_div8"] = round(base[r["kind"]] / r["total_cycles"], 3)
    return {"draws": {"vocab": vocab, "loops": loops, "rows": rows,
                      "all_tokens_match": all(r["matches_reference"] for r in rows),
                      "seconds": round(time.perf_counter() - start, 1)}}


def draws_text(out: dict) -> str:
    d = out["draws"]
    loops = [{k: r[k] for k in ("draw", "kind", "ii", "res_mii", "rec_mii", "binding",
                                "cycles_per_packed", "measured_per_packed")} for r in d["loops"]]
    rows = [{k: r[k] for k in ("draw", "kind", "cycles", "rowmax_cycles", "total_cycles",
                               "vs_div8", "matches_reference")} for r in d["rows"]]
    return "\n\n".join([
        "Draw loops (cycles per packed vector of 256 tokens):\n" + tables.markdown_table(loops),
        f"Whole rows at V = {d['vocab']:,} (Div8 = gumbel-div8):\n" + tables.markdown_table(rows),
        f"All tokens equal the reference's: {d['all_tokens_match']}; {d['seconds']} s."])


@benchmark("draws", text=draws_text)
def draws_benchmark(args) -> dict:
    return draws_figures(int(args.vocab), progress=not args.json)
