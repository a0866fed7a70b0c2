"""The how-to-run page's demonstration figure."""

import matplotlib.pyplot as plt
from matplotlib.figure import Figure


def plot_power_curve(x, y, *, title: str) -> Figure:
    """A small line plot of ``y`` against ``x``."""
    fig, ax = plt.subplots(figsize=(4, 2), layout="constrained")
    ax.plot(x, y)
    ax.set_ylim(0, 1.05)
    ax.set_title(title)
    return fig
