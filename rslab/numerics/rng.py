"""Random numbers for both sampler paths, and the uniform conversion.

- ``philox4x32``: Philox4x32-10 (Salmon et al. 2011, as in Random123), the
  counter-based generator behind the framework's streams. Exact path.
- ``hw_random_words``: the model of the core's per-lane hardware RNG (``vrand``).
  Fast path. A counter-based hash of a Weyl sequence, as SplitMix builds its
  words: lane l given counter c and key k returns
  ``mix32(c·γ + mix32(k ^ HW_KEY_SALT))`` (mod 2^32, γ = ``HW_WEYL`` = 0x9E3779B9,
  odd, so c ↦ c·γ is a bijection), where ``mix32`` is a 32-bit avalanche hash
  (xor-shift / odd multiply, three rounds). Counter-based, so any lane can produce
  any stream position with no state, and a kernel that passes the same (key,
  counter) pairs consumes exactly the numbers the reference consumes. The first
  model hashed ``c ^ mix32(k ^ salt)`` directly; its words' top bits were not
  uniform over consecutive counters and words c and c + 128 were correlated
  (``rslab.numerics.rng_checks`` keeps it and its tests).
- ``uniform_from_words``: u = ((w >> 8) + 0.5) · 2^-24 converted to float32
  with round-toward-zero, so u ∈ (0, 1) takes exactly 2^24 distinct, equally
  likely float32 values (every noise pipeline is enumerable over
  ``all_uniforms()``). Why toward zero: in [0.5, 1) float32 steps are 2^-24,
  so (k + ½)·2^-24 is not representable there; round-to-nearest would merge
  pairs of lattice points and map the top word to u = 1 (then −log2 u = 0 and
  g = +∞). Truncation keeps 2^24 distinct values: (k + ½)·2^-24 for
  k < 2^23 and k·2^-24 above, all strictly inside (0, 1).

All functions are vectorised over NumPy arrays of ``uint32``.
"""

import functools

import numpy as np

PHILOX_M0 = np.uint32(0xD2511F53)
PHILOX_M1 = np.uint32(0xCD9E8D57)
PHILOX_W0 = np.uint32(0x9E3779B9)
PHILOX_W1 = np.uint32(0xBB67AE85)

HW_KEY_SALT = np.uint32(0x5EED1234)
HW_WEYL = np.uint32(0x9E3779B9)
"""γ: the counter's step in the Weyl sequence the hardware RNG hashes (2^32 / golden ratio)."""
UNIFORM_BITS = 24


def _as_u32(x, name):
    arr = np.asarray(x)
    if arr.dtype.kind not in "ui":
        raise ValueError(f"{name} must be an integer array, got dtype {arr.dtype}")
    if arr.size and (arr.min() < 0 or arr.max() > 0xFFFFFFFF):
        raise ValueError(f"{name} must hold 32-bit unsigned values")
    return arr.astype(np.uint32)


def _mulhilo(a: np.uint32, b: np.ndarray):
    prod = np.uint64(a) * b.astype(np.uint64)
    return (prod >> np.uint64(32)).astype(np.uint32), prod.astype(np.uint32)


def philox4x32(counter, key, rounds: int = 10) -> np.ndarray:
    """Philox4x32: counter ``[..., 4]`` and key ``[..., 2]`` → ``[..., 4]`` uint32 words.

    Counter and key broadcast against each other; ``rounds=10`` is Philox4x32-10.
    """
    if not isinstance(rounds, (int, np.integer)) or rounds < 1:
        raise ValueError(f"rounds must be a positive integer, got {rounds!r}")
    ctr = _as_u32(counter, "counter")
    k = _as_u32(key, "key")
    if ctr.shape[-1:] != (4,):
        raise ValueError(f"counter must have a last axis of 4 words, got shape {ctr.shape}")
    if k.shape[-1:] != (2,):
        raise ValueError(f"key must have a last axis of 2 words, got shape {k.shape}")
    shape = np.broadcast_shapes(ctr.shape[:-1], k.shape[:-1])
    c0, c1, c2, c3 = (np.broadcast_to(ctr[..., i], shape).copy() for i in range(4))
    k0 = np.broadcast_to(k[..., 0], shape).copy()
    k1 = np.broadcast_to(k[..., 1], shape).copy()
    with np.errstate(over="ignore"):
        for r in range(rounds):
            if r:
                k0 += PHILOX_W0
                k1 += PHILOX_W1
            hi0, lo0 = _mulhilo(PHILOX_M0, c0)
            hi1, lo1 = _mulhilo(PHILOX_M1, c2)
            c0, c1, c2, c3 = hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0
    return np.stack([c0, c1, c2, c3], axis=-1)


def mix32(x) -> np.ndarray:
    """A 32-bit avalanche hash (xor-shift and odd multiplies), the hardware RNG's core."""
    return mix32_inplace(_as_u32(x, "x").copy())


def mix32_inplace(x: np.ndarray, tmp: np.ndarray | None = None) -> np.ndarray:
    """``mix32`` computed in place on a uint32 array (no copy: the Monte Carlo hot path);
    ``tmp``, a uint32 array of x's shape, holds the shifts (else one is allocated). Array
    arithmetic wraps modulo 2^32 without a warning, so no error state is set."""
    tmp = np.empty_like(x) if tmp is None else tmp
    for shift, mult in _MIX_ROUNDS:
        np.bitwise_xor(x, np.right_shift(x, shift, tmp), x)
        if mult is not None:
            np.multiply(x, mult, x)
    return x


def _word(value: int) -> np.ndarray:
    """A read-only 0-d uint32 array: NumPy takes it faster than a scalar as an operand."""
    word = np.array(value, np.uint32)
    word.setflags(write=False)
    return word


_MIX_ROUNDS = ((_word(16), _word(0x7FEB352D)), (_word(15), _word(0x846CA68B)), (_word(16), None))
"""``mix32``'s rounds: (xor-shift, odd multiply or None)."""
_WEYL = _word(int(HW_WEYL))


def hw_random_words(key, counter) -> np.ndarray:
    """The per-lane hardware RNG: one uint32 word per (key, counter) pair (broadcasting)."""
    k = _as_u32(key, "key")
    c = _as_u32(counter, "counter")
    return mix32(weyl(c) + mix32(k ^ HW_KEY_SALT))


def weyl(counter: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``counter · γ`` mod 2^32 (uint32, into ``out`` if given): the Weyl sequence's term."""
    return np.multiply(counter, _WEYL, out=out)


@functools.lru_cache(maxsize=256)
def hw_key_word(key: int) -> np.ndarray:
    """``mix32(key ^ HW_KEY_SALT)``: the key's term of ``hw_random_words``, once per key (a
    read-only 0-d array)."""
    return _word(mix32(np.uint32(key) ^ HW_KEY_SALT))


def hw_random_words_into(key: int, counter: np.ndarray, out: np.ndarray,
                         tmp: np.ndarray | None = None) -> np.ndarray:
    """``hw_random_words(key, counter)`` written into ``out`` (uint32 arrays of the counter's
    shape, ``counter`` may be ``out``; ``tmp`` a scratch one, else allocated; the key a Python
    int; no validation: the simulator's per-op path)."""
    np.add(weyl(counter, out), hw_key_word(key), out)
    return mix32_inplace(out, tmp)


def uniform_from_index(k) -> np.ndarray:
    """The uniform for lattice index k ∈ [0, 2^24): float32_rtz((k + ½) · 2^-24)."""
    k = np.asarray(k)
    if k.dtype.kind not in "ui":
        raise ValueError(f"k must be integer lattice indices, got dtype {k.dtype}")
    if k.size and (k.min() < 0 or k.max() >= 2**UNIFORM_BITS):
        raise ValueError(f"k must lie in [0, 2**{UNIFORM_BITS}), got [{k.min()}, {k.max()}]")
    # every step is exact in float32: k < 2^24, k + ½ < 2^23 (24 bits), then a power of two
    u = k.astype(np.float32)
    np.add(u, np.float32(0.5), out=u, where=k < 2 ** (UNIFORM_BITS - 1))
    return np.multiply(u, np.float32(2.0**-UNIFORM_BITS), out=u)


def uniform_from_words(words) -> np.ndarray:
    """u from 32-bit words: the top 24 bits index the 2^24-point lattice of (0, 1)."""
    w = _as_u32(words, "words")
    return uniform_from_index(w >> np.uint32(32 - UNIFORM_BITS))


def all_uniforms() -> np.ndarray:
    """Every value ``uniform_from_words`` can return, in increasing order (2^24 float32)."""
    return uniform_from_index(np.arange(2**UNIFORM_BITS))
