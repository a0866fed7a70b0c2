"""``rslab sim FILE.s``: assemble and simulate a program, and say where the cycles went.

Prints cycles, IPC, stall cycles by cause (each with its meaning), slot
utilisation and, for every hardware loop, its steady-state cycles and stalls per
iteration. ``--timeline [START:END]`` adds an llvm-mca-style timeline (one row per
op, the stall cause's letter before each issue); ``--trace out.json`` writes a
Perfetto trace (slices with args, dependency arrows for the ``--flows`` window);
``--config key=value`` changes the machine (``valu_slots=3 sfu_latency=20``; an
unknown key's error lists the keys). The assembly syntax is the machine chapter's: one
bundle per line, ops separated by ``;``, ``loop N`` … ``endloop``, ``halt``.
Each hardware loop is reported as llvm-mca reports one (:mod:`rslab.machine.pressure`):
cycles per iteration and per source iteration, what binds, the resource pressure per
unit and per op, and each op's average wait with its cause. ``--example NAME`` runs
a packaged example. Errors read ``FILE:LINE: error: ...``; the exit status is 2.
"""

import argparse
import json
import math
import sys
from pathlib import Path

from rslab.commands.argtypes import assignment, positive_int, window
from rslab.machine.simulator import DEFAULT_MAX_STEPS, MAX_STEPS_LIMIT

HELP = "Assemble and simulate a program: cycles, stalls by cause, loops, timeline, trace."
DEFAULT_TIMELINE = (0, 40)


def configure(p):
    p.add_argument("file", nargs="?", default="-", metavar="FILE.s",
                   help="the assembly program (- or nothing: standard input)")
    p.add_argument("--example", metavar="NAME",
                   help="run the packaged example NAME.s instead (sumexp: the pipelining "
                        "chapter's sum-exp loop)")
    p.add_argument("--config", type=assignment, nargs="+", action="extend", default=[],
                   metavar="KEY=VALUE",
                   help="machine changes after FILE, e.g. valu_slots=3 sfu_latency=20")
    p.add_argument("--vmem", metavar="FILE.npy[@ADDR]",
                   help="initial VMEM: a .npy array placed at byte ADDR (default 0)")
    p.add_argument("--timeline", type=window, nargs="?", const=DEFAULT_TIMELINE,
                   metavar="START:END", help="print a timeline of these cycles (default 0:40)")
    p.add_argument("--trace", metavar="OUT.json", help="write a Perfetto (Chrome JSON) trace")
    p.add_argument("--flows", type=window, metavar="START:END",
                   help="cycles whose ops get dependency arrows in the trace (default: the "
                        "timeline window, else 0:64)")
    p.add_argument("--regs", type=registers, metavar="R,R,...",
                   help="print these registers at the end, e.g. s3,v50")
    p.add_argument("--max-steps", type=step_limit, default=DEFAULT_MAX_STEPS, metavar="N",
                   help="stop a runaway program after N steps: bundles issued plus loop "
                        f"directives executed (default {DEFAULT_MAX_STEPS:,}, at most "
                        f"{MAX_STEPS_LIMIT:,})")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def step_limit(text: str) -> int:
    """A positive step count no larger than ``MAX_STEPS_LIMIT``."""
    value = positive_int(text)
    if value > MAX_STEPS_LIMIT:
        raise argparse.ArgumentTypeError(f"at most {MAX_STEPS_LIMIT:,} steps, got {text!r}")
    return value


def registers(text: str) -> list[tuple[str, int]]:
    """``s3,v50`` as [("s", 3), ("v", 50)]."""
    out = []
    for part in text.split(","):
        part = part.strip()
        if len(part) < 2 or part[0] not in "sv" or not part[1:].isdigit():
            raise argparse.ArgumentTypeError(f"expected registers such as s3,v50, got {text!r}")
        out.append((part[0], int(part[1:])))
    return out


def register_values(run, regs) -> dict:
    """Final values: a scalar as unsigned, signed and float32; a vector's first 8 lanes."""
    out = {}
    for kind, i in regs:
        limit = run.config.sregs if kind == "s" else run.config.vregs
        if i >= limit:
            raise ValueError(f"--regs: {kind}{i} does not exist ({kind}0..{kind}{limit - 1})")
        if kind == "s":
            out[f"s{i}"] = {"u32": run.sreg(i), "i32": run.sreg_i32(i),
                            "f32": json_float(run.sreg_f32(i))}
        else:
            out[f"v{i}"] = {"f32_lanes_0_7": [json_float(x) for x in run.vreg(i)[:8]]}
    return out


def json_float(x):
    """``x`` as a JSON number, or the string ``"nan"``, ``"inf"``, ``"-inf"`` (JSON has no
    such numbers)."""
    x = float(x)
    return x if math.isfinite(x) else str(x)


def example_file(name: str) -> str:
    """The path of the packaged example ``NAME.s`` (``rslab/examples``); a ``ValueError``
    listing them if there is none."""
    folder = Path(__file__).resolve().parents[1] / "examples"
    path = folder / f"{name}.s"
    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in folder.glob("*.s")))
        raise ValueError(f"--example: no example {name!r}; the examples: {known}")
    return str(path)


def read_source(name: str) -> str:
    """The text of ``name`` (``-``: standard input); a ``ValueError`` if it cannot be read."""
    if name == "-":
        return sys.stdin.read()
    try:
        return Path(name).read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"cannot read {name}: {exc}") from None


def load_vmem(spec: str | None):
    """``FILE.npy[@ADDR]`` as ``{ADDR: array}`` for ``simulate``."""
    if spec is None:
        return None
    import numpy as np

    path, _, addr = spec.partition("@")
    try:
        address = int(addr, 0) if addr else 0
        data = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise ValueError(f"--vmem {spec}: {exc}") from None
    if not isinstance(data, np.ndarray):
        data.close()
        raise ValueError(f"--vmem {spec}: expected one array saved by numpy.save (.npy), "
                         "got an archive of several (.npz)")
    if data.dtype.kind not in "uif" or address < 0 or address % 4:
        raise ValueError(f"--vmem {spec}: needs a numeric array at a non-negative byte "
                         f"address that is a multiple of 4, got {data.dtype} at {address}")
    return {address: data}


def simulate_file(name: str, pairs, vmem_spec=None, max_steps=DEFAULT_MAX_STEPS):
    """Assemble and simulate ``name`` with the machine changes ``pairs``; the traced ``Run``.
    Errors as ``ValueError`` naming the file and line."""
    from rslab.machine import AssemblyError, MachineError, assemble, simulate
    from rslab.machine.overrides import apply_overrides

    try:
        config = apply_overrides(pairs)
    except ValueError as exc:
        raise ValueError(f"--config {exc}") from None
    label = "<stdin>" if name == "-" else name
    try:
        program = assemble(read_source(name))
    except AssemblyError as exc:
        raise ValueError(f"{label}:{exc.line}: {exc.message}: {exc.text.strip()!r}") from None
    vmem = load_vmem(vmem_spec)
    try:
        return simulate(program, config, vmem=vmem, trace=True, max_steps=max_steps)
    except MachineError as exc:
        where = f"{label}:{exc.line}" if exc.line is not None else label
        when = "" if exc.cycle is None else f", cycle {exc.cycle}"
        raise ValueError(f"{where}: {exc.message} (pc {exc.pc}{when}: {exc.op!r})") from None


def loop_report(run) -> list[dict]:
    """Per hardware loop: :func:`rslab.machine.pressure.loop_pressure`."""
    from rslab.machine.pressure import loop_pressure

    return [loop_pressure(run, i) for i in range(len(run.program.loops()))]


def timeline_rows(run, start: int, end: int) -> list[dict]:
    """The ops issued in cycles ``start`` … ``end`` − 1: pc, line, text, issue and ready
    cycles, stall cycles before the bundle and their cause (the timeline as data)."""
    bundles = run.trace.bundles
    return [{"pc": op.pc, "line": run.program.entries[op.pc].line, "op": op.text,
             "issue": op.issue, "ready": op.ready, "stall": bundles[op.bundle].stall,
             "cause": bundles[op.bundle].cause}
            for op in run.trace.ops if start <= op.issue < end]


def report(run, name: str) -> dict:
    """Everything ``rslab sim`` prints, as one JSON-ready object."""
    from rslab.machine.stalls import meaning

    s = run.summary()
    return {"file": name, "cycles": s["cycles"], "bundles": s["bundles"], "ops": s["ops"],
            "ipc": s["ipc"], "drain": s["drain"], "stall_cycles": s["stall_cycles"],
            "stalls": {c: {"cycles": n, "meaning": meaning(c)} for c, n in s["stalls"].items()},
            "utilisation": s["utilisation"], "loops": loop_report(run)}


def print_report(rep: dict) -> None:
    print(f"{rep['file']}: {rep['cycles']} cycles, {rep['bundles']} bundles, {rep['ops']} ops, "
          f"IPC {rep['ipc']:.2f} (drain after halt {rep['drain']} cycles)")
    print(f"\nstall cycles: {rep['stall_cycles']}")
    for cause, st in rep["stalls"].items():
        print(f"  {cause:<14}{st['cycles']:>8}  {st['meaning']}")
    print("\nslot utilisation: " + ", ".join(f"{slot} {100 * u:.1f} %"
                                             for slot, u in rep["utilisation"].items()))
    for lp in rep["loops"]:
        print_loop(lp)


def print_loop(lp: dict) -> None:
    """One hardware loop's steady state, what binds it, and its pressure and waits per op."""
    from rslab.machine.bottleneck import sequence_text

    head = f"\nloop {lp['loop']} (line {lp['line']}, {lp['text']}): {lp['iterations']} iterations"
    if "cycles_per_iter" not in lp:
        print(head + "; too few for a steady state")
        return
    causes = ", ".join(f"{c} {v:g}" for c, v in lp["stalls_by_cause"].items())
    per = lp["source_per_pass"]
    print(head + f"\n  steady state (after {lp['warmup']} warm-up, {lp['measured']} measured): "
          f"{lp['cycles_per_iter']:g} cycles per iteration"
          + (f" = {lp['cycles_per_source_iter']:g} per source iteration ({per} per pass)"
             if per > 1 else "")
          + f"; {lp['stalls_per_iter']:g} stall cycles"
          + (f" ({causes})" if causes else "")
          + f", {lp['empty_bundles_per_iter']:g} empty bundles per iteration")
    print(f"  bound by {lp['bound']}")
    print(f"  bottleneck: {lp['bottleneck']['sentence']}\n  "
          + sequence_text(lp["bottleneck"]))
    units = [s for s, u in lp["units"].items() if u["booked"]]
    print("  resource pressure per iteration (cycles booked / units):  "
          + "  ".join(f"{s} {lp['units'][s]['booked']}/{lp['units'][s]['units']} "
                      f"({100 * lp['units'][s]['utilisation']:.0f} %)" for s in units))
    width = max([len(o["op"]) for o in lp["ops"]] + [2])
    print(f"  {'op':<{width}}  " + "".join(f"{s:>7}" for s in units) + "   wait  cause")
    for o in lp["ops"]:
        cells = "".join(f"{o['pressure']:>7.2f}" if o["slot"] == s else f"{'':>7}"
                        for s in units)
        why = "" if not o["wait"] else f"{o['cause']}" + (
            f" on {o['waited_for']}" if o["waited_for"] else "")
        print(f"  {o['op']:<{width}}  {cells} {o['wait']:>6.2f}  {why}")


def run(args) -> int:
    from rslab.machine.timeline import timeline

    file = example_file(args.example) if args.example else args.file
    sim = simulate_file(file, args.config, args.vmem, args.max_steps)
    name = "<stdin>" if file == "-" else file
    rep = report(sim, name)
    if args.regs:
        rep["registers"] = register_values(sim, args.regs)
    if args.timeline:
        rep["timeline"] = timeline_rows(sim, *args.timeline) if args.json \
            else timeline(sim.trace, *args.timeline)
    if args.trace:
        flows = args.flows or args.timeline or (0, 64)
        try:
            sim.trace.write_chrome(args.trace, flows=flows)
        except OSError as exc:
            raise ValueError(f"--trace {args.trace}: {exc}") from None
        rep["trace"] = {"path": args.trace, "flows": list(flows)}
    if args.json:
        print(json.dumps(rep, indent=2, allow_nan=False))
        return 0
    print_report(rep)
    for reg, value in rep.get("registers", {}).items():
        print(f"\n{reg} = " + ", ".join(f"{k} {v}" for k, v in value.items()), end="")
    if rep.get("registers"):
        print()
    if args.timeline:
        print("\n" + rep["timeline"])
    if args.trace:
        print(f"\nwrote {args.trace} (open it in ui.perfetto.dev; 1 us there = 1 cycle; "
              f"dependency arrows for cycles {flows[0]}-{flows[1] - 1})")
    return 0
