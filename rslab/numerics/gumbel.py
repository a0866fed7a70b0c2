"""Gumbel noise pipelines ``u → g = −log2(−log2 u)`` as the kernels compute them.

Each pipeline is named and returns float32; ``trace(u)`` returns every
intermediate, for per-value investigations. With ``fl`` the fast ``log2``
(a ``FastLog2``):

* ``naive``:   ``t = −fl(u)``, ``g = −fl(t)``. The first log's zero plateau
  (u just below 1) gives ``t = 0`` and ``g = +inf``.
* ``scaled``:  ``t = −(fl(u·c) − log2 c)``: the first layer's input is scaled
  by a constant ``c < 1`` so it stays below the plateau, and the constant is
  compensated. Unlike a clamp it sends no interval of ``u`` to one value (the first log's
  output steps still merge a few neighbouring lattice uniforms near ``u = 1``).
  ``g = −fl(t)``: the second log still has its plateau at ``t ≈ 1``.
* ``div(k)``:  same ``t``; ``g = −(fl(t/k) + log2 k)`` moves the second log's
  plateau to ``t ≈ k`` (``div8`` and ``div14`` are ``div(8)``, ``div(14)``).
* ``rangered``: same ``t``; the second log by exponent range reduction
  (``rslab.numerics.range_reduction``): no input of the fast log is near 1, so
  the plateau has no mass at all.
* ``precise``: float64 ``−log2(−log2 u)``, rounded once to float32.

Every float operation between the logs is float32, as on the core; the
constants ``c``, ``log2 c`` and ``log2 k`` are float32 values computed on the host.
"""

from __future__ import annotations

import functools
import re

import numpy as np

from rslab.numerics.fastlog import DEFAULT_FASTLOG2, FastLog2, precise_log2
from rslab.numerics.range_reduction import rangered_parts
from rslab.numerics.rng import UNIFORM_BITS, all_uniforms, uniform_from_index

SCALE_GRID_BITS = 10
"""The first-layer scale ``c`` is a multiple of ``2^-SCALE_GRID_BITS`` (a short constant)."""
LATTICE_CHUNK = 1 << 20
"""Lattice points per pass of ``on_lattice`` (temporaries that stay in cache)."""
SCALE_CHECK_POINTS = 1 << 16
"""How many of the largest lattice uniforms ``first_layer_scale`` checks (t grows fast below)."""


def _as_u(u) -> np.ndarray:
    arr = np.asarray(u)
    if arr.dtype != np.float32:
        raise ValueError(f"u must be a float32 array, got dtype {arr.dtype}")
    return arr


@functools.lru_cache(maxsize=32)
def first_layer_scale(log2: FastLog2 = DEFAULT_FASTLOG2) -> float:
    """The first layer's scale ``c``: the largest multiple of ``2^-SCALE_GRID_BITS`` such that

    every lattice uniform ``u`` gives ``u·c`` below the plateau of ``log2`` and a
    positive, finite ``t = −(fl(u·c) − log2 c)``. Returns 1.0 if ``log2`` has no plateau.
    """
    lo, _ = log2.plateau()
    if np.isnan(lo):
        return 1.0
    top = all_uniforms()[-SCALE_CHECK_POINTS:]
    step = 2.0**-SCALE_GRID_BITS
    c = np.floor(lo / step) * step
    while c > 0.5:
        uc = top * np.float32(c)
        t = -(log2(uc) - np.float32(np.log2(c)))
        if np.all(uc < lo) and np.all(np.isfinite(t)) and np.all(t > 0):
            return float(c)
        c -= step
    raise ValueError("no first-layer scale in (0.5, 1) keeps t positive for this log2")


def second_layer_parts(t, divisor: float | None, log2: FastLog2):
    """The second layer from t: ``(tk, l2, g)`` with tk = t/k, l2 = fl(tk), g = −(l2 + log2 k).

    ``divisor=None`` is the plain second log (tk = t, g = −fl(t)). All float32.
    """
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        if divisor is None:
            l2 = log2(t)
            return t, l2, -l2
        k = np.float32(divisor)
        tk = t / k
        l2 = log2(tk)
        return tk, l2, -(l2 + np.float32(np.log2(np.float64(k))))


def second_layer(t, divisor: float | None, log2: FastLog2, out=None) -> np.ndarray:
    """g from the first layer's output t (see ``second_layer_parts``), in place in ``out`` (a
    float32 array of t's shape) if given: the same float32 operations, so the same bits."""
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        if divisor is None:
            return np.negative(log2(t), out=out)
        k = np.float32(divisor)
        l2 = log2(np.divide(t, k, out=out))  # t/k in out until g replaces it
        np.add(l2, np.float32(np.log2(np.float64(k))), out=l2)
        return np.negative(l2, out=out)


class NoisePipeline:
    """A named noise pipeline ``u (float32) → g (float32)``; ``trace(u)`` gives intermediates."""

    def __init__(self, name: str, log2: FastLog2, divisor: float | None, scaled: bool):
        self.name = name
        self.log2 = log2
        self.divisor = divisor
        self.scaled = scaled
        self.scale = first_layer_scale(log2) if scaled else 1.0

    def __repr__(self):
        return f"NoisePipeline({self.name!r})"

    def __call__(self, u) -> np.ndarray:
        return self.trace(u)["g"]

    def trace(self, u) -> dict[str, np.ndarray]:
        """All intermediates (float32): ``u``, ``uc``, ``l1`` (first log), ``t``, ``tk``, ``l2``,
        ``g``."""
        u = _as_u(u)
        uc, l1, t = self.first_layer(u)
        tk, l2, g = self.second_layer(t)
        return {"u": u, "uc": uc, "l1": l1, "t": t, "tk": tk, "l2": l2, "g": g}

    def first_layer(self, u):
        """``(uc, l1, t)`` from the float32 uniforms ``u``: the (scaled) input, the first log
        and ``t``."""
        fl = self.log2
        with np.errstate(invalid="ignore", divide="ignore"):
            if self.scaled:
                uc = u * np.float32(self.scale)
                l1 = fl(uc)
                return uc, l1, -(l1 - np.float32(np.log2(self.scale)))
            l1 = fl(u)
            return u, l1, -l1

    def first_layer_into(self, u, out) -> np.ndarray:
        """``first_layer``'s t from ``u``, written into ``out`` (float32, u's shape): the same
        float32 operations in place, so the same bits."""
        with np.errstate(invalid="ignore", divide="ignore"):
            if not self.scaled:
                return np.negative(self.log2(u), out=out)
            l1 = self.log2(np.multiply(u, np.float32(self.scale), out=out))  # uc in out
            np.subtract(l1, np.float32(np.log2(self.scale)), out=l1)
            return np.negative(l1, out=out)

    def second_layer(self, t):
        """``(tk, l2, g)`` from the first layer's ``t`` (see ``second_layer_parts``)."""
        return second_layer_parts(t, self.divisor, self.log2)

    def second_layer_into(self, t, out) -> np.ndarray:
        """The second layer's g from ``t``, written into ``out`` (float32, t's shape)."""
        return second_layer(t, self.divisor, self.log2, out=out)


@functools.lru_cache(maxsize=1)
def lattice() -> np.ndarray:
    """``all_uniforms()``, computed once per process (read-only)."""
    u = all_uniforms()
    u.setflags(write=False)
    return u


@functools.lru_cache(maxsize=2)
def lattice_first_layer(log2: FastLog2, scaled: bool) -> np.ndarray:
    """``t`` of every lattice uniform (read-only): the first layer is the same for every
    divisor (and ``rangered``) under one ``log2``, so it is computed once per process."""
    first = NoisePipeline("first layer", log2, None, scaled)
    u = lattice()
    t = np.empty_like(u)
    for s in range(0, u.size, LATTICE_CHUNK):
        first.first_layer_into(u[s:s + LATTICE_CHUNK], t[s:s + LATTICE_CHUNK])
    t.setflags(write=False)
    return t


def on_lattice(pipeline, chunk: int = LATTICE_CHUNK) -> np.ndarray:
    """``pipeline``'s g for every lattice uniform, in lattice order (float32, 2^24 values), on
    ``chunk`` points at a time: a fast-log pipeline's second layer on its shared first layer
    (the same bits as ``pipeline(all_uniforms())``), any other callable on the uniforms."""
    shared = isinstance(pipeline, NoisePipeline) and pipeline.log2 is not None
    x = lattice_first_layer(pipeline.log2, pipeline.scaled) if shared else lattice()
    out = np.empty(x.size, np.float32)
    for s in range(0, x.size, chunk):
        part = x[s:s + chunk]
        if shared:
            pipeline.second_layer_into(part, out[s:s + chunk])
        else:
            out[s:s + chunk] = pipeline(part)
    return out


class RangeReducedPipeline(NoisePipeline):
    """``rangered``: the scaled first layer, then the range-reduced second log (``tk`` is ``m``)."""

    def __init__(self, log2: FastLog2):
        super().__init__("rangered", log2, None, scaled=True)

    def second_layer(self, t):
        with np.errstate(invalid="ignore", divide="ignore"):
            return rangered_parts(t, self.log2)

    def second_layer_into(self, t, out) -> np.ndarray:
        out[...] = self.second_layer(t)[2]
        return out


class _TwoLogPipeline(NoisePipeline):
    """``g = −L(−L(u))`` for a precise log ``L`` (no fast log, no scaling, no divisor)."""

    def __init__(self, name: str):
        super().__init__(name, None, None, scaled=False)

    def neg_log2(self, x) -> np.ndarray:
        raise NotImplementedError

    def trace(self, u) -> dict[str, np.ndarray]:
        u = _as_u(u)
        t = self.neg_log2(u)
        g = self.neg_log2(t)
        return {"u": u, "t": t.astype(np.float32), "g": g.astype(np.float32)}


class PrecisePipeline(_TwoLogPipeline):
    """The float64 reference ``g = −log2(−log2 u)``, rounded once to float32."""

    def __init__(self):
        super().__init__("precise")

    def neg_log2(self, x) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return -np.log2(np.asarray(x, dtype=np.float64))


class ExactLogPipeline(_TwoLogPipeline):
    """``g = −precise_log2(−precise_log2 u)``: the Exact path's float32 pipeline."""

    def __init__(self):
        super().__init__("exact")

    def neg_log2(self, x) -> np.ndarray:
        return -precise_log2(x)


_DIV = re.compile(r"^div\(\s*([^)]+?)\s*\)$|^div(\d+(?:\.\d+)?)$")


def parse_divisor(name: str) -> float | None:
    """The divisor named by ``div(<float>)`` / ``div<int>``, or None for other names."""
    m = _DIV.match(name)
    if not m:
        return None
    text = m.group(1) or m.group(2)
    try:
        k = float(text)
    except ValueError:
        raise ValueError(f"noise name {name!r}: divisor {text!r} is not a number") from None
    if not np.isfinite(k) or k <= 0:
        raise ValueError(f"noise name {name!r}: divisor must be positive and finite, got {k}")
    return k


@functools.lru_cache(maxsize=64)
def check_divisor(k: float, log2: FastLog2 = DEFAULT_FASTLOG2) -> None:
    """ValueError unless ``div(k)`` gives finite noise at the extreme lattice uniforms.

    The core uses ``k`` as a float32 constant; ``t/k`` must be a normal float32 (the fast log
    flushes subnormals to 0, so ``g`` would be +inf) and finite, for the first layer's whole
    range of ``t`` (largest at the smallest uniform, smallest among the largest ones).
    """
    lattice = 2**UNIFORM_BITS
    u = uniform_from_index(np.r_[0, np.arange(lattice - SCALE_CHECK_POINTS, lattice)])
    first = NoisePipeline("first layer", log2, None, scaled=True).trace(u)["t"]
    with np.errstate(over="ignore"):
        k32 = np.float32(k)
        g = second_layer(first, k, log2)
    if np.isfinite(k32) and k32 > 0 and np.isfinite(g).all():
        return
    t_min, t_max = float(first.min()), float(first.max())
    low = t_max / float(np.finfo(np.float32).max)
    high = t_min / float(np.finfo(np.float32).tiny)
    raise ValueError(f"divisor {k:g} (float32 {k32}) gives non-finite noise: t/k must be a "
                     f"normal float32 for t in [{t_min:.3g}, {t_max:.3g}], so k must lie in "
                     f"about [{low:.3g}, {high:.3g}]")


def get_noise(name: str, *, log2: FastLog2 | None = None) -> NoisePipeline:
    """The pipeline named ``naive``, ``scaled``, ``div8``, ``div14``, ``div(<float>)``,
    ``rangered``, ``precise`` (float64 reference) or ``exact`` (precise float32 logs), using
    ``log2`` (default ``DEFAULT_FASTLOG2``) as the fast log."""
    if not isinstance(name, str):
        raise ValueError(f"name must be a string, got {type(name).__name__}")
    if log2 is not None and not isinstance(log2, FastLog2):
        raise ValueError(f"log2 must be a FastLog2, got {type(log2).__name__}")
    fl = DEFAULT_FASTLOG2 if log2 is None else log2
    key = name.strip().lower()
    if key == "precise":
        return PrecisePipeline()
    if key == "exact":
        return ExactLogPipeline()
    if key == "naive":
        return NoisePipeline("naive", fl, None, scaled=False)
    if key == "scaled":
        return NoisePipeline("scaled", fl, None, scaled=True)
    if key == "rangered":
        return RangeReducedPipeline(fl)
    k = parse_divisor(key)
    if k is not None:
        try:
            check_divisor(k, fl)
        except ValueError as exc:
            raise ValueError(f"noise name {name!r}: {exc}") from None
        label = f"div{int(k)}" if k == int(k) else f"div({k:g})"
        return NoisePipeline(label, fl, k, scaled=True)
    raise ValueError(
        f"unknown noise name {name!r}; expected naive, scaled, div8, div14, div(<float>), "
        "rangered, precise"
    )


def lattice_noise(name: str) -> np.ndarray:
    """The pipeline ``name``'s noise g on every lattice uniform, in lattice order (float32;
    ``on_lattice``: the same bits as ``get_noise(name)(all_uniforms())``)."""
    return on_lattice(get_noise(name))


def plateau_share(u, name: str) -> float:
    """Share of the uniforms ``u`` where the pipeline's second log returns 0."""
    trace = get_noise(name).trace(u)
    return float(np.count_nonzero(trace.get("l2", np.ones(1)) == 0) / np.size(u))


def sample_uniforms(n: int, seed: int, start: int = 0) -> np.ndarray:
    """``n`` uniforms from the hardware RNG (key ``seed``, counters ``start … start+n−1``)."""
    from rslab.numerics.rng import hw_random_words, uniform_from_words

    if not isinstance(n, (int, np.integer)) or n <= 0:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    if not isinstance(seed, (int, np.integer)) or not 0 <= seed < 2**32:
        raise ValueError(f"seed must be an integer in [0, 2^32), got {seed!r}")
    if not isinstance(start, (int, np.integer)) or start < 0 or start + n > 2**32:
        raise ValueError("start + n must fit 32-bit counters")
    ctr = np.arange(start, start + n, dtype=np.uint64).astype(np.uint32)
    return uniform_from_words(hw_random_words(np.uint32(seed), ctr))
