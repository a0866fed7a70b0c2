"""Monte Carlo checks of the exact argmax token laws through the reference's own draws.

:func:`argmax_montecarlo` draws ``rows`` residual rows of a target with
:mod:`rslab.reference`'s Fast-path residual draw (request r = 0..rows−1 of one
seed, so every row has its own key and words) and compares the tokens with
:func:`rslab.numerics.token_law.run_law` on a partition of the vocabulary into,
per run, its first token and the rest (ties favour the first: that is where an
error in the tie rule would show).
"""

from __future__ import annotations

import time

import numpy as np
from scipy import stats as sps

from rslab.numerics.methods import resolve_noise
from rslab.numerics.token_law import run_law
from rslab.reference import _residual_tokens, path_math

CHUNK_ROWS = 512


def argmax_montecarlo(target, method: str, noise, rows: int, *, seed: int = 1) -> dict:
    """χ² of sampled against exact cell counts (see the module docstring)."""
    if isinstance(rows, bool) or not isinstance(rows, (int, np.integer)) or rows < 1:
        raise ValueError(f"rows must be a positive integer, got {rows!r}")
    noise = resolve_noise(method, noise)
    if method not in ("gumbel", "race"):
        raise ValueError(f"method must be 'gumbel' or 'race', got {method!r}")
    start = time.perf_counter()
    math = path_math("fast", noise if method == "gumbel" else "div8")
    w = target.row()
    tokens = np.concatenate([
        _residual_tokens(method, noise, math, seed, req, 0, np.broadcast_to(w, (req.size, w.size)))
        for req in np.array_split(np.arange(rows), -(-rows // CHUNK_ROWS))])
    law = run_law(target, method, noise)
    run = np.searchsorted(np.cumsum(target.counts), tokens, side="right")
    first = tokens == target.starts[run]
    drawn = np.concatenate([np.bincount(run[first], minlength=target.levels),
                            np.bincount(run[~first], minlength=target.levels)])
    cells = np.concatenate([law.first, law.total - law.first])
    live = cells > 0
    expected = rows * cells
    chi = float(((drawn[live] - expected[live]) ** 2 / expected[live]).sum())
    df = int(live.sum()) - 1
    return {"rows": rows, "chi2": chi, "df": df, "p": float(sps.chi2.sf(chi, df)),
            "drawn_where_exact_is_zero": int(drawn[~live].sum()), "drawn": drawn.tolist(),
            "expected": expected.tolist(), "seconds": time.perf_counter() - start}
