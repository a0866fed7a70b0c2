"""Subcommands of ``python -m rslab``; importing this package registers them."""

from rslab.commands import (
    bench,  # noqa: F401
    search,  # noqa: F401
)
