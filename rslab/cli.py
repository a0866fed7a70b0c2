"""Command line: ``python -m rslab <command> ...`` (also installed as ``rslab``).

Each command is a module of :mod:`rslab.commands` with ``HELP`` (one line),
``configure(parser)`` (its arguments) and ``run(args) -> int``; ``COMMANDS``
lists them. A ``ValueError`` from a command is its user's mistake: it is printed
as one ``error:`` line and the exit status is 2; an error about a line of a file
(``FILE:LINE: message``) is printed as compilers print it, ``FILE:LINE: error: message``,
where editors jump to it.
"""

import argparse
import os
import re
import sys
from pathlib import Path

from rslab import __version__
from rslab.commands import bench, grade, isa, pipeline, search, sim, sweep

_LOCATION = re.compile(r"^(\S+:\d+): (.*)$", re.DOTALL)
COMMANDS = {"sim": sim, "pipeline": pipeline, "isa": isa, "sweep": sweep, "search": search,
            "bench": bench, "grade": grade}


def program_name(argv0: str | None = None) -> str:
    """``python -m rslab`` when run as a module, else the name of the script (``rslab``)."""
    argv0 = sys.argv[0] if argv0 is None else argv0
    name = Path(argv0).name
    return "python -m rslab" if name in ("__main__.py", "-c", "") else name


def _description(module) -> str:
    """A command's help text: its module docstring, in plain text."""
    return (module.__doc__ or module.HELP).replace("``", "`")


def build_parser(prog: str | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog or program_name(),
        description="rslab: rejection sampling on a simulated AI accelerator.",
    )
    parser.add_argument("--version", action="version", version=f"rslab {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="command")
    for name, module in COMMANDS.items():
        p = sub.add_parser(name, help=module.HELP, description=_description(module),
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        module.configure(p)
        p.set_defaults(run=module.run)
    return parser


def main(argv=None, prog: str | None = None) -> int:
    parser = build_parser(prog)
    args = parser.parse_args(argv)
    if not getattr(args, "run", None):
        parser.print_help()
        return 0
    try:
        return int(args.run(args) or 0)
    except ValueError as exc:
        where = _LOCATION.match(str(exc))
        if where:
            parser.exit(2, f"{where.group(1)}: error: {where.group(2)}\n")
        parser.exit(2, f"{parser.prog} {args.command}: error: {exc}\n")
    except BrokenPipeError:
        # the reader of our output went away (``| head``): stop quietly, as Unix tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


if __name__ == "__main__":
    sys.exit(main())
