"""The subcommands of ``python -m rslab``, one module each (see :mod:`rslab.cli`)."""
