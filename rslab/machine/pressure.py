"""Where a hardware loop's steady-state cycles go, as llvm-mca reports a loop.

For one loop of a traced run, over its iterations after a warm-up (the last one left out,
as :meth:`~rslab.machine.trace.Trace.steady_state` does): cycles per iteration and, when the
``loop`` line says how many iterations of the source loop one pass holds (``# U source
iterations per pass``, as ``rslab pipeline`` writes it), per source iteration; each unit's
booked cycles per iteration (an SFU push books 1 + ``sfu_hold``, a load or store with a
k-way bank conflict k) and utilisation (booked
over units × cycles); the binding unit; the resource pressure of each op; and each op's
average wait: the stall cycles before its bundle issued, their main cause and the op it
waited for (:mod:`rslab.machine.waits`). What binds is the saturated unit if there is
one, else the stalls' main cause, else the empty bundles the code pads with (latency
the schedule waits out in nops): never "nothing".
"""

from __future__ import annotations

from collections import Counter
from fractions import Fraction

from rslab.machine.bottleneck import Floor, binding, sentence, verdict
from rslab.machine.isa import SFU_OPS, SPECS
from rslab.machine.memory import port_cycles
from rslab.machine.recurrences import loop_recurrence, scheduled_period
from rslab.machine.waits import links


def unit_cycles(op, config) -> int:
    """Cycles the assembled ``op`` books its unit: 1 + ``sfu_hold`` for an SFU push, the
    bank-conflict degree for a vector load or store (the simulator's port booking), else 1."""
    if op.name in SFU_OPS:
        return 1 + config.sfu_hold
    if SPECS[op.name].slot in ("ld", "st"):
        stride = op.operands[2][1] if op.name in ("vld.s", "vst.s") else None
        return port_cycles(stride, config.lanes, config.vmem_banks)
    return 1


def loop_pressure(run, index: int, warmup: int = 2) -> dict:
    """The report of loop ``index`` (into ``program.loops()``); only its line, iterations and
    text when it ran fewer than two iterations."""
    trace, config = run.trace, run.config
    pc0 = run.program.loops()[index]
    entry = run.program.entries[pc0]
    its = trace.loop_bundles(("index", index))
    row = {"loop": index, "line": entry.line, "text": entry.text, "iterations": len(its)}
    if len(its) < 2:
        return row
    warmup = min(warmup, len(its) - 2)
    chosen = its[warmup:-1]
    bundles = trace.bundles
    starts = [bundles[it[0]].cycle - bundles[it[0]].stall for it in its]
    cycles = (starts[len(its) - 1] - starts[warmup]) / len(chosen)
    per = entry.per_pass
    stalls, empty, waits = Counter(), 0, {}
    found = links(trace)
    waited = found.waited
    ops = trace.ops
    for it in chosen:
        for b in it:
            rec = bundles[b]
            empty += not rec.ops
            if rec.cause is not None:
                stalls[rec.cause] += rec.stall
            w = waits.setdefault(rec.pc, {"stall": 0, "causes": Counter(), "on": Counter()})
            w["stall"] += rec.stall
            if rec.cause is not None and rec.stall:
                w["causes"][rec.cause] += rec.stall
                if b in waited:
                    w["on"][ops[waited[b]].text] += 1
    n = len(chosen)
    booked = dict.fromkeys(config.slots, 0)
    op_rows = []
    for pc in range(pc0 + 1, entry.end):
        e = run.program.entries[pc]
        if e.kind != "bundle":
            continue
        w = waits.get(pc, {"stall": 0, "causes": Counter(), "on": Counter()})
        for info, op in zip(trace.op_infos[pc], e.ops, strict=True):
            text, slot = info[0], info[1]
            cycles_booked = unit_cycles(op, config) if slot else 0
            if slot:
                booked[slot] += cycles_booked
            op_rows.append({
                "pc": pc, "line": e.line, "op": text, "slot": slot,
                "pressure": cycles_booked / config.slots[slot] if slot else 0.0,
                "wait": w["stall"] / n,
                "cause": w["causes"].most_common(1)[0][0] if w["causes"] else None,
                "waited_for": w["on"].most_common(1)[0][0] if w["on"] else None})
    units = {slot: {"units": config.slots[slot], "booked": booked[slot],
                    "utilisation": booked[slot] / (config.slots[slot] * cycles) if cycles else 0.0}
             for slot in config.slots}
    top = max(units, key=lambda s: units[s]["utilisation"])
    stall_total = sum(stalls.values()) / n
    row.update(warmup=warmup, measured=n, source_per_pass=per, cycles_per_iter=cycles,
               cycles_per_source_iter=cycles / per, stalls_per_iter=stall_total,
               stalls_by_cause={c: v / n for c, v in stalls.items() if v},
               empty_bundles_per_iter=empty / n, units=units,
               binding={"unit": top, "utilisation": units[top]["utilisation"]},
               bound=_bound(units, top, stalls, n, empty), ops=op_rows)
    total = starts[len(its) - 1] - starts[warmup]
    floors = _unit_floors(run, pc0, booked) + loop_recurrence(run, pc0, chosen, found.deps)
    row["bottleneck"] = verdict(binding(floors), Fraction(total, n * per),
                                scheduled_period(trace, chosen))
    row["bottleneck"]["sentence"] = sentence(row["bottleneck"])
    return row


def _unit_floors(run, pc0: int, booked: dict) -> list:
    """The floors of the loop's units and FIFO per source iteration, from its code."""
    entry, config = run.program.entries[pc0], run.config
    per = entry.per_pass
    ops = [(op, SPECS[op.name].slot, op.text if source is None else source[0])
           for pc in range(pc0 + 1, entry.end)
           for op, source in zip(run.program.entries[pc].ops, run.program.entries[pc].sources,
                                 strict=True)]
    out = [Floor("unit", slot, Fraction(n, config.slots[slot] * per),
                 tuple(dict.fromkeys(name for _, s, name in ops if s == slot)))
           for slot, n in booked.items() if n]
    pushes = [name for op, _, name in ops if op.name in SFU_OPS]
    if pushes:
        held = config.latency["sfu"] + config.latency["pop"]
        out.append(Floor("fifo", "fifo", Fraction(len(pushes) * held, config.fifo_depth * per),
                         tuple(dict.fromkeys(pushes))))
    return out


def _bound(units, top, stalls, n, empty) -> str:
    u = units[top]["utilisation"]
    if u >= 0.999:
        return f"{top}: {100 * u:.0f} % busy, the loop cannot go faster on this machine"
    busiest = f"busiest unit {top} {100 * u:.0f} %"
    if stalls:
        cause, cycles = stalls.most_common(1)[0]
        return f"stalls: {cause} {cycles / n:g} cycles per iteration ({busiest})"
    if empty:
        return (f"latency the code waits out in {empty / n:g} empty bundles (nops) per "
                f"iteration ({busiest})")
    return (f"the code's length: its bundles issue back to back, no unit saturated "
            f"({busiest}); a recurrence or the schedule sets that length")
