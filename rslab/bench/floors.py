"""Benchmark: the heavy figures of the build beside their floors (``bench --only floors``).

Each figure is measured with the floor it is judged against, in the same run on the same
machine: the NumPy passes the operation cannot avoid, timed the same way (best of a few
runs, CPU seconds). ``slowdown`` is figure ÷ floor (for rates, floor ÷ figure): 1 is at
the floor. The targets are those of the project's plan (seconds on this machine).

* ``fastlog2``: ``FastLog2`` over the 2^24 lattice uniforms; floor: a shift, a mask, one
  table gather, a multiply and the conversion to float32 over the same inputs.
* ``exact_enumeration``: ``exact_stats(div8)`` from the uniforms (first layer included);
  floor: two ``np.log2`` passes, the sort of the outputs and ten float32 passes.
  ``exact_enumeration_shared`` is the same with the first layer computed already (as
  every candidate after the first finds it).
* ``grid_point``: one exact grid point (``search.divisor_row``: second layer, sort, λ,
  exact KS, tail); floor: one ``np.log2`` pass, the sort, the CDF at the distinct values
  (two float64 ``exp2`` passes) and five passes.
* ``sample_stats``: one seed's 64 bins and KS from its lattice counts; floor: the gather of
  the counts by the law's order, their running sum in place, its gather at the distinct
  values' ends and the three float64 passes of the KS line.
* ``montecarlo``: samples per CPU second end to end (``montecarlo.run``, one process, once
  the compiled histogram is loaded: about 0.4 s once per process); floor: the rate of writing
  the random words alone (the RNG's passes, in place).
* ``simulator``: ops per CPU second simulating the optimised sampler on the all-accept test
  point at V = 154,880, trace off and on; floor: one 128-lane NumPy operation per op.

``sfu_models`` says how the SFU models ran (``numba …``: compiled, the optional ``fast``
extra; ``numpy``: without it), which moves ``fastlog2`` and the simulator.
"""

import time

import numpy as np

from rslab.bench.machine import SAMPLER_TARGETS, sampler_case
from rslab.bench.registry import benchmark
from rslab.machine.simulator import simulate
from rslab.numerics import montecarlo as mc
from rslab.numerics import search, stats
from rslab.numerics.compiled import backend
from rslab.numerics.fastlog import DEFAULT_FASTLOG2
from rslab.numerics.gumbel import get_noise, lattice_first_layer

MC_SEEDS = (1, 2)
MC_SAMPLES = 5 * 10**7
TARGETS = {"fastlog2": 0.15, "exact_enumeration": 0.4, "grid_point": 0.5,
           "sample_stats": 0.25, "montecarlo": 40e6,
           **{f"simulator_{k}": v for k, v in SAMPLER_TARGETS.items()}}


def _cpu(fn, repeats: int = 3) -> float:
    """Best CPU seconds of ``repeats`` calls of ``fn``."""
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return best


def _row(seconds: float, floor: float, target: float) -> dict:
    return {"seconds": round(seconds, 4), "floor_seconds": round(floor, 4),
            "slowdown": round(seconds / floor, 2), "target_seconds": target}


def _rate_row(rate: float, floor: float, target: float, unit: str) -> dict:
    return {f"{unit}_per_s": round(rate), f"floor_{unit}_per_s": round(floor),
            "slowdown": round(floor / rate, 2), f"target_{unit}_per_s": round(target)}


def _passes(x: np.ndarray, n: int) -> None:
    buf = np.empty_like(x)
    for _ in range(n):
        np.multiply(x, np.float32(1.5), out=buf)


def _fastlog(u) -> dict:
    bits = u.view(np.uint32)
    table = np.arange(64, dtype=np.int32)
    idx, work, out = np.empty(bits.size, np.int64), np.empty(bits.size, np.int32), np.empty_like(u)

    def floor():
        np.right_shift(bits, np.uint32(17), out=idx)
        np.bitwise_and(idx, 63, out=idx)
        np.take(table, idx, out=work)
        np.multiply(work, work, out=work)
        np.multiply(work, np.float32(2.0**-22), out=out, casting="unsafe")

    return _row(_cpu(lambda: DEFAULT_FASTLOG2(u)), _cpu(floor), TARGETS["fastlog2"])


def _exact(u) -> dict:
    pipe = get_noise("div8")
    g = pipe(u)

    def cold():
        lattice_first_layer.cache_clear()
        stats.exact_stats(pipe, errors=False)

    def floor():
        np.log2(u)
        np.log2(u)
        np.sort(g, kind="stable")
        _passes(u, 10)

    floor_s = _cpu(floor)
    cold_s = _cpu(cold, 2)
    shared_s = _cpu(lambda: stats.exact_stats(pipe, errors=False), 2)
    return {"exact_enumeration": _row(cold_s, floor_s, TARGETS["exact_enumeration"]),
            "exact_enumeration_shared": _row(shared_s, floor_s, TARGETS["exact_enumeration"])}


def _grid_point(u) -> dict:
    search._first_layer(DEFAULT_FASTLOG2)
    g = get_noise("div(10.25)")(u)
    atoms = np.unique(g).astype(np.float64)

    def floor():
        np.log2(u)
        np.sort(g, kind="stable")
        stats.gumbel2_cdf(atoms, out=np.empty_like(atoms))
        _passes(u, 5)

    point = _cpu(lambda: search.divisor_row.uncached(10.25, DEFAULT_FASTLOG2,
                                                     (8.0, 12.0, 16.0, 20.0)), 2)
    return {"grid_point": _row(point, _cpu(floor), TARGETS["grid_point"])}


def _sample_stats() -> dict:
    law = mc.LatticeLaw.of("div8", get_noise("div8"))
    counts = mc.lattice_counts(1, 10**7)
    run, at_ends = np.empty_like(counts), np.empty(law.ends.size, counts.dtype)
    line = np.empty(law.ends.size)

    def floor():
        np.take(counts, law.order, out=run)
        np.add.accumulate(run, out=run)
        np.take(run, law.ends, out=at_ends)
        np.divide(at_ends, 10**7, out=line)
        np.subtract(line, law.atom_cdf, out=line)
        np.subtract(law.atom_cdf, line, out=line)

    return {"sample_stats": _row(_cpu(lambda: law.sample_stats(counts)), _cpu(floor),
                                 TARGETS["sample_stats"])}


def _montecarlo() -> dict:
    pipe = get_noise("div8")
    mc.lattice_counts(MC_SEEDS[0], 1024)  # loads the compiled histogram outside the timing
    seconds = _cpu(lambda: mc.run({"div8": pipe}, MC_SEEDS, MC_SAMPLES, processes=1,
                                  progress=False), 1)
    rate = len(MC_SEEDS) * MC_SAMPLES / seconds
    words = np.empty(mc.DEFAULT_CHUNK, np.uint32)
    tmp = np.empty_like(words)

    def floor():
        for start in range(0, len(MC_SEEDS) * MC_SAMPLES, words.size):
            mc._hw_words(1, start, words, tmp)

    floor_rate = len(MC_SEEDS) * MC_SAMPLES / _cpu(floor, 1)
    return {"montecarlo": _rate_row(rate, floor_rate, TARGETS["montecarlo"], "samples")}


def _simulator() -> dict:
    program, kw = sampler_case()
    ops = simulate(program, **kw).ops
    row, a, b = np.zeros(128, np.float32), np.ones(128, np.float32), np.ones(128, np.float32)

    def floor():
        for _ in range(ops):
            np.add(a, b, out=row)

    floor_rate = ops / _cpu(floor, 1)
    out = {}
    for name, trace in (("simulator_trace_off", False), ("simulator_trace_on", True)):
        rate = ops / _cpu(lambda trace=trace: simulate(program, trace=trace, **kw), 2)
        out[name] = {"ops": ops, **_rate_row(rate, floor_rate, TARGETS[name], "ops")}
    return out


@benchmark("floors")
def run(args=None) -> dict:
    """Each heavy figure of the build beside its floor measured now, and their ratio."""
    u = mc.lattice_uniforms()
    DEFAULT_FASTLOG2(u[:1024])
    return {"floors": {"fastlog2": _fastlog(u), **_exact(u), **_grid_point(u),
                       **_sample_stats(), **_montecarlo(), **_simulator(),
                       "sfu_models": backend()}}
