"""``python -m rslab bench``: run the benchmarks and print their figures.

Each benchmark is a function ``fn(args) -> dict`` registered with
``@benchmark(name)``; their dicts are merged into one object, so the kernel
benchmark can own the ``scenarios`` and ``loops`` keys of DESIGN §6.
"""

import json

from rslab.cli import command

BENCHMARKS = {}
TEXT = {}


def benchmark(name, text=None):
    """Register ``fn(args) -> dict`` as a named benchmark; ``text(dict) -> str`` (optional)
    prints its figures for people instead of the generic listing."""

    def wrap(fn):
        BENCHMARKS[name] = fn
        if text is not None:
            TEXT[name] = text
        return fn

    return wrap


def _positive_int(text):
    value = int(text)
    if value <= 0:
        raise ValueError(f"must be positive, got {value}")
    return value


@command("bench", "Run the benchmarks and print their figures.")
def configure(p):
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--only", action="append", default=[], metavar="NAME",
                   help="run only this benchmark (repeatable)")
    p.add_argument("--vocab", type=_positive_int, default=154880,
                   help="vocabulary size for the kernel benchmarks (default 154880)")
    p.add_argument("--path", choices=("fast", "exact"), default="fast",
                   help="sampler path for the kernel benchmarks")
    return run


def _listing(results, indent="") -> str:
    """Nested figures as an indented ``key: value`` listing."""
    lines = []
    for key, value in results.items():
        if isinstance(value, dict):
            lines += [f"{indent}{key}:", _listing(value, indent + "  ")]
        elif isinstance(value, list) and value and isinstance(value[0], dict):
            lines.append(f"{indent}{key}:")
            lines += [f"{indent}  - " + ", ".join(f"{k}={v}" for k, v in row.items())
                      for row in value]
        else:
            lines.append(f"{indent}{key}: {value}")
    return "\n".join(lines)


def run(args):
    _load_benchmarks()
    unknown = [n for n in args.only if n not in BENCHMARKS]
    if unknown:
        raise ValueError(f"--only: unknown benchmark(s) {unknown}; known: {sorted(BENCHMARKS)}")
    names = args.only or list(BENCHMARKS)
    results = {}
    for name in names:
        figures = BENCHMARKS[name](args)
        results.update(figures)
        if not args.json:
            print(TEXT[name](figures) if name in TEXT else _listing(figures), flush=True)
    if args.json:
        print(json.dumps(results, indent=2))
    elif not results:
        print("no benchmarks registered yet")
    return 0


def _load_benchmarks():
    """Import the modules that register benchmarks (kept lazy: they are heavy)."""
    import importlib

    for module in BENCHMARK_MODULES:
        importlib.import_module(module)


BENCHMARK_MODULES: list[str] = ["rslab.reference_bench", "rslab.numerics.bench",
                                 "rslab.numerics.search_bench", "rslab.kernels.pipeline_bench",
                                 "rslab.machine.bench", "rslab.kernels.bench",
                                 "rslab.kernels.dataflow_bench", "rslab.kernels.draw_bench",
                                 "rslab.numerics.token_law_bench"]
