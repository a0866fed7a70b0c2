"""The pipelined loops seen through the simulator's trace: listings, traced runs, cross-checks.

:func:`traced` runs a generated loop program with ``simulate(..., trace=True)``;
:meth:`TracedLoop.steady` reads the cycles and stall cycles per *source*
iteration from the trace's per-pass summary of the kernel loop
(``Trace.steady_state``; a kernel pass holds ``unroll`` iterations).
:func:`cross_check` sets these beside the differencing method of
:mod:`rslab.kernels.studies.steady` (two runs that differ by a few iterations).
:func:`compact` drops the empty bundles of a program: the core then waits by
stalling instead of issuing ``nop``, and the trace charges every wait to a cause.
:func:`listing` abbreviates a program into prologue / kernel / epilogue.
"""

from __future__ import annotations

from dataclasses import dataclass

from rslab.kernels.studies.gumbel_loop import gumbel_program
from rslab.kernels.studies.steady import steady_state
from rslab.kernels.studies.sumexp_loop import sumexp_program
from rslab.schedule import SlotModel

LOOP_KINDS = ("sumexp", "sumexp-hold0", "sumexp-serial", "sumexp-serial-compact", "residual",
              "bonus")


def compact(text: str) -> str:
    """``text`` without its ``nop`` bundles (the scoreboard then makes the waits stalls)."""
    return "".join(line + "\n" for line in text.splitlines() if line.strip() != "nop")


@dataclass
class TracedLoop:
    """A traced run of one generated loop program.

    ``ii`` is the planned initiation interval, ``unroll`` the source iterations
    per kernel pass, ``iterations`` the source iterations of the program.
    """

    kind: str
    text: str
    run: object
    ii: int
    stages: int
    unroll: int
    iterations: int

    @property
    def trace(self):
        return self.run.trace

    def steady(self, warmup: int = 1) -> dict:
        """Cycles and stall cycles per source iteration in the kernel loop, from the trace."""
        s = self.trace.steady_state(("index", 0), warmup=warmup)
        return {"cycles_per_iter": s["cycles_per_iter"] / self.unroll,
                "stalls_per_iter": s["stalls_per_iter"] / self.unroll,
                "stalls_by_cause": {k: v / self.unroll for k, v in s["stalls_by_cause"].items()},
                "passes_measured": s["measured"], "spread": s["max"] - s["min"]}

    def pass_window(self, k: int) -> tuple[int, int, int, int]:
        """(first op index, op count, start cycle, stop cycle) of kernel pass ``k``."""
        its = self.trace.loop_iterations(("index", 0))
        if not 0 <= k < len(its) - 1:
            raise ValueError(f"k must be in [0, {len(its) - 2}] (a pass with a successor), "
                             f"got {k}")
        start, stop = its[k]["start"], its[k + 1]["start"]
        idx = [i for i, op in enumerate(self.trace.ops)
               if start <= op.issue < stop and op.iters]
        return idx[0], len(idx), start, stop


def _make(kind: str, config, model, iterations: int) -> tuple[str, object]:
    if kind in LOOP_KINDS and kind.startswith("sumexp"):
        stages = 1 if kind.startswith("sumexp-serial") else None
        if kind == "sumexp-hold0":
            model = model.replace(sfu_hold=0)
        text, loop = sumexp_program(2 * iterations, 0.0, model=model, max_stages=stages)
        return (compact(text) if kind.endswith("compact") else text), loop
    if kind in ("residual", "bonus"):
        return gumbel_program(kind, iterations, config=config)
    raise ValueError(f"kind must be one of {LOOP_KINDS}, got {kind!r}")


def traced(kind: str, *, config=None, passes: int = 4) -> TracedLoop:
    """Run loop ``kind`` (one of ``LOOP_KINDS``) with about ``passes`` kernel passes, traced.

    ``sumexp-serial`` is the sum-exp loop scheduled with one stage (one iteration
    in flight); ``-compact`` removes its ``nop`` bundles; ``sumexp-hold0`` is
    planned as if pushes had no hold-issue and runs on ``config``.
    """
    from rslab.machine import MachineConfig, assemble, simulate

    if not isinstance(passes, int) or passes < 3:
        raise ValueError(f"passes must be an int ≥ 3 (warm-up, measured, last), got {passes!r}")
    config = config or MachineConfig()
    model = SlotModel.from_config(config)
    _, probe = _make(kind, config, model, 8)
    sch, unroll = probe.schedule, probe.expansion.unroll
    iterations = sch.stage_count - 1 + unroll * passes
    text, loop = _make(kind, config, model, iterations)
    run = simulate(assemble(text), config, trace=True)
    return TracedLoop(kind, text, run, sch.ii, sch.stage_count, unroll, iterations)


def differenced(kind: str, *, config=None) -> dict:
    """Cycles and stalls per source iteration by differencing two untraced runs."""
    from rslab.machine import MachineConfig

    config = config or MachineConfig()
    model = SlotModel.from_config(config)
    _, probe = _make(kind, config, model, 8)
    unroll = probe.expansion.unroll
    s = steady_state(lambda n: _make(kind, config, model, n)[0],
                     probe.schedule.stage_count + 2 * unroll, 2 * unroll, config)
    return {"cycles_per_iter": s["ii"], "stalls_per_iter": s["stalls_per_iter"],
            "stalls_by_cause": s["stalls_by_cause"]}


def cross_check(kinds=LOOP_KINDS, *, config=None) -> list[dict]:
    """Per loop: planned II, cycles and stalls per iteration from the trace and by differencing."""
    rows = []
    for kind in kinds:
        t = traced(kind, config=config)
        s, d = t.steady(), differenced(kind, config=config)
        rows.append({"loop": kind, "planned II": t.ii, "stages": t.stages, "unroll": t.unroll,
                     "trace cycles/iter": s["cycles_per_iter"],
                     "trace stalls/iter": s["stalls_per_iter"],
                     "diff cycles/iter": d["cycles_per_iter"],
                     "diff stalls/iter": d["stalls_per_iter"],
                     "agree": s["cycles_per_iter"] == d["cycles_per_iter"]
                     and s["stalls_per_iter"] == d["stalls_per_iter"]})
    return rows


def listing(text: str, *, head: int = 3, tail: int = 3) -> str:
    """Prologue and epilogue abbreviated to ``head`` + ``tail`` bundles, the kernel in full.

    Each line shown carries its pc in the assembled program, the number ``rslab sim`` and
    the trace give it (``loop`` and ``endloop`` have pcs too but are not bundles; comment
    lines have none); ``#`` lines count each part's bundles and say what was left out.
    """
    from rslab.machine import assemble

    lines = text.splitlines()
    entries = assemble(text).entries
    loop = next((pc for pc, e in enumerate(entries) if e.kind == "loop"), None)
    if loop is None:
        raise ValueError("text has no kernel loop (loop … endloop)")
    pc = {e.line - 1: i for i, e in enumerate(entries)}
    lo, hi = entries[loop].line - 1, entries[entries[loop].end].line - 1

    def part(name, rng):
        idx = [i for i in rng if i in pc]
        out = [f"# {name}: {len(idx)} bundles"]
        out += [f"      {lines[i]}" for i in rng if i not in pc and lines[i].strip()
                and i < (idx[0] if idx else len(lines))]
        shown = idx if len(idx) <= head + tail + 1 else idx[:head] + [None] + idx[-tail:]
        for i in shown:
            if i is None:
                out.append(f"#   … {len(idx) - head - tail} bundles left out …")
            else:
                out.append(f"{pc[i]:4d}  {lines[i]}")
        return out

    body = [i for i in range(lo + 1, hi) if i in pc]
    kernel = ([f"{pc[lo]:4d}  {lines[lo]}"] + [f"{pc[i]:4d}    {lines[i]}" for i in body]
              + [f"{pc[hi]:4d}  {lines[hi]}"])
    return "\n".join(part("prologue (setup + pipeline fill)", range(lo))
                     + [f"# kernel: {len(body)} bundles, repeated {lines[lo].split()[1]} "
                        "times"] + kernel
                     + part("epilogue (pipeline drain + reduction)", range(hi + 1, len(lines))))
