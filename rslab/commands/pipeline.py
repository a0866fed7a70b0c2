"""``rslab pipeline BODY.s``: modulo-schedule a loop body and emit the pipelined program.

The file holds the ops of one iteration in the loop-body format (one op a line,
``VALUE = OPCODE SOURCES``; a loop-carried read is ``NAME[-1]``, the previous
iteration's value, and needs ``carried NAME=vN``; ``NAME[-d]`` reads d iterations back
(d ≤ 8) and needs d registers, ``carried NAME=vN,vM`` for d = 2 (modulo variable
expansion renames the value); memory is ``[sN + OFFSET + STRIDE*i]``;
an SFU push defines ``@TOKEN``, which one ``vpop`` takes; ``before:`` / ``after:``
lines hold the assembly around the loop; ``iterations N`` the trip count;
``registers vA-vB sC-sD`` the free registers). ``--example sumexp_body``,
``dot_bf16_body``, ``online_softmax_body`` (a carried value read before and after its
new value) and ``column_sum_body`` (a bank-conflicting strided load) are the packaged
bodies (``rslab/examples``); see the pipelining chapter.

Prints ResMII with the binding resource (a load or store books its port for its bank
conflict; each strided base's pointer increment takes a scalar slot once per kernel
pass, so the body's scalar ops must leave one slot free; the hardware loop itself issues
nothing), the memory dependences the schedule keeps (store → load, load → store,
store → store, each with its iteration distance: the format's Memory rule below), RecMII
with its critical recurrence, the schedule found (iterative modulo scheduling;
``--exact`` asks the integer program from MII up; ``--ii N`` schedules at N only), the
bottleneck as ``rslab sim`` names it for the run (the unit, FIFO or recurrence that
binds, in cycles per source iteration, the II's rounding and the unroll that removes
it, the critical sequence; why the II is higher, when it is), the modulo reservation
table and the stage table, then writes the whole program (before, prologue / kernel /
epilogue, after, halt) to ``-o FILE`` or prints it (``-o -``: the program alone on
stdout, the report on stderr), ready for ``rslab sim``. Each emitted op of the body
carries a ``#@ LABEL iN sK`` note (its body op, source iteration, stage), which
``rslab sim`` shows in its timeline and trace. ``--unroll K`` schedules K source
iterations as one (the last iterations mod K run op after op); ``--sweep`` prints the
cycles per source iteration over IIs and unrolls instead. Errors read
``FILE:LINE: error: ...``; exit status 2.
"""

import json
import sys
from pathlib import Path

from rslab.commands.argtypes import assignment, count, lazy_epilog, positive_int
from rslab.commands.sim import example_file, read_source

HELP = "Modulo-schedule a loop body: MII, schedule, tables, and the pipelined assembly."


def configure(p):
    p.add_argument("file", nargs="?", default="-", metavar="BODY.s",
                   help="the loop body (- or nothing: standard input)")
    p.add_argument("--example", metavar="NAME",
                   help="the packaged body NAME.s instead (sumexp_body, dot_bf16_body, "
                        "online_softmax_body, column_sum_body)")
    p.add_argument("-o", "--output", metavar="FILE.s",
                   help="write the pipelined program here (default: print it after the "
                        "report; -: the program alone on stdout, the report on stderr, so "
                        "that 'rslab pipeline b.s -o - | rslab sim -' works)")
    p.add_argument("--iterations", type=count, metavar="N",
                   help="trip count, 0 to 1,000,000,000 (default: the file's 'iterations', "
                        "else 16)")
    p.add_argument("--exact", action="store_true",
                   help="also solve the integer program from MII up to the heuristic's II "
                        "and emit its smallest-II schedule")
    p.add_argument("--max-stages", type=positive_int, default=8, metavar="N",
                   help="stage bound of the integer program (default 8)")
    p.add_argument("--ii", type=positive_int, metavar="N",
                   help="schedule at this II only (an error says why none exists there)")
    p.add_argument("--unroll", type=positive_int, default=1, metavar="K",
                   help="schedule K source iterations as one (the last iterations mod K run "
                        "op after op); removes the rounding of a bound like 2.5 cycles")
    p.add_argument("--sweep", action="store_true",
                   help="print the schedule's cycles per source iteration over IIs and "
                        "unrolls (MII up, unroll 1, 2, 3, 4) instead of one program")
    p.add_argument("--config", type=assignment, nargs="+", action="extend", default=[],
                   metavar="KEY=VALUE",
                   help="machine changes after BODY.s, e.g. valu_slots=3 sfu_latency=20")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    lazy_epilog(p, _format_text)


def _format_text() -> str:
    from rslab.schedule import bodytext

    return bodytext.__doc__.replace("``", "`").replace("::\n", "For example:\n")


def pipeline_text(text: str, label: str = "<stdin>", pairs=(), iterations=None, exact=False,
                  max_stages=8, ii=None, unroll=1) -> dict:
    """Everything ``rslab pipeline`` reports for the loop body ``text`` (from the file
    ``label``), with the program. Every error is one ``ValueError`` ``label:LINE: ...``."""
    from rslab.kernels.loops.bodyfile import compile_body
    from rslab.machine.overrides import machine_line
    from rslab.schedule.bodytext import MAX_ITERATIONS

    config, model = _machine(pairs)
    if iterations is not None and not 0 <= iterations <= MAX_ITERATIONS:
        raise ValueError(f"--iterations must be in 0 … {MAX_ITERATIONS:,}, got {iterations}")
    done = compile_body(text, label, config, iterations, exact, max_stages, ii=ii,
                        unroll=unroll)
    return {**_report(done, label, model, config),
            "program": machine_line(config) + "\n" + done.program}


def _machine(pairs):
    """(MachineConfig, SlotModel) of the ``--config`` changes."""
    from rslab.machine.overrides import apply_overrides
    from rslab.schedule import SlotModel

    try:
        config = apply_overrides(pairs)
        return config, SlotModel.from_config(config)
    except ValueError as exc:
        raise ValueError(f"--config {exc}") from None


def _report(done, label: str, model, config) -> dict:
    """The report of a pipelined body (:func:`rslab.schedule.pipeliner.pipeline_body`)."""
    from rslab.schedule import slot_of
    from rslab.schedule.body import strided_bases
    from rslab.schedule.pipeliner import bottleneck
    from rslab.schedule.tables import mrt_text, stage_text

    plan = done.main
    bounds, chosen, exp = plan.bounds, plan.schedule, plan.expansion
    reserved = {}
    for b, (block, row) in sorted((exp.increments if exp else {}).items()):
        note = f"sadd {b} (pointer" + (f", block {block} of {exp.unroll})" if exp.unroll > 1
                                       else ")")
        reserved[("scalar", row)] = ", ".join(filter(None, [reserved.get(("scalar", row)), note]))
    return {"file": label, "ops": len(done.body.ops), "res_mii": bounds.res_mii,
            "res_binding": bounds.res_binding, "usage": bounds.usage,
            "units": dict(model.units),
            "pointer_increments": len(strided_bases(chosen.graph.ops)),
            "base_copies": dict(plan.copies),
            "memory": _memory_order(chosen.graph),
            "rec_mii": bounds.rec_mii, "critical_circuit": list(bounds.critical_circuit),
            "mii": bounds.mii, "binding": bounds.binding, "heuristic_ii": plan.heuristic.ii,
            "ii": chosen.ii, "stages": chosen.stage_count, "unroll": exp.unroll if exp else 1,
            "body_unroll": done.unroll, "iterations": done.iterations,
            "kernel_passes": exp.kernel_passes if exp else 0,
            "renamed": sorted(chosen.graph.rotating), "registers_fitted": plan.fitted,
            "remainder": done.loops[1].iterations if len(done.loops) > 1 else 0,
            "notes": _fifo_notes(done.body),
            "bottleneck": bottleneck(done, model, config),
            "exact": [{"ii": r.ii, "status": r.status, "reason": _exact_reason(r),
                       "seconds": round(r.seconds, 2)} for r in plan.tried],
            "schedule": [{"op": op.label, "slot": slot_of(op.opcode), "cycle": t,
                          "stage": t // chosen.ii, "row": t % chosen.ii}
                         for op, t in zip(chosen.graph.ops, chosen.times, strict=True)],
            "reserved": [{"slot": slot, "row": row, "op": note}
                         for (slot, row), note in reserved.items()],
            "tables": mrt_text(chosen, reserved) + "\n\n" + stage_text(chosen),
            "program": done.program}


def _fifo_notes(body) -> list:
    """A note for each vpop that takes another push's result than the token it names (the
    FIFO returns results in push order)."""
    pushes = [i for i, op in enumerate(body.ops) if op.is_push]
    pops = [i for i, op in enumerate(body.ops) if op.is_pop]
    out = []
    for p, q in zip(pushes, pops, strict=False):
        named = next(s for s in body.ops[q].srcs if isinstance(s, str) and s.startswith("@"))
        if named != body.ops[p].dst:
            out.append(f"line {body.lines[q]}: vpop {named} takes the result of "
                       f"{body.ops[p].dst} (line {body.lines[p]}): the FIFO returns results "
                       "in push order")
    return out


def _exact_reason(r) -> str:
    """Why the integer program found no schedule at one II, in the options' words."""
    if r.status == "none" and "infeasible" in r.message.lower():
        return f"no schedule within --max-stages {r.max_stages}"
    return "" if r.status == "found" else r.message


MEMORY_KINDS = {"memory flow": "store → load", "memory anti": "load → store",
                "memory output": "store → store"}
"""The memory dependences the report names (``rslab.schedule.memory``), by edge kind."""


SHOWN = 8
"""The memory dependences the text report prints (``--json`` has them all)."""


def _memory_order(graph) -> list:
    """The memory dependences of the graph: the earlier access, the later, their kind, the
    iterations between them and the cycles the later waits."""
    return [{"from": graph.ops[e.src].label, "to": graph.ops[e.dst].label,
             "kind": MEMORY_KINDS[e.kind], "distance": e.distance, "latency": e.latency}
            for e in graph.edges if e.kind in MEMORY_KINDS]


def pipeline_file(name: str, pairs=(), iterations=None, exact=False, max_stages=8,
                  **options) -> dict:
    """:func:`pipeline_text` of the body file ``name`` (``-``: standard input)."""
    label = "<stdin>" if name == "-" else name
    return pipeline_text(read_source(name), label, pairs, iterations, exact, max_stages,
                         **options)


def sweep_file(name: str, pairs=(), iterations=None) -> dict:
    """``rslab pipeline --sweep``: :func:`rslab.schedule.pipeliner.sweep` of the body file
    ``name``; errors as :func:`pipeline_text`'s."""
    from rslab.kernels.loops.bodyfile import located, parse
    from rslab.schedule.pipeliner import sweep

    label = "<stdin>" if name == "-" else name
    config, model = _machine(pairs)
    body = parse(read_source(name), label, config)
    n = iterations if iterations is not None else (body.iterations or 16)
    try:
        return {"file": label, "iterations": n, "rows": sweep(body, model, config, n)}
    except ValueError as exc:
        raise ValueError(located(body, label, str(exc))) from None


def _print_sweep(rep: dict, as_json: bool) -> int:
    if as_json:
        print(json.dumps(rep, indent=2, allow_nan=False))
        return 0
    print(f"{rep['file']}: {rep['iterations']} iterations; per unroll k (source iterations "
          "per scheduled iteration) and II: cycles per source iteration = II / k, and the "
          "program's bundles if nothing stalls")
    print(f"{'unroll':>6} {'II':>4} {'MII':>4} {'per src it':>10} {'stages':>6} "
          f"{'program':>8}  note")
    for r in rep["rows"]:
        if r["status"] != "ok":
            print(f"{r['unroll']:>6} {r['ii']:>4} {r['mii']:>4} {'-':>10} {'-':>6} {'-':>8}  "
                  f"{r['status']}")
            continue
        print(f"{r['unroll']:>6} {r['ii']:>4} {r['mii']:>4} "
              f"{r['cycles_per_source_iteration']:>10.3g} {r['stages']:>6} "
              f"{r['program_cycles']:>8}  {r['registers_fitted']}")
    return 0


def print_report(rep: dict, wrote: str | None, out=None) -> None:
    """The text report; the program too unless it was written to ``wrote``."""
    from rslab.machine.bottleneck import sequence_text

    def say(text=""):
        print(text, file=out or sys.stdout)

    circuit = " → ".join(rep["critical_circuit"] + rep["critical_circuit"][:1]) or "none"
    usage = ", ".join(f"{k} {v}/{rep['units'][k]}" for k, v in rep["usage"].items()
                      if v or (k == "scalar" and rep["pointer_increments"]))
    if rep["pointer_increments"]:
        usage += (f" + 1 kept free for the {rep['pointer_increments']} pointer increment(s), "
                  "once per kernel pass")
    say(f"{rep['file']}: {rep['ops']} ops per iteration, {rep['pointer_increments']} pointer "
        "increment(s) (sadd, scalar slot) per kernel pass; the hardware loop issues nothing")
    say(f"ResMII {rep['res_mii']} (binding: {rep['res_binding']}; cycles booked per "
        f"iteration / units: {usage})")
    order = "; ".join(f"{m['from']} → {m['to']} ({m['kind']}, {m['distance']} iteration(s) "
                      f"later, +{m['latency']} cycle(s))" for m in rep["memory"][:SHOWN])
    if len(rep["memory"]) > SHOWN:
        order += f"; and {len(rep['memory']) - SHOWN} more (--json lists them all)"
    say(f"memory dependences: {order or 'none (no store meets another access)'}")
    say(f"RecMII {rep['rec_mii']} (critical recurrence: {circuit})")
    bound = f"the recurrence {circuit}" if rep["rec_mii"] > rep["res_mii"] \
        else rep["res_binding"]
    say(f"MII {rep['mii']}: bound by {bound}")
    say(f"iterative modulo scheduling: II {rep['heuristic_ii']} (MII {rep['mii']})")
    for r in rep["exact"]:
        say(f"integer program at II {r['ii']}: {r['status']}"
            + (f", {r['reason']}" if r["reason"] else "") + f" ({r['seconds']} s)")
    for note in rep["notes"]:
        say(f"note: {note}")
    b = rep["bottleneck"]
    say(f"bottleneck: {b['sentence']}")
    say(f"  {sequence_text(b)}")
    if "why_above" in b:
        say(f"  above the rounded floor: {b['why_above']}")
    say(f"emitted: II {rep['ii']}, {rep['stages']} stages, kernel unrolled {rep['unroll']}x, "
        f"{rep['iterations']} iterations = {rep['kernel_passes']} kernel passes + "
        f"prologue and epilogue\n")
    say(rep["tables"] + "\n")
    if wrote == "-":
        return
    if wrote:
        say(f"wrote the pipelined program to {wrote} (run it: rslab sim {wrote})")
    else:
        say("pipelined program:\n" + rep["program"].rstrip("\n"))


def run(args) -> int:
    file = example_file(args.example) if args.example else args.file
    if args.output and args.output != "-" and file != "-" and Path(args.output).exists() \
            and Path(args.output).resolve() == Path(file).resolve():
        raise ValueError(f"--output {args.output}: is the body file itself: write the program "
                         "to another file")
    if args.sweep:
        return _print_sweep(sweep_file(file, args.config, args.iterations), args.json)
    rep = pipeline_file(file, args.config, args.iterations, args.exact, args.max_stages,
                        ii=args.ii, unroll=args.unroll)
    if args.output and args.output != "-":
        try:
            Path(args.output).write_text(rep["program"])
        except OSError as exc:
            raise ValueError(f"--output {args.output}: {exc}") from None
    report_to = sys.stderr if args.output == "-" else sys.stdout
    if args.json:
        data = {k: v for k, v in rep.items() if k != "tables"}  # the tables as data only
        print(json.dumps(data, indent=2, allow_nan=False), file=report_to)
    else:
        print_report(rep, args.output, report_to)
    if args.output == "-":
        sys.stdout.write(rep["program"])
    return 0
