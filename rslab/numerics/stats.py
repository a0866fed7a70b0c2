"""Goodness of fit of Gumbel noise against the base-2 law, sampled and exact.

The ideal law of ``g = −log2(−log2 U)`` is ``F(x) = 2^(−2^(−x))``. Tests:

* **bins**: ``k`` equiprobable bins (default 64) with interior edges
  ``x_j = −log2(−log2(j/k))``; Pearson χ² with ``k − 1`` degrees of freedom.
* **KS**: the sup distance between the empirical CDF and ``F`` (ties handled
  exactly: a discrete sample's CDF jumps at each distinct value).
* **special values** (zeros, ±inf, NaN) and same-input absolute error percentiles
  against a reference pipeline.

The **exact** versions enumerate all 2^24 lattice uniforms (each has probability
2^-24): bin probabilities ``p_i``, the noncentrality ``λ = Σ (p_i − q_i)² / q_i``,
the χ² law at any ``N`` (mean ``Σ p_i(1 − p_i)/q_i + N·λ ≈ (k − 1) + N·λ``,
approximated by ``ncx2(k − 1, N·λ)``), the exact KS distance and the tail
exceedance ``P(g > y)``. They work on the sorted outputs: the bins and the special values
are binary searches, and the KS distance (``ks_sorted``) evaluates F only where its
largest term can be. F increases, so a block of sorted positions has terms at most
``(last + 1)/n − F(first)`` and ``F(last) − first/n``; the blocks whose bound is below a
term already found are skipped. Every term evaluated has the plain formula's roundings, so
the distance is the same bits as term by term over every position (``ks_all``).

Building blocks (``bin_edges``, ``bin_counts``, ``chi2_from_counts``,
``ks_statistic``, ``ks_from_counts``, ``ks_pvalue``) take plain arrays, so a
chunked Monte Carlo engine can aggregate counts and reuse them.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np
from scipy import stats as sps

N_BINS = 64
LATTICE = 1 << 24
ERROR_PERCENTILES = (50.0, 99.0, 99.9, 100.0)
_CHUNK = 1 << 20


def _check_k(k):
    if not isinstance(k, (int, np.integer)) or k < 2:
        raise ValueError(f"k (number of bins) must be an integer ≥ 2, got {k!r}")


def _check_n(n, name="n"):
    if not isinstance(n, (int, np.integer)) or n <= 0:
        raise ValueError(f"{name} must be a positive integer, got {n!r}")


def _as_float(g, name="g") -> np.ndarray:
    arr = np.asarray(g)
    if arr.dtype.kind != "f":
        raise ValueError(f"{name} must be a float array, got dtype {arr.dtype}")
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty")
    return arr.reshape(-1)


def gumbel2_cdf(x, out=None) -> np.ndarray:
    """``F(x) = 2^(−2^(−x))`` (float64), in place in ``out`` (a float64 array of x's shape) if
    given: the same four float64 operations either way, so the same bits."""
    out = np.negative(x, out=out, dtype=np.float64)
    with np.errstate(over="ignore"):
        np.exp2(out, out=out)
        np.negative(out, out=out)
        return np.exp2(out, out=out)


def gumbel2_sf(x) -> np.ndarray:
    """``1 − F(x)``, accurate in the upper tail (``−expm1(−ln2·2^(−x))``)."""
    with np.errstate(over="ignore"):
        return -np.expm1(-np.log(2.0) * np.exp2(-np.asarray(x, np.float64)))


def gumbel2_ppf(p) -> np.ndarray:
    """The quantile function ``−log2(−log2 p)``."""
    with np.errstate(divide="ignore"):
        return -np.log2(-np.log2(np.asarray(p, np.float64)))


@functools.lru_cache(maxsize=16)
def chi2_law(df: int, nc: float, fpc: float = 1.0):
    """The law of a χ² statistic on ``df`` degrees of freedom with noncentrality ``nc``:
    ``ncx2(df, nc)`` (``chi2(df)`` at ``nc = 0``) for independent draws, ``fpc ·
    ncx2(df, nc/fpc)`` when every count varies less by the finite-population factor ``fpc``
    (draws without replacement: ``montecarlo.stream_fpc``)."""
    fpc = check_fpc(fpc)
    return sps.ncx2(df, nc / fpc, scale=fpc) if nc > 0 else sps.chi2(df, scale=fpc)


def check_fpc(fpc) -> float:
    """A finite-population factor: a number in (0, 1] (``ValueError`` naming it otherwise)."""
    if not 0 < fpc <= 1:
        raise ValueError(f"fpc must be in (0, 1], got {fpc!r}")
    return float(fpc)


def _edges(k: int) -> np.ndarray:
    e = gumbel2_ppf(np.arange(1, k) / k)
    e.setflags(write=False)
    return e


def bin_edges(k: int = N_BINS) -> np.ndarray:
    """The ``k − 1`` interior edges of ``k`` equiprobable bins (float64, increasing)."""
    _check_k(k)
    return _edges(int(k))


def bin_counts(g, k: int = N_BINS) -> np.ndarray:
    """Counts of ``g`` in the ``k`` equiprobable bins (bin i is ``[x_i, x_{i+1})``; −inf in the
    first, +inf in the last). NaN raises ``ValueError``."""
    g = _as_float(g)
    edges = bin_edges(k)
    counts = np.zeros(k, np.int64)
    for s in range(0, g.size, _CHUNK):
        part = g[s:s + _CHUNK].astype(np.float64)
        if np.isnan(part).any():
            raise ValueError("g contains NaN; count them with special_counts")
        counts += np.bincount(np.searchsorted(edges, part, side="right"), minlength=k)
    return counts


@dataclass(frozen=True)
class TestResult:
    """A test statistic with its p-value."""

    statistic: float
    pvalue: float
    df: int | None = None
    n: int | None = None


def chi2_from_counts(counts, probs=None) -> TestResult:
    """Pearson χ² of observed ``counts`` against ``probs`` (default: equiprobable), via scipy."""
    c = np.asarray(counts)
    if c.ndim != 1 or c.size < 2 or c.dtype.kind not in "iu":
        raise ValueError("counts must be a 1-D integer array with at least 2 bins")
    if (c < 0).any():
        raise ValueError(f"counts must be non-negative, got {c.min()} in bin {int(np.argmin(c))}")
    n = int(c.sum())
    _check_n(n, "total count")
    q = np.full(c.size, 1.0 / c.size) if probs is None else np.asarray(probs, np.float64)
    if q.shape != c.shape or np.any(q <= 0) or not np.isclose(q.sum(), 1.0):
        raise ValueError("probs must be positive, sum to 1 and match counts")
    res = sps.chisquare(c, n * q)
    return TestResult(float(res.statistic), float(res.pvalue), c.size - 1, n)


def ks_from_counts(values, counts, total: int | None = None) -> float:
    """KS distance ``sup |F_n − F|`` of a discrete law: ``counts[i]`` copies of ``values[i]``.

    ``values`` need not be sorted or distinct; ±inf are allowed.
    """
    v = _as_float(values, "values").astype(np.float64)
    c = np.asarray(counts).reshape(-1)
    if c.shape != v.shape or c.dtype.kind not in "iu" or np.any(c < 0):
        raise ValueError("counts must be non-negative integers, one per value")
    if np.isnan(v).any():
        raise ValueError("values contain NaN")
    order = np.argsort(v, kind="stable")
    v, c = v[order], c[order]
    n = int(c.sum())
    if total is not None:
        _check_n(total, "total")
        if total < n:
            raise ValueError(f"total ({total}) must be at least the sum of counts ({n})")
        n = int(total)
    _check_n(n, "total count")
    cum = np.cumsum(c)
    f = gumbel2_cdf(v)
    d_plus = np.max(cum / n - f)
    d_minus = np.max(f - (cum - c) / n)
    return float(max(d_plus, d_minus, 0.0))


def ks_statistic(g) -> float:
    """KS distance between the sample ``g`` and ``F`` (exact for ties; NaN raises)."""
    g = np.sort(_as_float(g).astype(np.float64))
    if np.isnan(g[-1]):
        raise ValueError("g contains NaN; count them with special_counts")
    return ks_sorted(g)


KS_BLOCK = 64
"""Sorted positions per block of ``ks_sorted``'s bound."""
KS_SLACK = 2.0**-32
"""Added to every block's bound: far above the roundings it must cover (≈ 2^-50)."""


def ks_sorted(sorted_g, total: int | None = None) -> float:
    """KS distance for an already sorted sample without NaN: the largest of 0, ``(i + 1)/n − F``
    and ``F − i/n`` over the positions ``i`` (F in float64).

    The terms at the ends of the blocks of ``KS_BLOCK`` positions come first; then only the
    blocks whose bound (module docstring) reaches the largest of them. A law within about
    ``KS_BLOCK/n`` of F everywhere leaves over a quarter of the blocks in: then every
    position is evaluated (``ks_all``)."""
    n = sorted_g.size if total is None else total
    if not sorted_g.size:
        return 0.0
    first = np.arange(0, sorted_g.size, KS_BLOCK)
    last = np.minimum(first + (KS_BLOCK - 1), sorted_g.size - 1)
    f_first, f_last = gumbel2_cdf(sorted_g[first]), gumbel2_cdf(sorted_g[last])
    best = max(0.0, _ks_terms(first, f_first, n), _ks_terms(last, f_last, n))
    bound = np.maximum((last + 1.0) / n - f_first, f_last - first / n)
    blocks = np.flatnonzero(bound + KS_SLACK >= best)
    if blocks.size > first.size // 4:
        return max(best, ks_all(sorted_g, n))
    pos = (blocks[:, None] * KS_BLOCK + np.arange(KS_BLOCK)).reshape(-1)
    pos = pos[pos < sorted_g.size]
    return max(best, _ks_terms(pos, gumbel2_cdf(sorted_g[pos]), n))


def _ks_terms(pos, f, n: int) -> float:
    """The largest KS term at the sorted positions ``pos`` with F there ``f``."""
    i = pos.astype(np.float64)
    return float(max(((i + 1) / n - f).max(), (f - i / n).max()))


def ks_all(sorted_g, n: int) -> float:
    """``ks_sorted`` term by term over every position (chunked, in place in two buffers)."""
    best = 0.0
    f, line = np.empty(min(_CHUNK, sorted_g.size)), np.empty(min(_CHUNK, sorted_g.size))
    for s in range(0, sorted_g.size, _CHUNK):
        part = sorted_g[s:s + _CHUNK]
        m = part.size
        fc, lc = gumbel2_cdf(part, out=f[:m]), line[:m]
        np.add(_ramp(m), s + 1, out=lc)
        np.divide(lc, n, out=lc)
        best = max(best, float(np.subtract(lc, fc, out=lc).max()))
        np.add(_ramp(m), s, out=lc)
        np.divide(lc, n, out=lc)
        best = max(best, float(np.subtract(fc, lc, out=lc).max()))
    return best


@functools.lru_cache(maxsize=2)
def _ramp(m: int) -> np.ndarray:
    """0, 1, …, m − 1 as float64 (read-only)."""
    r = np.arange(m, dtype=np.float64)
    r.setflags(write=False)
    return r


def ks_pvalue(d: float, n: int) -> float:
    """Two-sided KS p-value for distance ``d`` at sample size ``n`` (``scipy.stats.kstwo``)."""
    _check_n(n)
    return float(sps.kstwo.sf(d, n))


def ks_test(g) -> TestResult:
    """KS test of a sample against ``F``."""
    g = _as_float(g)
    d = ks_statistic(g)
    return TestResult(d, ks_pvalue(d, g.size), None, g.size)


def special_counts(g) -> dict[str, int]:
    """How many exact zeros, +inf, −inf and NaN are in ``g``."""
    g = _as_float(g)
    return {"zeros": int(np.count_nonzero(g == 0)),
            "pos_inf": int(np.count_nonzero(g == np.inf)),
            "neg_inf": int(np.count_nonzero(g == -np.inf)),
            "nan": int(np.count_nonzero(np.isnan(g)))}


def sorted_special_counts(s) -> dict[str, int]:
    """``special_counts`` of a sorted array (NaN last), from binary searches (for values of its
    own dtype: NumPy would copy a float32 ``s`` to compare it with float64 ones)."""
    zero, inf = s.dtype.type(0), s.dtype.type(np.inf)
    nan = s.size - int(np.searchsorted(s, inf, side="right"))
    return {"zeros": int(np.searchsorted(s, zero, side="right") - np.searchsorted(s, zero)),
            "pos_inf": s.size - nan - int(np.searchsorted(s, inf)),
            "neg_inf": int(np.searchsorted(s, -inf, side="right")), "nan": nan}


def search_sorted(s, x, side: str = "left") -> np.ndarray:
    """``np.searchsorted(s, x, side)`` for float64 ``x`` without the float64 copy of a float32
    ``s`` that NumPy makes: each x rounded to the float32 that splits ``s`` the same way, up for
    ``left`` (``s < x`` ⟺ ``s < ↑x``), down for ``right`` (``s ≤ x`` ⟺ ``s ≤ ↓x``)."""
    x = np.asarray(x, np.float64)
    if s.dtype != np.float32:
        return np.searchsorted(s, x, side=side)
    up = side == "left"
    with np.errstate(over="ignore"):
        x32 = x.astype(np.float32)
        off = x32 < x if up else x32 > x
        x32 = np.where(off, np.nextafter(x32, np.float32(np.inf if up else -np.inf)), x32)
    return np.searchsorted(s, x32, side=side)


def abs_errors(g, ref) -> np.ndarray:
    """Same-input absolute errors ``|g − ref|`` (float64; equal infinities → 0, NaN → inf)."""
    g = _as_float(g).astype(np.float64)
    r = _as_float(ref, "ref").astype(np.float64)
    if g.shape != r.shape:
        raise ValueError(f"g and ref must have the same shape, got {g.shape} and {r.shape}")
    with np.errstate(invalid="ignore"):
        err = np.abs(g - r)
    err[g == r] = 0.0
    err[np.isnan(err)] = np.inf
    return err


def error_percentiles(g, ref, q=ERROR_PERCENTILES) -> dict[str, float]:
    """Percentiles (``P50``, ``P99``, ``P99.9``, ``max`` by default) of ``|g − ref|``."""
    err = abs_errors(g, ref)
    vals = np.percentile(err, q, method="inverted_cdf")
    return {_pname(p): float(v) for p, v in zip(q, vals, strict=True)}


def _pname(p: float) -> str:
    return "max" if p == 100 else f"P{p:g}"


def validate_sample(g, ref=None, k: int = N_BINS) -> dict:
    """One validation row: n, special counts, KS and χ² with p-values, error percentiles.

    Non-finite values are excluded from the KS and χ² tests and reported in the counts.
    """
    g = _as_float(g)
    row = {"n": int(g.size), **special_counts(g)}
    fin = g[np.isfinite(g)]
    ks = ks_test(fin)
    chi = chi2_from_counts(bin_counts(fin, k))
    row.update(ks=ks.statistic, ks_p=ks.pvalue, chi2=chi.statistic, chi2_p=chi.pvalue)
    if ref is not None:
        row.update(error_percentiles(g, ref))
    return row


@dataclass
class ExactStats:
    """Exact statistics of a pipeline over all 2^24 lattice uniforms (each of probability 2^-24)."""

    name: str
    probs: np.ndarray
    """Exact bin probabilities ``p_i``."""
    ks: float
    """Exact KS distance between the pipeline's law and ``F``."""
    special: dict
    """Exact counts (out of 2^24) of zeros, ±inf, NaN."""
    sorted_g: np.ndarray = field(repr=False)
    """All 2^24 outputs, sorted (NaN last)."""
    errors: dict | None = None
    """Same-input absolute error percentiles against the precise pipeline, if computed."""

    @property
    def k(self) -> int:
        return self.probs.size

    @property
    def lam(self) -> float:
        """Noncentrality per sample ``λ = Σ (p_i − q_i)² / q_i``."""
        q = 1.0 / self.k
        return float(np.sum((self.probs - q) ** 2) / q)

    def expected_chi2(self, n: int) -> float:
        """Exact ``E[χ²]`` at ``n`` samples: ``Σ p_i(1 − p_i)/q_i + n·λ``."""
        _check_n(n)
        q = 1.0 / self.k
        return float(np.sum(self.probs * (1 - self.probs)) / q + n * self.lam)

    def chi2_law(self, n: int):
        """The predicted χ² law at ``n`` samples: ``scipy.stats.ncx2(k − 1, n·λ)``."""
        _check_n(n)
        return sps.ncx2(self.k - 1, n * self.lam)

    def expected_count(self, what: str, n: int) -> float:
        """Expected number of ``what`` (``zeros``, ``pos_inf`` …) among ``n`` samples."""
        _check_n(n)
        return self.special[what] * n / LATTICE

    def tail(self, y) -> np.ndarray:
        """Exact ``P(g > y)`` for each ``y`` (NaN outputs count as not exceeding)."""
        y = np.asarray(y, np.float64)
        fin = self.sorted_g[: LATTICE - self.special["nan"]]
        return 1.0 - search_sorted(fin, y, side="right") / LATTICE


def lattice_outputs(pipeline, chunk: int | None = None) -> np.ndarray:
    """The pipeline's output for every lattice uniform, in lattice order (float32, 2^24 values;
    ``gumbel.on_lattice``, by default on its cache-sized chunks)."""
    from rslab.numerics.gumbel import LATTICE_CHUNK, on_lattice

    return on_lattice(pipeline, chunk or LATTICE_CHUNK)


def exact_stats(pipeline, k: int = N_BINS, errors: bool = True, g=None) -> ExactStats:
    """Enumerate all 2^24 uniforms through ``pipeline`` (or use its outputs ``g``) and summarise."""
    _check_k(k)
    own = g is None
    g = lattice_outputs(pipeline) if own else _as_float(g)
    if g.size != LATTICE:
        raise ValueError(f"g must hold the {LATTICE} lattice outputs, got {g.size}")
    err = None
    if errors:
        ref = lattice_outputs(_precise())
        err = error_percentiles(g, ref)
    s = g if own else g.copy()
    s.sort(kind="stable")  # lattice outputs are nearly sorted: a merge sort is fastest
    special = sorted_special_counts(s)
    nan = special["nan"]
    fin = s[: s.size - nan]
    cuts = search_sorted(fin, bin_edges(k), side="left")
    counts = np.diff(np.concatenate([[0], cuts, [fin.size]]))
    probs = counts / LATTICE
    ks = ks_sorted(fin, LATTICE) if fin.size else 1.0
    return ExactStats(getattr(pipeline, "name", "custom"), probs, ks, special, s, err)


@functools.lru_cache(maxsize=1)
def _precise():
    from rslab.numerics.gumbel import get_noise

    return get_noise("precise")
