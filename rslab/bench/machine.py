"""Benchmark: simulated ops per second, with tracing off and on."""

import time

from rslab.bench.registry import benchmark
from rslab.machine.asm import assemble
from rslab.machine.examples import resource_bound_body, sumexp_inputs, sumexp_naive
from rslab.machine.simulator import simulate

N_VECTORS = 2000          # packed vectors of the naive sum-exp loop (≈ 14 ops each)
N_ITERATIONS = 6000       # iterations of the 10-bundle, 24-op resource-bound body


def _rate(program, repeats=3, **kw):
    best_cpu = best_wall = float("inf")
    for _ in range(repeats):
        c0, w0 = time.process_time(), time.perf_counter()
        run = simulate(program, **kw)
        best_cpu = min(best_cpu, time.process_time() - c0)
        best_wall = min(best_wall, time.perf_counter() - w0)
    return run.ops, run.ops / best_cpu, run.ops / best_wall


@benchmark("machine")
def machine_benchmark(args) -> dict:
    """Ops per CPU-second of the simulator on two loops (best of 3), tracing off and on.

    CPU time (``process_time``), not wall time: the benchmark machine is shared.
    """
    words, row_max, _ = sumexp_inputs(N_VECTORS)
    cases = {
        "sumexp_naive": (sumexp_naive(N_VECTORS).program(),
                         {"vmem": words, "sregs": {2: row_max}}),
        "resource_bound": (assemble(resource_bound_body(N_ITERATIONS)), {}),
    }
    out = {}
    for name, (program, kw) in cases.items():
        ops, off, off_wall = _rate(program, **kw)
        _, on, _ = _rate(program, trace=True, **kw)
        out[name] = {"ops": ops, "ops_per_s_trace_off": round(off),
                     "ops_per_s_trace_on": round(on), "trace_slowdown": round(off / on, 2),
                     "ops_per_s_trace_off_wall": round(off_wall)}
    return {"machine": out}
