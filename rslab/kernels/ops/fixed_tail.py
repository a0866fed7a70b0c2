"""The fixed-point inverse CDF's tail: from a row's stored block sums to its token, exact.

Straight-line code (once per row, after the inverse CDF's pass has stored every block's
float32 sum; :mod:`rslab.numerics.fixed_invcdf`), integer arithmetic in 16-bit limbs
(:mod:`rslab.kernels.ops.fixed_point`):

1. :func:`row_max_lines`: the largest block sum M into ``s24`` (a row with M = 0 is empty:
   the caller tests ``s24``); its exponent E and ``2^(30−E)``;
2. :func:`block_lines`, per group of 128 blocks: the blocks quantised, their four limbs
   summed by ``vred.add`` (exact) and stored in the group-limb rows; those normalised,
   scanned over the groups and normalised again: the exact group prefixes D (stored, a 0
   before lane 0), Q₁ the last; ``X₁ = ⌊U₁·Q₁/2^96⌋`` on the scalar unit (U₁: the row's
   words of tokens 0–2); the group k* is the first with D > X₁; in it, the blocks' limbs
   scanned, plus D_{k*−1}, normalised: the block J (into ``BLOCK``) is the first past X₁;
3. :func:`lane_lines`: block J's weights recomputed as the pass computed them
   (:func:`rslab.kernels.ops.invcdf.weights_lines`), quantised below their own largest,
   scanned and normalised (Q₂ the last lane); ``X₂`` from the words of tokens 3–5; the lane
   is the first past it, the token ``128·J + lane`` into ``TOKEN``.

Registers: the vector roles of :data:`VECTORS` (``v0``–``v40``) and the caller's ``zero``,
``m`` (row max), ``r`` (1/s) and ``log2e``; scalars ``s6``, ``s7``, ``s11``–``s31``; the row's
key in ``s3``. Memory: the row's :class:`~rslab.kernels.ops.invcdf.Layout` and the tail's
own rows (:class:`Rows`, :func:`scratch_bytes` from a base).
"""

from __future__ import annotations

from rslab.kernels.ops.fixed_point import (
    DIGITS,
    F32_2P32,
    LIMBS,
    carry_lines,
    exponent_lines,
    greater_lines,
    interleave,
    limb_lines,
    product_lines,
    quantise_lines,
    scans_lines,
)
from rslab.kernels.ops.invcdf import TOKEN, weights_lines
from rslab.machine.bf16 import LANES

ROW = 4 * LANES
_V = ("x", "lo", "hi", "tmp", "l", "w", "q", "m16", "c2p32", "p1", "p2", "a", "qhi", "qlo",
      *(f"L{j}" for j in range(LIMBS)), *(f"D{j}" for j in range(DIGITS)),
      *(f"X{j}" for j in range(DIGITS)), *(f"N{j}" for j in range(DIGITS)),
      "gt", "eq", "t", "carry", "word", "iota", "mx")
VECTORS = {name: f"v{i}" for i, name in enumerate(_V)}
"""The tail's vector registers by role (the loops are done: v0–v46 are free)."""
WORDS, Q_DIGITS, X_DIGITS = ("s11", "s12", "s13"), ("s14", "s15", "s16", "s17", "s18"), (
    "s19", "s20", "s21", "s22", "s23")
U_DIGITS, ACC, PROD = ("s26", "s27", "s28", "s29", "s30", "s31"), "s7", "s6"
GROUP_SETS = ((("a", "qhi", "qlo", "L0", "L1", "L2", "L3"), ("s12", "s13", "s14", "s15")),
              (("N0", "N1", "N2", "N3", "N4", "D0", "D1"), ("s16", "s17", "s18", "s19")),
              (("D2", "D3", "D4", "X0", "X1", "X2", "X3"), ("s20", "s21", "s22", "s23")))
"""Register sets of the groups quantised side by side (the prefix's registers are free
then)."""
BLOCK = "s25"
"""Block J (where :func:`~rslab.kernels.ops.invcdf.weights_lines` reads it)."""


def scratch_bytes() -> int:
    """VMEM the tail needs beyond the inverse CDF's: the words, DIGITS prefix rows (a 0
    word before lane 0 each), LIMBS group-limb rows and DIGITS scan rows (zeros, slot)."""
    return ROW + DIGITS * (ROW + 4) + LIMBS * ROW + DIGITS * 2 * ROW


def row_max_lines(layout, v) -> list:
    """The largest block sum into s24; the constants and the row's six words stored."""
    lines = [f"vli {v['m16']}, 0xffff", f"vli {v['c2p32']}, {F32_2P32}",
             f"vld {v['mx']}, [s0 + {layout.sums}]"]
    for g in range(1, layout.groups):
        lines += [f"vld {v['a']}, [s0 + {layout.sums + ROW * g}]",
                  f"vmax.f32 {v['mx']}, {v['mx']}, {v['a']}"]
    return lines + [f"vred.max s24, {v['mx']}"]

def block_lines(layout, rows, v, tag) -> list:
    """Steps 1–3 of the module docstring: block J into ``BLOCK``."""
    L0_3 = [v[f"L{j}"] for j in range(LIMBS)]
    D, X, N = ([v[f"{c}{j}"] for j in range(DIGITS)] for c in "DXN")
    lines = exponent_lines("s24", "s11", v["p1"], v["p2"], ("s12", "s13", "s14"),
                           f"b{tag}")
    lines += [f"viota {v['iota']}", f"vrand {v['word']}, {v['iota']}, s3",
              f"vst {v['word']}, [s0 + {rows.words}]"]
    lines += groups_prefix_lines(layout, rows, v)
    lines += level_x_lines(WORDS, rows, layout.groups - 1, X, v, 0)
    lines += greater_lines(D, X, v["gt"], v["eq"], v["t"]) + [f"vred.argmax s11, {v['gt']}"]
    # the group k* = s11: D_{k*−1} (the 0 before lane 0 for k* = 0), then its blocks
    lines += ["sshl s12, s11, 2"]
    lines += [f"sld {Q_DIGITS[j]}, [s12 + {rows.prefix(j) - 4}]" for j in range(DIGITS)]
    lines += ["sshl s13, s11, 9", f"vld {v['a']}, [s13 + {layout.sums}]"]
    lines += quantise_lines(v["a"], v["p1"], v["p2"], v["qhi"], v["qlo"], v["c2p32"])
    lines += limb_lines(v["qhi"], v["qlo"], L0_3, v["m16"])
    lines += offset_scan_lines(L0_3, rows, v)
    lines += greater_lines(D, X, v["gt"], v["eq"], v["t"]) + [f"vred.argmax s12, {v['gt']}"]
    return lines + [f"sshl {BLOCK}, s11, 7", f"sadd {BLOCK}, {BLOCK}, s12"]

def groups_prefix_lines(layout, rows, v) -> list:
    """Every group's blocks quantised and their limbs summed (:func:`group_limbs_lines`,
    interleaved over ``GROUP_SETS``), then the groups' prefix (:func:`prefix_lines`) stored
    and left in the ``D`` digits."""
    L0_3 = [v[f"L{j}"] for j in range(LIMBS)]
    D, N = ([v[f"{c}{j}"] for j in range(DIGITS)] for c in "DN")
    lines = []
    for first in range(0, layout.groups, len(GROUP_SETS)):
        groups = range(first, min(layout.groups, first + len(GROUP_SETS)))
        chains = [group_limbs_lines(layout, rows, g, v, regs, scalars)
                  for g, (regs, scalars) in zip(groups, GROUP_SETS, strict=False)]
        lines += interleave(*chains)
    lines += [f"vld {L0_3[j]}, [s0 + {rows.limbs(j)}]" for j in range(LIMBS)]
    lines += [f"vcvt.f2u {r}, {r}" for r in L0_3]
    return lines + prefix_lines(L0_3, D, N, layout, rows, v)


def group_limbs_lines(layout, rows, g: int, v, regs, scalars) -> list:
    """Group g's blocks quantised, their limbs summed and stored in the group-limb rows
    (``regs``: seven vector roles of ``v``, ``scalars``: four)."""
    a, hi, lo, *limbs = (v[r] for r in regs)
    lines = [f"vld {a}, [s0 + {layout.sums + ROW * g}]"]
    lines += quantise_lines(a, v["p1"], v["p2"], hi, lo, v["c2p32"])
    lines += limb_lines(hi, lo, limbs, v["m16"])
    lines += [f"vred.add {scalars[j]}, {limbs[j]}" for j in range(LIMBS)]
    return lines + [f"sst {scalars[j]}, [s0 + {rows.limbs(j) + 4 * g}]"
                    for j in range(LIMBS)]

def prefix_lines(limbs, D, N, layout, rows, v) -> list:
    """uint32 ``limbs`` of the groups → the normalised inclusive prefix, stored as
    integers in the prefix rows and left in ``D`` as float32 digits."""
    lines = carry_lines(limbs, N, v["m16"], v["carry"])
    lines += [f"vcvt.u2f {r}, {r}" for r in N]
    X = [v[f"X{j}"] for j in range(DIGITS)]
    lines += scans_lines(N, D, X, rows.scans)
    lines += [f"vcvt.f2u {r}, {r}" for r in D]
    lines += carry_lines(D, N, v["m16"], v["carry"])
    lines += [f"vst {N[j]}, [s0 + {rows.prefix(j)}]" for j in range(DIGITS)]
    return lines + [f"vcvt.u2f {D[j]}, {N[j]}" for j in range(DIGITS)]

def offset_scan_lines(limbs, rows, v) -> list:
    """The blocks' float32 ``limbs`` scanned, plus the offset digits in ``Q_DIGITS``,
    normalised into ``D`` (float32 digits)."""
    D, N = ([v[f"{c}{j}"] for j in range(DIGITS)] for c in "DN")
    lines = scans_lines(limbs, N[:LIMBS], D[:LIMBS], rows.scans)
    lines += [f"vcvt.f2u {N[j]}, {N[j]}" for j in range(LIMBS)]
    for j in range(DIGITS):
        lines += [f"vbcast {v['t']}, {Q_DIGITS[j]}"]
        lines += ([f"vadd.u32 {N[j]}, {N[j]}, {v['t']}"] if j < LIMBS
                  else [f"vmov {N[j]}, {v['t']}"])
    lines += carry_lines(N, D, v["m16"], v["carry"])
    return lines + [f"vcvt.u2f {r}, {r}" for r in D]

def level_x_lines(words, rows, last_lane: int, X, v, first_word: int) -> list:
    """Q's digits from lane ``last_lane`` of the prefix rows, U from the row's words
    ``first_word``.. (most significant first): ``X = ⌊U·Q/2^96⌋`` as float32 digits."""
    lines = [f"sld {Q_DIGITS[j]}, [s0 + {rows.prefix(j) + 4 * last_lane}]"
             for j in range(DIGITS)]
    lines += [f"sld {w}, [s0 + {rows.words + 4 * (first_word + i)}]"
              for i, w in enumerate(words)]
    lines += product_lines(words, Q_DIGITS, X_DIGITS, U_DIGITS, ACC, PROD)
    for j in range(DIGITS):
        lines += [f"vbcast {X[j]}, {X_DIGITS[j]}", f"vcvt.u2f {X[j]}, {X[j]}"]
    return lines

def lane_lines(kind, layout, rows, v, tag, level_x=level_x_lines) -> list:
    """Step 4: the lane of block J, the token into ``TOKEN`` (``level_x``: how X₂ is
    computed, :func:`level_x_lines`' arguments)."""
    L0_3 = [v[f"L{j}"] for j in range(LIMBS)]
    D, X, N = ([v[f"{c}{j}"] for j in range(DIGITS)] for c in "DXN")
    lines = weights_lines(kind, layout, v)
    lines += [f"vred.max s24, {v['w']}"]
    lines += exponent_lines("s24", "s11", v["p1"], v["p2"], ("s12", "s13", "s14"),
                            f"l{tag}")
    lines += [f"vmov {v['a']}, {v['w']}"]
    lines += quantise_lines(v["a"], v["p1"], v["p2"], v["qhi"], v["qlo"], v["c2p32"])
    lines += limb_lines(v["qhi"], v["qlo"], L0_3, v["m16"])
    lines += scans_lines(L0_3, N[:LIMBS], D[:LIMBS], rows.scans)
    lines += [f"vcvt.f2u {N[j]}, {N[j]}" for j in range(LIMBS)]
    lines += carry_lines(N[:LIMBS], D, v["m16"], v["carry"])
    lines += [f"vst {D[j]}, [s0 + {rows.prefix(j)}]" for j in range(DIGITS)]
    lines += [f"vcvt.u2f {r}, {r}" for r in D]
    lines += level_x(WORDS, rows, LANES - 1, X, v, 3)
    lines += greater_lines(D, X, v["gt"], v["eq"], v["t"]) + [f"vred.argmax s12, {v['gt']}"]
    return lines + [f"sshl s13, {BLOCK}, 7", f"sadd {TOKEN}, s13, s12"]


class Rows:
    """Byte addresses of the tail's rows from ``base``: the words, the prefix rows (lane 0
    after a 0 word) and the group-limb rows."""

    def __init__(self, base: int):
        self.words = base
        self._prefix = base + ROW
        self._limbs = self._prefix + DIGITS * (ROW + 4)
        start = self._limbs + LIMBS * ROW
        self.scans = [start + k * 2 * ROW for k in range(DIGITS)]

    def prefix(self, j: int) -> int:
        return self._prefix + j * (ROW + 4) + 4

    def limbs(self, j: int) -> int:
        return self._limbs + j * ROW
