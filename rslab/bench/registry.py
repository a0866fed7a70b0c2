"""The registry of benchmarks: ``@benchmark(name)`` registers ``fn(args) -> dict``.

A benchmark returns its figures as a dict (merged with the others' into the one
JSON object of ``python -m rslab bench --json``, so the kernel benchmark owns the
``scenarios`` and ``loops`` keys); ``text(figures) -> str`` may say how to print
them for people instead of the generic listing.
"""

BENCHMARKS: dict = {}
TEXT: dict = {}


def benchmark(name: str, text=None):
    """Register ``fn(args) -> dict`` as the benchmark ``name``."""

    def wrap(fn):
        BENCHMARKS[name] = fn
        if text is not None:
            TEXT[name] = text
        return fn

    return wrap


def listing(results: dict, indent: str = "") -> str:
    """Nested figures as an indented ``key: value`` listing."""
    lines = []
    for key, value in results.items():
        if isinstance(value, dict):
            lines += [f"{indent}{key}:", listing(value, indent + "  ")]
        elif isinstance(value, list) and value and isinstance(value[0], dict):
            lines.append(f"{indent}{key}:")
            lines += [f"{indent}  - " + ", ".join(f"{k}={v}" for k, v in row.items())
                      for row in value]
        else:
            lines.append(f"{indent}{key}: {value}")
    return "\n".join(lines)


def as_text(name: str, figures: dict) -> str:
    """The figures of benchmark ``name`` as printed for people."""
    return TEXT[name](figures) if name in TEXT else listing(figures)
