"""Chapter 4, *Software pipelining*: the design points behind its two sliders, re-run live,
and every loop's II against its lower bounds.

Each point schedules the sum-exp loop for one machine variant, runs it on the
simulator and measures its steady state (``pipeline_bench.sumexp_point``).
"""

import functools
import subprocess
import sys
from pathlib import Path

import numpy as np

from rslab.kernels.studies import steady as pb
from rslab.kernels.studies.argmax_loop import run_argmax
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


VALU_RANGE = (1, 12)
"""The VALU-latency slider's range."""
HOLD_RANGE = (0, 6)
"""The hold-issue slider's range."""


def valu_ylims(workers: tuple):
    """The VALU figure's y-limits, from the design points at every latency of the slider."""
    lo, hi = VALU_RANGE
    return sp.design_ylims([valu_points(v, tuple(workers)) for v in range(lo, hi + 1)])


def hold_ylims(sfu_latencies: tuple):
    """The hold figure's y-limits, from both plans at every hold of the slider."""
    lo, hi = HOLD_RANGE
    return sp.design_ylims([hold_points(h, tuple(sfu_latencies), plan_hold=p)
                            for h in range(lo, hi + 1) for p in (None, 0)])


def valu_latency_control(frames, value: int):
    """VALU latency over ``VALU_RANGE`` live, ``frames`` precomputed."""
    return int_control("valu_latency", *VALU_RANGE, frames=frames, value=value,
                       label="VALU latency")


def hold_control(frames, value: int):
    """Hold-issue over ``HOLD_RANGE`` live, ``frames`` precomputed."""
    return int_control("hold", *HOLD_RANGE, frames=frames, value=value, label="hold-issue")


EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
"""The repository's example files (``rslab pipeline`` / ``rslab sim`` inputs)."""


def command_output(*argv) -> str:
    """What ``rslab ARGV...`` prints, run as a reader runs it (``python -m rslab`` in a
    subprocess of this interpreter: the chapter's worked example)."""
    args = [str(a) for a in argv]
    proc = subprocess.run([sys.executable, "-m", "rslab", *args], capture_output=True,
                          text=True, timeout=600)
    if proc.returncode:
        raise ValueError(f"rslab {' '.join(args)} exited with status {proc.returncode}: "
                         f"{proc.stderr.strip()}")
    return proc.stdout


def example_row(path, n_packed: int = 64, seed: int = 0):
    """Write a row of ``n_packed`` packed BF16 vectors to ``path`` (.npy) for ``--vmem``;
    return its float32 values (what the loop sums)."""
    from rslab.machine.examples import sumexp_inputs

    words, _, values = sumexp_inputs(n_packed, seed)
    np.save(path, words)
    return values


def loop_bounds(vocab: int = 1024) -> list[dict]:
    """II, ResMII and RecMII of this chapter's study loops and of the full sampler's
    optimised loops (both paths, built for ``vocab``), per loop; for the sampler's also the
    II the scheduler reaches when registers are no limit (``unlimited_ii``)."""
    from rslab.kernels.loops.emit import schedule_body
    from rslab.kernels.sampler.layout import SamplerLayout
    from rslab.kernels.sampler.program import build_kernel
    from rslab.kernels.studies.sumexp_loop import sumexp_body
    from rslab.schedule import modulo_schedule

    rows = []
    for workers in (1, 4):
        sched = modulo_schedule(sumexp_body(workers=workers), reserve_scalar=1)
        rows.append({"loop": f"study: sum-exp ({workers} worker{'s' * (workers > 1)})",
                     "ii": sched.ii, "res_mii": sched.bounds.res_mii,
                     "rec_mii": sched.bounds.rec_mii, "per_iteration": 2})
    for variant in ("select", "max"):
        sched = run_argmax(np.zeros(256, np.float32), variant=variant).schedule
        rows.append({"loop": f"study: argmax ({variant})", "ii": sched.ii,
                     "res_mii": sched.bounds.res_mii, "rec_mii": sched.bounds.rec_mii,
                     "per_iteration": 1})
    for kind in ("residual", "bonus"):
        f = pb.residual_figures(kind=kind)
        rows.append({"loop": f"study: {kind} Gumbel-argmax", "ii": f["ii"],
                     "res_mii": f["res_mii"], "rec_mii": f["rec_mii"], "per_iteration": 1})
    names = {"loop_rowmax": "row max", "loop_sumexp": "sum-exp", "loop_bonus": "bonus row",
             "loop_residual": "residual row"}
    for path in ("fast", "exact"):
        kernel = build_kernel(SamplerLayout(1, 1, vocab), path)
        for label, code in kernel.loops.items():
            g = code.schedule.graph
            free = schedule_body(g.ops, g.model, rotating=tuple(g.rotating), shorten=True)
            rows.append({"loop": f"sampler ({path}): {names[label]}", "ii": code.ii,
                         "res_mii": free.bounds.res_mii, "rec_mii": free.bounds.rec_mii,
                         "per_iteration": code.per_iteration, "unlimited_ii": free.ii})
    return rows


def recurrence_bound(rows) -> dict:
    """From :func:`loop_bounds`' rows: the loops whose recurrence binds (RecMII > ResMII), and
    the largest RecMII / ResMII among the loops that do a Gumbel draw's work per vector."""
    bound = [r["loop"] for r in rows if r["rec_mii"] > r["res_mii"]]
    work = [r for r in rows if "Gumbel" in r["loop"] or r["loop"].startswith("sampler")]
    return {"loops": bound, "work_ratio": max(r["rec_mii"] / r["res_mii"] for r in work)}
