"""From a loop body in the text format to the pipelined program, as ``rslab pipeline`` makes it.

The choices, in the order they are made (each refuses nothing the body's sequential meaning,
:mod:`rslab.schedule.sequential`, runs):

- *unroll*: ``unroll`` k > 1 schedules k source iterations as one (:mod:`~rslab.schedule.unroll`)
  and runs the last ``iterations mod k`` op after op;
- *bases*: a base register read with several strides, or read as a value, leaves its
  operands to copies of it (:mod:`~rslab.schedule.bases`), set before the loop;
- *carried values*: one register each where one register holds them, renamed (modulo
  variable expansion) where it cannot or where renaming gives a smaller II
  (:func:`~rslab.schedule.body.renamed_values`);
- *the schedule*: iterative modulo scheduling from MII up (the body op after op if it finds
  none), or at ``ii`` only; ``exact`` also asks the integer program from MII up;
- *registers*: when the values do not fit the pool, the schedule with shorter lifetimes,
  then with a stage fewer, then at larger IIs, at last op after op (no overlap): refused
  only when even that does not fit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from fractions import Fraction

from rslab.machine.bottleneck import Floor, binding, sentence, verdict
from rslab.machine.isa import SPECS
from rslab.schedule.bases import base_copies
from rslab.schedule.body import build_graph, renamed_values, strided_bases
from rslab.schedule.bounds import analyse, rec_mii
from rslab.schedule.exact import smallest_exact
from rslab.schedule.expand import expand, parallel_moves
from rslab.schedule.lifetimes import shorten_lifetimes
from rslab.schedule.memory import check_addresses
from rslab.schedule.model import slot_of
from rslab.schedule.modulo import modulo_schedule, op_after_op
from rslab.schedule.unroll import split_copy, unroll_body


@dataclass
class Plan:
    """One loop of the program: the graph, the schedules, the expansion (None for no trip)."""

    body: object  # the LoopBody scheduled (unrolled, offsets moved for a remainder)
    iterations: int
    heuristic: object
    schedule: object
    tried: list  # the integer program's answers
    bounds: object
    expansion: object | None
    copies: dict  # base copy register -> base
    fitted: str = ""  # how the registers were made to fit ("" when the first schedule did)

    @property
    def code(self) -> list[str]:
        """The loop's lines: the base copies, then the expanded loop."""
        if self.expansion is None:
            return []
        moves = [" ; ".join(b) for b in parallel_moves(
            dict(self.copies), "smov", self.schedule.graph.model.units["scalar"], [])]
        return moves + self.expansion.text.splitlines()


@dataclass
class Pipelined:
    """The program of a body: its loops (the body unrolled, then the remainder)."""

    body: object
    iterations: int
    unroll: int
    loops: list = field(default_factory=list)

    @property
    def main(self) -> Plan:
        return self.loops[0]

    @property
    def program(self) -> str:
        lines = list(self.body.before) + [line for p in self.loops for line in p.code]
        return "\n".join(lines + list(self.body.after) + ["halt"]) + "\n"


def _graphs(body, model, memory, ops):
    """The dependence graphs worth scheduling, on ``ops`` (the body's, bases copied): carried
    values in one register each where one register holds them (renamed when they have more
    than one, or are read after their new value is made), and, if that differs, every
    carried value renamed."""
    far = {v for v, regs in body.history.items() if len(regs) > 1}
    least = renamed_values(body.ops, model, far, memory)
    plans = [least] + ([frozenset(body.carried)] if least != set(body.carried) else [])
    return [replace(build_graph(body.ops, model, rotating=r, memory=memory), ops=ops)
            for r in plans]


def _schedule(graph, reserve: int, exact: bool, max_stages: int, ii: int | None):
    """(heuristic schedule, the schedule to emit, the integer program's answers); the body op
    after op when iterative modulo scheduling finds none."""
    try:
        heuristic = modulo_schedule(graph, reserve_scalar=reserve, min_ii=ii or 1,
                                    max_ii=ii)
    except ValueError as exc:
        if ii is None:
            heuristic = op_after_op(graph, reserve_scalar=reserve)
            return heuristic, heuristic, []
        bounds = analyse(graph, reserve_scalar=reserve)
        why = f"II {ii} is below MII {bounds.mii} (bound by {bounds.binding})" \
            if ii < bounds.mii else str(exc)
        raise ValueError(f"--ii {ii}: {why}") from None
    if not exact:
        return heuristic, heuristic, []
    found, tried = smallest_exact(graph, max_ii=heuristic.ii, max_stages=max_stages,
                                  reserve_scalar=reserve)
    return heuristic, (found.schedule if found is not None else heuristic), tried


def _expand(schedule, body, iterations: int, pool):
    return expand(schedule, iterations, registers=pool, carried_registers=body.carried,
                  history={v: list(body.history[v][1:]) for v in schedule.graph.rotating
                           if v in body.history})


def _fitting(schedule, body, iterations: int, pool, reserve: int, fixed_ii: bool):
    """(schedule, expansion, how it was made to fit) for the first schedule whose registers fit
    the pool: ``schedule``, its lifetimes shortened, a stage fewer, larger IIs (unless
    ``fixed_ii``), op after op."""
    graph = schedule.graph

    def candidates():
        yield schedule, ""
        yield shorten_lifetimes(schedule), "lifetimes shortened for the pool's registers"
        for stages in range(schedule.stage_count - 1, 0, -1):
            yield from _at(schedule.ii, stages, f"{stages} stages for the pool's registers")
        if fixed_ii:
            return
        step, limit = 1, op_after_op(graph, reserve_scalar=reserve).ii
        while schedule.ii + step < limit:
            yield from _at(schedule.ii + step, None,
                           f"II raised to {schedule.ii + step} for the pool's registers")
            step += 1 if step < 16 else step
        yield op_after_op(graph, reserve_scalar=reserve), \
            "op after op (no overlap) for the pool's registers"

    def _at(ii, stages, why):
        try:
            found = modulo_schedule(graph, reserve_scalar=reserve, min_ii=ii, max_ii=ii,
                                    max_stages=stages)
        except ValueError:
            return
        yield found, why
        yield shorten_lifetimes(found), why + ", lifetimes shortened"

    for candidate, why in candidates():
        try:
            return candidate, _expand(candidate, body, iterations, pool), why
        except ValueError as exc:
            if not str(exc).startswith("registers"):
                raise
    raise ValueError(_crowded(candidate, pool))


def _crowded(schedule, pool) -> str:
    """Why even the body run op after op (``schedule``) does not fit the pool: the op at
    which the most values of one kind are alive, beyond the pool's registers of that kind."""
    g, times, life = schedule.graph, schedule.times, schedule.lifetimes()
    worst = (0, 0, "v", [])
    for kind in ("v", "s"):
        values = [(op.dst, times[k]) for k, op in enumerate(g.ops)
                  if op.dst in life and _kind(op) == kind and op.dst not in g.rotating]
        for k, t in enumerate(times):
            alive = [v for v, start in values if start <= t < start + max(life[v], 1)]
            have = sum(r[0] == kind for r in pool)
            if len(alive) - have > worst[0]:
                worst = (len(alive) - have, k, kind, alive)
    over, k, kind, alive = worst
    what = "vector" if kind == "v" else "scalar"
    return (f"registers: run op after op, {len(alive)} {what} values are alive at body[{k}] "
            f"({', '.join(alive)}), more than the pool's {sum(r[0] == kind for r in pool)} "
            f"{what} registers")


def _kind(op) -> str:
    return "s" if SPECS[op.opcode].sig[:1] == ("sd",) else "v"


def plan_loop(body, model, config, iterations: int, *, exact=False, max_stages=8, ii=None,
              op_order=False) -> Plan:
    """The schedule and code of ``body`` for ``iterations`` trips (``op_order``: op after op)."""
    ops, copies = base_copies(body.ops, body.registers_read(), body.pool)
    pool = [r for r in body.pool if r not in copies]
    reserve = len(strided_bases(ops))
    memory = body.memory(iterations, config)
    best = None
    for graph in _graphs(body, model, None if op_order else memory, ops):
        if op_order:
            schedule = op_after_op(graph, reserve_scalar=reserve)
            found = (schedule, schedule, [])
        elif best is not None and analyse(graph, reserve_scalar=reserve).mii >= best[1].ii:
            continue
        else:
            found = _schedule(graph, reserve, exact, max_stages, ii)
        if best is None or found[1].ii < best[1].ii:
            best = found
    heuristic, schedule, tried = best
    expansion, fitted = None, ""
    if iterations:
        schedule, expansion, fitted = _fitting(schedule, body, iterations, pool, reserve,
                                               fixed_ii=ii is not None or op_order)
    return Plan(body, iterations, heuristic, schedule, tried,
                analyse(schedule.graph, reserve_scalar=reserve), expansion,
                copies if expansion else {}, fitted)


def _moved(body, plan: Plan, done: int):
    """``body`` for the iterations after the first ``done``, which ``plan`` ran: each operand's
    offset moved by ``done`` strides, less what its base register advanced."""
    step = plan.expansion.pointer_step if plan.expansion else {}
    ops = [op if op.addr is None else replace(op, addr=replace(
        op.addr, offset=op.addr.offset + done * op.addr.stride - step.get(op.addr.base, 0)))
        for op in body.ops]
    return replace(body, ops=ops)


def pipeline_body(body, model, config, iterations: int, *, exact=False, max_stages=8,
                  ii=None, unroll=1) -> Pipelined:
    """The pipelined program of ``body`` (a parsed
    :class:`~rslab.schedule.bodytext.LoopBody`): its loops and its text."""
    check_addresses(body.ops, body.memory(iterations, config))
    if unroll == 1 or iterations < unroll:
        out = Pipelined(body, iterations, 1)
        out.loops.append(plan_loop(body, model, config, iterations, exact=exact,
                                   max_stages=max_stages, ii=ii))
        return out
    out = Pipelined(body, iterations, unroll)
    wide = unroll_body(body, unroll)
    trips, left = divmod(iterations, unroll)
    out.loops.append(plan_loop(wide, model, config, trips, exact=exact,
                               max_stages=max_stages, ii=ii))
    if out.main.expansion is not None:
        out.main.expansion.source_iterations = unroll
    if left:
        rest = _moved(body, out.main, trips * unroll)
        out.loops.append(plan_loop(rest, model, config, left, op_order=True))
        out.loops[1].expansion.first_iteration = trips * unroll
    return out


def static_cycles(done: Pipelined) -> int:
    """Bundles the program issues if nothing stalls (its loops repeated; halt not counted)."""
    loops = sum(len(p.code) - len(p.expansion.text.splitlines()) + p.expansion.static_cycles
                for p in done.loops if p.expansion is not None)
    return len(done.body.before) + loops + len(done.body.after)


def sweep(body, model, config, iterations: int, unrolls=(1, 2, 3, 4), span: int = 4) -> list:
    """For each unroll k and each II from the unrolled body's MII on (``span`` of them), the
    schedule's cycles per source iteration (II / k) and the program's bundles if nothing
    stalls, or why there is no schedule: a row per (k, II)."""
    rows = []
    for k in unrolls:
        first = pipeline_body(body, model, config, iterations, unroll=k)
        mii = first.main.bounds.mii
        for ii in range(mii, mii + span):
            row = {"unroll": k, "ii": ii, "mii": mii}
            try:
                done = pipeline_body(body, model, config, iterations, ii=ii, unroll=k)
            except ValueError as exc:
                rows.append({**row, "status": str(exc)})
                continue
            rows.append({**row, "status": "ok", "cycles_per_source_iteration": ii / k,
                         "stages": done.main.schedule.stage_count,
                         "registers_fitted": done.main.fitted,
                         "program_cycles": static_cycles(done)})
    return rows


def bottleneck(done: Pipelined, model, config) -> dict:
    """What binds the program's main loop, per source iteration, in the words ``rslab sim``
    uses for the run (:mod:`rslab.machine.bottleneck`): each unit's floor (the pointer
    increments spread over the kernel's passes), the FIFO's, and the body's value
    recurrence (every carried value renamed, memory dependences kept); the II achieved;
    why the schedule is above the rounded floor, when it is."""
    plan, k = done.main, done.unroll
    schedule, usage = plan.schedule, plan.bounds.usage
    u = plan.expansion.unroll if plan.expansion else 1
    bases = len(strided_bases(schedule.graph.ops))
    labels = [split_copy(op.label)[0] if k > 1 else op.label for op in schedule.graph.ops]
    floors = [Floor("unit", slot, Fraction(n * u + (bases if slot == "scalar" else 0),
                                           model.units[slot] * u * k),
                    tuple(dict.fromkeys(x for x, op in zip(labels, schedule.graph.ops,
                                                            strict=True)
                                        if slot_of(op.opcode) == slot)))
              for slot, n in {**usage, "scalar": usage.get("scalar", 0)}.items()
              if n or (slot == "scalar" and bases)]
    floors += [Floor(f.kind, f.name, f.need / k, tuple(dict.fromkeys(
        split_copy(x)[0] if k > 1 else x for x in f.sequence)))
        for f in plan.bounds.floors if f.kind == "fifo"]
    values = build_graph(done.body.ops, model, rotating=set(done.body.carried),
                         memory=done.body.memory(done.iterations, config))
    floors += [f for f in [rec_mii(values)[2]] if f is not None]
    top = binding(floors)
    out = verdict(top, Fraction(schedule.ii, k), k)
    out["sentence"] = sentence(out)
    if schedule.ii > math.ceil(top.need * k):
        out["why_above"] = plan.fitted or next(
            (f"at II {ii}: {why}" for ii, why in sorted(schedule.attempts.items())
             if why != "ok"), "the schedule the heuristic found")
    return out
