"""Reference targets for the token-level laws: weight rows made of a few runs of equal weights.

A target is a row of ``V`` float32 weights given as *runs* in token order:
``counts[j]`` tokens of weight ``weights[j]``. Its law is ``w / Σw`` in exact
arithmetic (float64 here). The three targets of the book, at the note's
vocabulary (``VOCAB`` = 154,880):

* ``peaked``: token 0 carries ``1 − tail`` of the mass, the other ``V − 1``
  tokens share ``tail`` equally (a confident model with a long flat tail);
* ``zipf``: a Zipf–Mandelbrot law ``w_i ∝ (i + b)^(−s)`` with its log-weights
  rounded to a grid of ``1/levels_per_octave``, which groups the tokens into a
  few hundred runs;
* ``flat``: all ``V`` tokens equally likely.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

VOCAB = 154_880
TAIL_MASS = 0.1
ZIPF_EXPONENT = 1.1
ZIPF_OFFSET = 256
ZIPF_LEVELS_PER_OCTAVE = 24
TARGETS = ("peaked", "zipf", "flat")


@dataclass(frozen=True)
class Target:
    """Runs of equal float32 weights in token order."""

    name: str
    counts: np.ndarray  # int64 [L]
    weights: np.ndarray  # float32 [L], > 0

    def __post_init__(self):
        c, w = np.asarray(self.counts), np.asarray(self.weights)
        if c.ndim != 1 or c.shape != w.shape or c.size == 0:
            raise ValueError("counts and weights must be 1-d arrays of the same length")
        if c.dtype.kind not in "iu" or np.any(c < 1):
            raise ValueError("counts must be positive integers")
        if w.dtype != np.float32 or not np.all(np.isfinite(w)) or np.any(w <= 0):
            raise ValueError("weights must be positive finite float32")

    @property
    def vocab(self) -> int:
        return int(self.counts.sum())

    @property
    def levels(self) -> int:
        return int(self.counts.size)

    @property
    def run_probs(self) -> np.ndarray:
        """Target probability of one token of each run (float64)."""
        w = self.weights.astype(np.float64)
        return w / float(np.dot(self.counts, w))

    @property
    def starts(self) -> np.ndarray:
        """Index of each run's first token."""
        return np.concatenate([[0], np.cumsum(self.counts)[:-1]])

    def row(self) -> np.ndarray:
        """The weights of all V tokens (float32)."""
        return np.repeat(self.weights, self.counts)

    def probs(self) -> np.ndarray:
        """The target law of all V tokens (float64)."""
        return np.repeat(self.run_probs, self.counts)


def _check_vocab(vocab) -> int:
    if isinstance(vocab, bool) or not isinstance(vocab, (int, np.integer)) or vocab < 2:
        raise ValueError(f"vocab must be an integer ≥ 2, got {vocab!r}")
    return int(vocab)


def peaked(tail: float = TAIL_MASS, vocab: int = VOCAB) -> Target:
    """Token 0 with mass ``1 − tail``, ``vocab − 1`` tail tokens sharing ``tail``."""
    vocab = _check_vocab(vocab)
    if not 0 < tail < 1:
        raise ValueError(f"tail must be in (0, 1), got {tail!r}")
    weights = np.array([1 - tail, tail / (vocab - 1)], np.float32)
    return Target(f"peaked(tail={tail:g})", np.array([1, vocab - 1]), weights)


def zipf(vocab: int = VOCAB, *, exponent: float = ZIPF_EXPONENT, offset: int = ZIPF_OFFSET,
         levels_per_octave: int = ZIPF_LEVELS_PER_OCTAVE) -> Target:
    """Zipf–Mandelbrot ``(i + offset)^(−exponent)``, log2-weights rounded to 1/levels_per_octave."""
    vocab = _check_vocab(vocab)
    if not exponent > 0 or offset < 1 or levels_per_octave < 1:
        raise ValueError("need exponent > 0, offset ≥ 1 and levels_per_octave ≥ 1")
    rank = np.arange(vocab, dtype=np.float64) + offset
    step = np.round(exponent * np.log2(rank / offset) * levels_per_octave).astype(np.int64)
    level, counts = np.unique(step, return_counts=True)
    weights = np.exp2(-level / levels_per_octave).astype(np.float32)
    return Target("zipf", counts.astype(np.int64), weights)


def flat(vocab: int = VOCAB) -> Target:
    """All ``vocab`` tokens with weight 1."""
    return Target("flat", np.array([_check_vocab(vocab)]), np.ones(1, np.float32))


def target(name: str, vocab: int = VOCAB, tail: float = TAIL_MASS) -> Target:
    """One of ``TARGETS`` by name."""
    if name == "peaked":
        return peaked(tail, vocab)
    if name == "zipf":
        return zipf(vocab)
    if name == "flat":
        return flat(vocab)
    raise ValueError(f"target must be one of {TARGETS}, got {name!r}")
