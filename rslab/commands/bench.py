"""``python -m rslab bench``: run the benchmarks and print their figures."""

import argparse
import json

from rslab.commands.argtypes import lazy_epilog, positive_int

HELP = "Run the benchmarks and print their figures."
MAX_VOCAB = 10**6
"""The largest ``--vocab`` (the benchmarks hold a few arrays of that many floats per row)."""


def vocab(text: str) -> int:
    """A positive vocabulary size of at most ``MAX_VOCAB``."""
    value = positive_int(text)
    if value > MAX_VOCAB:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_VOCAB:,}, got {text!r}")
    return value


def benchmark_names() -> list[str]:
    """The registered benchmarks, in the order they run (imports their modules)."""
    from rslab import bench

    return list(bench.load())


def configure(p):
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--only", action="append", default=[], metavar="NAME",
                   help="run only this benchmark (repeatable; the names are listed below)")
    lazy_epilog(p, lambda: "benchmarks: " + ", ".join(benchmark_names()))
    p.add_argument("--vocab", type=vocab, default=154880,
                   help=f"vocabulary size for the kernel benchmarks, at most {MAX_VOCAB:,} "
                        "(default 154880)")
    p.add_argument("--path", choices=("fast", "exact"), default="fast",
                   help="sampler path for the kernel benchmarks")


def run(args) -> int:
    from rslab import bench

    echo = None if args.json else (lambda text: print(text, flush=True))
    results = bench.run(args.only, args, echo=echo)
    if args.json:
        print(json.dumps(results, indent=2))
    return 0
