"""Chapter 4, *Software pipelining*: the design points behind its two sliders, re-run live.

Each point schedules the sum-exp loop for one machine variant, runs it on the
simulator and measures its steady state (``pipeline_bench.sumexp_point``).
"""

import functools

from rslab.kernels.studies import steady as pb
from rslab.viz import schedule_plots as sp
from rslab.viz.controls import int_control


@functools.lru_cache(maxsize=64)
def valu_points(valu_latency: int, workers: tuple) -> list[dict]:
    """One design point per worker count at one VALU latency."""
    return [pb.sumexp_point(workers=w, valu_latency=valu_latency) for w in workers]


@functools.lru_cache(maxsize=64)
def hold_points(hold: int, sfu_latencies: tuple, plan_hold: int | None = None) -> list[dict]:
    """One design point per SFU latency at one hold-issue (planned with ``plan_hold``)."""
    return [pb.sumexp_point(sfu_latency=L, hold=hold, plan_hold=plan_hold)
            for L in sfu_latencies]


def _caption(points, xs, what) -> str:
    return ", ".join(f"{what} {x}: II {p['ii']}" for x, p in zip(xs, points, strict=True))


def valu_figure(workers: tuple, ylims):
    """``draw(valu_latency)``: the design points across ``workers`` at one VALU latency."""
    def draw(valu_latency: int):
        points = valu_points(valu_latency, tuple(workers))
        fig = sp.plot_design_points(list(workers), points, xlabel="workers", ylims=ylims,
                                    title=f"VALU latency {valu_latency}")
        return fig, f"VALU latency {valu_latency}: " + _caption(points, workers, "workers")
    return draw


def hold_figure(sfu_latencies: tuple, ylims):
    """``draw(hold)``: the design points across SFU latencies at one hold-issue, beside the
    plan made as if pushes had no hold."""
    def draw(hold: int):
        points = hold_points(hold, tuple(sfu_latencies))
        blind = hold_points(hold, tuple(sfu_latencies), plan_hold=0)
        fig = sp.plot_design_points(list(sfu_latencies), points, xlabel="SFU latency",
                                    ylims=ylims, title=f"hold-issue {hold}", compare=blind,
                                    compare_label="planned with hold 0")
        return fig, f"hold-issue {hold}: " + _caption(points, sfu_latencies, "SFU latency")
    return draw


def valu_latency_control(frames, value: int):
    """VALU latency 1..12 live, ``frames`` precomputed."""
    return int_control("valu_latency", 1, 12, frames=frames, value=value, label="VALU latency")


def hold_control(frames, value: int):
    """Hold-issue 0..6 live, ``frames`` precomputed."""
    return int_control("hold", 0, 6, frames=frames, value=value, label="hold-issue")
