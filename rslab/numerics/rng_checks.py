"""χ² checks of a stream of 32-bit words: is the hardware RNG's model uniform and independent?

The exact token laws assume what a hardware RNG is built to give: every token's word
an independent, uniform 32-bit word. Two cheap tests look where a counter-based hash
of consecutive counters is weakest:

* ``top_bits``: the top ``bits`` bits of n consecutive words in ``2^bits`` cells
  (aligned cells: a uniform u's first bits, a lattice index's block);
* ``pairs``: the top ``bits`` bits of word i against those of word ``i + lag``
  in ``4^bits`` cells (lag 128: the two elements of a packed BF16 lane, l and l + 128).

Each returns the χ² statistic, its degrees of freedom and the p-value under
independent uniform words (n large, so the χ² law holds to far better than the
p-values shown). :data:`FIRST_MODEL` is the hardware RNG as this book first modelled
it, ``mix32(c ^ K)``: it fails both tests, which is why ``rslab.numerics.rng`` turns
the counter into a Weyl sequence first.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from rslab.numerics.rng import HW_KEY_SALT, hw_random_words, mix32


def first_model_words(key: int, counter) -> np.ndarray:
    """The first model of the hardware RNG: ``mix32(c ^ mix32(key ^ salt))``."""
    c = np.asarray(counter, np.uint32)
    return mix32(c ^ mix32(np.uint32(key) ^ HW_KEY_SALT))


FIRST_MODEL = first_model_words
MODELS = {"first model, mix32(c ^ K)": first_model_words, "this model": hw_random_words}


def _chi2(counts: np.ndarray) -> dict:
    expected = counts.sum() / counts.size
    chi = float(((counts - expected) ** 2 / expected).sum())
    df = counts.size - 1
    return {"chi2": chi, "df": df, "p": float(stats.chi2.sf(chi, df))}


def _check(words, bits: int) -> np.ndarray:
    w = np.asarray(words)
    if w.dtype != np.uint32 or w.ndim != 1:
        raise ValueError(f"words must be a uint32 row, got {w.dtype} {w.shape}")
    if isinstance(bits, bool) or not isinstance(bits, (int, np.integer)) or not 1 <= bits <= 16:
        raise ValueError(f"bits must be an integer in [1, 16], got {bits!r}")
    return w >> np.uint32(32 - bits)


def top_bits(words, bits: int = 8) -> dict:
    """χ² of the top ``bits`` bits of ``words`` against uniform cells."""
    return _chi2(np.bincount(_check(words, bits), minlength=1 << bits))


def pairs(words, bits: int = 4, lag: int = 128) -> dict:
    """χ² of (top bits of word i, top bits of word i + lag) against uniform cells."""
    top = _check(words, bits).astype(np.int64)
    if isinstance(lag, bool) or not isinstance(lag, (int, np.integer)) or not 0 < lag < top.size:
        raise ValueError(f"lag must be an integer in [1, {top.size}), got {lag!r}")
    return _chi2(np.bincount((top[:-lag] << bits) | top[lag:], minlength=1 << (2 * bits)))


def stream_checks(n: int = 1 << 22, keys=(1, 2, 3)) -> list[dict]:
    """The tests on words 0 … n − 1 of each key, for each model of :data:`MODELS`: the top 8
    and 14 bits (14: the cells of a flat row of 16,384 tokens under a 24-bit lattice) and
    the lag-128 pairs."""
    counter = np.arange(n, dtype=np.uint32)
    rows = []
    for name, model in MODELS.items():
        for key in keys:
            w = model(key, counter)
            rows.append({"model": name, "key": key, "words": n, "top 8 bits": top_bits(w, 8),
                         "top 14 bits": top_bits(w, 14), "lag-128 pairs": pairs(w, 4, 128)})
    return rows


TESTS = ("top 8 bits", "top 14 bits", "lag-128 pairs")


def smallest_p(rows: list[dict]) -> float:
    """The smallest p-value of :data:`TESTS` over rows of :func:`stream_checks`."""
    return min(r[t]["p"] for r in rows for t in TESTS)
