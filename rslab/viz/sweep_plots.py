"""The design-space sweep as a heat map: fast-log designs × divisors, the best of each design
marked (the Div14 chapter's "which fast log can a Gumbel sampler trust?"), 7 inches wide
with no text below 10 pt."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np


def design_label(row: dict, names) -> str:
    """``index_bits 6, c1_bits 9`` for the knobs ``names`` of a sweep row."""
    return ", ".join(f"{n} {row[n]}" for n in names)


def plot_sweep_heatmap(result, samples: float = 1e9):
    """log10 of the bias part N·λ of the expected χ² at ``samples``, one row per design and
    one column per divisor; a star marks each design's best divisor."""
    names = [n for n, _ in result.config.axes]
    divisors = result.config.divisors
    with np.errstate(divide="ignore"):
        z = np.log10(samples * result.grid("lam"))
    labels = [design_label(r, names) for r in result.best]
    fig, ax = plt.subplots(figsize=(7.0, 1.6 + 0.45 * len(labels)))
    image = ax.imshow(z, aspect="auto", cmap="viridis")
    for i, row in enumerate(result.best):
        if "error" not in row:
            ax.plot(divisors.index(row["divisor"]), i, marker="*", color="white",
                    markersize=13, markeredgecolor="black")
    ax.set_xticks(range(len(divisors)), [f"{k:g}" for k in divisors])
    ax.set_yticks(range(len(labels)), labels)
    ax.set_xlabel("divisor k of the second log")
    fig.colorbar(image, ax=ax, label=f"log10(N·λ), N = 10^{np.log10(samples):.0f}")
    ax.set_title("exact bias per fast-log design (★ smallest λ)")
    fig.tight_layout()
    return fig
