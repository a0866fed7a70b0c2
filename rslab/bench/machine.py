"""Benchmark: simulated ops per second, with tracing off and on.

Three programs: the naive sum-exp loop, a resource-bound loop, and the optimised Fast
sampler on the all-accept test point at the note's V = 154,880 (the book's heaviest
simulation), the last beside its targets.
"""

import time

import numpy as np

from rslab.bench.registry import benchmark
from rslab.machine.asm import assemble
from rslab.machine.errors import MachineError
from rslab.machine.examples import resource_bound_body, sumexp_inputs, sumexp_naive
from rslab.machine.simulator import DEFAULT_MAX_STEPS, simulate
from rslab.numerics.compiled import backend, numpy_only

N_VECTORS = 2000          # packed vectors of the naive sum-exp loop (≈ 14 ops each)
N_ITERATIONS = 6000       # iterations of the 10-bundle, 24-op resource-bound body
SAMPLER_VOCAB = 154_880
SAMPLER_TARGETS = {"trace_off": 1e6, "trace_on": 0.8e6}
"""Ops per CPU second the simulator is to reach on the sampler, tracing off and on."""


def sampler_case(vocab: int = SAMPLER_VOCAB) -> tuple:
    """(program, ``simulate`` keywords) of the optimised Fast sampler on the all-accept test
    point at ``vocab``."""
    from rslab.fixtures import scenario_inputs
    from rslab.kernels.sampler.layout import SamplerLayout
    from rslab.kernels.sampler.program import build_kernel
    from rslab.kernels.sampler.run import assembled

    logits, q, ids = scenario_inputs("all-accept", V=vocab)
    R, S1, V = np.asarray(logits).shape
    layout = SamplerLayout(R, S1 - 1, V)
    program = assembled(build_kernel(layout, "fast").text)
    return program, {"hbm": layout.hbm_image(logits, q, ids, 0)}


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
    """Ops per CPU-second of the simulator (best of 3), tracing off and on.

    CPU time (``process_time``), not wall time: the benchmark machine is shared. The sampler
    also runs with the SFU models on their NumPy path (``sfu_models`` says which path the
    other figures took: the compiled one when numba is installed).
    """
    words, row_max, _ = sumexp_inputs(N_VECTORS)
    cases = {
        "sumexp_naive": (sumexp_naive(N_VECTORS).program(),
                         {"vmem": words, "sregs": {2: row_max}}),
        "resource_bound": (assemble(resource_bound_body(N_ITERATIONS)), {}),
        "sampler_all_accept": sampler_case(),
    }
    out = {}
    for name, (program, kw) in cases.items():
        ops, off, off_wall = _rate(program, **kw)
        _, on, _ = _rate(program, trace=True, **kw)
        out[name] = {"ops": ops, "ops_per_s_trace_off": round(off),
                     "ops_per_s_trace_on": round(on), "trace_slowdown": round(off / on, 2),
                     "ops_per_s_trace_off_wall": round(off_wall)}
    program, kw = cases["sampler_all_accept"]
    with numpy_only():
        _, numpy_off, _ = _rate(program, **kw)
    out["sampler_all_accept"].update(
        vocab=SAMPLER_VOCAB, sfu_models=backend(), ops_per_s_trace_off_numpy_sfu=round(numpy_off),
        **{f"target_ops_per_s_{k}": round(v) for k, v in SAMPLER_TARGETS.items()})
    out["runaway"] = _runaway()
    return {"machine": out}


def _runaway() -> dict:
    """CPU seconds until the default step budget stops ``a: jmp a`` (every run ends in it)."""
    start = time.process_time()
    try:
        simulate(assemble("a: jmp a"))
    except MachineError as exc:
        return {"max_steps": DEFAULT_MAX_STEPS, "seconds_to_stop": round(
            time.process_time() - start, 2), "error": exc.message}
    raise AssertionError("a: jmp a ended")
