"""The machine chapter: the runs and tables behind its figures, and the live machine knobs.

A live figure's axes fit every value of its controls: the timelines' x-axes are sized by
the run at the control's largest value (``LATENCY_MAX``, ``SLOTS_MIN``).
"""

import json
import tempfile
from functools import cache
from pathlib import Path

import numpy as np

from rslab.machine import MachineConfig, assemble, simulate
from rslab.machine import examples as ex
from rslab.machine.isa import SPECS
from rslab.viz import machine_plots as mp
from rslab.viz.controls import int_control
from rslab.viz.tables import markdown_table

MIXED = """
vadd.f32 v1, v1, v2 ; vmul.f32 v10, v4, v5
vadd.f32 v1, v1, v2 ; vmul.f32 v11, v4, v5
vadd.f32 v1, v1, v2 ; vmul.f32 v12, v4, v5
vadd.f32 v3, v1, v10
halt
"""
"""A dependent chain of three VALU adds beside three independent multiplies."""

LATENCY_MAX = 12
"""The largest VALU latency of the latency slider."""
SLOTS_RANGE = (1, 8)
"""The VALU-slot slider's range; the fewest slots give the longest run."""

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


def last_ready(run) -> int:
    """The cycle at which the last op of a traced run has its result."""
    return max(op.ready for op in run.trace.ops)


@cache
def latency_xmax() -> float:
    """The latency timelines' x-axis end: the run at ``LATENCY_MAX`` fits."""
    return last_ready(latency_run(LATENCY_MAX)) + 0.5


@cache
def slots_xmax() -> float:
    """The slot timelines' x-axis end: the run on the fewest slots fits."""
    return last_ready(slots_run(SLOTS_RANGE[0])) + 0.5


def latency_figure(latency: int):
    """Live frame: the timeline of ``MIXED`` at one VALU latency, its cycles as caption."""
    run = latency_run(latency)
    fig = mp.timeline_figure(run.trace, title=f"VALU latency {latency}: {run.cycles} cycles",
                             xmax=latency_xmax(), size=(7, 3.4))
    return fig, f"VALU latency {latency}: {run.cycles} cycles"


def slots_figure(slots: int):
    """Live frame: twelve independent ops on ``slots`` VALU slots, its cycles as caption."""
    run = slots_run(slots)
    fig = mp.timeline_figure(run.trace, title=f"{slots} VALU slot(s): {run.cycles} cycles",
                             xmax=slots_xmax(), size=(7, 4.6))
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


def valu_latency_control(name: str = "valu_latency", frames=(1, 3, 6), hi: int = LATENCY_MAX):
    """VALU latency 1..``hi`` live; ``frames`` (with the default, 3) precomputed."""
    return int_control(name, 1, hi, frames=frames, value=3, label="VALU latency")


def valu_slots_control():
    """VALU slots 1..8 live; 1 to 4 precomputed, 2 (the default) first shown."""
    return int_control("slots", *SLOTS_RANGE, frames=(1, 2, 3, 4), value=2, label="VALU slots")


# ----------------------------------------------------------------- what the machine rejects

RUNAWAY_STEPS = 10_000
"""The step budget of the runaway example in the table (the default is ``DEFAULT_MAX_STEPS``)."""

MACHINE_REJECTS = (
    ("vli v1, 3.5e38", "no float32 has that value", {}),
    ("sadd s2, s1, 4294967297", "immediates are 32-bit words", {}),
    ("vshl v1, v2, -1", "a shift amount is unsigned", {}),
    ("vadd.f32 v1, v2", "operand count", {}),
    ("bz s0, L\nloop 2\nnop\nL: endloop", "a branch into a loop's endloop from outside", {}),
    ("loop 3\nendloop", "a loop needs a body", {}),
    ("vmov v64, v1", "the machine has 64 vector registers", {}),
    ("nop\nvld v1, [s1 + 0]", "a load past the end of VMEM", {"sregs": {1: 4 * 1024 * 1024}}),
    ("nop\nvpop v1", "a pop with nothing pushed: the in-order core would deadlock", {}),
    ("loop 4294967295\nloop 0\nnop\nendloop\nendloop",
     "no bundle ever issues: the step budget counts loop directives too",
     {"max_steps": RUNAWAY_STEPS}),
    ("halt", "simulate's arguments: a register named by a string", {"sregs": {"a": 1}}),
)
"""(program text, why it is rejected, ``simulate`` arguments) for each kind of error."""


def rejection_rows(cases=MACHINE_REJECTS) -> list[tuple[str, str, str, str, str]]:
    """(program, why, error type, where, message) for each case, from assembling and running
    it: ``where`` is the source line the error names (a case that runs raises AssertionError)."""
    from rslab.machine import AssemblyError, MachineError

    rows = []
    for text, why, kw in cases:
        try:
            simulate(assemble(text), **kw)
        except (AssemblyError, MachineError) as exc:
            where = f"line {exc.line}" if exc.line is not None else "-"
            rows.append((text, why, type(exc).__name__, where, exc.message))
        except ValueError as exc:
            rows.append((text, why, type(exc).__name__, "argument", str(exc)))
        else:
            raise AssertionError(f"{text!r}: ran")
    return rows


def naive_cycles_by_latency(unit: str, latencies) -> list[float]:
    """Cycles per packed vector of the naive loop at each latency of ``unit`` (``"sfu"`` or
    ``"valu"``), the other latency at its default."""
    if unit not in ("sfu", "valu"):
        raise ValueError(f"unit must be 'sfu' or 'valu', got {unit!r}")
    key = "sfu_latency" if unit == "sfu" else "valu_latency"
    return [naive_sumexp(**{key: int(lat)})[1]["cycles_per_iter"] for lat in latencies]


# ----------------------------------------------------------------- the core and its programs

def config_table(config: MachineConfig) -> str:
    """The configuration as a Markdown table (``MachineConfig.table``)."""
    return markdown_table([{"Resource": a, "Default": b, "Notes": c} for a, b, c in config.table()],
                          fmt=lambda _, v: str(v))


def mnemonics_table(config: MachineConfig) -> str:
    """Every mnemonic of the ISA grouped by the slot it occupies, with that slot's latency."""
    by_slot = {}
    for spec in SPECS.values():
        by_slot.setdefault(spec.slot or "none", []).append(f"`{spec.name}`")
    rows = [{"Slot": slot, "Latency (cycles)": str(config.latency.get(slot, "–")),
             "Ops": " ".join(names)} for slot, names in by_slot.items()]
    rows.append({"Slot": "directives", "Latency (cycles)": "0",
                 "Ops": "`loop N` / `loop sN`, `endloop`, `halt`"})
    return markdown_table(rows, fmt=lambda _, v: str(v))


def bundles_table(run) -> str:
    """One row per bundle of a traced run: its issue cycle, its stall and cause, its ops."""
    rows = [{"Cycle": str(b.cycle), "Stall cycles": str(b.stall), "Cause": b.cause or "",
             "Bundle": "`" + " ; ".join(b.ops) + "`"} for b in run.trace.bundles]
    return markdown_table(rows, fmt=lambda _, v: str(v))


HOLD_DEMO = """vli v1, 0.5
vexp2 v1
vadd.f32 v4, v1, v1
vexp2 v1
vexp2 v1
vpop v2
vpop v3
vpop v5
halt
"""
"""Three pushes, the first two one bundle apart, the last two back to back: only a push waits."""


def burst_formula(n, config: MachineConfig):
    """Cycles of ``ex.sfu_burst(n)``: the last push issues at (1 + hold)(n − 1); the n pops
    follow one per bundle, the last one a latency after its push or n bundles after it."""
    n = np.asarray(n)
    return ((1 + config.sfu_hold) * (n - 1) + np.maximum(config.latency["sfu"], n)
            + config.latency["pop"])


def ops_per_iteration(trace, loop, iteration: int) -> dict:
    """{slot class: ops} issued by one iteration of ``loop`` in a traced run (pops in "pop",
    the rest of the VALU ops in "valu")."""
    key = trace.loop_iterations(loop)[iteration]["key"]
    out = {}
    for op in trace.ops:
        if op.iters == key:
            slot = "pop" if op.text.startswith("vpop") else op.slot
            out[slot] = out.get(slot, 0) + 1
    return out


def run_body(body: str, *config: str, vmem=None, regs: str = "s3") -> tuple[dict, dict]:
    """A loop body scheduled by ``rslab pipeline`` and the program it writes run by
    ``rslab sim``, as a reader runs them (``--config`` changes both; ``vmem``: a uint32 array
    for ``--vmem``): (the schedule's JSON, the run's JSON with ``regs`` read at the end)."""
    from rslab.chapters.pipelining import command_output

    with tempfile.TemporaryDirectory() as tmp:
        src, out = Path(tmp, "body.s"), Path(tmp, "loop.s")
        src.write_text(body)
        changes = ["--config", *config] if config else []
        plan = json.loads(command_output("pipeline", src, "-o", out, "--json", *changes))
        sim = [out, "--json", "--regs", regs, *changes]
        if vmem is not None:
            np.save(Path(tmp, "vmem.npy"), np.asarray(vmem, dtype=np.uint32))
            sim += ["--vmem", Path(tmp, "vmem.npy")]
        return plan, json.loads(command_output("sim", *sim))


def rejection_table(cases=MACHINE_REJECTS) -> str:
    """``rejection_rows`` as a Markdown table (a program's lines joined by " / ")."""
    rows = [{"Program": "`" + text.replace("\n", " / ") + "`", "Why": why, "Error": f"`{kind}`",
             "Names": where, "Message": msg.replace("|", "\\|")}
            for text, why, kind, where, msg in rejection_rows(cases)]
    return markdown_table(rows, fmt=lambda _, v: str(v))
