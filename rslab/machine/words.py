"""Arrays as VMEM's 32-bit words and back, each by a stated rule (the *kind*).

Kinds, each the layout of values in words:

* ``f32``, ``i32``, ``u32``: one float32, int32 or uint32 value per word (its bits);
* ``bf16``: BF16 values two per word, in order: value 2k in the low half-word of word k,
  value 2k + 1 in the high half (the bytes of a uint16 array as NumPy holds it); an odd
  count ends with a zero half-word;
* ``bf16-packed``: the machine chapter's packed layout (:mod:`rslab.machine.bf16`): each
  row (the last axis) padded with −inf to a multiple of 256, values l and l + 128 of a
  256-value block in lane l's word, as ``vunpack.lo`` / ``vunpack.hi`` read them.

Into words (:func:`to_words`): a float32, int32 or uint32 array is one value per word
(its kind, if stated, must match); a uint16 array holds BF16 bit patterns and needs its
kind stated (``bf16`` or ``bf16-packed``); a float32 array stated as ``bf16`` or
``bf16-packed`` is rounded to BF16 (to nearest, ties to even). Values go in C order (row
by row). Anything else is refused with how to convert it: 8-byte values (float64 and
int64, NumPy's defaults) are not narrowed silently, nor are bool, float16, 8- or 16-bit
integers, complex, records or objects. Out of words (:func:`from_words`): ``f32``,
``i32``, ``u32`` as those dtypes; ``bf16`` and ``bf16-packed`` as uint16 bit patterns,
the arrays the same kinds read back.
"""

from __future__ import annotations

from itertools import pairwise

import numpy as np

from rslab.machine.bf16 import f32_to_bf16_bits, pack_bits, padded_length, unpack_bits

DTYPES = {"f32": np.dtype(np.float32), "i32": np.dtype(np.int32), "u32": np.dtype(np.uint32),
          "bf16": np.dtype(np.uint16), "bf16-packed": np.dtype(np.uint16)}
"""Each kind and the dtype of its arrays."""
KINDS = tuple(DTYPES)
BF16_KINDS = ("bf16", "bf16-packed")
NARROWER = {"f": "float32", "i": "int32", "u": "uint32"}
"""The 4-byte dtype to convert an 8-byte array of each numeric kind to."""


def kind_of(text: str, name: str) -> str:
    """``text`` if it is a kind, else a ``ValueError`` naming ``name`` and listing them."""
    if text not in DTYPES:
        raise ValueError(f"{name}: unknown kind {text!r}; the kinds: {', '.join(KINDS)}")
    return text


def refusal(dtype: np.dtype) -> str | None:
    """Why an array of ``dtype`` cannot be VMEM values (with how to convert it), or None."""
    dtype = np.dtype(dtype)
    if dtype.kind in "fiu" and dtype.itemsize == 8:
        target = NARROWER[dtype.kind]
        return (f"{dtype} holds 8-byte values and VMEM words are 32-bit; convert it first: "
                f"a.astype(numpy.{target})")
    if dtype.kind in "fiu" and (dtype.itemsize == 4 or dtype == np.uint16):
        return None
    return (f"{dtype} is not a VMEM value type: give float32, int32 or uint32 values, or "
            "BF16 bit patterns as uint16 (e.g. a.astype(numpy.float32))")


def to_words(data, kind: str | None = None, name: str = "data") -> np.ndarray:
    """The uint32 words of ``data`` laid out as ``kind`` (None: the dtype's own kind).
    ``ValueError`` naming ``name`` for an array the rules above refuse."""
    if kind is not None:
        kind_of(kind, name)
    arr = np.asarray(data)
    why = refusal(arr.dtype)
    if why:
        raise ValueError(f"{name}: {why}")
    if arr.ndim == 0 or arr.size == 0:
        raise ValueError(f"{name}: needs an array of at least one value, got shape {arr.shape}")
    arr = np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("="))
    if arr.dtype == np.uint16:
        if kind not in BF16_KINDS:
            raise ValueError(f"{name}: uint16 values are BF16 bit patterns; state their "
                             "layout: bf16 (in order, two per word) or bf16-packed (the "
                             "machine chapter's packed layout)")
        return _bf16_words(arr, kind)
    own = {np.float32: "f32", np.int32: "i32", np.uint32: "u32"}[arr.dtype.type]
    if kind in BF16_KINDS and own == "f32":
        return _bf16_words(f32_to_bf16_bits(arr), kind)
    if kind not in (None, own):
        raise ValueError(f"{name}: holds {arr.dtype} values ({own}), not {kind}")
    return arr.reshape(-1).view(np.uint32)


def _bf16_words(bits: np.ndarray, kind: str) -> np.ndarray:
    """BF16 bit patterns (uint16) as words, in order or packed."""
    if kind == "bf16-packed":
        return pack_bits(bits).reshape(-1)
    flat = bits.reshape(-1)
    if flat.size % 2:
        flat = np.append(flat, np.uint16(0))
    return flat.view(np.uint32)


def words_for(kind: str, count: int) -> int:
    """The words that hold ``count`` values of ``kind`` (one packed row of them)."""
    if kind == "bf16":
        return -(-count // 2)
    if kind == "bf16-packed":
        return padded_length(count) // 2
    return count


def from_words(words, kind: str, count: int) -> np.ndarray:
    """``count`` values of ``kind`` read from the uint32 ``words`` (at least
    ``words_for(kind, count)`` of them)."""
    words = np.ascontiguousarray(words, dtype=np.uint32)[:words_for(kind, count)]
    if kind == "bf16":
        return words.view(np.uint16)[:count].copy()
    if kind == "bf16-packed":
        return unpack_bits(words, count)
    return words.view(DTYPES[kind]).copy()


def check_apart(placed) -> None:
    """``placed``: ``(byte address, words, name)`` of arrays bound for one memory; a
    ``ValueError`` naming two that overlap."""
    spans = sorted((int(a), int(a) + 4 * len(w), name) for a, w, name in placed)
    for (_, end, first), (start, _, second) in pairwise(spans):
        if start < end:
            raise ValueError(f"{second}: overlaps {first} (bytes {start:,}-{end - 1:,})")
