"""Chapter 2, *The machine*: the runs behind its figures, and the live machine knobs."""

import numpy as np

from rslab.machine import MachineConfig, assemble, simulate
from rslab.machine import examples as ex
from rslab.viz import machine_plots as mp
from rslab.viz.controls import int_control

MIXED = """
vadd.f32 v1, v1, v2 ; vmul.f32 v10, v4, v5
vadd.f32 v1, v1, v2 ; vmul.f32 v11, v4, v5
vadd.f32 v1, v1, v2 ; vmul.f32 v12, v4, v5
vadd.f32 v3, v1, v10
halt
"""
"""A dependent chain of three VALU adds beside three independent multiplies."""

NAIVE_VECTORS = 8
"""Packed vectors in the live naive sum-exp run (enough for a steady state)."""


def latency_run(latency: int, config: MachineConfig | None = None):
    """``MIXED`` on the core with VALU latency ``latency`` (traced)."""
    config = config or MachineConfig()
    return simulate(assemble(MIXED), config.with_(latency={"valu": latency}), trace=True)


def slots_run(slots: int, n_ops: int = 12, config: MachineConfig | None = None):
    """``n_ops`` independent VALU ops on a core with ``slots`` VALU slots (traced)."""
    config = config or MachineConfig()
    return simulate(assemble(ex.independent_ops(n_ops, slots)), config.with_(slots={"valu": slots}),
                    trace=True)


def latency_figure(latency: int):
    """Live frame: the timeline of ``MIXED`` at one VALU latency, its cycles as caption."""
    run = latency_run(latency)
    fig = mp.timeline_figure(run.trace, title=f"VALU latency {latency}: {run.cycles} cycles",
                             xmax=6 * 4 + 1, size=(7.5, 2.8))
    return fig, f"VALU latency {latency}: {run.cycles} cycles"


def slots_figure(slots: int):
    """Live frame: twelve independent ops on ``slots`` VALU slots, its cycles as caption."""
    run = slots_run(slots)
    fig = mp.timeline_figure(run.trace, title=f"{slots} VALU slot(s): {run.cycles} cycles",
                             xmax=15.5, size=(7.5, 3.6))
    return fig, f"{slots} VALU slot(s): {run.cycles} cycles"


def stall_bars(steady: dict, scale: float = 1.0) -> dict:
    """Cycles per iteration by stall cause plus the issue cycles, times ``scale``, from a
    ``Trace.steady_state`` record."""
    out = {c: scale * v for c, v in steady["stalls_by_cause"].items()}
    out["issue"] = scale * (steady["cycles_per_iter"] - steady["stalls_per_iter"])
    return out


def naive_sumexp(sfu_latency: int = 13, valu_latency: int = 3,
                 n_vectors: int = NAIVE_VECTORS):
    """The naive sum-exp loop over ``n_vectors`` packed vectors on a core with the given SFU
    and VALU latencies: the run and its steady state per packed vector."""
    config = MachineConfig().with_(latency={"sfu": sfu_latency, "valu": valu_latency})
    words, row_max, _ = ex.sumexp_inputs(n_vectors)
    run = simulate(ex.sumexp_naive(n_vectors).program(), config, vmem=words,
                   sregs={2: row_max}, trace=True)
    return run, run.trace.steady_state("sumexp")


def naive_caption(sfu_latency: int, valu_latency: int, steady: dict) -> str:
    """What the live figure of the naive loop says under its picture."""
    return (f"SFU latency {sfu_latency}, VALU latency {valu_latency}: "
            f"{steady['cycles_per_iter']:.0f} cycles per packed vector, "
            f"{steady['stalls_per_iter']:.0f} of them stalls")


def naive_figure(sfu_latency: int, valu_latency: int):
    """Live frame: the naive loop re-simulated on a machine variant; its timeline (two
    iterations) and its cycles per packed vector by cause."""
    run, steady = naive_sumexp(sfu_latency, valu_latency)
    start = int(run.trace.loop_iterations("sumexp")[2]["start"])
    fig = mp.timeline_and_stalls(run.trace, stall_bars(steady), start=start,
                                 span=2 * int(np.ceil(steady["cycles_per_iter"])),
                                 title=f"naive sum-exp, SFU latency {sfu_latency}, "
                                       f"VALU latency {valu_latency}")
    return fig, naive_caption(sfu_latency, valu_latency, steady)


def sfu_latency_control():
    """SFU latency 1..40 live; 7, 13 (the default) and 20 precomputed."""
    return int_control("sfu_latency", 1, 40, frames=(7, 13, 20), value=13, label="SFU latency")


def valu_latency_control(name: str = "valu_latency", frames=(1, 3, 6), hi: int = 12):
    """VALU latency 1..``hi`` live; ``frames`` (with the default, 3) precomputed."""
    return int_control(name, 1, hi, frames=frames, value=3, label="VALU latency")


def valu_slots_control():
    """VALU slots 1..8 live; 1 to 4 precomputed, 2 (the default) first shown."""
    return int_control("slots", 1, 8, frames=(1, 2, 3, 4), value=2, label="VALU slots")
