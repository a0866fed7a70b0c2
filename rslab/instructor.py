"""The instructor's file: hidden variants of the kernel labs and the exercises, and the ladders.

A TOML file the instructor keeps out of the repository and out of the students' reach,
named by ``--variants FILE`` (``rslab grade``) or by the environment variable
``RSLAB_GRADING_VARIANTS``; without one, grading and ``check()`` use the public variants
the labs and the exercises state. Every section is optional::

    [[variant]]                       # a kernel-lab variant (as many as you like)
    name = "h1"
    seed = 90210                      # the inputs' seed
    vocab = 5000                      # V: any size up to the labs' largest, not only x256
    machine = { valu_latency = 5, sfu_latency = 19 }   # rslab sim --config keys
    labs = ["sumexp", "rowmax"]       # default: every lab

    [ladder]                          # every lab's ladder (rslab grade NAME --spec)
    correct = 40
    rungs = [[4.0, 10], [2.0, 10], [1.5, 10], [1.2, 15], [1.05, 15]]
    beyond = [0.5, 10]
    [ladder.residual]                 # one lab's (merged over the above)
    rungs = [[3.0, 20], [1.5, 20], [1.05, 20]]

    [exercise.machine-chains]         # an exercise's variant (its parameters' names)
    valu_latency = 5
    valu_slots = 2

Errors name the file and the key: ``ValueError``.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

ENV = "RSLAB_GRADING_VARIANTS"
"""The environment variable naming the instructor's file."""
SECTIONS = ("variant", "ladder", "exercise")


def path(explicit: str | os.PathLike | None = None) -> Path | None:
    """The instructor's file: ``explicit``, else ``$RSLAB_GRADING_VARIANTS``, else None."""
    chosen = explicit if explicit is not None else os.environ.get(ENV) or None
    return None if chosen is None else Path(chosen)


def read(explicit: str | os.PathLike | None = None) -> dict:
    """The instructor's file as a dict (``{}`` without one): its ``variant`` list, ``ladder``
    and ``exercise`` tables, checked for unknown sections."""
    where = path(explicit)
    if where is None:
        return {}
    try:
        data = tomllib.loads(where.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ValueError(f"{where}: cannot read the variants file ({exc.strerror})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{where}: not TOML: {exc}") from None
    unknown = sorted(set(data) - set(SECTIONS))
    if unknown:
        raise ValueError(f"{where}: unknown section(s) {unknown}; known: {list(SECTIONS)}")
    if not isinstance(data.get("variant", []), list):
        raise ValueError(f"{where}: 'variant' must be an array of tables ([[variant]])")
    for name in ("ladder", "exercise"):
        if not isinstance(data.get(name, {}), dict):
            raise ValueError(f"{where}: '{name}' must be a table ([{name}])")
    return {**data, "file": str(where)}
