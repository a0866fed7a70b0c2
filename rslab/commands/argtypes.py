"""Argument types of the commands, with their errors in words (``argparse`` prints them as
``argument --x: must be a positive integer, got '0'``)."""

import argparse
import math


def positive_int(text: str) -> int:
    """A positive integer; ``1e8`` is accepted for large counts."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}") from None
    if not math.isfinite(value) or value != int(value) or value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}")
    return int(value)


def divisors(text: str) -> tuple[float, ...]:
    """Comma-separated positive finite numbers, e.g. ``8,10.5,14``."""
    try:
        values = tuple(float(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated numbers such as 8,10.5,14, got {text!r}") from None
    if not values or any(not v > 0 or v == float("inf") for v in values):
        raise argparse.ArgumentTypeError(f"divisors must be positive finite numbers, got {text!r}")
    return values


def window(text: str) -> tuple[int, int]:
    """A cycle window ``START:END`` (END excluded), e.g. ``100:140``."""
    try:
        start, end = (int(x) for x in text.split(":"))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be a cycle window START:END such as 0:40, got {text!r}") from None
    if not 0 <= start < end:
        raise argparse.ArgumentTypeError(f"needs 0 <= START < END, got {text!r}")
    return start, end


def assignment(text: str) -> tuple[str, str]:
    """``key=value`` (the value still text)."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip() or not value.strip():
        raise argparse.ArgumentTypeError(f"must be key=value such as valu_slots=3, got {text!r}")
    return key.strip(), value.strip()


def add_executor_options(p) -> None:
    """``--processes N`` and ``--dask local|tcp://host:8786`` (see :mod:`rslab.executors`)."""
    p.add_argument("--processes", type=positive_int, metavar="N",
                   help="local worker processes (default: the machine's cores; 1 = no workers); "
                        "with --dask local, the cluster's workers")
    p.add_argument("--dask", metavar="ADDRESS",
                   help="run the tasks on Dask: 'local' starts a LocalCluster on 127.0.0.1, "
                        "tcp://host:8786 uses a running scheduler (needs rslab[dask])")


def lazy_epilog(p, text) -> None:
    """Show ``text()`` under the help of parser ``p``, computed only when help is printed
    (so that building the parser stays cheap)."""
    plain = p.format_help

    def format_help():
        p.epilog = text()
        return plain()

    p.format_help = format_help
