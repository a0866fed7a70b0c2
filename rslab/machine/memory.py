"""VMEM and HBM as arrays of 32-bit words, and the VMEM bank model.

Addresses are in bytes and must be 4-byte aligned. Word ``w`` (byte address
``4·w``) lives in bank ``w % banks``. A vector access touches one word per lane;
its conflict degree k is the largest number of *distinct* words it needs from
one bank (a broadcast of one word is served once), and it holds its port k
cycles.
"""

from collections.abc import Mapping
from math import gcd

import numpy as np


def as_words(data, name: str) -> np.ndarray:
    """Any array's raw bytes as a flat uint32 array (its size in bytes must be a multiple of 4)."""
    arr = np.ascontiguousarray(np.asarray(data))
    if arr.dtype == object:
        raise ValueError(f"{name}: cannot store an object array")
    raw = arr.reshape(-1).view(np.uint8)
    if raw.size % 4:
        raise ValueError(f"{name}: size in bytes must be a multiple of 4, got {raw.size}")
    return raw.view(np.uint32)


def build_memory(init, size_bytes: int | None, name: str) -> np.ndarray:
    """A fresh word array from ``None``, an array placed at byte 0, or ``{byte_address: array}``.

    With ``size_bytes=None`` the memory is just large enough for the data.
    """
    if init is None:
        chunks = {}
    elif isinstance(init, Mapping):
        chunks = dict(init)
    else:
        chunks = {0: init}
    placed = []
    end = 0
    for addr, data in chunks.items():
        if not isinstance(addr, (int, np.integer)) or addr < 0 or addr % 4:
            raise ValueError(f"{name}: addresses must be non-negative multiples of 4, "
                             f"got {addr!r}")
        words = as_words(data, name)
        placed.append((int(addr) // 4, words))
        end = max(end, int(addr) + 4 * words.size)
    if size_bytes is None:
        size_bytes = end
    if end > size_bytes:
        raise ValueError(f"{name}: data ends at byte {end}, beyond the {size_bytes}-byte memory")
    mem = np.zeros(size_bytes // 4, dtype=np.uint32)
    for w, words in placed:
        mem[w:w + words.size] = words
    return mem


def conflict_degree(stride_words: int, lanes: int, banks: int) -> int:
    """Conflict degree k of a strided vector access (stride in words; 0 = broadcast)."""
    if stride_words == 0:
        return 1
    distinct_banks = banks // gcd(abs(stride_words), banks)
    return -(-lanes // min(distinct_banks, lanes))


def port_cycles(stride_words: int | None, lanes: int, banks: int) -> int:
    """Cycles a vector load or store holds its port: the conflict degree of its lane stride in
    words (``None`` for ``vld``/``vst``, which read consecutive words; a zero stride is served
    as stride 1). The simulator books ports so; the scheduler plans with the same number."""
    return conflict_degree(stride_words or 1, lanes, banks)
