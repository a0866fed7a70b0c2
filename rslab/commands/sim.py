"""``rslab sim FILE.s``: assemble and simulate a program, and say where the cycles went.

Prints cycles, IPC, stall cycles by cause (each with its meaning), slot
utilisation and, for every hardware loop, its steady-state cycles and stalls per
iteration. ``--timeline [START:END]`` adds an llvm-mca-style timeline (one row per
op, the stall cause's letter before each issue); ``--trace out.json`` writes a
Perfetto trace (slices with args, dependency arrows for the ``--flows`` window);
``--config key=value`` changes the machine (``valu_slots=3 sfu_latency=20``; an
unknown key's error lists the keys). The assembly syntax is the machine chapter's: one
bundle per line, ops separated by ``;``, ``loop N`` … ``endloop``, ``halt``.
Errors name the file and line, and the exit status is 2.
"""

import argparse
import json
import math
import sys
from pathlib import Path

from rslab.commands.argtypes import assignment, positive_int, window
from rslab.machine.simulator import DEFAULT_MAX_STEPS

HELP = "Assemble and simulate a program: cycles, stalls by cause, loops, timeline, trace."
DEFAULT_TIMELINE = (0, 40)


def configure(p):
    p.add_argument("file", nargs="?", default="-", metavar="FILE.s",
                   help="the assembly program (- or nothing: standard input)")
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
    p.add_argument("--max-steps", type=positive_int, default=DEFAULT_MAX_STEPS, metavar="N",
                   help="stop a runaway program after N steps: bundles issued plus loop "
                        f"directives executed (default {DEFAULT_MAX_STEPS:,})")
    p.add_argument("--json", action="store_true", help="print one JSON object")


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
    """Per hardware loop: its line, iterations, and the steady state when it ran enough."""
    out = []
    for i, pc in enumerate(run.program.loops()):
        entry = run.program.entries[pc]
        its = run.trace.loop_iterations(("index", i))
        row = {"loop": i, "line": entry.line, "text": entry.text, "iterations": len(its)}
        if len(its) >= 2:
            warmup = min(2, len(its) - 2)
            steady = run.trace.steady_state(("index", i), warmup=warmup)
            row.update(warmup=warmup, cycles_per_iter=steady["cycles_per_iter"],
                       stalls_per_iter=steady["stalls_per_iter"],
                       stalls_by_cause={c: v for c, v in steady["stalls_by_cause"].items() if v})
        out.append(row)
    return out


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
        head = (f"\nloop {lp['loop']} (line {lp['line']}, {lp['text']}): "
                f"{lp['iterations']} iterations")
        if "cycles_per_iter" not in lp:
            print(head + "; too few for a steady state")
            continue
        causes = ", ".join(f"{c} {v:g}" for c, v in lp["stalls_by_cause"].items()) or "none"
        print(head + f"\n  steady state (after {lp['warmup']} warm-up): "
              f"{lp['cycles_per_iter']:g} cycles and {lp['stalls_per_iter']:g} stall cycles "
              f"per iteration ({causes})")


def run(args) -> int:
    from rslab.machine.timeline import timeline

    sim = simulate_file(args.file, args.config, args.vmem, args.max_steps)
    name = "<stdin>" if args.file == "-" else args.file
    rep = report(sim, name)
    if args.regs:
        rep["registers"] = register_values(sim, args.regs)
    if args.timeline:
        rep["timeline"] = timeline(sim.trace, *args.timeline)
    if args.trace:
        flows = args.flows or args.timeline or (0, 64)
        try:
            sim.trace.write_chrome(args.trace, flows=flows)
        except OSError as exc:
            raise ValueError(f"--trace {args.trace}: {exc}") from None
        rep["trace"] = {"path": args.trace, "flows": list(flows)}
    if args.json:
        print(json.dumps(rep, indent=2))
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
