"""Command line: ``python -m rslab <command> ...`` (also installed as ``rslab``).

Each command is a module of :mod:`rslab.commands` with ``HELP`` (one line),
``configure(parser)`` (its arguments) and ``run(args) -> int``; ``COMMANDS``
lists them. A ``ValueError`` from a command is its user's mistake: it is printed
as one ``error:`` line and the exit status is 2.
"""

import argparse
import sys

from rslab import __version__
from rslab.commands import bench, search

COMMANDS = {"bench": bench, "search": search}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m rslab",
        description="rslab: rejection sampling on a simulated AI accelerator.",
    )
    parser.add_argument("--version", action="version", version=f"rslab {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="command")
    for name, module in COMMANDS.items():
        p = sub.add_parser(name, help=module.HELP, description=module.HELP)
        module.configure(p)
        p.set_defaults(run=module.run)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "run", None):
        parser.print_help()
        return 0
    try:
        return int(args.run(args) or 0)
    except ValueError as exc:
        parser.exit(2, f"{parser.prog} {args.command}: error: {exc}\n")


if __name__ == "__main__":
    sys.exit(main())
