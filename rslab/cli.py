"""Command line: ``python -m rslab <command> ...``.

Each command lives in its own module and registers itself in ``COMMANDS``.
"""

import argparse
import sys

from rslab import __version__

COMMANDS = {}


def command(name, help):
    """Register ``fn(subparsers_parser)`` to configure, returning the runner."""

    def wrap(configure):
        COMMANDS[name] = (help, configure)
        return configure

    return wrap


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m rslab",
        description="rslab: rejection sampling on a simulated AI accelerator.",
    )
    parser.add_argument("--version", action="version", version=f"rslab {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="command")
    for name, (help_text, configure) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.set_defaults(run=configure(p))
    return parser


def _load_commands():
    from rslab import commands  # noqa: F401  (registers the subcommands)


def main(argv=None) -> int:
    _load_commands()
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
