"""Benchmarks of the Monte Carlo engine and the exact divisor search (``python -m rslab bench``).

* ``montecarlo``: end to end (RNG words, lattice counts, the Div8 noise over the
  lattice, 64 bins, KS) on one process, in samples per second; target ≥ 20 M/s
  per core. For comparison, the per-sample path (the pipeline run on every u).
* ``search_full``: ``python -m rslab search --scale full`` end to end on 2
  processes (3 × 10^8 screening, 10 × 10^8 finals per candidate, the exact
  search over 225 divisors), target ≤ 15 minutes; its exact stage alone,
  target ≤ 5 minutes.
"""

import time

from rslab.bench.registry import benchmark
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


@benchmark("search_full")
def bench_search_full(args):
    config = search.search_config("full", processes=2)
    start = time.perf_counter()
    result = search.run_search(config, progress=not args.json)
    seconds = time.perf_counter() - start
    finals = {r["name"]: r for r in result.finals}
    base, best = finals[search.divisor_name(config.baseline)], finals[result.best]
    return {"search_full": {
        "candidates": len(config.divisors), "grid_divisors": len(result.exact),
        "processes": config.processes,
        "seconds": round(seconds, 1),
        "stage_seconds": {k: round(v, 1) for k, v in result.seconds.items()},
        "target_seconds": 900, "meets_target": seconds <= 900,
        "exact_target_seconds": 300, "exact_meets_target": result.seconds["exact"] <= 300,
        "best": result.best,
        "ks_change_pct": round(best["ks_change_pct"], 2),
        "chi2_baseline": round(base["chi2"], 2), "chi2_best": round(best["chi2"], 2),
        "exact_smallest_lambda": result.exact_best["lam"],
    }}
