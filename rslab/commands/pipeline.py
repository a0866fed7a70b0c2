"""``rslab pipeline BODY.s``: modulo-schedule a loop body and emit the pipelined program.

The file holds the ops of one iteration in the loop-body format (one op a line,
``VALUE = OPCODE SOURCES``; a loop-carried read is ``NAME[-1]`` and needs
``carried NAME=vN``; memory is ``[sN + OFFSET + STRIDE*i]``; an SFU push defines
``@TOKEN``, which one ``vpop`` takes; ``before:`` / ``after:`` lines hold the
assembly around the loop; ``iterations N`` the trip count; ``registers vA-vB`` the
free registers). See ``examples/sumexp_body.s`` and the pipelining chapter.

Prints ResMII with the binding resource, RecMII with its critical recurrence, the
schedule found (iterative modulo scheduling; ``--exact`` asks the integer program
from MII up), the modulo reservation table and the stage table, then writes the
whole program (before, prologue / kernel / epilogue, after, halt) to ``-o FILE``
or prints it, ready for ``rslab sim``. Errors name the line; exit status 2.
"""

import json
from pathlib import Path

from rslab.commands.argtypes import assignment, lazy_epilog, positive_int
from rslab.commands.sim import read_source

HELP = "Modulo-schedule a loop body: MII, schedule, tables, and the pipelined assembly."


def configure(p):
    p.add_argument("file", nargs="?", default="-", metavar="BODY.s",
                   help="the loop body (- or nothing: standard input)")
    p.add_argument("-o", "--output", metavar="FILE.s",
                   help="write the pipelined program here (default: print it)")
    p.add_argument("--iterations", type=positive_int, metavar="N",
                   help="trip count (default: the file's 'iterations', else 16)")
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


def _schedule(body, model, exact: bool, max_stages: int):
    """(heuristic schedule, the schedule to emit, the exact answers tried)."""
    from rslab.kernels.loops.emit import strided_bases
    from rslab.schedule import modulo_schedule
    from rslab.schedule.exact import smallest_exact

    reserve = len(strided_bases(body.ops))
    heuristic = modulo_schedule(body.ops, model, reserve_scalar=reserve)
    if not exact:
        return heuristic, heuristic, []
    found, tried = smallest_exact(heuristic.graph, max_ii=heuristic.ii, max_stages=max_stages,
                                  reserve_scalar=reserve)
    return heuristic, (found.schedule if found is not None else heuristic), tried


def pipeline_file(name: str, pairs=(), iterations=None, exact=False, max_stages=8) -> dict:
    """Everything ``rslab pipeline`` reports for the body file ``name``, with the program."""
    from rslab.machine.overrides import apply_overrides
    from rslab.schedule import SlotModel, analyse, expand
    from rslab.schedule.bodytext import parse_body
    from rslab.schedule.tables import mrt_text, stage_text

    try:
        model = SlotModel.from_config(apply_overrides(pairs))
    except ValueError as exc:
        raise ValueError(f"--config {exc}") from None
    label = "<stdin>" if name == "-" else name
    try:
        body = parse_body(read_source(name), model)
    except ValueError as exc:
        raise ValueError(f"{label}, {exc}") from None
    bounds = analyse(body.ops, model)
    heuristic, chosen, tried = _schedule(body, model, exact, max_stages)
    n = iterations or body.iterations or 16
    exp = expand(chosen, n, registers=list(body.pool), carried_registers=body.carried)
    bases = sorted(exp.pointer_step)
    reserved = {("scalar", chosen.ii - 1 - j): f"sadd {b} (pointer)" for j, b in enumerate(bases)}
    program = "\n".join(body.before) + ("\n" if body.before else "") + exp.text \
        + "\n".join(body.after + ["halt"]) + "\n"
    return {"file": label, "ops": len(body.ops), "res_mii": bounds.res_mii,
            "res_binding": bounds.res_binding, "usage": bounds.usage,
            "rec_mii": bounds.rec_mii, "critical_circuit": list(bounds.critical_circuit),
            "mii": bounds.mii, "heuristic_ii": heuristic.ii, "ii": chosen.ii,
            "stages": chosen.stage_count, "unroll": exp.unroll, "iterations": n,
            "kernel_passes": exp.kernel_passes,
            "exact": [{"ii": r.ii, "status": r.status, "seconds": round(r.seconds, 2)}
                      for r in tried],
            "reservation_table": mrt_text(chosen, reserved), "stage_table": stage_text(chosen),
            "program": program}


def print_report(rep: dict, wrote: str | None) -> None:
    circuit = " → ".join(rep["critical_circuit"] + rep["critical_circuit"][:1]) or "none"
    usage = ", ".join(f"{k} {v}" for k, v in rep["usage"].items() if v)
    print(f"{rep['file']}: {rep['ops']} ops per iteration")
    print(f"ResMII {rep['res_mii']} (binding: {rep['res_binding']}; cycles booked per "
          f"iteration: {usage})")
    print(f"RecMII {rep['rec_mii']} (critical recurrence: {circuit})")
    print(f"iterative modulo scheduling: II {rep['heuristic_ii']} (MII {rep['mii']})")
    for r in rep["exact"]:
        print(f"integer program at II {r['ii']}: {r['status']} ({r['seconds']} s)")
    print(f"emitted: II {rep['ii']}, {rep['stages']} stages, kernel unrolled {rep['unroll']}x, "
          f"{rep['iterations']} iterations = {rep['kernel_passes']} kernel passes + "
          f"prologue and epilogue\n")
    print(rep["reservation_table"] + "\n")
    print(rep["stage_table"] + "\n")
    if wrote:
        print(f"wrote the pipelined program to {wrote} (run it: rslab sim {wrote})")
    else:
        print("pipelined program:\n" + rep["program"], end="")


def run(args) -> int:
    rep = pipeline_file(args.file, args.config, args.iterations, args.exact, args.max_stages)
    if args.output:
        try:
            Path(args.output).write_text(rep["program"])
        except OSError as exc:
            raise ValueError(f"--output {args.output}: {exc}") from None
    if args.json:
        print(json.dumps(rep, indent=2))
    else:
        print_report(rep, args.output)
    return 0
