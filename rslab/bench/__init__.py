"""Benchmarks: figures printed by ``python -m rslab bench`` (and ``make bench``).

One module per area registers its benchmarks with
:func:`rslab.bench.registry.benchmark`; :func:`load` imports them (they are heavy,
so only when a benchmark runs), :func:`run` runs the named ones.
"""

import importlib

from rslab.bench.registry import BENCHMARKS, as_text

MODULES = ("reference", "numerics", "search", "sweep", "floors", "pipelining", "machine",
           "kernels", "dataflow", "draws", "chip", "token_laws")
"""The modules of this package that register benchmarks, in the order they run."""


def load() -> dict:
    """Import every benchmark module; return the registry (name → function) in the order of
    ``MODULES``, whichever module was imported first."""
    for module in MODULES:
        importlib.import_module(f"rslab.bench.{module}")
    rank = {f"rslab.bench.{m}": i for i, m in enumerate(MODULES)}
    return dict(sorted(BENCHMARKS.items(),
                       key=lambda item: rank.get(item[1].__module__, len(MODULES))))


def run(names, args, *, echo=None) -> dict:
    """Run the benchmarks ``names`` (all when empty) with ``args``; one merged dict of figures.

    ``echo(text)``, if given, receives each benchmark's figures as text as soon as it is done.
    """
    registry = load()
    unknown = [n for n in names if n not in registry]
    if unknown:
        raise ValueError(f"--only: unknown benchmark(s) {unknown}; known: {sorted(registry)}")
    results = {}
    for name in names or list(registry):
        figures = registry[name](args)
        results.update(figures)
        if echo is not None:
            echo(as_text(name, figures))
    return results
