"""Benchmark of the reference sampler: wall time at R = 200,000, V = 3 and at the test points."""

import time

from rslab.bench.registry import benchmark
from rslab.fixtures import TEST_POINTS, sampled_inputs, scenario_inputs
from rslab.reference import rejection_sample

MANY_R, MANY_S, MANY_V = 200_000, 4, 3


def _timed(inputs, path):
    start = time.perf_counter()
    result = rejection_sample(*inputs, path=path, seed=0)
    return time.perf_counter() - start, result


@benchmark("reference")
def run(args):
    """Seconds per ``rejection_sample`` call, Exact and Fast paths."""
    vocab = getattr(args, "vocab", None) or TEST_POINTS["all-accept"].V
    cases = {f"R{MANY_R}_S{MANY_S}_V{MANY_V}": sampled_inputs(MANY_R, MANY_S, MANY_V, seed=0)}
    for name in TEST_POINTS:
        cases[f"{name}_V{vocab}"] = scenario_inputs(name, V=vocab)
    rows = []
    for case, inputs in cases.items():
        R, S1, V = inputs.target_logits.shape
        for path in ("exact", "fast"):
            seconds, result = _timed(inputs, path)
            rows.append({"case": case, "path": path, "R": R, "S": S1 - 1, "V": V,
                         "seconds": round(seconds, 4),
                         "mean_accepted": round(float(result.num_accepted.mean()), 4)})
    return {"reference": rows}
