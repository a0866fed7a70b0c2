"""A bit-exact emulator of the core's fast ``log2`` (and ``exp2``) special-function unit.

Model (in the style of table-driven SFU interpolators, Oberman & Siu 2005)
-------------------------------------------------------------------------
A positive normal float32 ``x = 2^e · m`` with ``m ∈ [1, 2)`` is split into the
exponent ``e``, a segment index ``i`` (the top ``index_bits`` mantissa bits) and
the offset ``dx`` (the remaining ``23 − index_bits`` mantissa bits, as an integer
``D`` worth ``D · 2^-23``). Per segment a polynomial ``c0 + c1·dx + c2·dx²``
(minimax fit of ``log2`` on the segment, coefficients rounded to fixed point)
gives the fraction ``log2 m``. The datapath is integer:

* ``C0, C1, C2``: coefficients with ``c0_bits``, ``c1_bits``, ``c2_bits`` fractional
  bits (rounded to nearest, or truncated if ``coeff_rounding='truncate'``);
* ``dx²`` is kept to ``square_bits`` fractional bits (truncated, like a squarer
  that drops its low product bits);
* the products ``C1·D`` and ``C2·dx²`` are cut to ``product_bits`` fractional
  bits (two's-complement truncation, i.e. toward −∞, or round-to-nearest);
* the sum ``Y = e·2^P + C0 + T1 + T2`` (``P = product_bits``) is exact in int64;
* **near-one zero plateau**: if ``|Y·2^-P| < zero_threshold`` the result is
  exactly ``0`` — an *absolute* flaw around ``x = 1`` only (the small-result
  path of the unit flushes), which is what makes ``log2(t/8) + 3`` remove the
  zeros that ``log2(t)`` returns for ``t`` near 1;
* the result ``Y·2^-P`` is rounded once to float32 (``output_rounding``:
  nearest-even or toward zero).

``output_fraction_bits`` switches to the *per-binade* variant: the fraction is
rounded to a fixed-point LSB of ``2^-output_fraction_bits`` before the exponent
is added, in every binade (the model of ``reference/fastlog.md``). Then
``log2(x/8) + 3 == log2(x)`` bit for bit and a power-of-two divisor changes
nothing.

Error model (stated like ARM optimized-routines' ``log2f``)
-----------------------------------------------------------
Absolute, not relative: away from the plateau the error is the segment's
minimax error plus the coefficient and truncation errors, bounded by
``FastLog2.error_bound()`` (≈ 8·10^-5 ≈ 2^-13.6 for the calibrated defaults:
the truncated 14-bit ``c0`` and 9-bit ``c1`` give every segment its own offset and
slope error, the quadratic fit itself is good to ≈ 6·10^-8); near 1 the *relative*
error is unbounded (results of magnitude below ``zero_threshold`` are 0). Special inputs: ``+0``,
``−0`` and subnormals → ``−inf`` (flush to zero), negative or NaN → NaN,
``+inf`` → ``+inf``. Deterministic: integer arithmetic plus one float rounding.

``precise_log2`` / ``precise_exp2`` are the Exact path's functions: float32
results rounded correctly from a float64 evaluation (ambiguous cases re-evaluated
in extended precision). ``fast_exp2`` is the SFU's ``exp2`` (same datapath style);
``fast_rcp`` is the correctly rounded float32 reciprocal.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from rslab.numerics import compiled

_MANT_BITS = 23
_CHUNK = 1 << 16
_ROUNDINGS = ("nearest", "truncate")
_OUTPUT_ROUNDINGS = ("nearest", "toward_zero")


def _as_f32(x, name="x") -> np.ndarray:
    arr = np.asarray(x)
    if arr.dtype != np.float32:
        raise ValueError(f"{name} must be a float32 array, got dtype {arr.dtype}")
    return arr


def _check_int(name, value, low, high, span=""):
    """``value`` is an integer (not a bool) in ``[low, high]`` (``span``: that range in words);
    else ValueError naming it."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) \
            or not low <= value <= high:
        raise ValueError(f"{name} must be an integer in {low}..{high}"
                         + (f" ({span})" if span else "") + f", got {value!r}")


def _remez(f, lo: float, hi: float, degree: int, grid: int = 4097, iters: int = 12) -> np.ndarray:
    """Minimax polynomial of ``degree`` for ``f`` on ``[lo, hi]`` in the variable ``s = x − lo``.

    Returns coefficients ``[c0, c1, …]`` (float64), the classic Remez exchange on a
    fixed grid (deterministic: only NumPy float64 arithmetic).
    """
    s = np.linspace(0.0, hi - lo, grid)
    fs = f(lo + s)
    n = degree + 2
    k = np.arange(n)
    ref = np.round((1 - np.cos(np.pi * k / (n - 1))) / 2 * (grid - 1)).astype(int)
    coef = np.zeros(degree + 1)
    for _ in range(iters):
        xs = s[ref]
        a = np.column_stack([xs**j for j in range(degree + 1)] + [(-1.0) ** k])
        sol = np.linalg.solve(a, fs[ref])
        coef = sol[:-1]
        err = fs - np.polyval(coef[::-1], s)
        # pick n alternating extrema: split the grid at sign changes, take each run's extremum
        sign = np.sign(err)
        runs = np.flatnonzero(np.diff(sign) != 0) + 1
        bounds = np.concatenate([[0], runs, [grid]])
        pairs = zip(bounds[:-1], bounds[1:], strict=True)
        ext = [b0 + int(np.argmax(np.abs(err[b0:b1]))) for b0, b1 in pairs]
        if len(ext) < n:
            break
        while len(ext) > n:  # drop the smaller end extremum
            ext = ext[1:] if abs(err[ext[0]]) < abs(err[ext[-1]]) else ext[:-1]
        new = ext
        if np.array_equal(new, ref):
            break
        ref = np.asarray(new)
    return coef


def _quantize(v: np.ndarray, bits: int, rounding: str) -> np.ndarray:
    scaled = np.ldexp(v, bits)
    q = np.floor(scaled + 0.5) if rounding == "nearest" else np.floor(scaled)
    return q.astype(np.int64)


def _round_f64_to_f32(y: np.ndarray, rounding: str) -> np.ndarray:
    """Round float64 values to float32 (nearest-even, or toward zero via the bit pattern)."""
    if rounding == "toward_zero":
        y = (y.view(np.int64) & _TRUNCATE_F32).view(np.float64)
    return y.astype(np.float32)


@dataclass(frozen=True)
class FastLog2:
    """Configuration of the SFU ``log2`` model; calling it evaluates the model bit-exactly.

    ``FastLog2()(x)`` takes a float32 array and returns a float32 array. Every
    field is one knob of the datapath (see the module docstring). The defaults
    are the calibrated values (``rslab.numerics.calibration``).
    """

    index_bits: int = 6
    """Top mantissa bits that select the segment: ``2^index_bits`` segments per binade."""
    degree: int = 2
    """Polynomial degree per segment (1 = linear interpolation, 2 = quadratic)."""
    c0_bits: int = 14
    """Fractional bits of the constant coefficient ``c0``."""
    c1_bits: int = 9
    """Fractional bits of the linear coefficient ``c1``."""
    c2_bits: int = 10
    """Fractional bits of the quadratic coefficient ``c2``."""
    coeff_rounding: str = "truncate"
    """How the minimax coefficients are cut to their widths: ``nearest`` or ``truncate``."""
    square_bits: int = 22
    """Fractional bits kept of ``dx²`` (the squarer truncates the rest)."""
    product_bits: int = 22
    """Fractional bits of the products and of the accumulator (intermediate truncation width)."""
    product_rounding: str = "truncate"
    """How products are cut to ``product_bits``: ``truncate`` (toward −∞) or ``nearest``."""
    output_rounding: str = "nearest"
    """Final rounding of ``e + fraction`` to float32: ``nearest`` (even) or ``toward_zero``."""
    zero_threshold: float = 71747 * 2.0**-22
    """Results with magnitude below this come out as exactly 0 (the near-one plateau); 0 = none."""
    output_fraction_bits: int | None = None
    """If set, the per-binade variant: fraction rounded to ``2^-bits`` before adding ``e``."""

    def __post_init__(self):
        _check_int("index_bits", self.index_bits, 1, 12)
        _check_int("degree", self.degree, 1, 2)
        for name in ("c0_bits", "c1_bits", "c2_bits", "square_bits", "product_bits"):
            _check_int(name, getattr(self, name), 4, 40)
        if self.c0_bits > self.product_bits:
            raise ValueError("c0_bits must not exceed product_bits")
        if self.square_bits > 2 * _MANT_BITS:
            raise ValueError(f"square_bits must be at most {2 * _MANT_BITS}")
        if self.coeff_rounding not in _ROUNDINGS:
            raise ValueError(f"coeff_rounding must be one of {_ROUNDINGS}")
        if self.product_rounding not in _ROUNDINGS:
            raise ValueError(f"product_rounding must be one of {_ROUNDINGS}")
        if self.output_rounding not in _OUTPUT_ROUNDINGS:
            raise ValueError(f"output_rounding must be one of {_OUTPUT_ROUNDINGS}")
        thr = self.zero_threshold
        if isinstance(thr, bool) or not isinstance(thr, (int, float, np.integer, np.floating)) \
                or not 0 <= thr < 1:
            raise ValueError(f"zero_threshold must be a number in [0, 1), got {thr!r}")
        if self.output_fraction_bits is not None:
            _check_int("output_fraction_bits", self.output_fraction_bits, 1, self.product_bits,
                       "1..product_bits")

    def replace(self, **changes) -> FastLog2:
        """A copy with some fields changed."""
        return dataclasses.replace(self, **changes)

    @property
    def segments(self) -> int:
        """Number of segments per binade."""
        return 1 << self.index_bits

    def tables(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The fixed-point coefficient tables ``(C0, C1, C2)`` (int64, one entry per segment)."""
        return _tables(self)

    def __call__(self, x) -> np.ndarray:
        x = _as_f32(x)
        flat = np.ascontiguousarray(x).reshape(-1)
        out = np.empty(flat.shape, np.float32)
        bits = flat.view(np.uint32)
        plan = _plan(self)
        kernel = compiled.kernel("log2") if self.output_rounding == "nearest" else None
        if kernel is not None:
            kernel(bits, out, plan.table, plan.knobs)
            return out.reshape(x.shape)
        work = _Workspace(min(_CHUNK, flat.size))
        for start in range(0, flat.size, _CHUNK):
            sl = slice(start, start + _CHUNK)
            self._eval(bits[sl], out[sl], plan, work)
        return out.reshape(x.shape)

    def _accumulate(self, bits, plan, work):
        """``Y = e·2^P + C0 + T1 [+ T2]`` (int64) of the positive normal inputs among ``bits``.

        The tables are indexed by the top ``9 + index_bits`` bits (sign, exponent, segment),
        ``e·2^P + C0`` already added in the first, so each term is one gather.
        """
        m = bits.size
        hi, d, acc, tmp = work.hi[:m], work.d[:m], work.acc[:m], work.tmp[:m]
        np.right_shift(bits, plan.hi_shift, hi)
        np.bitwise_and(bits, plan.d_mask, d)
        plan.base.take(hi, out=acc, mode="wrap")  # every index in range: the fast path
        plan.c1.take(hi, out=tmp, mode="wrap")
        np.multiply(tmp, d, tmp)
        np.add(acc, _cut(tmp, plan.t1_cut), acc)
        if self.degree == 2:
            np.multiply(d, d, d)
            np.right_shift(d, plan.square_cut, d)
            plan.c2.take(hi, out=tmp, mode="wrap")
            np.multiply(tmp, d, tmp)
            np.add(acc, _cut(tmp, plan.t2_cut), acc)
        if self.output_fraction_bits is not None:
            # e·2^P is a multiple of 2^drop, so rounding the sum rounds the fraction alone
            drop = self.product_bits - self.output_fraction_bits
            if drop:
                acc += 1 << (drop - 1)
                np.right_shift(acc, drop, out=acc)
                np.left_shift(acc, drop, out=acc)
        return acc

    def _eval(self, bits, out, plan, work):
        """The model on ``bits`` (uint32 views of float32), written into ``out`` (float32)."""
        y = self._accumulate(bits, plan, work)
        m = bits.size
        if plan.threshold:
            # |y| < thr  ⟺  0 ≤ y + thr − 1 ≤ 2·thr − 2 (as unsigned)
            tmp = work.tmp[:m]
            np.add(y, plan.threshold_less_one, tmp)
            keep = np.greater_equal(tmp.view(np.uint64), plan.plateau_span, work.mask[:m])
            np.multiply(y, keep, y)
        if self.output_rounding == "nearest":
            # int64 · 2^-P in float64 is exact (|y| < 2^53), then one rounding to float32
            np.multiply(y, plan.scale, out, casting="unsafe")
        else:
            out[...] = _round_f64_to_f32(y.astype(np.float64) * plan.scale, self.output_rounding)
        # positive normal ⟺ 0x00800000 ≤ bits < 0x7F800000 (one wrapping subtraction)
        low = np.subtract(bits, _SMALLEST_NORMAL, work.u32[:m])
        if np.maximum.reduce(low) >= _NORMAL_SPAN:
            special = np.greater_equal(low, _NORMAL_SPAN, work.mask[:m])
            sb = bits[special]
            ex, ng, man = (sb >> 23) & 0xFF, sb >> 31 != 0, sb & 0x7FFFFF
            res = np.full(ex.shape, np.nan, np.float32)
            res[(ex == 0xFF) & ~ng & (man == 0)] = np.inf
            res[ex == 0] = -np.inf  # ±0 and subnormals (flushed to zero)
            out[special] = res
        return out

    def plateau(self) -> tuple[float, float]:
        """The float32 interval ``[a, b]`` around 1 on which the model returns exactly 0."""
        return plateau_interval(self)

    def error_bound(self, samples_per_segment: int = 4096) -> float:
        """Largest absolute error against float64 ``log2`` on ``[1, 2)`` (dense float32 grid)."""
        n = self.segments * samples_per_segment
        idx = np.linspace(0, (1 << _MANT_BITS) - 1, n).astype(np.uint32)
        x = (np.uint32(127 << 23) | idx).view(np.float32)
        x = x[np.abs(np.log2(x.astype(np.float64))) >= 2 * self.zero_threshold]
        return float(np.max(np.abs(self(x) - np.log2(x.astype(np.float64)))))


@functools.lru_cache(maxsize=64)
def _tables(cfg: FastLog2):
    seg = cfg.segments
    h = 1.0 / seg
    c0 = np.zeros(seg, np.int64)
    c1 = np.zeros(seg, np.int64)
    c2 = np.zeros(seg, np.int64)
    for i in range(seg):
        coef = _remez(np.log2, 1.0 + i * h, 1.0 + (i + 1) * h, cfg.degree)
        c0[i] = _quantize(coef[0:1], cfg.c0_bits, cfg.coeff_rounding)[0]
        c1[i] = _quantize(coef[1:2], cfg.c1_bits, cfg.coeff_rounding)[0]
        if cfg.degree == 2:
            c2[i] = _quantize(coef[2:3], cfg.c2_bits, cfg.coeff_rounding)[0]
    for arr in (c0, c1, c2):
        arr.setflags(write=False)
    return c0, c1, c2



class _Workspace:
    """The buffers of one evaluation (a chunk's worth each)."""

    def __init__(self, m: int):
        self.hi, self.d, self.acc, self.tmp = np.empty((4, m), np.int64)
        self.u32 = np.empty(m, np.uint32)
        self.mask = np.empty(m, bool)


_SMALLEST_NORMAL = np.array(0x00800000, np.uint32)
_NORMAL_SPAN = np.array(0x7F000000, np.uint32)


class _Cut(NamedTuple):
    """A product cut to ``P`` fractional bits: shifted left by ``widen``, or right by ``drop``
    after adding ``half`` (round to nearest; None: truncate); 0-d int64 constants."""

    widen: np.ndarray | None
    drop: np.ndarray | None
    half: np.ndarray | None


def _int64(value: int) -> np.ndarray:
    return np.array(value, np.int64)


def _make_cut(shift: int, rounding: str) -> _Cut:
    """The cut of a product with ``shift`` fractional bits more than ``P`` (negative: fewer)."""
    if shift <= 0:
        return _Cut(_int64(-shift), None, None)
    half = _int64(1 << (shift - 1)) if rounding == "nearest" else None
    return _Cut(None, _int64(shift), half)


def _cut(v: np.ndarray, cut: _Cut) -> np.ndarray:
    """``v`` (int64, in place) cut to ``P`` fractional bits."""
    if cut.widen is not None:
        return np.left_shift(v, cut.widen, v)
    if cut.half is not None:
        np.add(v, cut.half, v)
    return np.right_shift(v, cut.drop, v)


class _Plan(NamedTuple):
    """What one evaluation of a ``FastLog2`` reads besides its input: the tables and the
    constants derived from the knobs (0-d arrays: NumPy reads them faster than scalars)."""

    base: np.ndarray
    """``e·2^P + C0·2^(P − c0_bits)`` indexed by ``bits >> (23 − index_bits)``: the sign, the
    8 exponent bits and the segment (entries of negative inputs are unused)."""
    c1: np.ndarray
    """``C1`` by the same index."""
    c2: np.ndarray
    """``C2`` by the same index."""
    hi_shift: np.ndarray
    """``23 − index_bits``: the input's bits above it are the index."""
    d_mask: np.ndarray
    """The offset ``D``'s bits: the mantissa below the segment."""
    t1_cut: _Cut
    """``C1·D`` to ``P`` bits."""
    square_cut: np.ndarray
    """``D²`` to ``square_bits``: the bits the squarer drops."""
    t2_cut: _Cut
    """``C2·dx²`` to ``P`` bits."""
    threshold: int
    """``zero_threshold`` in units of ``2^-P``, rounded up (0: no plateau)."""
    threshold_less_one: np.ndarray
    """``threshold − 1``."""
    plateau_span: np.ndarray
    """``2·threshold − 1``: ``|Y| < threshold`` ⟺ ``Y + threshold − 1`` below it (unsigned)."""
    scale: np.ndarray
    """``2^-P``."""
    table: np.ndarray
    """``base``, ``c1`` and ``c2`` as the rows of one array (the compiled kernel's)."""
    knobs: np.ndarray
    """The constants as the compiled kernel reads them (:mod:`rslab.numerics.compiled`)."""


@functools.lru_cache(maxsize=8)
def _plan(cfg: FastLog2) -> _Plan:
    """The ``_Plan`` of ``cfg``, once per configuration."""
    c0, c1, c2 = _tables(cfg)
    s, p = cfg.index_bits, cfg.product_bits
    hi = np.arange(1 << (9 + s), dtype=np.int64)
    seg = hi & ((1 << s) - 1)
    e = ((hi >> s) & 0xFF) - 127
    table = np.stack(((e << p) + (c0[seg] << (p - cfg.c0_bits)), c1[seg], c2[seg]))
    table.setflags(write=False)
    thr = int(np.ceil(cfg.zero_threshold * 2.0**p)) if cfg.zero_threshold > 0 else 0
    hi_shift, square_cut = _MANT_BITS - s, 2 * _MANT_BITS - cfg.square_bits
    d_mask = (1 << hi_shift) - 1
    t1 = _make_cut(cfg.c1_bits + _MANT_BITS - p, cfg.product_rounding)
    t2 = _make_cut(cfg.c2_bits + cfg.square_bits - p, cfg.product_rounding)
    drop = p - cfg.output_fraction_bits if cfg.output_fraction_bits is not None else 0
    knobs = compiled.as_knobs(hi_shift, d_mask, cfg.degree, square_cut, *compiled.cut_knobs(*t1),
                              *compiled.cut_knobs(*t2), drop, thr, p)
    return _Plan(*table, np.array(hi_shift, np.uint32), np.array(d_mask, np.uint32), t1,
                 _int64(square_cut), t2, thr, _int64(thr - 1),
                 np.array(max(2 * thr - 1, 0), np.uint64), np.array(2.0**-p), table, knobs)


@functools.lru_cache(maxsize=64)
def plateau_interval(cfg: FastLog2) -> tuple[float, float]:
    """Smallest and largest float32 ``x`` around 1 with ``cfg(x) == 0`` (scanning outward).

    The scan covers every float32 between the ideal plateau edges ±4·2^-16 of
    margin, so a plateau that is not an interval would show up as a wider one.
    """
    if cfg(np.ones(1, np.float32))[0] != 0:
        return (np.nan, np.nan)
    width = max(cfg.zero_threshold, 2.0**-(cfg.output_fraction_bits or 30))
    lo = np.float32(2.0 ** (-(width * 1.5 + 2.0**-14)))
    hi = np.float32(2.0 ** (width * 1.5 + 2.0**-14))
    lo_bits, hi_bits = lo.view(np.uint32), hi.view(np.uint32)
    xs = np.arange(lo_bits, hi_bits + 1, dtype=np.uint32).view(np.float32)
    zero = xs[cfg(xs) == 0]
    return float(zero.min()), float(zero.max())


def _correctly_rounded(fn, x) -> np.ndarray:
    """float32 ``fn(x)`` rounded correctly from a float64 evaluation (ambiguous cases again)."""
    x = _as_f32(x)
    with np.errstate(all="ignore"):
        r = fn(x.astype(np.float64))
        out = r.astype(np.float32)
        _fix_ambiguous(out, r, x, fn)
    return out


def precise_log2(x) -> np.ndarray:
    """Correctly rounded float32 ``log2`` (the Exact path's log)."""
    return _correctly_rounded(np.log2, x)


def precise_exp2(x) -> np.ndarray:
    """Correctly rounded float32 ``exp2`` (the Exact path's exp2)."""
    return _correctly_rounded(np.exp2, x)


def _fix_ambiguous(out, r64, x, fn):
    """Re-round results whose float64 value lies within 2^-50 (relative) of a float32 midpoint."""
    fin = np.isfinite(out) & (out != 0)
    o = out.astype(np.float64)
    nxt = np.nextafter(out, np.float32(np.inf), dtype=np.float32).astype(np.float64)
    prv = np.nextafter(out, np.float32(-np.inf), dtype=np.float32).astype(np.float64)
    mid_gap = np.minimum(np.abs(r64 - (o + nxt) / 2), np.abs(r64 - (o + prv) / 2))
    amb = fin & (mid_gap <= np.abs(r64) * 2.0**-50)
    if amb.any():
        xl = x[amb].astype(np.longdouble)
        out[amb] = fn(xl).astype(np.float32)


@dataclass(frozen=True)
class FastExp2:
    """The SFU ``exp2`` model: ``2^x = 2^n · 2^f`` with ``f ∈ [0, 1)`` from a table + quadratic.

    ``2^f`` uses ``2^index_bits`` segments, coefficients with ``coeff_bits`` fractional
    bits, products truncated to ``product_bits``; the mantissa is truncated to
    float32. Results below the smallest normal flush to 0, above the largest
    finite float32 give ``+inf``.
    """

    index_bits: int = 6
    coeff_bits: int = 28
    product_bits: int = 28

    def __post_init__(self):
        # C0 is shifted left by product_bits − coeff_bits and the products right by
        # coeff_bits + 26 − product_bits: both shifts must be non-negative, and C1·d must fit int64
        _check_int("index_bits", self.index_bits, 1, 12)
        _check_int("coeff_bits", self.coeff_bits, 8, 36)
        _check_int("product_bits", self.product_bits, self.coeff_bits, self.coeff_bits + 26,
                   "coeff_bits..coeff_bits + 26")

    def __call__(self, x) -> np.ndarray:
        x = _as_f32(x)
        kernel = compiled.kernel("exp2")
        if kernel is not None:
            out = np.empty(x.shape, np.float32)
            plan = _exp2_plan(self)
            kernel(np.ascontiguousarray(x).reshape(-1), out.reshape(-1), plan.table, plan.knobs)
            return out
        xd = x.astype(np.float64).reshape(-1)
        magnitudes = np.bitwise_and(x.reshape(-1).view(np.uint32), _ABS_BITS)
        if not xd.size or np.maximum.reduce(magnitudes) <= _BITS_126:
            return self._finite(xd).reshape(x.shape)  # the usual case: |x| ≤ 126, no NaN
        fin = (xd >= -126) & (xd < 128)  # false for ±inf and NaN too
        out = np.zeros(xd.shape, np.float32)
        out[fin] = self._finite(xd[fin])
        out[np.isnan(xd)] = np.nan
        out[(xd >= 128)] = np.inf
        return out.reshape(x.shape)

    def _finite(self, xf):
        """``2^x`` of float64 ``x`` in [−126, 128) (float32); ``xf`` is overwritten.

        Segment gathers take ``mode="wrap"``, NumPy's fast path, which changes nothing here:
        every index is in range."""
        plan = _exp2_plan(self)
        n = np.floor(xf)
        f = np.subtract(xf, n, xf)
        np.multiply(f, _TWO32, f)
        np.rint(f, f)
        fx = f.astype(np.int64)
        np.minimum(fx, _TOP32, out=fx)  # f to 32 bits
        seg = np.right_shift(fx, plan.seg_shift)
        d = np.bitwise_and(fx, plan.d_mask, fx)
        np.right_shift(d, _SIX, d)  # the multiplier takes 26 − index_bits offset bits of 2^-26
        acc = plan.c1.take(seg, mode="wrap")
        np.multiply(acc, d, acc)
        np.right_shift(acc, plan.cut, acc)
        sq = np.multiply(d, d)
        np.right_shift(sq, _TWENTY_SIX, sq)
        np.multiply(sq, plan.c2.take(seg, mode="wrap"), sq)
        np.right_shift(sq, plan.cut, sq)
        np.add(acc, sq, acc)
        np.add(acc, plan.c0.take(seg, mode="wrap"), acc)
        m = np.multiply(acc, plan.scale, xf)  # exact: acc < 2^53
        e = n.astype(np.int64)
        np.left_shift(e, _EXPONENT_SHIFT, e)
        bits = m.view(np.int64)
        np.add(bits, e, bits)  # ldexp(m, n), the result a normal float64: n added to its exponent
        np.bitwise_and(bits, _TRUNCATE_F32, bits)  # toward zero: float64 bits below float32's
        return m.astype(np.float32)


_ABS_BITS = np.array(0x7FFFFFFF, np.uint32)
_BITS_126 = np.float32(126).view(np.uint32)
"""float32 bits of 126: ``|x| ≤ 126`` ⟺ ``x``'s bits without the sign are at most these."""
_TWO32 = np.array(2.0**32)
_TOP32 = np.array(2**32 - 1, np.int64)
_SIX = np.array(6, np.int64)
_TWENTY_SIX = np.array(26, np.int64)
_EXPONENT_SHIFT = np.array(52, np.int64)
_TRUNCATE_F32 = np.array(-(1 << 29), np.int64)
"""The float64 bits above the 29 that float32's mantissa drops (as int64: all ones above)."""


class _Exp2Plan(NamedTuple):
    """The tables and constants of a ``FastExp2`` (0-d arrays, as ``_Plan``)."""

    c0: np.ndarray
    """``C0·2^(P − coeff_bits)`` per segment: ``C0`` at the accumulator's ``P = product_bits``
    fractional bits."""
    c1: np.ndarray
    c2: np.ndarray
    seg_shift: np.ndarray
    """``32 − index_bits``: the fraction's bits above it are the segment."""
    d_mask: np.ndarray
    """The fraction's bits below the segment."""
    cut: np.ndarray
    """``coeff_bits + 26 − P``: the products ``C·d`` cut to ``P`` bits."""
    scale: np.ndarray
    """``2^-P``."""
    table: np.ndarray
    """``c0``, ``c1`` and ``c2`` as the rows of one array (the compiled kernel's)."""
    knobs: np.ndarray
    """``seg_shift``, ``d_mask``, ``cut`` and ``P`` as the compiled kernel reads them."""


@functools.lru_cache(maxsize=8)
def _exp2_plan(cfg: FastExp2) -> _Exp2Plan:
    """The ``_Exp2Plan`` of ``cfg`` (its minimax tables quantised), once per configuration."""
    seg = 1 << cfg.index_bits
    table = np.zeros((3, seg), np.int64)
    for i in range(seg):
        coef = _remez(np.exp2, i / seg, (i + 1) / seg, 2)
        table[:, i] = _quantize(coef, cfg.coeff_bits, "nearest")
    table[0] <<= cfg.product_bits - cfg.coeff_bits
    table.setflags(write=False)
    s, p = cfg.index_bits, cfg.product_bits
    knobs = compiled.as_knobs(32 - s, (1 << (32 - s)) - 1, cfg.coeff_bits + 26 - p, p)
    return _Exp2Plan(*table, *(_int64(k) for k in knobs[:3]), np.array(2.0**-p), table, knobs)


DEFAULT_FASTLOG2 = FastLog2()
DEFAULT_FASTEXP2 = FastExp2()
LOG2E = np.float32(1.0 / np.log(2.0))
"""The base-change constant float32(1/ln 2): exp(x) = exp2(x·LOG2E)."""


def fast_exp2(x) -> np.ndarray:
    """The SFU's fast ``exp2`` (``DEFAULT_FASTEXP2``) on a float32 array."""
    return DEFAULT_FASTEXP2(x)


def fast_rcp(x) -> np.ndarray:
    """The SFU reciprocal: modelled as the correctly rounded float32 ``1/x``."""
    x = _as_f32(x)
    with np.errstate(divide="ignore"):
        return (np.float32(1) / x).astype(np.float32)
