"""*How to run this book*: the demonstration figure of a live control."""

import numpy as np

from rslab.viz.controls import float_control
from rslab.viz.demo_plots import plot_power_curve


def power_figure(power: float):
    """Live frame: y = x^power on [0, 1], with the area under it as caption."""
    x = np.linspace(0.0, 1.0, 201)
    y = x**power
    area = float(np.sum((y[1:] + y[:-1]) / 2 * np.diff(x)))
    return plot_power_curve(x, y, title=f"y = x^{power:g}"), f"area under the curve: {area:.4f}"


def power_control():
    """The exponent: 0.1 to 5 live; 1, 2 and 3 precomputed."""
    return float_control("power", 0.1, 5.0, step=0.1, frames=(1.0, 2.0, 3.0), value=1.0,
                         label="power")
