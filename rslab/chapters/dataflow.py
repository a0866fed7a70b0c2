"""Chapter 3, *Dataflow choice*: the machine sweeps, extended live one value at a time."""

from rslab.kernels.studies import dataflow_table as dt
from rslab.viz import dataflow_plots as dp
from rslab.viz.controls import int_control

SWEEP_RANGES = {"valu": (1, 6), "st": (1, 4), "sfu_latency": (1, 100)}
"""The live range of each swept machine parameter."""


def sweep_figure(param: str, data: dict, config, vocab: int):
    """A ``draw(**{param: value})`` for a live figure over ``dt.sweep(param, ...)``'s
    ``data``: a value not yet in ``data`` is scheduled and simulated (all four dataflows)
    and added to it, so the right-hand curve grows with what the reader tried."""
    if param not in SWEEP_RANGES:
        raise ValueError(f"param must be one of {sorted(SWEEP_RANGES)}, got {param!r}")

    def draw(**values):
        value = values[param]
        if value not in data:
            data.update(dt.sweep(param, [value], config, vocab=vocab))
        ordered = {v: data[v] for v in sorted(data)}
        fig = dp.draw_sweep(ordered, value, xlabel=dt.SWEEPS[param])
        here = ordered[value]
        return fig, (f"{dt.SWEEPS[param]} = {value}: fastest {dt.winner(here)} at "
                     f"{min(here.values()):g} cycles per packed vector")

    return draw


def sweep_control(param: str, frames, value, label: str):
    """The live control of one sweep: its ``SWEEP_RANGES`` range, ``frames`` precomputed."""
    lo, hi = SWEEP_RANGES[param]
    return int_control(param, lo, hi, frames=frames, value=value, label=label)
