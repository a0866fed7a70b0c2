"""Chapter 5, *Div8*: exact counts over the lattice, and the plateau width and divisor live.

Every count here is exact over the 2^24-point lattice of uniforms (every ``stride``-th
point, still exact for that sub-lattice), expressed per 2^20 draws as in the note.
"""

import functools

import numpy as np

from rslab import note
from rslab.numerics.fastlog import DEFAULT_FASTLOG2, FastLog2
from rslab.numerics.gumbel import get_noise
from rslab.numerics.rng import all_uniforms
from rslab.viz import numerics_plots as npl
from rslab.viz.controls import float_control

STRIDE = 4
"""Every 4th of the 2^24 lattice uniforms: exact counts at a quarter of the cost."""
TAU_SCALES = (0.25, 0.5, 1.0, 1.5, 2.0, 3.0)
"""The thresholds (× the calibrated τ) of the plateau figure's reference curve."""


@functools.lru_cache(maxsize=64)
def zeros_per_2_20(cfg: FastLog2, stride: int = STRIDE) -> float:
    """Exact count of ``g = 0`` per 2^20 draws of the scaled pipeline under log ``cfg``."""
    u = all_uniforms()[::stride]
    return note.SAMPLES * float(np.mean(get_noise("scaled", log2=cfg)(u) == 0))


def plateau_hits(log2: FastLog2, k: float, stride: int = 1) -> tuple[float, float, float]:
    """For divisor ``k`` (1 = scaled, no divisor): exact fractions of lattice draws with
    ``fl(t/k) = 0`` and with ``g = 0``, and the ideal-law plateau probability."""
    name = "scaled" if k == 1 else f"div({k})"
    tr = get_noise(name, log2=log2).trace(all_uniforms()[::stride])
    a, b = log2.plateau()
    ideal = 2.0 ** (-k * a) - 2.0 ** (-k * b) if not np.isnan(a) else 0.0
    return float(np.mean(tr["l2"] == 0)), float(np.mean(tr["g"] == 0)), ideal


def divisor_error_profile(k: float, log2: FastLog2 = DEFAULT_FASTLOG2,
                          stride: int = STRIDE) -> dict:
    """For divisor ``k`` (1 = scaled): the worst same-input error ``|g − g_precise|`` per bin
    of the second-layer input ``t``, the plateau of ``fl(t/k)``, and the exact counts of
    ``g = 0`` and of plateau hits per 2^20 draws."""
    name = "scaled" if k == 1 else f"div({k})"
    u = all_uniforms()[::stride]
    tr = get_noise(name, log2=log2).trace(u)
    err = np.abs(tr["g"].astype(np.float64) - _precise(stride))
    t = tr["t"].astype(np.float64)
    edges = np.geomspace(1e-3, 25, 200)
    idx = np.clip(np.searchsorted(edges, t) - 1, 0, edges.size - 2)
    worst = np.zeros(edges.size - 1)
    np.maximum.at(worst, idx, err)
    a, b = log2.plateau()
    return {"k": k, "t": np.sqrt(edges[1:] * edges[:-1]), "worst": worst,
            "plateau": (k * a, k * b), "zeros": note.SAMPLES * float(np.mean(tr["g"] == 0)),
            "hits": note.SAMPLES * float(np.mean(tr["l2"] == 0))}


@functools.lru_cache(maxsize=4)
def _precise(stride: int) -> np.ndarray:
    """The precise noise on the sub-lattice (float64), computed once."""
    return get_noise("precise")(all_uniforms()[::stride]).astype(np.float64)


def divisor_caption(k: float, profile: dict) -> str:
    """The live divisor figure's caption: its exact counts."""
    return (f"k = {k:g}: g = 0 {profile['zeros']:,.1f}, plateau hits {profile['hits']:,.1f} "
            "per 2^20 draws")


def plateau_figure(scale: float):
    """Live frame: the log with its zero threshold τ scaled by ``scale``; the exact count of
    zeros of the scaled pipeline as caption."""
    base = DEFAULT_FASTLOG2
    cfg = base.replace(zero_threshold=base.zero_threshold * scale)
    taus = [base.zero_threshold * s for s in TAU_SCALES]
    curve = [zeros_per_2_20(base.replace(zero_threshold=t)) for t in taus]
    here = zeros_per_2_20(cfg)
    return (npl.plot_plateau_frame(cfg, taus, curve, here),
            f"τ = {cfg.zero_threshold:.5f}: {here:,.1f} zeros per 2^20 draws (scaled)")


K_MAX = 32.0
"""The divisor slider's largest value."""
PROFILE_LIMITS = ((1e-3, 1.25 * K_MAX), (1e-6, 20.0))
"""The divisor figure's t and error axes: every divisor of the slider, its plateau and its
worst error (up to ≈ 7, at the smallest t) inside them."""


def divisor_figure(k: float):
    """Live frame: the same-input error of divisor ``k`` against the precise pipeline; the
    exact zero and plateau-hit counts as caption."""
    d = divisor_error_profile(k)
    return npl.plot_divisor_profile(d, *PROFILE_LIMITS), divisor_caption(k, d)


def plateau_control():
    """τ as a multiple of the calibrated threshold: 0.1 to 4 live."""
    return float_control("scale", 0.1, 4.0, step=0.05, frames=TAU_SCALES, value=1.0,
                         label="τ × calibrated")


def divisor_control():
    """The divisor k: 1 to 32 in steps of 0.5 live; powers of two precomputed."""
    return float_control("k", 1.0, K_MAX, step=0.5, frames=(1, 2, 4, 8, 16, 32), value=8,
                         label="divisor k")


def tail_reach(top: int = 4096) -> dict:
    """How far the scaled pipeline's upper tail reaches on the lattice: its largest g against
    the lattice's own (the precise pipeline's), and how many distinct g the ``top`` largest
    lattice uniforms give in each (``top`` distinct values when no mass is merged)."""
    u = all_uniforms()[-top:]
    g_scaled = get_noise("scaled")(u)
    g_precise = get_noise("precise")(u)
    return {"top": top, "g_max": float(g_scaled.max()), "g_max_lattice": float(g_precise.max()),
            "distinct": int(np.unique(g_scaled).size),
            "distinct_lattice": int(np.unique(g_precise).size)}


def largest_log_error(lo: float = 0.5, hi: float = 2.0, log2: FastLog2 = DEFAULT_FASTLOG2) -> dict:
    """The largest absolute error of ``log2`` over every float32 in ``[lo, hi)``, where it is,
    whether it lies in the band ``|log2 x| < 2τ`` that ``error_bound()`` leaves out, and the
    largest error outside that band (``outside``)."""
    bits = np.arange(np.float32(lo).view(np.uint32), np.float32(hi).view(np.uint32),
                     dtype=np.uint32)
    x = bits.view(np.float32)
    err = np.abs(log2(x).astype(np.float64) - np.log2(x.astype(np.float64)))
    i = int(np.argmax(err))
    bound = log2.error_bound()
    excluded = np.abs(np.log2(x.astype(np.float64))) < 2 * log2.zero_threshold
    return {"error": float(err[i]), "x": float(x[i]), "bound": bound,
            "ratio": float(err[i]) / bound, "excluded": 2 * log2.zero_threshold,
            "in_excluded": bool(excluded[i]), "outside": float(err[~excluded].max())}


def atom_mass_estimate(k: float, log2: FastLog2 = DEFAULT_FASTLOG2) -> float:
    """The Div-k atom's mass from the ideal law of t: density ``ln 2 · 2^-k`` at ``t = k``
    times the plateau's width in t, ``k · 2τ ln 2``."""
    return float(np.log(2) ** 2 * 2.0**-k * k * 2 * log2.zero_threshold)


def clamp_t_lambda(log2: FastLog2 = DEFAULT_FASTLOG2) -> dict:
    """Exact λ of the scaled pipeline and of the same pipeline with its plateau clamped
    (``g = −fl(max(t, b⁺))`` for t in the plateau ``[a, b]``)."""
    from rslab.numerics.search import exact_row

    tr = get_noise("scaled", log2=log2).trace(all_uniforms())
    a, b = log2.plateau()
    t = tr["t"]
    above = np.nextafter(np.float32(b), np.float32(np.inf))
    clamped = np.where((t >= np.float32(a)) & (t <= np.float32(b)), above, t)
    with np.errstate(divide="ignore", invalid="ignore"):
        g_clamp = -log2(clamped)
    return {"scaled": exact_row("scaled", tr["g"])["lam"],
            "clamp": exact_row("clamp", g_clamp)["lam"]}
