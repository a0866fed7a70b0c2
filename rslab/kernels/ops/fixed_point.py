"""Exact fixed-point arithmetic on the core, as straight-line assembly: the pieces of the
fixed-point inverse CDF's tail (:mod:`rslab.numerics.fixed_invcdf`).

A 63-bit quantised value ``c = hi·2^32 + lo`` (two uint32 lanes) is carried as four
16-bit *limbs*, each a float32 (exact: below 2^24), so that the cross-lane unit's
float32 ``vred.add`` and the scans' float32 adds stay exact on 128 lanes (a sum of 128
limbs is below 2^23); a *normalised* number is five uint32 limbs below 2^16 each (least
significant first), after the carries have been propagated with integer adds and shifts.

- :func:`exponent_lines`: E of a positive float32 scalar (subnormal too) and the two
  power-of-two factors of ``2^(30−E)`` broadcast;
- :func:`quantise_lines`: ``hi = f2u(y)``, ``lo = f2u((y − u2f(hi))·2^32)`` for ``y = x·2^(30−E)``;
- :func:`limb_lines`: the four float32 limbs of (hi, lo);
- :func:`carry_lines`: uint32 limbs (any size below 2^32) to a normalised number;
- :func:`greater_lines`: the lanes whose normalised number exceeds another;
- :func:`scans_lines`: inclusive prefix scans of several vectors, their steps interleaved;
- :func:`interleave`: independent chains of lines, one line of each in turn;
- :func:`product_lines`: ``⌊U·Q/2^96⌋`` of a 96-bit U (three words) and a 80-bit Q
  (five limbs) on the scalar unit, in 16-bit digits (every product below 2^32);
  :func:`product_vector_lines` the same with the partial products on the VALU, a lane per
  column.

Registers are passed by name (``v`` and ``s`` strings); ``m16`` holds 0xFFFF in every lane.
"""

from __future__ import annotations

from itertools import zip_longest

from rslab.machine.bf16 import LANES
from rslab.numerics.invcdf import SCAN_STEPS

LIMBS = 4
"""16-bit limbs of a quantised value below 2^64."""
DIGITS = 5
"""16-bit limbs of a normalised number below 2^80 (a sum of up to 2^16 values < 2^64)."""
F32_2P32 = "0x4f800000"
"""float32 2^32."""
F32_2P64 = "0x5f800000"
"""float32 2^64 (brings a subnormal into the normal range)."""


def exponent_lines(x: str, e: str, p1: str, p2: str, t: tuple, tag: str) -> list:
    """``e`` = E with ``x ∈ [2^E, 2^(E+1))`` (``x`` a positive float32 scalar), and the
    vectors ``p1 = 2^first``, ``p2 = 2^(k − first)`` with ``k = 30 − E``, ``first = min(k,
    127)`` (both normal); ``t``: three scratch scalars."""
    a, b, c = t
    normal = f"fx_normal{tag}"
    return [f"sshr {e}, {x}, 23", f"bnz {e}, {normal}",
            f"sli {a}, {F32_2P64}", f"sfmul {a}, {x}, {a}", f"sshr {e}, {a}, 23",
            f"ssub {e}, {e}, 64",
            f"{normal}: ssub {e}, {e}, 127",
            f"sli {a}, 30", f"ssub {a}, {a}, {e}",  # k
            f"ssub {b}, {a}, 127", f"slt {c}, {b}, 0", f"ssub {c}, {c}, 1",
            f"sand {b}, {b}, {c}",  # k − first = max(k − 127, 0)
            f"ssub {a}, {a}, {b}",  # first
            f"sadd {a}, {a}, 127", f"sshl {a}, {a}, 23", f"vbcast {p1}, {a}",
            f"sadd {b}, {b}, 127", f"sshl {b}, {b}, 23", f"vbcast {p2}, {b}"]


def quantise_lines(x: str, p1: str, p2: str, hi: str, lo: str, c2p32: str) -> list:
    """(hi, lo) of ``⌊x·2^(62−E)⌋`` lane by lane (``c2p32``: float32 2^32 in every lane);
    ``x`` is overwritten."""
    return [f"vmul.f32 {x}, {x}, {p1}", f"vmul.f32 {x}, {x}, {p2}", f"vcvt.f2u {hi}, {x}",
            f"vcvt.u2f {lo}, {hi}", f"vsub.f32 {lo}, {x}, {lo}", f"vmul.f32 {lo}, {lo}, {c2p32}",
            f"vcvt.f2u {lo}, {lo}"]


def limb_lines(hi: str, lo: str, limbs, m16: str) -> list:
    """The four float32 limbs of ``hi·2^32 + lo``, least significant first."""
    l0, l1, l2, l3 = limbs
    return [f"vand {l0}, {lo}, {m16}", f"vshr {l1}, {lo}, 16", f"vand {l2}, {hi}, {m16}",
            f"vshr {l3}, {hi}, 16"] + [f"vcvt.u2f {r}, {r}" for r in limbs]


def carry_lines(limbs, out, m16: str, tmp: str) -> list:
    """``out`` (``DIGITS`` registers) = the normalised number of uint32 ``limbs`` (up to
    ``DIGITS``; each below 2^31), carries propagated; ``limbs`` are overwritten."""
    limbs = list(limbs)
    lines = []
    for j in range(DIGITS):
        src = limbs[j] if j < len(limbs) else None
        if j == 0:
            cur = src
        elif src is None:
            cur = tmp
        else:
            lines.append(f"vadd.u32 {src}, {src}, {tmp}")
            cur = src
        if j == DIGITS - 1:
            lines.append(f"vmov {out[j]}, {cur}")
        elif cur == tmp:
            lines += [f"vand {out[j]}, {tmp}, {m16}", f"vshr {tmp}, {tmp}, 16"]
        else:
            lines += [f"vshr {tmp}, {cur}, 16", f"vand {out[j]}, {cur}, {m16}"]
    return lines


def greater_lines(a, b, out: str, eq: str, t: str) -> list:
    """``out`` = mask of the lanes where the number of float32 digits ``a`` exceeds that of
    ``b`` (both ``DIGITS`` registers, most significant last)."""
    top = DIGITS - 1
    lines = [f"vcmpgt.f32 {out}, {a[top]}, {b[top]}", f"vcmpeq.f32 {eq}, {a[top]}, {b[top]}"]
    for j in range(top - 1, -1, -1):
        lines += [f"vcmpgt.f32 {t}, {a[j]}, {b[j]}", f"vand {t}, {t}, {eq}",
                  f"vor {out}, {out}, {t}"]
        if j:
            lines += [f"vcmpeq.f32 {t}, {a[j]}, {b[j]}", f"vand {eq}, {eq}, {t}"]
    return lines


def product_lines(words, q, x, u, acc: str, p: str) -> list:
    """``x`` (``DIGITS`` scalars) = the 16-bit digits of ``⌊U·Q/2^96⌋``, U = ``words``
    (three scalars, most significant first), Q = the ``DIGITS`` 16-bit digits ``q``; ``u``:
    six scratch scalars for U's digits."""
    w0, w1, w2 = words
    lines = []
    for k, (w, shift) in enumerate(((w2, 0), (w2, 16), (w1, 0), (w1, 16), (w0, 0), (w0, 16))):
        lines.append(f"sshr {u[k]}, {w}, 16" if shift else f"sand {u[k]}, {w}, 0xffff")
    lines.append(f"sli {acc}, 0")
    n_u, n_q = len(u), len(q)
    for col in range(n_u + n_q):
        for i in range(n_u):
            j = col - i
            if 0 <= j < n_q:
                lines += [f"smul {p}, {u[i]}, {q[j]}", f"sand {p}, {p}, 0xffff",
                          f"sadd {acc}, {acc}, {p}"]
            j = col - 1 - i
            if 0 <= j < n_q:
                lines += [f"smul {p}, {u[i]}, {q[j]}", f"sshr {p}, {p}, 16",
                          f"sadd {acc}, {acc}, {p}"]
        if col >= n_u:
            lines.append(f"sand {x[col - n_u]}, {acc}, 0xffff")
        lines.append(f"sshr {acc}, {acc}, 16")
    return lines


def scans_lines(srcs, dsts, tmps, rows, steps: int = SCAN_STEPS) -> list:
    """Inclusive Hillis–Steele scans of ``srcs`` into ``dsts`` (``tmps`` scratch vectors),
    scan k in ``rows[k]``: 128 zero words, then the slot its steps store to; ``steps`` < 7
    scans only the first 2^steps lanes."""
    lines = [f"vmov {d}, {s}" for s, d in zip(srcs, dsts, strict=True)]
    for i in range(steps):
        lines += [f"vst {d}, [s0 + {row + 4 * LANES}]" for d, row in zip(dsts, rows, strict=False)]
        lines += [f"vld {t}, [s0 + {row + 4 * LANES - 4 * (1 << i)}]"
                  for t, row in zip(tmps, rows, strict=False)]
        lines += [f"vadd.f32 {d}, {d}, {t}" for d, t in zip(dsts, tmps, strict=False)]
    return lines


def interleave(*chains) -> list:
    """The lines of independent ``chains``, one of each in turn."""
    return [line for group in zip_longest(*chains) for line in group if line is not None]


def product_vector_lines(words, q, x, u, cols: tuple, t: str, vecs: tuple, m16: str,
                         row: int) -> list:
    """``x`` (``DIGITS`` scalars) = the 16-bit digits of ``⌊U·Q/2^96⌋`` as
    :func:`product_lines` computes them, with the 30 partial products on the VALU: Q's
    digits ``q`` stored in lanes 0–4 of a row after 128 zero words and loaded shifted by i
    lanes for U's digit i (``u``: six scratch scalars), so that lane c of the product holds
    column c; the low halves summed in lane c, the high halves one lane on (a store and a
    shifted load), then the eleven columns' carries on the scalar unit (``cols``: eleven
    scalars, free once ``q``, ``words`` and ``u`` are used; ``t`` one more). In the order
    that lets in-order bundles overlap: every load, then every broadcast, product, split and
    a tree of adds. ``vecs``: twelve scratch vectors; ``row``:
    the byte address of 128 zero words, the Q row, a zero word, the shifted row and the
    column row (2,564 bytes)."""
    w0, w1, w2 = words
    qrow, shifted, col_row = row + 4 * LANES, row + 8 * LANES + 4, row + 12 * LANES + 4
    qs, ub = vecs[:6], vecs[6:]
    lines = [f"sst {q[j]}, [s0 + {qrow + 4 * j}]" for j in range(len(q))]
    for k, (w, shift) in enumerate(((w2, 0), (w2, 16), (w1, 0), (w1, 16), (w0, 0), (w0, 16))):
        lines.append(f"sshr {u[k]}, {w}, 16" if shift else f"sand {u[k]}, {w}, 0xffff")
    lines += [f"vld {qs[i]}, [s0 + {qrow - 4 * i}]" for i in range(6)]
    lines += [f"vbcast {ub[i]}, {u[i]}" for i in range(6)]
    lines += [f"vmullo.u32 {qs[i]}, {qs[i]}, {ub[i]}" for i in range(6)]
    lines += [line for i in range(6) for line in (f"vand {ub[i]}, {qs[i]}, {m16}",
                                                  f"vshr {qs[i]}, {qs[i]}, 16")]
    for level in ((0, 1), (2, 3), (4, 5)), ((0, 2),), ((0, 4),):
        for a, b in level:
            lines += [f"vadd.u32 {ub[a]}, {ub[a]}, {ub[b]}", f"vadd.u32 {qs[a]}, {qs[a]}, {qs[b]}"]
    lines += [f"vst {qs[0]}, [s0 + {shifted}]", f"vld {qs[0]}, [s0 + {shifted - 4}]",
              f"vadd.u32 {ub[0]}, {ub[0]}, {qs[0]}", f"vst {ub[0]}, [s0 + {col_row}]"]
    lines += [f"sld {cols[c]}, [s0 + {col_row + 4 * c}]" for c in range(len(cols))]
    for c in range(1, len(cols)):  # column c takes the carry of column c − 1
        lines += [f"sshr {t}, {cols[c - 1]}, 16", f"sadd {cols[c]}, {cols[c]}, {t}"]
    return lines + [f"sand {x[j]}, {cols[len(u) + j]}, 0xffff" for j in range(len(x))]
