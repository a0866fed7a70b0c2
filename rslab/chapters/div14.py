"""Chapter 6, *Div14 search*: how the exact λ landscape moves with one knob of the emulator."""

import numpy as np

from rslab.numerics import search
from rslab.numerics.fastlog import DEFAULT_FASTLOG2
from rslab.viz import search_plots as sp
from rslab.viz.controls import float_control, int_control


def best_divisor(c1_bits: int, divisors: tuple) -> str:
    """The divisor of smallest exact λ when the fit's linear coefficient has ``c1_bits``."""
    lam = sp.knob_landscape(DEFAULT_FASTLOG2.replace(c1_bits=int(c1_bits)), tuple(divisors))
    return search.divisor_name(divisors[int(np.argmin(lam))])


def knob_figure(divisors: tuple):
    """``draw(c1_bits)``: the exact E[χ²] at 10^9 samples of every divisor in ``divisors``
    under the emulator with ``c1_bits``; the winner as caption."""
    def draw(c1_bits: int):
        cfg = DEFAULT_FASTLOG2.replace(c1_bits=int(c1_bits))
        fig = sp.draw_knob_frame(cfg, tuple(divisors), f"c1_bits = {c1_bits}")
        return fig, f"c1_bits = {c1_bits}: smallest λ at {best_divisor(c1_bits, divisors)}"
    return draw


def c1_control(frames):
    """``c1_bits`` from 4 to 16 live; ``frames`` precomputed, the calibrated value first shown."""
    return int_control("c1_bits", 4, 16, frames=frames, value=DEFAULT_FASTLOG2.c1_bits,
                       label="c1_bits")


def divisor_control(frames):
    """A divisor from 2 to 20 in steps of 0.5 live; ``frames`` precomputed, Div14 first shown."""
    return float_control("k", 2.0, 20.0, step=0.5, frames=frames, value=14.0, label="divisor k")
