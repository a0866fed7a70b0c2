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


def count(text: str) -> int:
    """A non-negative integer (``1e6`` accepted); bounds are the command's to check."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a non-negative integer, got {text!r}") \
            from None
    if not math.isfinite(value) or value != int(value) or value < 0:
        raise argparse.ArgumentTypeError(f"must be a non-negative integer, got {text!r}")
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


MAX_WINDOW = 2000
"""The widest cycle window a timeline or a trace's arrows cover."""


def cycles(text: str) -> tuple[int, int]:
    """A range of cycles ``START:END`` (END excluded) of any width, e.g. ``1000:5000``."""
    try:
        start, end = (int(x) for x in text.split(":"))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be a cycle window START:END such as 0:40, got {text!r}") from None
    if not 0 <= start < end:
        raise argparse.ArgumentTypeError(f"needs 0 <= START < END, got {text!r}")
    return start, end


def window(text: str) -> tuple[int, int]:
    """A cycle window ``START:END`` (END excluded, at most ``MAX_WINDOW`` cycles), e.g.
    ``100:140``."""
    start, end = cycles(text)
    if end - start > MAX_WINDOW:
        raise argparse.ArgumentTypeError(f"at most {MAX_WINDOW} cycles wide, got {text!r}")
    return start, end


def assignment(text: str) -> tuple[str, str]:
    """``key=value`` (the value still text)."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip() or not value.strip():
        raise argparse.ArgumentTypeError(f"must be key=value such as valu_slots=3, got {text!r}")
    return key.strip(), value.strip()


def dask_address(text: str) -> str:
    """``local`` or ``tcp://HOST:PORT`` (the Dask schedulers :mod:`rslab.executors` reaches)."""
    host, sep, port = text.removeprefix("tcp://").rpartition(":")
    if text == "local" or (text.startswith("tcp://") and sep and host and port.isdigit()
                           and 0 < int(port) < 65536):
        return text
    raise argparse.ArgumentTypeError(f"must be local or tcp://HOST:PORT such as "
                                     f"tcp://127.0.0.1:8786, got {text!r}")


def add_run_options(p, name: str) -> None:
    """The options of a long run (``sweep``, ``search``): ``--scale``, where its tasks run
    (``--processes``, ``--dask``), ``--output``, ``--no-progress`` and ``--json``."""
    from rslab.scale import SCALES

    p.add_argument("--scale", choices=SCALES, default=None,
                   help="preset: quick, book, or full = the note's scale "
                        "(default: RSLAB_SCALE, else book)")
    p.add_argument("--processes", type=positive_int, metavar="N",
                   help="local worker processes (default: the machine's cores; 1 = no workers); "
                        "with --dask local, the cluster's workers")
    p.add_argument("--dask", type=dask_address, metavar="ADDRESS",
                   help="run the tasks on Dask: 'local' starts a LocalCluster on 127.0.0.1, "
                        "tcp://host:8786 uses a running scheduler (needs rslab[dask])")
    p.add_argument("--output", metavar="PATH",
                   help=f"result files PATH.json and PATH.csv (default results/{name}-<scale>); "
                        "checked before the run starts")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.add_argument("--json", action="store_true", help="print the result as one JSON object")


def lazy_epilog(p, text) -> None:
    """Show ``text()`` under the help of parser ``p``, computed only when help is printed
    (so that building the parser stays cheap)."""
    plain = p.format_help

    def format_help():
        p.epilog = text()
        return plain()

    p.format_help = format_help


def chip_cores(text: str) -> int:
    """The cores of a chip: a positive integer up to the simulator's bound (64)."""
    from rslab.machine.config import CHIP_LIMITS

    value = positive_int(text)
    if value > CHIP_LIMITS["cores"]:
        raise argparse.ArgumentTypeError(f"a chip has 1 to {CHIP_LIMITS['cores']} cores, "
                                         f"got {text!r}")
    return value
