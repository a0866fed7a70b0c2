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
from rslab.viz.tables import markdown_table


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


DRAWING_LOOPS = ("Gumbel", "bonus row", "residual row")
"""The loops that draw a token (their names contain one of these)."""


def recurrence_bound(rows) -> dict:
    """From :func:`loop_bounds`' rows: the loops whose recurrence binds (RecMII > ResMII); the
    largest RecMII / ResMII among the loops with a vector's work (the Gumbel study loops and
    every sampler loop, row max included: ``work_ratio``) and among those that draw a token
    (``draw_ratio``)."""
    bound = [r["loop"] for r in rows if r["rec_mii"] > r["res_mii"]]
    work = [r for r in rows if "Gumbel" in r["loop"] or r["loop"].startswith("sampler")]
    draw = [r for r in work if any(k in r["loop"] for k in DRAWING_LOOPS)]
    return {"loops": bound, "work_ratio": max(r["rec_mii"] / r["res_mii"] for r in work),
            "draw_ratio": max(r["rec_mii"] / r["res_mii"] for r in draw)}


def iteration_timing(schedule) -> dict:
    """Where one iteration's length comes from: the issue cycles of its pushes, its last pop
    and last add, its length (last issue + 1: the II one stage needs) and its stages
    (⌈length / II⌉)."""
    at = {op.label: t for op, t in zip(schedule.graph.ops, schedule.times, strict=True)}
    pushes = sorted(t for op, t in zip(schedule.graph.ops, schedule.times, strict=True)
                    if op.is_push)
    pops = [at[op.label] for op in schedule.graph.ops if op.opcode == "vpop"]
    adds = [at[op.label] for op in schedule.graph.ops if op.label.startswith("acc")]
    return {"pushes": pushes, "last_pop": max(pops), "last_add": max(adds),
            "length": schedule.length, "ii": schedule.ii,
            "stages": -(-schedule.length // schedule.ii)}


def valu_mix(body) -> str:
    """The VALU ops of ``body`` by kind, pops included (a pop issues on a VALU slot):
    ``unpack, sub, … × 4`` when every kind counts the same, else ``unpack × 4, …``."""
    from rslab.schedule import slot_of

    kinds = {}
    for op in body:
        if slot_of(op.opcode) == "valu":
            kind = op.opcode.split(".")[0].removeprefix("v")
            kinds[kind] = kinds.get(kind, 0) + 1
    counts = set(kinds.values())
    if len(counts) == 1:
        return f"{', '.join(kinds)} × {counts.pop()}"
    return ", ".join(f"{k} × {n}" for k, n in kinds.items())


def kernel_mix(schedule) -> dict:
    """What the kernel's rows hold: per row (cycle of a kernel pass) the stages of its ops
    (each stage a different iteration), the rows that mix stages, the ops that share a row
    with a load (label and stage), and the rows where a push sits beside a pop of an older
    iteration."""
    rows = {r: [] for r in range(schedule.ii)}
    for op, t in zip(schedule.graph.ops, schedule.times, strict=True):
        rows[t % schedule.ii].append((op, t // schedule.ii))
    stages = {r: sorted({s for _, s in ops}) for r, ops in rows.items()}
    load_rows = [r for r, ops in rows.items() if any(op.opcode == "vld" for op, _ in ops)]
    beside = sorted({(op.label, s) for r in load_rows for op, s in rows[r]
                     if op.opcode != "vld"}, key=lambda x: (x[1], x[0]))
    return {"stages": stages, "mixed": [r for r, st in stages.items() if len(st) > 1],
            "single": [r for r, st in stages.items() if len(st) == 1],
            "load_stages": sorted({s for r in load_rows for op, s in rows[r]
                                   if op.opcode == "vld"}),
            "beside_loads": beside,
            "beside_opcodes": sorted({op.opcode for r in load_rows for op, _ in rows[r]
                                      if op.opcode != "vld"}),
            "push_beside_older_pop": [r for r, ops in rows.items() if any(
                p.is_push and q.opcode == "vpop" and sq > sp
                for p, sp in ops for q, sq in ops)]}


def chain_rows() -> list[dict]:
    """Two packed vectors an iteration (four exp2 chains, four workers) beside one (its low and
    high halves: two exp2 chains, two workers), each planned with the machine's hold and with
    hold 0, per packed vector: with fewer independent chains in an iteration, the schedule
    overlaps more iterations (stages)."""
    rows = []
    for packed, workers in ((2, 4), (1, 2)):
        for plan_hold in (None, 0):
            p = pb.sumexp_point(workers=workers, packed_per_iter=packed, plan_hold=plan_hold)
            rows.append({"packed vectors / iteration": packed,
                         "exp2 chains / iteration": 2 * packed, "workers": workers,
                         "planned with": "the hold" if plan_hold is None else "hold 0",
                         "II": p["ii"], "stages": p["stages"],
                         "vector registers": p["vector_registers"],
                         "cycles / packed vector": p["measured_ii"] / packed,
                         "stall cycles / packed vector": p["stalls_per_iter"] / packed})
    return rows


ONE_CHAIN_BODY = """iterations 32
carried acc0=v50
before: sli s1, 0
before: sli s2, 0x0
before: vbcast v60, s2 ; vli v61, 0x3fb8aa3b
before: vli v50, 0
after:  vred.add s3, v50

x0 = vld [s1 + 0 + 512*i]
l0 = vunpack.lo x0
z0 = vsub.f32 l0, v60
y0 = vmul.f32 z0, v61
@e0 = vexp2 y0
e0 = vpop @e0
acc0 = vadd.f32 acc0[-1], e0
"""
"""A loop body with one exp2 chain an iteration: one packed vector, its low half only."""


def command_json(*argv) -> dict:
    """What ``rslab ARGV... --json`` prints, parsed: the command line's own code path
    (``rslab.cli.main``) run in this interpreter, without a new interpreter's start-up."""
    import contextlib
    import io
    import json

    from rslab.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main([str(a) for a in argv] + ["--json"])
        except SystemExit as exc:
            status = exc.code
    if status:
        raise ValueError(f"rslab {' '.join(map(str, argv))} exited with status {status}: "
                         f"{err.getvalue().strip()}")
    return json.loads(out.getvalue())


def one_chain_point(hold: int, plan_hold: int | None = None,
                    body: str = ONE_CHAIN_BODY) -> dict:
    """``body`` planned by ``rslab pipeline --config sfu_hold=PLAN_HOLD`` (default: ``hold``),
    its ``# machine`` line dropped, and run by ``rslab sim --config sfu_hold=HOLD``: its pushes
    per iteration, bounds, II and stages, and the run's cycles, stall cycles and stall cycles
    for the hold per source iteration."""
    import tempfile

    plan_hold = hold if plan_hold is None else plan_hold
    with tempfile.TemporaryDirectory() as tmp:
        src, out = Path(tmp, "body.s"), Path(tmp, "loop.s")
        src.write_text(body)
        plan = command_json("pipeline", src, "--config", f"sfu_hold={plan_hold}", "-o", out)
        lines = out.read_text().splitlines(keepends=True)
        out.write_text("".join(ln for ln in lines if not ln.startswith("# machine")))
        loop = command_json("sim", out, "--config", f"sfu_hold={hold}")["loops"][0]
    per = loop["source_per_pass"]
    return {"pushes": body.count("vexp2"), "res_mii": plan["res_mii"],
            "rec_mii": plan["rec_mii"], "ii": plan["ii"], "stages": plan["stages"],
            "cycles_per_iter": loop["cycles_per_source_iter"],
            "stalls_per_iter": loop["stalls_per_iter"] / per,
            "hold_stalls_per_iter": loop["stalls_by_cause"].get("sfu-hold", 0) / per,
            "other_stalls": {k: v for k, v in loop["stalls_by_cause"].items()
                             if k != "sfu-hold"}}


def one_chain_rows(holds: tuple) -> list[dict]:
    """The one-chain loop at each hold-issue of ``holds``, planned with the hold and with hold
    0, run on the machine with the hold: II and measured cycles and stall cycles for the hold
    per iteration, side by side."""
    rows = []
    for h in holds:
        booked, blind = one_chain_point(h), one_chain_point(h, plan_hold=0)
        rows.append({"hold": h, "booked": booked, "blind": blind})
    return rows


def one_chain_table(rows) -> str:
    """``one_chain_rows`` as a table with human headers."""
    return markdown_table([{
        "hold-issue": r["hold"], "SFU cycles a push books": 1 + r["hold"],
        "II planned with the hold": r["booked"]["ii"],
        "cycles / iteration (with the hold)": f"{r['booked']['cycles_per_iter']:g}",
        "II planned with hold 0": r["blind"]["ii"],
        "cycles / iteration (hold 0)": f"{r['blind']['cycles_per_iter']:g}",
        "of which stalls for the hold": f"{r['blind']['hold_stalls_per_iter']:g}"}
        for r in rows], fmt=lambda _, v: str(v))


def span_bound(config, n_push: int) -> dict:
    """The sum-exp iteration's issue span (last issue + 1) from below. Its ``chain`` (load,
    unpack, sub, mul, exp2, pop, add) ends when the last add's result is ready; the first
    chain's add issues the add's latency before that, the last push ``n_push`` − 1 push
    spacings (1 + hold) after the first, so the span is at least chain − VALU latency + 1 +
    (n_push − 1) × (1 + hold)."""
    lat = config.latency
    chain = lat["ld"] + 3 * lat["valu"] + lat["sfu"] + lat["pop"] + lat["valu"]
    return {"chain": chain,
            "span": chain - lat["valu"] + 1 + (n_push - 1) * (1 + config.sfu_hold)}


def span_rows(body, config, sfu_latencies) -> list[dict]:
    """Per SFU latency: the issue-span bound, the one-stage schedule's length and the modulo
    schedule's length, II and stages (``iteration_timing``)."""
    from rslab.schedule import SlotModel, modulo_schedule

    n_push = sum(op.is_push for op in body)
    rows = []
    for latency in sfu_latencies:
        c = config.with_(latency={"sfu": latency})
        model = SlotModel.from_config(c)
        one = modulo_schedule(body, model, max_stages=1, reserve_scalar=1)
        rows.append({"sfu": latency, **span_bound(c, n_push), "one_stage": one.length,
                     **iteration_timing(modulo_schedule(body, model, reserve_scalar=1))})
    return rows


def program_tail(text: str, run) -> dict:
    """Where a pipelined program's cycles go after its loop, from ``run``'s trace: the setup
    bundles before the first loop op, the cycle the loop's last bundle ends (its epilogue,
    counted from the setup's end), the bundles of the final reduction before the halt, their
    stall cycles by cause, and the drain: the cycles the run waits after the halt issues for
    the last pending result."""
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]
    body = [i for i, ln in enumerate(lines) if "#@" in ln]
    after = [b for b in run.trace.bundles if b.pc > body[-1]]
    halt = next(b for b in after if b.ops == ("halt",))
    return {"setup": body[0],
            "loop_end": max(b.cycle for b in run.trace.bundles if b.pc <= body[-1]) + 1 - body[0],
            "reduction_bundles": sum(1 for b in after if b is not halt),
            "reduction_stalls": {c: sum(b.stall for b in after if b.cause == c)
                                 for c in {b.cause for b in after if b.stall}},
            "halt": halt.cycle, "drain": run.cycles - halt.cycle, "cycles": run.cycles}


def file_tail(path) -> dict:
    """:func:`program_tail` of the program file ``path``, run on the machine its
    ``# machine:`` line records (zero memory, as ``rslab sim`` without ``--vmem``)."""
    from rslab.machine import assemble, simulate
    from rslab.machine.overrides import recorded_machine

    text = Path(path).read_text()
    return program_tail(text, simulate(assemble(text), recorded_machine(text)[1], trace=True))


def row_accounting(vocab: int) -> dict:
    """The whole-row sum-exp run's cycles after the setup, against ResMII × iterations +
    (stages − 1) × II, term by term: how many cycles before that prediction the epilogue
    ends (``short``: the schedule's stages × II − length, ``last_op``, plus what the partial
    final iteration leaves out, ``partial``: length − the span of the ops it has), then the
    reduction's bundles before the halt, their RAW stalls and the drain after the halt
    (:func:`program_tail`)."""
    from rslab.kernels.studies.sumexp_loop import packed_row, sumexp_program
    from rslab.machine import MachineConfig, assemble, simulate
    from rslab.machine.bf16 import round_to_bf16

    f = pb.sumexp_figures(vocab=vocab)
    row = round_to_bf16(np.random.default_rng(0).normal(size=vocab).astype(np.float32) * 3)
    text, loop = sumexp_program(-(-vocab // 256), float(row.max()))
    run = simulate(assemble(text), MachineConfig(), vmem=packed_row(row), trace=True)
    tail = program_tail(text, run)
    sch = loop.schedule
    at = {op.label: t for op, t in zip(sch.graph.ops, sch.times, strict=True)}
    last = _last_iteration_labels(text)
    return {**f, **tail, "run_stalls": run.stall_cycles,
            "raw": tail["reduction_stalls"].get("raw", 0),
            "short": f["predicted_cycles"] - tail["loop_end"],
            "last_op": sch.stage_count * sch.ii - sch.length,
            "partial": sch.length - 1 - max(at[lab] for lab in last),
            "partial_labels": sorted(lab for lab in last if not lab.startswith("@"))}


def _last_iteration_labels(text: str) -> set[str]:
    """The op labels the program's last loop iteration issues (``#@ LABEL iN sS``)."""
    ops = [tuple(a.split()[:2]) for ln in text.splitlines() if "#@" in ln
           for a in ln.split("#@", 1)[1].split(";") if len(a.split()) >= 2]
    last = max(int(it[1:]) for _, it in ops)
    return {lab for lab, it in ops if it == f"i{last}"}


def unroll_cause(loop) -> dict:
    """Why modulo variable expansion unrolls ``loop``'s kernel: its longest-lived value, the
    cycle that defines it, the cycles of its reads (a read of a later iteration counted from
    this iteration's start: its own cycle + distance × II), its lifetime (last read − def)
    and the copies it needs (lifetime / II, rounded up); the next-longest value with its
    lifetime and copies; and the kernel's VALU ops and free VALU slots."""
    sch = loop.schedule
    (name, life), (runner, runner_life) = sorted(sch.lifetimes().items(),
                                                 key=lambda kv: -kv[1])[:2]
    valu = sch.mrt()["valu"]
    ops, times = sch.graph.ops, sch.times
    producer = next(k for k, op in enumerate(ops) if op.dst == name)
    reads = sorted((times[e.dst] + e.distance * sch.ii, ops[e.dst].opcode, e.distance)
                   for e in sch.graph.edges if e.kind == "flow" and e.src == producer)
    return {"value": name, "defined": times[producer], "def_opcode": ops[producer].opcode,
            "reads": reads, "lifetime": life, "ii": sch.ii, "copies": -(-life // sch.ii),
            "unroll": loop.expansion.unroll, "next": runner, "next_lifetime": runner_life,
            "next_copies": -(-runner_life // sch.ii), "valu_ops": sum(map(len, valu)),
            "valu_free": len(valu) * sch.graph.model.units["valu"] - sum(map(len, valu))}


CROSS_CHECK_NAMES = {"sumexp": "sum-exp, pipelined", "sumexp-hold0": "sum-exp, planned with hold 0",
                     "sumexp-serial": "sum-exp, one stage (nops)",
                     "sumexp-serial-compact": "sum-exp, one stage (stalls)",
                     "residual": "residual-Gumbel", "bonus": "bonus Gumbel-argmax"}


def cross_check_table(rows) -> str:
    """``pipeline_trace.cross_check`` rows as a table with human headers, per source
    iteration."""
    out = [{"loop": CROSS_CHECK_NAMES[r["loop"]], "planned II": r["planned II"],
            "stages": r["stages"], "kernel unroll": r["unroll"],
            "cycles / iteration (trace)": f"{r['trace cycles/iter']:g}",
            "cycles / iteration (differencing)": f"{r['diff cycles/iter']:g}",
            "stalls / iteration (trace)": f"{r['trace stalls/iter']:g}",
            "stalls / iteration (differencing)": f"{r['diff stalls/iter']:g}"}
           for r in rows]
    return markdown_table(out, fmt=lambda _, v: str(v))


def table(rows, digits: int = 3) -> str:
    """Rows of dicts as a Markdown table, floats to ``digits`` significant digits."""
    return markdown_table(rows, fmt=lambda _, v: f"{v:.{digits}g}" if isinstance(v, float)
                          else str(v))


def fifo_entries(sfu_latencies: tuple) -> list[int]:
    """The most SFU FIFO entries the sum-exp schedule holds at once, per SFU latency (the
    default machine otherwise): where a longer latency's results wait."""
    from rslab.kernels.studies.sumexp_loop import sumexp_loop
    from rslab.machine import MachineConfig
    from rslab.schedule import SlotModel

    return [sumexp_loop(16, model=SlotModel.from_config(MachineConfig().with_(
        latency={"sfu": L}))).schedule.fifo_occupancy() for L in sfu_latencies]


def fifo_binds(holds: tuple, start: int) -> dict:
    """Per hold-issue: the first SFU latency from ``start`` up at which the sum-exp loop's FIFO
    bound (pushes × (SFU + pop latency) / FIFO depth) exceeds every other resource's, with
    the ResMII there (``rslab.schedule.analyse``; no schedule is built)."""
    from rslab.kernels.studies.sumexp_loop import sumexp_body
    from rslab.machine import MachineConfig
    from rslab.schedule import SlotModel, analyse

    body, found = sumexp_body(), {}
    for hold in holds:
        latency = start
        while True:
            b = analyse(body, SlotModel.from_config(MachineConfig().with_(
                sfu_hold=hold, latency={"sfu": latency})), reserve_scalar=1)
            if b.res_binding == "fifo":
                found[hold] = {"latency": latency, "res_mii": b.res_mii}
                break
            latency += 1
    return found


def sweep_best(rows) -> dict:
    """From ``rslab pipeline --sweep --json`` rows: per unroll, the scheduled row of the
    fewest cycles per source iteration."""
    best = {}
    for r in rows:
        if r["status"] == "ok" and (r["unroll"] not in best or r["cycles_per_source_iteration"]
                                    < best[r["unroll"]]["cycles_per_source_iteration"]):
            best[r["unroll"]] = r
    return best


def sweep_table(rows) -> str:
    """``--sweep`` rows as a table: unroll, II, MII, cycles per source iteration and the whole
    program's bundles if nothing stalls, or why no schedule exists at that II."""
    def ok(r, key, fmt=str):
        return fmt(r[key]) if r["status"] == "ok" else "–"
    out = [{"unroll": r["unroll"], "II": r["ii"], "MII": r["mii"],
            "cycles / source iteration": (f"{r['cycles_per_source_iteration']:.3g}"
                                          if r["status"] == "ok" else "no schedule found"),
            "stages": ok(r, "stages"), "program bundles (no stall)": ok(r, "program_cycles")}
           for r in rows]
    return markdown_table(out, fmt=lambda _, v: str(v))


def unrolled_program(body_file, unroll: int, machine: tuple, out) -> dict:
    """``rslab pipeline BODY --unroll K -o OUT`` then ``rslab sim OUT --json``: the program's
    cycles and bundles, and per loop its iterations and cycles per source iteration (the
    unrolled loop, then the remainder's loop when the trip count is not a multiple of K)."""
    import json

    command_output("pipeline", body_file, *machine, "--unroll", str(unroll), "-o", out)
    run = json.loads(command_output("sim", out, "--json"))
    return {"cycles": run["cycles"], "bundles": run["bundles"],
            "loops": [{"iterations": lp["iterations"], "per_pass": lp["source_per_pass"],
                       "cycles_per_source_iter": lp["cycles_per_source_iter"]}
                      for lp in run["loops"]]}


def remainder_loop(program_text: str, body_file) -> dict:
    """The remainder's loop of an unrolled program (its last ``loop`` … ``endloop``): its
    bundles, how many are ``nop``, whether each bundle holds at most one body op and the
    body ops come in ``body_file``'s order (op after op, no overlap)."""
    lines = program_text.splitlines()
    start = max(i for i, ln in enumerate(lines) if ln.startswith("loop"))
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("endloop"))
    bundles = [ln for ln in lines[start + 1:end] if ln.strip()]
    labels = [[lab.split()[0] for lab in ln.split("#@", 1)[1].split(";")
               if lab.split()[0] != "-"] for ln in bundles if "#@" in ln]
    order = [ln.split("=", 1)[0].strip() for ln in Path(body_file).read_text().splitlines()
             if "=" in ln.split("#", 1)[0] and not ln.startswith(("carried", "before:", "after:"))]
    return {"bundles": len(bundles), "nops": sum(ln.strip() == "nop" for ln in bundles),
            "op_after_op": all(len(lab) <= 1 for lab in labels)
                           and [lab[0] for lab in labels if lab] == order}


def one_stage_ii(*overrides) -> int:
    """The II of the sum-exp body scheduled with one stage (one iteration in flight) on the
    machine ``overrides`` (``KEY=VALUE`` strings, as ``--config`` takes them) describe."""
    from rslab.kernels.studies.sumexp_loop import sumexp_body
    from rslab.machine.overrides import apply_overrides
    from rslab.schedule import SlotModel, modulo_schedule

    config = apply_overrides([tuple(o.split("=", 1)) for o in overrides])
    return modulo_schedule(sumexp_body(), SlotModel.from_config(config), max_stages=1).ii
