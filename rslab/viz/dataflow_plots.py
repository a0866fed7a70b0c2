"""Plots for the chapter "Dataflow choice": cycles per packed vector, bank hits, sweeps."""

import matplotlib.pyplot as plt
import numpy as np

from rslab.machine.config import MachineConfig

COLORS = {"a": "tab:red", "a (conflict-unaware schedule)": "tab:pink", "a'": "tab:green",
          "b": "tab:blue", "c": "tab:purple"}
NAMES = {"a": "(a)", "a (conflict-unaware schedule)": "(a), conflict-unaware schedule",
         "a'": "(a′)", "b": "(b)", "c": "(c)"}
"""Each dataflow's name as the chapter's prose writes it."""
MARKERS = {"a": "o", "a'": "s", "b": "^", "c": "D"}
LINES = {"b": "--"}
"""Each dataflow's marker and line style in the sweeps, so that equal curves stay apart."""


def name(variant: str) -> str:
    """``variant``'s name as the prose writes it: "a'" is "(a′)"."""
    return NAMES.get(variant, variant)


def _color(variant):
    return COLORS.get(variant, "tab:gray")


def conflict_ignored(variant: str) -> bool:
    """Whether ``variant`` was scheduled as if its stores never conflicted (its bound is the
    scheduler's, not the machine's)."""
    return variant == "a (conflict-unaware schedule)"


def plot_cycles(rows, note_choice: str = "b"):
    """Measured cycles per packed vector per dataflow (bars) with the ResMII-style bound (ticks)."""
    fig, ax = plt.subplots(figsize=(7, 3.4))
    names = [r.variant for r in rows]
    y = np.arange(len(rows))
    ax.barh(y, [r.measured for r in rows], color=[_color(n) for n in names], alpha=0.8,
            label="measured (simulated steady state)")
    ignored = [conflict_ignored(r.variant) for r in rows]
    for want, color, label in ((False, "k", "resource bound"),
                               (True, "0.45", "bound as scheduled (conflict ignored)")):
        at = [i for i, flag in enumerate(ignored) if flag == want]
        if at:
            ax.plot([rows[i].bound for i in at], y[at], "|", color=color, markersize=18, mew=2,
                    label=label)
    for i, r in enumerate(rows):
        ax.text(r.measured + 0.1, i, f"{r.measured:g}", va="center")
    ax.set_yticks(y, [name(n) + (" (the note's choice)" if n == note_choice else "")
                      for n in names])
    ax.invert_yaxis()
    ax.set_xlabel("cycles per packed BF16 vector (256 elements)")
    ax.set_xlim(0, max(r.measured for r in rows) * 1.25)
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2, fontsize=10, frameon=False)
    fig.tight_layout()
    return fig


def plot_bank_hits(config: MachineConfig | None = None):
    """Words each VMEM bank receives from one contiguous and one stride-2 vector store."""
    config = config or MachineConfig()
    lanes, banks = config.lanes, config.vmem_banks
    fig, axes = plt.subplots(2, 1, figsize=(7, 3.4), sharex=True)
    for ax, (stride, title) in zip(axes, [(1, "contiguous store (changed layout)"),
                                          (2, "stride-2 store (generic helper)")], strict=True):
        hits = np.bincount((np.arange(lanes) * stride) % banks, minlength=banks)
        ax.bar(np.arange(banks), hits, width=1.0, color="tab:green" if stride == 1 else "tab:red")
        ax.set_ylabel("words")
        ax.set_ylim(0, 2.5)
        ax.set_title(f"{title}: busiest bank gets {hits.max()} word(s), port held "
                     f"{hits.max()} cycle(s)", fontsize=10)
    axes[-1].set_xlabel("VMEM bank")
    fig.tight_layout()
    return fig


def spaced_ticks(values, parts: int = 10) -> list:
    """``values`` (sorted) thinned so that no two ticks are closer than 1/``parts`` of their
    span: 40 and 41 on an axis from 1 to 41 would print as one number."""
    gap = (values[-1] - values[0]) / parts
    ticks = [values[0]]
    for x in values[1:]:
        if x - ticks[-1] >= gap:
            ticks.append(x)
    return ticks


def consecutive_runs(values) -> list[list]:
    """``values`` (sorted) cut where two neighbours are more than 1 apart: the runs a curve
    may join with a line."""
    runs = []
    for x in values:
        if runs and x - runs[-1][-1] <= 1:
            runs[-1].append(x)
        else:
            runs.append([x])
    return runs


def draw_sweep(data: dict, value, *, xlabel: str):
    """Left: cycles per packed vector of each dataflow at ``value``; right: all values, with
    ``value`` marked. ``data`` is ``{value: {variant: cycles}}`` (see ``dataflow_table.sweep``)."""
    values = list(data)
    variants = list(data[values[0]])
    fig, (left, right) = plt.subplots(1, 2, figsize=(7, 3.4),
                                      gridspec_kw={"width_ratios": [1, 1.5]})
    here = data[value]
    best = min(here.values())
    left.bar([name(v) for v in variants], [here[v] for v in variants],
             color=[_color(v) for v in variants],
             edgecolor=["black" if np.isclose(here[v], best) else "none" for v in variants],
             linewidth=2)
    for i, v in enumerate(variants):
        left.text(i, here[v], f"{here[v]:g}", ha="center", va="bottom", fontsize=10)
    left.set_ylabel("cycles per packed vector")
    left.set_title(f"at {value}: fastest outlined", fontsize=10)
    top = max(max(d.values()) for d in data.values()) * 1.15
    left.set_ylim(0, top)
    few = len(values) <= 12
    for i, v in enumerate(variants):  # each drawn wider than the next: ties stay visible
        for k, run in enumerate(consecutive_runs(values)):  # no line across values not computed
            right.plot(run, [data[x][v] for x in run], color=_color(v),
                       label=name(v) if k == 0 else None,
                       marker=MARKERS.get(v, "o") if few or len(run) == 1 else None,
                       ls=LINES.get(v, "-"),
                       lw=1.5 + 0.8 * (len(variants) - 1 - i),
                       ms=5 + 1.5 * (len(variants) - 1 - i))
    right.axvline(value, color="gray", ls="--")
    right.set_xlabel(xlabel)
    right.set_ylim(0, top)
    if few:
        right.set_xticks(spaced_ticks(values))
    right.legend(fontsize=10, ncol=2, loc="lower right")
    fig.tight_layout()
    return fig


def plot_online_unroll(per_unroll: dict, reference: dict):
    """(c)'s cycles per packed vector against its block size, with the other dataflows as lines."""
    fig, ax = plt.subplots(figsize=(7, 3.2))
    xs = list(per_unroll)
    ax.plot(xs, [per_unroll[x] for x in xs], "o-", color=_color("c"), label="(c) online")
    for v, c in reference.items():
        ax.axhline(c, color=_color(v), ls="--", label=name(v))
    ax.set_xscale("log", base=2)
    ax.set_xticks(xs, [str(x) for x in xs])
    ax.set_xlabel("packed vectors per online block (one rescale per block)")
    ax.set_ylabel("cycles per packed vector")
    ax.set_ylim(0, None)
    ax.legend(fontsize=10, loc="lower left")
    fig.tight_layout()
    return fig
