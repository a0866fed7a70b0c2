"""The reference's race and inverse-CDF draws of one token per row (Fast path).

``draw_tokens(method, noise, seed, requests, position, purpose, w)`` takes the
float32 weights ``w`` [n, V] of n rows (residual weights, or the bonus row's
``exp2((l − m)·LOG2E)``) and returns one token per row:

* ``race``: ``argmax_i fl(w_i · R_i)`` with ``R_i = rcp(E_i)`` from token i's
  word (:mod:`rslab.numerics.race`); tokens with ``w_i · R_i ≤ 0`` (a zero
  weight, or a product that underflows) score −inf; ties go to the lowest index;
* ``invcdf``: :func:`rslab.numerics.invcdf.pick` with the row's words of tokens 0
  (``u₁``), 1 (``u₂``, ``wide``), or 1 and 2 (the 48-bit K, ``wide48``).

The words are those of :mod:`rslab.randomness` for (seed, request, position,
purpose), as for the Gumbel draw.
"""

from __future__ import annotations

import numpy as np

from rslab.numerics import invcdf
from rslab.numerics.methods import check_method, resolve_noise
from rslab.numerics.race import race_multiplier
from rslab.numerics.rng import uniform_from_words
from rslab.randomness import random_uniforms, random_words


def race_scores(w, u, noise: str) -> np.ndarray:
    """``fl(w · rcp(E(u)))``, −inf where that is not positive (never NaN)."""
    with np.errstate(invalid="ignore", over="ignore"):
        score = w * race_multiplier(u, noise)
    score[~(score > 0)] = -np.inf
    return score


def draw_tokens(method: str, noise, seed, requests, position, purpose, w) -> np.ndarray:
    """One token per row of ``w`` (see the module docstring); ``method`` race or invcdf."""
    check_method(method)
    noise = resolve_noise(method, noise)
    w = np.asarray(w, np.float32)
    if method == "race":
        u = random_uniforms("fast", seed, requests, position, purpose, np.arange(w.shape[-1]))
        return race_scores(w, u, noise).argmax(axis=-1)
    if method == "invcdf":
        words = random_words("fast", seed, requests, position, purpose,
                             np.arange(invcdf.words_per_row(noise)))
        u = uniform_from_words(words)
        second = None
        if noise == "wide":
            second = u[:, 1]
        elif noise == "wide48":
            second = invcdf.wide_integer(words[:, 1], words[:, 2])
        return invcdf.pick(invcdf.prefix(w), noise, u[:, 0], second)
    raise ValueError("method: the Gumbel draw lives in rslab.reference")
