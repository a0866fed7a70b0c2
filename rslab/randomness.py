"""Which random word the reference sampler uses where, on both paths.

The layout is tabled in the docstring of :mod:`rslab.reference`; this module
implements it, and kernels (and their tests) call the same helpers to obtain the
very words and uniforms the reference consumed.

A *row* of random numbers is addressed by (seed, request r, position s,
purpose); within a row, *token* i gets one 32-bit word. The acceptance uniform
of (r, s) is token 0 of the ``ACCEPT`` row, so one helper serves every purpose.
The Fast path's inverse-CDF draw reads the words of tokens 0, 1 and 2 of its
row as the row's own uniforms (``u24`` one, ``wide`` two, ``wide48`` three).
"""

import numpy as np

from rslab.numerics.rng import hw_random_words, mix32, philox4x32, uniform_from_words

ACCEPT, RESIDUAL, BONUS = 0, 1, 2
PURPOSES = {"accept": ACCEPT, "residual": RESIDUAL, "bonus": BONUS}
PATHS = ("exact", "fast")

PHILOX_LANES = 128
PHILOX_WORDS = 4
TOKENS_PER_BLOCK = PHILOX_LANES * PHILOX_WORDS  # 512 tokens per 128-lane Philox evaluation
FAST_KEY_SALT = np.uint32(0x2545F491)
MAX_POSITION = 2**30 - 1  # fast_key packs (s << 2) | purpose into 32 bits
MAX_REQUEST = 2**32 - 1


def check_seed(seed) -> int:
    """Return ``seed`` as a Python int if it is an integer in [0, 2^64); else ValueError."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ValueError(f"seed must be an integer in [0, 2**64), got {seed!r}")
    seed = int(seed)
    if not 0 <= seed < 2**64:
        raise ValueError(f"seed must be an integer in [0, 2**64), got {seed}")
    return seed


def _check_path(path):
    if path not in PATHS:
        raise ValueError(f"path must be one of {PATHS}, got {path!r}")


def _check_purpose(purpose) -> int:
    if isinstance(purpose, str):
        if purpose not in PURPOSES:
            raise ValueError(f"purpose must be one of {sorted(PURPOSES)} or 0..2, got {purpose!r}")
        return PURPOSES[purpose]
    if isinstance(purpose, bool) or purpose not in (ACCEPT, RESIDUAL, BONUS):
        raise ValueError(f"purpose must be one of {sorted(PURPOSES)} or 0..2, got {purpose!r}")
    return int(purpose)


def _index_array(values, name, upper) -> np.ndarray:
    arr = np.asarray(values)
    if arr.dtype.kind not in "ui":
        raise ValueError(f"{name} must be integers, got dtype {arr.dtype}")
    arr = arr.astype(np.int64).reshape(-1)
    if arr.size and (arr.min() < 0 or arr.max() > upper):
        raise ValueError(f"{name} must lie in [0, {upper}]")
    return arr


def philox_key(seed) -> np.ndarray:
    """The Exact path's Philox key: (seed mod 2^32, seed >> 32) as two uint32 words."""
    seed = check_seed(seed)
    return np.array([seed & 0xFFFFFFFF, (seed >> 32) & 0xFFFFFFFF], dtype=np.uint32)


def philox_slot(tokens):
    """Token index i → (c0, word): c0 = (i // 512)·128 + i % 128, word = (i // 128) % 4."""
    i = _index_array(tokens, "tokens", 2**38)
    c0 = (i // TOKENS_PER_BLOCK) * PHILOX_LANES + i % PHILOX_LANES
    if c0.size and c0.max() > 0xFFFFFFFF:
        raise ValueError("tokens too large for a 32-bit Philox counter word")
    return c0, (i // PHILOX_LANES) % PHILOX_WORDS


def fast_key(seed, requests, positions, purpose) -> np.ndarray:
    """The Fast path's per-row hardware-RNG key (uint32), computed on the host.

    ``h = mix32(lo ^ SALT); h = mix32(h ^ hi); h = mix32(h ^ r); key = mix32(h ^ (s<<2 | purpose))``
    with (lo, hi) the two 32-bit halves of the seed. ``requests`` and ``positions``
    broadcast against each other.
    """
    seed = check_seed(seed)
    purpose = _check_purpose(purpose)
    r = _index_array(requests, "requests", MAX_REQUEST)
    s = _index_array(positions, "positions", MAX_POSITION)
    r, s = np.broadcast_arrays(r, s)
    h = mix32(np.uint32(seed & 0xFFFFFFFF) ^ FAST_KEY_SALT)
    h = mix32(h ^ np.uint32(seed >> 32))
    h = mix32(h ^ r.astype(np.uint32))
    return mix32(h ^ ((s.astype(np.uint32) << np.uint32(2)) | np.uint32(purpose)))


def random_words(path, seed, requests, positions, purpose, tokens) -> np.ndarray:
    """The uint32 words of ``tokens`` in the rows (request, position, purpose).

    ``requests`` and ``positions`` broadcast to n rows; returns ``[n, len(tokens)]``.
    The acceptance word of (r, s) is ``random_words(path, seed, r, s, "accept", [0])``.
    """
    _check_path(path)
    purpose = _check_purpose(purpose)
    r = _index_array(requests, "requests", MAX_REQUEST)
    s = _index_array(positions, "positions", MAX_POSITION)
    r, s = np.broadcast_arrays(r, s)
    tok = _index_array(tokens, "tokens", 2**38)
    if path == "fast":
        if tok.size and tok.max() > 0xFFFFFFFF:
            raise ValueError("tokens must fit the 32-bit hardware counter")
        keys = fast_key(seed, r, s, purpose)
        return hw_random_words(keys[:, None], tok[None, :].astype(np.uint32))
    c0, word = philox_slot(tok)
    lanes, inverse = np.unique(c0, return_inverse=True)
    counter = np.empty((r.size, lanes.size, 4), dtype=np.uint32)
    counter[..., 0] = lanes[None, :]
    counter[..., 1] = s[:, None]
    counter[..., 2] = r[:, None]
    counter[..., 3] = purpose
    out = philox4x32(counter, philox_key(seed)[None, None, :])
    return out[:, inverse.reshape(-1), word]


def random_uniforms(path, seed, requests, positions, purpose, tokens) -> np.ndarray:
    """``uniform_from_words`` of :func:`random_words`: float32 u ∈ (0, 1), ``[n, len(tokens)]``."""
    return uniform_from_words(random_words(path, seed, requests, positions, purpose, tokens))
