"""Benchmark ``token_laws``: the exact token laws at the note's vocabulary, timed.

Every draw of :mod:`rslab.numerics.draw_comparison` (and the Exact path's
Gumbel-max) on the three targets at V = 154,880: the seconds of each law and in
all. Target: all of them together in at most 120 s (the book computes the same
laws in its chapter "Beyond the note").
"""

from __future__ import annotations

import time

from rslab.bench.registry import benchmark
from rslab.numerics.draw_comparison import token_rows
from rslab.numerics.targets import VOCAB

TARGET_SECONDS = 120


def token_law_figures(progress: bool = False) -> dict:
    start = time.perf_counter()
    rows = token_rows(progress=progress)
    seconds = time.perf_counter() - start
    return {"token_laws": {"vocab": VOCAB, "laws": len(rows), "seconds": round(seconds, 1),
                           "target_seconds": TARGET_SECONDS,
                           "meets_target": seconds <= TARGET_SECONDS,
                           "rows": [{k: r[k] for k in ("method", "target", "tv", "detect_blind",
                                                       "detect_aimed", "seconds")}
                                    for r in rows]}}


def token_law_text(out: dict) -> str:
    t = out["token_laws"]
    lines = [f"Exact token laws at V = {t['vocab']:,} (samples until a χ² test sees the bias):",
             f"  {'draw':<16}{'target':<18}{'TV':>10}{'blind':>11}{'aimed':>11}{'s':>7}"]
    lines += [f"  {r['method']:<16}{r['target']:<18}{r['tv']:>10.3g}{r['detect_blind']:>11.3g}"
              f"{r['detect_aimed']:>11.3g}{r['seconds']:>7.1f}" for r in t["rows"]]
    lines.append(f"{t['laws']} laws in {t['seconds']} s (target ≤ {t['target_seconds']} s: "
                 f"{'met' if t['meets_target'] else 'missed'}).")
    return "\n".join(lines)


@benchmark("token_laws", text=token_law_text)
def token_law_benchmark(args) -> dict:
    return token_law_figures(progress=not args.json)
