"""The reference's race and inverse-CDF draws (float32 and fixed-point) of one token per row.

``draw_tokens(method, noise, seed, requests, position, purpose, w)`` takes the
float32 weights ``w`` [n, V] of n rows (residual weights, or the bonus row's
``exp2((l − m)·LOG2E)``) and returns one token per row:

* ``race``: ``argmax_i fl(w_i · R_i)`` with ``R_i = rcp(E_i)`` from token i's
  word (:mod:`rslab.numerics.race`); tokens with ``w_i · R_i ≤ 0`` (a zero
  weight, or a product that underflows) score −inf; ties go to the lowest index;
* ``invcdf``: :func:`rslab.numerics.invcdf.pick` with the row's words of tokens 0
  (``u₁``), 1 (``u₂``, ``wide``), or 1 and 2 (the 48-bit K, ``wide48``);
* ``fixed``: :func:`rslab.numerics.fixed_invcdf.fixed_tokens` with the row's words of
  tokens 0–2 (the block's 96-bit uniform) and 3–5 (the lane's).

A row the draw sees as empty — no positive race score, an inverse-CDF total of 0, or a
fixed-point row of zeros —
gets the token ``EMPTY`` (−1): the reference then draws it from p
(:func:`rslab.reference.residual_draw`), as a kernel does when its best score stays 0
or its float32 total is 0.

The words are those of :mod:`rslab.randomness` for (seed, request, position,
purpose), as for the Gumbel draw.
"""

from __future__ import annotations

import numpy as np

from rslab.numerics import fixed_invcdf, invcdf
from rslab.numerics.methods import draw, resolve_noise
from rslab.numerics.race import race_multiplier
from rslab.numerics.rng import uniform_from_words
from rslab.randomness import random_uniforms, random_words

EMPTY = -1
"""The token of a row the draw sees no weight in."""


def race_scores(w, u, noise: str) -> np.ndarray:
    """``fl(w · rcp(E(u)))``, −inf where that is not positive (never NaN)."""
    with np.errstate(invalid="ignore", over="ignore"):
        score = w * race_multiplier(u, noise)
    score[~(score > 0)] = -np.inf
    return score


def draw_tokens(method: str, noise, seed, requests, position, purpose, w) -> np.ndarray:
    """One token per row of ``w`` (see the module docstring) by the draw's reference row
    (:mod:`rslab.numerics.methods`)."""
    noise = resolve_noise(method, noise)
    row = draw(method).resolve("reference_row")
    return row(noise, seed, requests, position, purpose, np.asarray(w, np.float32))


def race_tokens(noise, seed, requests, position, purpose, w) -> np.ndarray:
    """The race's token of each row, ``EMPTY`` where no score is positive."""
    u = random_uniforms("fast", seed, requests, position, purpose, np.arange(w.shape[-1]))
    scores = race_scores(w, u, noise)
    return np.where((scores > 0).any(axis=-1), scores.argmax(axis=-1), EMPTY)


def fixed_tokens(noise, seed, requests, position, purpose, w) -> np.ndarray:
    """The fixed-point inverse CDF's token of each row, ``EMPTY`` for a row of zeros."""
    words = random_words("fast", seed, requests, position, purpose,
                         np.arange(fixed_invcdf.WORDS_PER_ROW))
    return fixed_invcdf.fixed_tokens(w, words)


def invcdf_tokens(noise, seed, requests, position, purpose, w) -> np.ndarray:
    """The inverse CDF's token of each row, ``EMPTY`` where its float32 total is 0."""
    words = random_words("fast", seed, requests, position, purpose,
                         np.arange(invcdf.words_per_row(noise)))
    u = uniform_from_words(words)
    second = None
    if noise == "wide":
        second = u[:, 1]
    elif noise == "wide48":
        second = invcdf.wide_integer(words[:, 1], words[:, 2])
    sums = invcdf.prefix(w)
    live = sums.total > 0
    tokens = np.full(w.shape[0], EMPTY, np.int64)
    if live.any():
        kept = invcdf.Prefix(sums.blocks[live], sums.block_sums[live], sums.group_prefix[live])
        tokens[live] = invcdf.pick(kept, noise, u[live, 0],
                                   None if second is None else second[live])
    return tokens
