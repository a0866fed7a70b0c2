"""Benchmark of the design-space sweep (``python -m rslab bench --only sweep``).

The same sweep (one design × eight divisors, each point an exact 2^24 enumeration) on
one process and on 2 local worker processes: points per second per core and the
speed-up of 2 workers over 1. The points of both runs must be equal (they are printed,
not asserted, like every figure here).
"""

from rslab.bench.registry import benchmark
from rslab.executors import LocalProcesses, Serial
from rslab.numerics import sweep

DIVISORS = (6.0, 8.0, 9.0, 10.0, 12.0, 13.0, 14.0, 15.0)


@benchmark("sweep")
def bench_sweep(args):
    config = sweep.sweep_config("quick", axes={"c1_bits": (9,)}, divisors=DIVISORS)
    one = sweep.run_sweep(config, executor=Serial(), progress=False)
    with LocalProcesses(2) as two_workers:
        two = sweep.run_sweep(config, executor=two_workers, progress=False)
    return {"sweep": {
        "points": len(one.rows),
        "seconds_1_process": round(one.seconds, 2), "seconds_2_workers": round(two.seconds, 2),
        "points_per_s_per_core_1": round(one.points_per_second_per_core, 3),
        "points_per_s_per_core_2": round(two.points_per_second_per_core, 3),
        "speedup_2_workers": round(one.seconds / two.seconds, 2),
        "same_points": one.rows == two.rows,
    }}
