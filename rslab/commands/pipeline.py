"""``rslab pipeline BODY.s``: modulo-schedule a loop body and emit the pipelined program.

The file holds the ops of one iteration in the loop-body format (one op a line,
``VALUE = OPCODE SOURCES``; a loop-carried read is ``NAME[-1]``, the previous
iteration's value, and needs ``carried NAME=vN``; ``NAME[-d]`` reads d iterations back
(d ≤ 8) and needs d registers, ``carried NAME=vN,vM`` for d = 2 (modulo variable
expansion renames the value); memory is ``[sN + OFFSET + STRIDE*i]``;
an SFU push defines ``@TOKEN``, which one ``vpop`` takes; ``before:`` / ``after:``
lines hold the assembly around the loop; ``iterations N`` the trip count;
``registers vA-vB sC-sD`` the free registers). ``--example sumexp_body`` and
``--example dot_bf16_body`` are the packaged bodies (``rslab/examples``); see the
pipelining chapter.

Prints ResMII with the binding resource (one scalar slot per iteration counted for
each strided base's pointer increment; the hardware loop itself issues nothing), the
memory dependences the schedule keeps (store → load, load → store, store → store, each
with its iteration distance: the format's Memory rule below), RecMII with its critical
recurrence, the schedule found (iterative modulo scheduling;
``--exact`` asks the integer program from MII up), the modulo reservation table and
the stage table, then writes the whole program (before, prologue / kernel / epilogue,
after, halt) to ``-o FILE`` or prints it (``-o -``: the program alone on stdout, the
report on stderr), ready for ``rslab sim``. Errors read ``FILE:LINE: error: ...``;
exit status 2.
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
                   help="the packaged body NAME.s instead (sumexp_body, dot_bf16_body)")
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
    p.add_argument("--config", type=assignment, nargs="+", action="extend", default=[],
                   metavar="KEY=VALUE",
                   help="machine changes after BODY.s, e.g. valu_slots=3 sfu_latency=20")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    lazy_epilog(p, _format_text)


def _format_text() -> str:
    from rslab.schedule import bodytext

    return bodytext.__doc__.replace("``", "`").replace("::\n", "For example:\n")


def pipeline_text(text: str, label: str = "<stdin>", pairs=(), iterations=None, exact=False,
                  max_stages=8) -> dict:
    """Everything ``rslab pipeline`` reports for the loop body ``text`` (from the file
    ``label``), with the program. Every error is one ``ValueError`` ``label:LINE: ...``."""
    from rslab.kernels.loops.bodyfile import compile_body
    from rslab.machine.overrides import apply_overrides, machine_line
    from rslab.schedule import SlotModel, slot_of
    from rslab.schedule.bodytext import MAX_ITERATIONS
    from rslab.schedule.tables import mrt_text, stage_text

    try:
        config = apply_overrides(pairs)
        model = SlotModel.from_config(config)
    except ValueError as exc:
        raise ValueError(f"--config {exc}") from None
    if iterations is not None and not 0 <= iterations <= MAX_ITERATIONS:
        raise ValueError(f"--iterations must be in 0 … {MAX_ITERATIONS:,}, got {iterations}")
    code = compile_body(text, label, config, iterations, exact, max_stages)
    body, bounds, heuristic, chosen = code.body, code.bounds, code.heuristic, code.chosen
    tried, exp, n = code.tried, code.expansion, code.iterations
    program = machine_line(config) + "\n" + code.program
    bases = sorted(exp.pointer_step) if exp else []
    reserved = {("scalar", chosen.ii - 1 - j): f"sadd {b} (pointer)" for j, b in enumerate(bases)}
    return {"file": label, "ops": len(body.ops), "res_mii": bounds.res_mii,
            "res_binding": bounds.res_binding, "usage": bounds.usage,
            "units": dict(model.units), "pointer_increments": len(bases) or
            len({op.addr.base for op in body.ops if op.addr is not None and op.addr.stride}),
            "memory": _memory_order(chosen.graph),
            "rec_mii": bounds.rec_mii, "critical_circuit": list(bounds.critical_circuit),
            "mii": bounds.mii, "binding": bounds.binding, "heuristic_ii": heuristic.ii,
            "ii": chosen.ii, "stages": chosen.stage_count, "unroll": exp.unroll if exp else 1,
            "iterations": n, "kernel_passes": exp.kernel_passes if exp else 0,
            "exact": [{"ii": r.ii, "status": r.status, "reason": _exact_reason(r),
                       "seconds": round(r.seconds, 2)} for r in tried],
            "schedule": [{"op": op.label, "slot": slot_of(op.opcode), "cycle": t,
                          "stage": t // chosen.ii, "row": t % chosen.ii}
                         for op, t in zip(chosen.graph.ops, chosen.times, strict=True)],
            "reserved": [{"slot": slot, "row": row, "op": note}
                         for (slot, row), note in reserved.items()],
            "tables": mrt_text(chosen, reserved) + "\n\n" + stage_text(chosen),
            "program": program}


def _exact_reason(r) -> str:
    """Why the integer program found no schedule at one II, in the options' words."""
    if r.status == "none" and "infeasible" in r.message.lower():
        return f"no schedule within --max-stages {r.max_stages}"
    return "" if r.status == "found" else r.message


MEMORY_KINDS = {"memory flow": "store → load", "memory anti": "load → store",
                "memory output": "store → store"}
"""The memory dependences the report names (``rslab.schedule.memory``), by edge kind."""


def _memory_order(graph) -> list:
    """The memory dependences of the graph: the earlier access, the later, their kind, the
    iterations between them and the cycles the later waits."""
    return [{"from": graph.ops[e.src].label, "to": graph.ops[e.dst].label,
             "kind": MEMORY_KINDS[e.kind], "distance": e.distance, "latency": e.latency}
            for e in graph.edges if e.kind in MEMORY_KINDS]


def pipeline_file(name: str, pairs=(), iterations=None, exact=False, max_stages=8) -> dict:
    """:func:`pipeline_text` of the body file ``name`` (``-``: standard input)."""
    label = "<stdin>" if name == "-" else name
    return pipeline_text(read_source(name), label, pairs, iterations, exact, max_stages)


def print_report(rep: dict, wrote: str | None, out=None) -> None:
    """The text report; the program too unless it was written to ``wrote``."""
    def say(text=""):
        print(text, file=out or sys.stdout)

    circuit = " → ".join(rep["critical_circuit"] + rep["critical_circuit"][:1]) or "none"
    usage = ", ".join(f"{k} {v}/{rep['units'][k]}" for k, v in rep["usage"].items() if v)
    say(f"{rep['file']}: {rep['ops']} ops per iteration, {rep['pointer_increments']} pointer "
        "increment(s) (sadd, scalar slot) per iteration; the hardware loop issues nothing")
    say(f"ResMII {rep['res_mii']} (binding: {rep['res_binding']}; cycles booked per "
        f"iteration / units: {usage})")
    order = "; ".join(f"{m['from']} → {m['to']} ({m['kind']}, {m['distance']} iteration(s) "
                      f"later, +{m['latency']} cycle(s))" for m in rep["memory"])
    say(f"memory dependences: {order or 'none (no store meets another access)'}")
    say(f"RecMII {rep['rec_mii']} (critical recurrence: {circuit})")
    bound = f"the recurrence {circuit}" if rep["rec_mii"] > rep["res_mii"] \
        else rep["res_binding"]
    say(f"MII {rep['mii']}: bound by {bound}")
    say(f"iterative modulo scheduling: II {rep['heuristic_ii']} (MII {rep['mii']})")
    for r in rep["exact"]:
        say(f"integer program at II {r['ii']}: {r['status']}"
            + (f", {r['reason']}" if r["reason"] else "") + f" ({r['seconds']} s)")
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
    rep = pipeline_file(file, args.config, args.iterations, args.exact, args.max_stages)
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
