"""``rslab sweep``: fast-log hardware designs × divisors, every point an exact 2^24 enumeration.

Prints, per design, the best divisor (smallest λ), its expected χ² at 10^9 samples,
exact KS and zero mass, then the throughput; writes every point to
``<output>.json`` and ``<output>.csv``. ``--axis NAME=V,V`` replaces one axis of the
scale's preset (any ``FastLog2`` field: index_bits, c1_bits, output_fraction_bits,
zero_threshold, ...; ``none`` for no value).
"""

import argparse
import json

from rslab.commands.argtypes import add_run_options, assignment, divisors

HELP = "Sweep fast-log hardware designs x divisors (exact, over all 2^24 uniforms)."


def _value(text: str):
    low = text.strip().lower()
    if low == "none":
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text.strip()


def axis(text: str) -> tuple[str, tuple]:
    """``NAME=V1,V2,...`` as (name, values)."""
    name, values = assignment(text)
    parsed = tuple(_value(v) for v in values.split(",") if v.strip())
    if not parsed:
        raise argparse.ArgumentTypeError(f"axis {name}: needs values, got {text!r}")
    return name, parsed


def configure(p):
    p.add_argument("--axis", type=axis, action="append", default=[], metavar="NAME=V,V",
                   help="one axis of designs, e.g. index_bits=5,6,7 (repeatable)")
    p.add_argument("--divisors", type=divisors, metavar="K,K,...",
                   help="divisors of every design (default by scale)")
    add_run_options(p, "sweep")


def _fmt(value, spec):
    return "-" if value is None else format(value, spec)


def print_table(result) -> None:
    names = [n for n, _ in result.config.axes]
    head = "".join(f"{n:>22}" for n in names)
    print(f"{len(result.best)} designs x {len(result.config.divisors)} divisors "
          f"({len(result.rows)} points, scale {result.config.scale})\n")
    print(f"{head}{'best':>12}{'lambda':>12}{'E[chi2] 1e9':>13}{'exact KS':>11}"
          f"{'zero mass':>11}{'div8 lambda':>13}")
    for r in result.best:
        knobs = "".join(f"{str(r[n]):>22}" for n in names)
        if "error" in r:
            print(f"{knobs}  no design: {r['error']}")
            continue
        print(f"{knobs}{r['best']:>12}{r['lam']:>12.3e}{r['expected_chi2']:>13.1f}"
              f"{r['exact_ks']:>11.2e}{r['zero_mass']:>11.2e}{_fmt(r['div8_lam'], '13.3e')}")
    print(f"\n{len(result.rows)} points in {result.seconds:.1f} s on {result.workers} "
          f"worker(s) ({result.backend}): {result.points_per_second_per_core:.3f} points/s "
          "per core")


def run(args) -> int:
    from rslab.executors import make_executor
    from rslab.numerics.search import output_paths
    from rslab.numerics.sweep import run_sweep, sweep_config
    from rslab.scale import current_scale

    scale = args.scale or current_scale()
    config = sweep_config(scale, axes=dict(args.axis), divisors=args.divisors)
    output = args.output or f"results/sweep-{scale}"
    output_paths(output)
    with make_executor(args.processes, args.dask) as executor:
        result = run_sweep(config, executor=executor, progress=not args.no_progress)
    json_path, csv_path = result.write(output)
    if args.json:
        print(json.dumps(result.to_dict(), indent=2))
    else:
        print_table(result)
        print(f"wrote {json_path} and {csv_path}")
    return 0
