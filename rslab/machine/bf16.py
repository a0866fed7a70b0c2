"""The packed BF16 format that ``vunpack.lo`` / ``vunpack.hi`` read, and float32 ↔ BF16 bits.

A row of V BF16 values is padded with −inf to a multiple of 256 and stored as
blocks of 128 32-bit words: in block b, lane l holds element ``256·b + l`` in its
low half-word and element ``256·b + 128 + l`` in its high half-word, so the
lanes read ``[0 128] [1 129] … [127 255] [256 384] …``. ``vunpack.lo`` /
``vunpack.hi`` turn one packed vector into the two float32 vectors of elements
``i`` and ``i + 128``.
"""

import numpy as np

BLOCK = 256
LANES = 128
BF16_NEG_INF = np.uint16(0xFF80)
BF16_QNAN = np.uint16(0x7FC0)


def f32_to_bf16_bits(x) -> np.ndarray:
    """BF16 bit patterns (uint16) of float32 values, rounding to nearest even; NaN → quiet NaN."""
    x = np.asarray(x, dtype=np.float32)
    u = x.view(np.uint32)
    rounded = (u >> 16) & 1
    rounded += u
    rounded += 0x7FFF  # wraps only for NaNs with the sign bit set, replaced below
    out = np.asarray(rounded >> 16).astype(np.uint16)
    np.putmask(out, np.isnan(x), BF16_QNAN)
    return out


def bf16_bits_to_f32(b) -> np.ndarray:
    """float32 values of BF16 bit patterns (exact)."""
    b = np.asarray(b)
    if b.dtype.kind not in "ui":
        raise ValueError(f"b must hold integer bit patterns, got dtype {b.dtype}")
    return (b.astype(np.uint32) << np.uint32(16)).view(np.float32)


def round_to_bf16(x) -> np.ndarray:
    """float32 values rounded to the nearest BF16 (ties to even), returned as float32."""
    return bf16_bits_to_f32(f32_to_bf16_bits(x))


def padded_length(v: int) -> int:
    """V rounded up to a multiple of 256 (the packed block)."""
    if not isinstance(v, (int, np.integer)) or v < 0:
        raise ValueError(f"v must be a non-negative integer, got {v!r}")
    return -(-int(v) // BLOCK) * BLOCK


def pack_rows(rows) -> np.ndarray:
    """Pack float32 rows ``[..., V]`` into ``[..., padded_length(V) // 2]`` uint32 words.

    Values are rounded to BF16 (nearest even); the padding is −inf.
    """
    rows = np.asarray(rows, dtype=np.float32)
    if rows.ndim == 0:
        raise ValueError("rows must have at least one dimension")
    return pack_bits(f32_to_bf16_bits(rows))


def pack_bits(bits) -> np.ndarray:
    """``pack_rows`` of BF16 bit patterns (uint16 ``[..., V]``), taken as they are."""
    bits = np.asarray(bits)
    if bits.dtype != np.uint16 or bits.ndim == 0:
        raise ValueError(f"bits must be a uint16 array of at least one dimension, got "
                         f"{bits.dtype} of shape {bits.shape}")
    v = bits.shape[-1]
    vp = padded_length(v)
    padded = np.full(bits.shape[:-1] + (vp,), BF16_NEG_INF, dtype=np.uint16)
    padded[..., :v] = bits
    blocks = padded.reshape(bits.shape[:-1] + (vp // BLOCK, 2, LANES)).astype(np.uint32)
    words = blocks[..., 0, :] | (blocks[..., 1, :] << np.uint32(16))
    return words.reshape(bits.shape[:-1] + (vp // 2,))


def unpack_rows(words, v: int | None = None) -> np.ndarray:
    """Inverse of ``pack_rows``: uint32 ``[..., W]`` (W a multiple of 128) → float32 ``[..., v]``.

    ``v`` defaults to 2·W (padding included)."""
    return bf16_bits_to_f32(unpack_bits(words, v))


def unpack_bits(words, v: int | None = None) -> np.ndarray:
    """``unpack_rows`` as BF16 bit patterns (uint16), every bit kept (NaN payloads too)."""
    words = np.asarray(words)
    if words.dtype != np.uint32:
        raise ValueError(f"words must be uint32, got dtype {words.dtype}")
    w = words.shape[-1]
    if w % LANES:
        raise ValueError(f"words: last axis must be a multiple of {LANES}, got {w}")
    if v is None:
        v = 2 * w
    if not 0 <= v <= 2 * w:
        raise ValueError(f"v must be in [0, {2 * w}], got {v}")
    blocks = words.reshape(words.shape[:-1] + (w // LANES, 1, LANES))
    halves = np.concatenate([blocks & np.uint32(0xFFFF), blocks >> np.uint32(16)], axis=-2)
    return halves.reshape(words.shape[:-1] + (2 * w,))[..., :v].astype(np.uint16)


def element_position(i):
    """(word index, half) holding element i: half 0 = low half-word, 1 = high."""
    i = np.asarray(i)
    block, r = np.divmod(i, BLOCK)
    half, lane = np.divmod(r, LANES)
    return block * LANES + lane, half
