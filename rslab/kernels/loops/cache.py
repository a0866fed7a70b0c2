"""The one cache of the kernels: schedules and emitted loops, by their arguments.

Kernels repeat the same few loops many times (a sampler program holds one
row-max, one sum-exp and one Gumbel loop per row), and a modulo schedule of a
large body, or an exact one, takes seconds. ``cached(kind, key, compute)``
computes a value once per (kind, key); the table is cleared when it holds
``LIMIT`` entries, so memory stays bounded.
"""

LIMIT = 1024
_TABLE: dict = {}


def cached(kind: str, key, compute):
    """``compute()`` for (kind, key), computed once while the entry is held."""
    k = (kind, key)
    if k not in _TABLE:
        if len(_TABLE) >= LIMIT:
            _TABLE.clear()
        _TABLE[k] = compute()
    return _TABLE[k]
