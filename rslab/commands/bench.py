"""``python -m rslab bench``: run the benchmarks and print their figures."""

import json

HELP = "Run the benchmarks and print their figures."


def _positive_int(text):
    value = int(text)
    if value <= 0:
        raise ValueError(f"must be positive, got {value}")
    return value


def configure(p):
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--only", action="append", default=[], metavar="NAME",
                   help="run only this benchmark (repeatable)")
    p.add_argument("--vocab", type=_positive_int, default=154880,
                   help="vocabulary size for the kernel benchmarks (default 154880)")
    p.add_argument("--path", choices=("fast", "exact"), default="fast",
                   help="sampler path for the kernel benchmarks")


def run(args) -> int:
    from rslab import bench

    echo = None if args.json else (lambda text: print(text, flush=True))
    results = bench.run(args.only, args, echo=echo)
    if args.json:
        print(json.dumps(results, indent=2))
    return 0
