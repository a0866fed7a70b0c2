"""``rslab sim FILE.s``: assemble and simulate a program, and say where the cycles went.

Prints cycles, IPC, stall cycles by cause (each with its meaning), slot
utilisation and, for every hardware loop, its steady-state cycles and stalls per
iteration. ``--timeline [START:END]`` adds an llvm-mca-style timeline (one row per
op, the stall cause's letter before each issue); ``--trace out.json`` writes a
Perfetto trace (slices with args, dependency arrows for the ``--flows`` window) of the
cycles ``--trace-window START:END`` (default: the whole run), cut at a bound on its
ops (``--trace`` below) with a note saying where. The machine: ``--config key=value``
(``valu_slots=3 sfu_latency=20``, each key once; an unknown key's error lists the
keys); without it, the machine the program's ``# machine: ...`` line records
(``rslab pipeline`` writes one as the first line), else the default machine. A program
whose line records another machine than ``--config`` asks for is refused, naming both.
``--vmem FILE.npy[@ADDR][:KIND]`` loads arrays into VMEM before the run and
``--dump-vmem ADDR:LEN[:KIND] OUT.npy`` writes VMEM values after it (the kinds below).
The assembly syntax is the machine chapter's: one bundle per line, ops separated by
``;``, ``loop N`` … ``endloop``, ``halt``.
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

from rslab.commands.argtypes import assignment, chip_cores, cycles, positive_int, window
from rslab.machine.perfetto import MAX_TRACE_OPS
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
                   help="machine changes after FILE, e.g. valu_slots=3 sfu_latency=20 (each "
                        "key once); without it, the machine the program's '# machine:' line "
                        "records (rslab pipeline writes one), else the default machine; a "
                        "program recording another machine is refused")
    p.add_argument("--vmem", action="append", default=[], metavar="FILE.npy[@ADDR][:KIND]",
                   help="place a .npy array in VMEM at byte ADDR (default 0; repeatable): "
                        "float32, int32 or uint32 values one per word; BF16 bit patterns as "
                        "uint16 with KIND bf16 (in order, two per word) or bf16-packed (the "
                        "machine chapter's packed layout); float32 with a bf16 KIND is "
                        "rounded to BF16. 8-byte arrays (float64, int64) are refused: save "
                        "a.astype(numpy.float32)")
    p.add_argument("--dump-vmem", nargs=2, action="append", default=[],
                   metavar=("ADDR:LEN[:KIND]", "OUT.npy"),
                   help="after the run, write LEN values of KIND (f32 default, i32, u32; bf16 "
                        "or bf16-packed as uint16 bit patterns) read from byte ADDR to OUT.npy "
                        "(repeatable)")
    p.add_argument("--timeline", type=window, nargs="?", const=DEFAULT_TIMELINE,
                   metavar="START:END", help="print a timeline of these cycles (default 0:40)")
    p.add_argument("--trace", metavar="OUT.json",
                   help="write a Perfetto (Chrome JSON) trace of the run, at most "
                        f"{MAX_TRACE_OPS:,} ops (about {MAX_TRACE_OPS * 240 // 10**6} MB): a "
                        "longer run's trace stops there and says so")
    p.add_argument("--trace-window", type=cycles, metavar="START:END",
                   help="only the ops and stalls of these cycles in the trace")
    p.add_argument("--flows", type=window, metavar="START:END",
                   help="cycles whose ops get dependency arrows in the trace (default: the "
                        "timeline window, else the trace's first 64 cycles)")
    p.add_argument("--regs", type=registers, metavar="R,R,...",
                   help="print these registers at the end, e.g. s3,v50")
    p.add_argument("--max-steps", type=step_limit, default=DEFAULT_MAX_STEPS, metavar="N",
                   help="stop a runaway program after N steps: bundles issued plus loop "
                        f"directives executed (default {DEFAULT_MAX_STEPS:,}, at most "
                        f"{MAX_STEPS_LIMIT:,})")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--cores", type=chip_cores, metavar="C",
                   help="run the program on a chip of C cores (1-64): one program for all "
                        "(scid reads the core's index) or a section per core ('.core N'); "
                        "--config then takes the chip's settings too "
                        "(hbm_bytes_per_cycle=576); see rslab.machine.sections")


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


def program_machine(text: str, label: str, asked=None, option: str = "--config"):
    """``(machine, where it comes from)`` for the program ``text`` of file ``label``: the
    machine ``asked`` (a ``MachineConfig``; None: the one the program's ``# machine:``
    line records, else the default). A ``ValueError`` naming both when the program records
    another machine than the one asked (by ``option``)."""
    from rslab.machine import MachineConfig
    from rslab.machine.overrides import machine_text, recorded_machine

    try:
        recorded = recorded_machine(text)
    except ValueError as exc:
        raise ValueError(f"{label}:{exc}") from None
    if recorded is None:
        return (asked, option) if asked is not None else (MachineConfig(), "default")
    line, machine = recorded
    if asked is None:
        return machine, f"the program's '# machine:' line {line}"
    if machine_text(asked) != machine_text(machine):
        raise ValueError(f"{label}:{line}: the program was scheduled for the machine "
                         f"'{machine_text(machine)}' (this line), but {option} asks for "
                         f"'{machine_text(asked)}'; drop {option} to run it on its own "
                         "machine, or delete the line")
    return asked, option


def asked_machine(pairs):
    """The machine of ``--config`` ``pairs`` (None without any)."""
    from rslab.machine.overrides import apply_overrides

    try:
        return apply_overrides(pairs) if pairs else None
    except ValueError as exc:
        raise ValueError(f"--config {exc}") from None


def assemble_text(text: str, label: str):
    """The ``Program`` of ``text``; an ``AssemblyError`` as ``ValueError`` ``label:LINE: ...``."""
    from rslab.machine import AssemblyError, assemble

    try:
        return assemble(text)
    except AssemblyError as exc:
        raise ValueError(f"{label}:{exc.line}: {exc.message}: {exc.text.strip()!r}") from None


def run_program(program, config, label: str, *, vmem=None, max_steps=DEFAULT_MAX_STEPS,
                trace=True, **registers):
    """``simulate`` the program of file ``label``; a ``MachineError`` as ``ValueError``
    naming the file and line."""
    from rslab.machine import MachineError, simulate

    try:
        return simulate(program, config, vmem=vmem, trace=trace, max_steps=max_steps,
                        **registers)
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
    if "machine" in rep:
        print(f"machine: {rep['machine']['settings']} (from {rep['machine']['from']})")
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
    from rslab.commands.vmemfiles import dumps, load_vmem, vmem_spec, write_dumps
    from rslab.machine.overrides import machine_text
    from rslab.machine.timeline import timeline

    if args.trace_window and not args.trace:
        raise ValueError("--trace-window needs --trace OUT.json")
    file = example_file(args.example) if args.example else args.file
    if args.cores is not None:
        from rslab.commands.chipsim import run_chip

        for option, given in (("--timeline", args.timeline), ("--dump-vmem", args.dump_vmem),
                              ("--trace-window", args.trace_window)):
            if given:
                raise ValueError(f"{option}: not with --cores (open the --trace in Perfetto)")
        return run_chip(args, file, read_source(file))
    asked = asked_machine(args.config)
    name = "<stdin>" if file == "-" else file
    source = read_source(file)
    config, origin = program_machine(source, name, asked)
    program = assemble_text(source, name)
    vmem = load_vmem(args.vmem, config.vmem_bytes)
    inputs = [file] * (file != "-") + [vmem_spec(v)[0] for v in args.vmem]
    chosen = dumps(args.dump_vmem, config.vmem_bytes, inputs)
    sim = run_program(program, config, name, vmem=vmem, max_steps=args.max_steps)
    rep = report(sim, name)
    rep["machine"] = {"settings": machine_text(config), "from": origin}
    if args.regs:
        rep["registers"] = register_values(sim, args.regs)
    if args.timeline:
        rep["timeline"] = timeline_rows(sim, *args.timeline) if args.json \
            else timeline(sim.trace, *args.timeline)
    if args.trace:
        rep["trace"] = write_trace(sim, args.trace, args.trace_window,
                                   args.flows or args.timeline)
    if chosen:
        rep["dumps"] = write_dumps(sim, chosen)
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
        t = rep["trace"]
        print(f"\nwrote {t['path']} (open it in ui.perfetto.dev; 1 us there = 1 cycle): "
              f"cycles {t['window'][0]}-{t['window'][1] - 1}, {t['ops']:,} ops, dependency "
              f"arrows for cycles {t['flows'][0]}-{t['flows'][1] - 1}"
              + (f"; {t['note']}" if t["note"] else ""))
    for d in rep.get("dumps", []):
        print(f"wrote {d['path']}: {d['count']:,} {d['kind']} values ({d['dtype']}) from VMEM "
              f"byte {d['address']:,}")
    return 0


def write_trace(run, path: str, asked, flows) -> dict:
    """Write the Perfetto trace of the cycles ``asked`` (None: the whole run), cut to
    ``MAX_TRACE_OPS`` ops; what it holds, as a report record."""
    from rslab.machine.perfetto import bounded_window

    window, ops, cut = bounded_window(run.trace, asked)
    flows = flows or (window[0], min(window[1], window[0] + 64))
    try:
        run.trace.write_chrome(path, flows=flows, window=window)
    except OSError as exc:
        raise ValueError(f"--trace {path}: {exc}") from None
    note = (f"cut at cycle {window[1]:,}: a trace holds at most {MAX_TRACE_OPS:,} ops; "
            "choose the cycles with --trace-window START:END") if cut else ""
    return {"path": path, "window": list(window), "ops": ops, "flows": list(flows),
            "note": note}
