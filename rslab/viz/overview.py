"""The introduction's figure: how much of a draft distribution the target accepts."""

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure


def toy_distributions(mix: float, vocab: int = 12) -> tuple[np.ndarray, np.ndarray]:
    """A target ``p`` and a draft ``q`` over ``vocab`` tokens; ``mix`` ∈ [0, 1] moves
    ``q`` from ``p`` itself (0) to an unrelated distribution (1)."""
    if not 0.0 <= mix <= 1.0:
        raise ValueError(f"mix must be in [0, 1], got {mix}")
    if vocab < 2:
        raise ValueError(f"vocab must be at least 2, got {vocab}")
    k = np.arange(vocab)
    p = np.exp(-0.5 * ((k - vocab / 3) / (vocab / 8)) ** 2) + 0.02
    other = np.exp(-0.5 * ((k - 2 * vocab / 3) / (vocab / 6)) ** 2) + 0.02
    p, other = p / p.sum(), other / other.sum()
    return p, (1 - mix) * p + mix * other


def draw_acceptance(mix: float) -> Figure:
    """Bars of p and q with their overlap min(p, q), whose sum is the acceptance rate."""
    p, q = toy_distributions(mix)
    k = np.arange(p.size)
    fig, ax = plt.subplots(figsize=(6.5, 3.2), layout="constrained")
    ax.bar(k - 0.2, p, width=0.4, label="target p", color="tab:blue")
    ax.bar(k + 0.2, q, width=0.4, label="draft q", color="tab:orange")
    ax.step(k, np.minimum(p, q), where="mid", color="black", lw=1.5, label="min(p, q)")
    ax.set(xlabel="token", ylabel="probability", ylim=(0, 0.3),
           title=f"draft mix {mix:.2f}: a draft is accepted with probability "
                 f"Σ min(p, q) = {np.minimum(p, q).sum():.2f}")
    ax.legend(fontsize=10, loc="upper right")
    return fig
