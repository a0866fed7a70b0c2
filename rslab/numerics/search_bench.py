"""Benchmarks of the Monte Carlo engine and the exact divisor search (``python -m rslab bench``).

* ``montecarlo``: end to end (RNG words, lattice counts, the Div8 noise over the
  lattice, 64 bins, KS) on one process, in samples per second; target ≥ 20 M/s
  per core. For comparison, the per-sample path (the pipeline run on every u).
* ``search_exact``: the exact search over the note-scale grid (225 divisors,
  1/16 steps over [2, 16]) on 2 processes; target ≤ 5 minutes.
"""

import time

from rslab.commands.bench import benchmark
from rslab.numerics import montecarlo as mc
from rslab.numerics import search
from rslab.numerics.gumbel import get_noise

MC_SEEDS = (1, 2)
MC_SAMPLES = 5 * 10**7
PER_SAMPLE_SAMPLES = 2**22


@benchmark("montecarlo")
def bench_montecarlo(args):
    pipe = get_noise("div8")
    mc.lattice_uniforms()
    start = time.perf_counter()
    result = mc.run({"div8": pipe}, MC_SEEDS, MC_SAMPLES, processes=1, progress=False)
    seconds = time.perf_counter() - start
    samples = result.samples
    start = time.perf_counter()
    mc.per_sample_stats(pipe, 1, PER_SAMPLE_SAMPLES)
    per_sample = PER_SAMPLE_SAMPLES / (time.perf_counter() - start)
    return {"montecarlo": {
        "samples": samples, "seconds": round(seconds, 2),
        "samples_per_s_per_core": round(samples / seconds),
        "sampling_s": round(result.seconds_sampling, 2),
        "evaluating_s": round(result.seconds_evaluating, 2),
        "per_sample_path_samples_per_s": round(per_sample),
        "target_samples_per_s_per_core": 20_000_000,
        "meets_target": samples / seconds >= 20_000_000,
    }}


@benchmark("search_exact")
def bench_search_exact(args):
    grid = search.fine_grid(2.0, 16.0, 1 / 16)
    start = time.perf_counter()
    rows = search.exact_search(grid, processes=2, progress=False)
    seconds = time.perf_counter() - start
    best = min(rows, key=lambda r: r["lam"])
    return {"search_exact": {
        "divisors": len(rows), "processes": 2, "seconds": round(seconds, 1),
        "target_seconds": 300, "meets_target": seconds <= 300,
        "smallest_lambda": best["name"],
    }}
