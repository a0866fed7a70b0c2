"""``python -m rslab search``: the Div14 divisor search (screening, finals, exact grid, tails).

``--scale full`` is the design note's scale (3 seeds × 10^8 screening, 10 seeds ×
10^8 finals, a 1/16 grid of divisors over [2, 16]); the other flags override
parts of the preset. Writes ``<output>.json`` and ``<output>.csv`` and prints a table.
``--noises rangered,race,race-naive`` adds the exact rows of other Gumbel-domain
noises (``--noises-only``: those rows alone, no divisor search).
"""

import argparse
import json
import sys

from rslab.commands.argtypes import add_run_options
from rslab.commands.argtypes import divisors as _divisors
from rslab.commands.argtypes import positive_int as _count


def _seeds(text):
    seeds = []
    try:
        for part in text.split(","):
            part = part.strip()
            if "-" in part:
                lo, hi = (int(x) for x in part.split("-"))
                if hi < lo:
                    raise ValueError
                seeds.extend(range(lo, hi + 1))
            elif part:
                seeds.append(int(part))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected seeds like 1,2,3 or 101-110, got {text!r}") from None
    if not seeds:
        raise argparse.ArgumentTypeError(f"no seeds in {text!r}")
    return tuple(seeds)


def _noises(text):
    from rslab.numerics.draw_comparison import parse_variant

    try:
        return tuple(parse_variant(name) for name in text.split(",") if name.strip())
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _grid(text):
    if text == "none":
        return ()
    try:
        lo, hi, step = (float(x) for x in text.split(":"))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected LO:HI:STEP such as 2:16:0.0625, or none, got {text!r}") from None
    from rslab.numerics.search import fine_grid

    try:
        return tuple(fine_grid(lo, hi, step))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


HELP = "Divisor search for the Gumbel noise's second log (the Div14 search)."


def configure(p):
    p.add_argument("--divisors", type=_divisors, metavar="K,K,...",
                   help="candidates for screening (default: integers 2-16 plus non-integers)")
    p.add_argument("--screen-seeds", type=_seeds, metavar="SEEDS",
                   help="screening seeds, e.g. 1,2,3 (default 1-3)")
    p.add_argument("--final-seeds", type=_seeds, metavar="SEEDS",
                   help="finals seeds, e.g. 101-110 (default: 10 seeds at book/full)")
    p.add_argument("--samples", type=_count, metavar="N",
                   help="samples per seed, e.g. 1e8 (default by scale)")
    p.add_argument("--finalists", type=_count, metavar="N",
                   help="candidates promoted to the finals besides the Div8 baseline")
    p.add_argument("--grid", type=_grid, metavar="LO:HI:STEP",
                   help="divisors of the exact search, or none (default by scale)")
    add_run_options(p, "search")
    p.add_argument("--rng", choices=("hw", "philox"), default=None,
                   help="random words: the Fast path's hardware RNG (hw) or Philox4x32-10")
    p.add_argument("--chunk", type=_count, metavar="N", help="samples per chunk (memory bound)")
    p.add_argument("--noises", type=_noises, metavar="NAME,...",
                   help="other noises for exact rows: rangered, div32, race, race-naive, ...")
    p.add_argument("--noises-only", action="store_true",
                   help="only the exact rows of --noises (skip the divisor search)")


def _fmt(value, spec):
    return "-" if value is None else format(value, spec)


def print_table(result):
    cfg = result.config
    print(f"scale {cfg.scale}: {len(cfg.screen_seeds)} screening seeds and "
          f"{len(cfg.final_seeds)} finals seeds x {cfg.samples_per_seed:,} samples, rng {cfg.rng}")
    for stage, rows in (("screening", result.screening), ("finals", result.finals)):
        print(f"\n{stage}: (ranked by KS rank + chi2 rank; changes against div8)")
        print(f"  {'name':<13}{'mean KS':>11}{'KS %':>9}{'chi2':>12}{'chi2 %':>9}"
              f"{'p':>11}{'E[chi2]':>12}  front")
        for r in rows:
            print(f"  {r['name']:<13}{r['mean_ks']:>11.3e}{_fmt(r['ks_change_pct'], '+9.2f')}"
                  f"{r['chi2']:>12.2f}{_fmt(r['chi2_change_pct'], '+9.2f')}{r['chi2_p']:>11.2e}"
                  f"{r['expected_chi2']:>12.1f}  {'*' if r['pareto'] else ''}")
    print(f"\nbest after the finals: {result.best}")
    if result.exact:
        front = [r["name"] for r in result.exact if r["pareto"]]
        best = result.exact_best
        print(f"exact grid of {len(result.exact)} divisors: smallest lambda {best['lam']}, "
              f"smallest exact KS {best['exact_ks']}; Pareto front: {', '.join(front)}")
    print("\ntails (exact): largest finite g, ideal P(g > that), P(a tail token wins), V=154,880")
    for name, t in result.finalist_tails.items():
        wins = ", ".join(f"d={d}: {p:.2e}" for d, p in t["tail_token_win"].items())
        print(f"  {name:<13} g_max {t['g_max']:.4f}  ideal beyond {t['ideal_beyond_max']:.2e}  "
              f"{wins}")
    print("\nseconds: " + ", ".join(f"{k} {v:.1f}" for k, v in result.seconds.items()))


def print_noise_rows(rows):
    print("\nother noises (exact over the 2^24 lattice):")
    print(f"  {'name':<17}{'lambda':>12}{'E[chi2] 1e9':>13}{'detect N':>11}{'exact KS':>11}"
          f"{'g_max':>9}{'plateau':>10}")
    for r in rows:
        print(f"  {r['name']:<17}{r['lam']:>12.4e}{r['expected_chi2']:>13.1f}{r['detect']:>11.3g}"
              f"{r['exact_ks']:>11.3e}{r['g_max']:>9.3f}{r['plateau']:>10.2e}")


def run(args):
    from rslab.executors import make_executor
    from rslab.numerics.draw_comparison import noise_rows
    from rslab.numerics.search import output_paths, run_search, search_config
    from rslab.scale import current_scale

    if args.noises_only and not args.noises:
        raise ValueError("--noises-only needs --noises")
    scale = args.scale or current_scale()
    output = args.output or f"results/search-{scale}"
    changes = {name: getattr(args, attr) for name, attr in (
        ("divisors", "divisors"), ("screen_seeds", "screen_seeds"),
        ("final_seeds", "final_seeds"), ("samples_per_seed", "samples"),
        ("finalists", "finalists"), ("grid", "grid"),
        ("rng", "rng"), ("chunk", "chunk")) if getattr(args, attr) is not None}
    if not args.noises_only:  # bad settings and outputs fail before any work starts
        search_config(scale, **changes)
        output_paths(output)
    extra = noise_rows(args.noises) if args.noises else []
    if args.noises_only:
        if args.json:
            print(json.dumps({"noises": extra}, indent=2, default=str))
        else:
            print_noise_rows(extra)
        return 0

    with make_executor(args.processes, args.dask) as executor:
        config = search_config(scale, processes=executor.workers, **changes)
        result = run_search(config, progress=not args.no_progress, executor=executor)
    json_path, csv_path = result.write(output)
    if args.json:
        print(json.dumps({**result.to_dict(), "noises": extra}, indent=2, default=str))
    else:
        print_table(result)
        if extra:
            print_noise_rows(extra)
    print(f"\nwrote {json_path} and {csv_path}", file=sys.stderr if args.json else sys.stdout)
    return 0
