"""Chapter 5, *Div8*: the plateau width and the divisor, re-enumerated over the lattice live."""

from rslab.numerics.fastlog import DEFAULT_FASTLOG2
from rslab.viz import numerics_plots as npl
from rslab.viz.controls import float_control

STRIDE = 4
"""Every 4th of the 2^24 lattice uniforms: exact counts at a quarter of the cost."""


def plateau_figure(scale: float):
    """Live frame: the log with its zero threshold τ scaled by ``scale``; the exact count of
    zeros of the scaled pipeline as caption."""
    cfg = DEFAULT_FASTLOG2.replace(zero_threshold=DEFAULT_FASTLOG2.zero_threshold * scale)
    fig = npl.draw_plateau_frame(scale, stride=STRIDE)
    zeros = npl.zeros_per_2_20(cfg, STRIDE)
    return fig, f"τ = {cfg.zero_threshold:.5f}: {zeros:,.1f} zeros per 2^20 draws (scaled)"


def divisor_figure(k: float):
    """Live frame: the same-input error of divisor ``k`` against the precise pipeline; the
    exact zero and plateau-hit counts as caption."""
    d = npl.divisor_error_profile(k, stride=STRIDE)
    return (npl.plot_divisor_profile(d),
            f"k = {k:g}: g = 0 {d['zeros']:,.1f}, plateau hits {d['hits']:,.1f} per 2^20 draws")


def plateau_control():
    """τ as a multiple of the calibrated threshold: 0.1 to 4 live."""
    return float_control("scale", 0.1, 4.0, step=0.05, frames=(0.25, 0.5, 1.0, 1.5, 2.0, 3.0),
                         value=1.0, label="τ × calibrated")


def divisor_control():
    """The divisor k: 1 to 32 in steps of 0.5 live; powers of two precomputed."""
    return float_control("k", 1.0, 32.0, step=0.5, frames=(1, 2, 4, 8, 16, 32), value=8,
                         label="divisor k")
