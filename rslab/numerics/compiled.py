"""The SFU models and two lattice loops compiled with numba (the optional ``fast`` extra).

The simulator calls an SFU model on a FIFO's worth of rows at a time (about 6 × 128 lanes),
where a NumPy evaluation is some thirty ufunc calls, each with a fixed cost: about 20 µs a
call, most of it overhead. Here each model is one loop over the elements, doing what the NumPy
path of :mod:`rslab.numerics.fastlog` does to one element, in the same order and in the same
types (int64 integer datapath, one float64 → float32 rounding), so every result has the same
bits; ``tests/test_compiled.py`` checks it over random bit patterns, every special value
and several configurations.

``count`` is the Monte Carlo's histogram of lattice indices: NumPy sorts each chunk of
indices before ``np.add.at`` (unsorted, the scatter misses the cache at every index), a loop
needs no sort; the counts are the same integers. ``ks_line`` is the KS distance's two maxima
over a law's atoms in one pass (NumPy: five passes over up to 2^24 float64 values); the
same float64 operations, so the same value.

Without numba (or with ``RSLAB_COMPILED=0`` in the environment) ``kernels()`` is None and the
models take their NumPy path; :func:`numpy_only` switches the kernels off for a block (the
tests and the benchmark compare both paths with it). Compiled code is cached beside this file
(numba's ``cache=True``, or numba's user cache where this folder is read-only): the first
process compiles (about a second), later ones load it (about 0.4 s a kernel, once per
process).
"""

import functools
import os
from contextlib import contextmanager

import numpy as np


@functools.cache
def kernels() -> dict | None:
    """``{"exp2", "log2", "count", "ks_line", "numba"}``: the compiled kernels and numba's
    version, or None without numba (or when ``RSLAB_COMPILED=0``). Built at the first call, so
    a process that runs none of them (a command line's help, say) does not import numba."""
    if os.environ.get("RSLAB_COMPILED", "1") == "0":
        return None
    try:
        import numba
    except ImportError:
        return None

    def jit(fn):
        """``fn`` compiled, cached on disk where numba finds a writable place (else per
        process)."""
        try:
            return numba.njit(cache=True, nogil=True)(fn)
        except RuntimeError:  # numba: "cannot cache function …: no locator available"
            return numba.njit(nogil=True)(fn)

    @jit
    def exp2(x, out, tables, knobs):
        """``FastExp2`` of float32 ``x`` into ``out``; ``tables`` rows C0·2^(P−coeff_bits),
        C1, C2; ``knobs`` (segment shift, offset mask, product cut, P)."""
        seg_shift, d_mask, cut = knobs[0], knobs[1], knobs[2]
        scale = 2.0 ** -knobs[3]
        work = np.empty(1, np.float64)
        bits = work.view(np.int64)
        for i in range(x.size):
            xf = np.float64(x[i])
            if xf != xf:
                out[i] = np.nan
            elif xf >= 128.0:
                out[i] = np.inf
            elif xf < -126.0:
                out[i] = 0.0
            else:
                n = np.floor(xf)
                fx = min(np.int64(np.rint((xf - n) * 4294967296.0)), 4294967295)
                seg = fx >> seg_shift
                d = (fx & d_mask) >> 6
                acc = (tables[1, seg] * d) >> cut
                acc += (((d * d) >> 26) * tables[2, seg]) >> cut
                work[0] = np.float64(acc + tables[0, seg]) * scale
                bits[0] = (bits[0] + (np.int64(n) << 52)) & -(1 << 29)
                out[i] = np.float32(work[0])

    @jit
    def log2(bits, out, tables, knobs):
        """``FastLog2`` (output rounding to nearest) of the float32 bit patterns ``bits`` into
        ``out``; ``tables`` rows base, C1, C2 by index ``bits >> hi_shift``; ``knobs`` (the
        plan's, :mod:`rslab.numerics.fastlog`): index shift, offset mask, degree, square cut,
        each product's cut as (widen, half, drop), the output fraction's drop, the plateau
        threshold, P."""
        hi_shift, d_mask, degree, square_cut = knobs[0], knobs[1], knobs[2], knobs[3]
        w1, h1, r1, w2, h2, r2 = knobs[4], knobs[5], knobs[6], knobs[7], knobs[8], knobs[9]
        drop, threshold = knobs[10], knobs[11]
        scale = 2.0 ** -knobs[12]
        for i in range(bits.size):
            b = np.int64(bits[i])
            if not 0x00800000 <= b < 0x7F800000:  # not a positive normal
                exponent = (b >> 23) & 0xFF
                if exponent == 0:
                    out[i] = -np.inf
                elif b == 0x7F800000:
                    out[i] = np.inf
                else:
                    out[i] = np.nan
                continue
            hi = b >> hi_shift
            d = b & d_mask
            acc = tables[0, hi] + ((((tables[1, hi] * d) << w1) + h1) >> r1)
            if degree == 2:
                acc += (((tables[2, hi] * ((d * d) >> square_cut)) << w2) + h2) >> r2
            if drop:
                acc = ((acc + (1 << (drop - 1))) >> drop) << drop
            if -threshold < acc < threshold:
                acc = 0
            out[i] = np.float32(np.float64(acc) * scale)

    @jit
    def count(k, counts):
        """``counts[i] += 1`` for every index ``i`` in ``k`` (a histogram, in place)."""
        for i in range(k.size):
            counts[k[i]] += 1

    @jit
    def ks_line(f, after, total):
        """``(max(after/total − f), max(f[1:] − after[:-1]/total))``, each NaN if a term is
        (as NumPy's ``max``), the second −inf for one value."""
        plus = minus = -np.inf
        previous = 0.0
        for i in range(f.size):
            a = after[i] / total
            d = a - f[i]
            if d > plus or d != d:
                plus = d
            if i:
                d = f[i] - previous
                if d > minus or d != d:
                    minus = d
            previous = a
        return plus, minus

    return {"exp2": exp2, "log2": log2, "count": count, "ks_line": ks_line,
            "numba": numba.__version__}


_active = [True]
"""False inside ``numpy_only``."""


def kernel(name: str):
    """The compiled kernel ``name`` when compiled kernels are on, else None."""
    built = kernels() if _active[0] else None
    return built[name] if built else None


def backend() -> str:
    """What runs the compiled kernels' work now: ``"numba <version>"`` or ``"numpy"``."""
    built = kernels() if _active[0] else None
    return f"numba {built['numba']}" if built else "numpy"


@contextmanager
def numpy_only():
    """The SFU models and the lattice loops take their NumPy path inside the block."""
    saved, _active[0] = _active[0], False
    try:
        yield
    finally:
        _active[0] = saved


def cut_knobs(widen, drop, half) -> tuple[int, int, int]:
    """A product cut (left shift ``widen``, or add ``half`` and shift right ``drop``) as the
    three integers ``(widen, half, drop)`` of ``((v << widen) + half) >> drop``."""
    return (int(widen) if widen is not None else 0, int(half) if half is not None else 0,
            int(drop) if drop is not None else 0)


def as_knobs(*values) -> np.ndarray:
    """A kernel's integer knobs as one int64 array (one argument: less call overhead)."""
    return np.array(values, np.int64)
