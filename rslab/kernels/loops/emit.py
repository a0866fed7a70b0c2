"""Three ways to turn one loop body (a list of ``rslab.schedule.Op``) into assembly.

Kernels are built from loop bodies; how a body becomes code is the only thing
that differs between the sampler's baselines and its optimised program:

* ``naive``: the first translation a programmer writes. One op per bundle in
  program order, a hardware loop around it; the scoreboard makes every op wait
  for its operands, so one vector walks through the whole dependency chain
  before the next one starts. No interleaving.
* ``paired``: the same first translation with independent ops side by side, as
  the machine chapter writes sum-exp: ops of equal dependence depth share a
  bundle (the low and high halves of a packed vector), both exp2 pushes go before
  their pops, and the scoreboard still does the waiting
  (:func:`~rslab.schedule.listsched.list_schedule` ``by_depth``).
* ``local``: a plain (not software-pipelined) loop. The body is list-scheduled
  (:mod:`rslab.schedule.listsched`): independent ops of one iteration share
  bundles as soon as their operands are ready, but iteration i+1 starts only
  after the last bundle of iteration i.
* ``pipelined``: modulo-scheduled (:func:`schedule_body`) and expanded by
  :func:`rslab.schedule.expand` (prologue / kernel / epilogue); ``expand``
  allocates registers by circular-arc colouring (values share a register when
  their lifetimes around the unrolled kernel never overlap).

Every style returns a :class:`~rslab.kernels.loops.loop.Loop`. Each memory base
register with a stride advances once per iteration (plain loops) or per kernel
pass (pipelined); the scheduler keeps one scalar slot free per such base.
"""

from __future__ import annotations

from dataclasses import replace

from rslab.kernels.loops.cache import cached
from rslab.kernels.loops.loop import Loop
from rslab.schedule import (
    Schedule,
    SlotModel,
    analyse,
    build_graph,
    closure_of_consumers,
    expand,
    modulo_schedule,
    slot_of,
)
from rslab.schedule.body import strided_bases
from rslab.schedule.exact import smallest_exact
from rslab.schedule.lifetimes import shorten_lifetimes
from rslab.schedule.listsched import list_schedule

STYLES = ("naive", "paired", "local", "pipelined")


def schedule_body(body, model: SlotModel, *, max_ii: int | None = None,
                  max_stages: int | None = None, rotating=(), shorten: bool = False,
                  exact: bool = False, min_ii: int = 1) -> Schedule:
    """The modulo schedule of ``body`` (cached), one scalar slot reserved per strided base.

    ``shorten`` delays ops by whole IIs towards their readers
    (:func:`~rslab.schedule.lifetimes.shorten_lifetimes`); ``exact`` replaces a
    heuristic schedule above MII by the smallest-II schedule of the integer program
    (:mod:`rslab.schedule.exact`, at most ``max_stages`` or 8 stages), if one exists;
    ``min_ii`` starts the search there.
    """
    body = tuple(body)
    key = (body, model.key(), max_ii, max_stages, tuple(rotating), shorten, exact, min_ii)
    return cached("schedule", key, lambda: _schedule(body, model, max_ii, max_stages,
                                                     tuple(rotating), shorten, exact, min_ii))


def _schedule(body, model, max_ii, max_stages, rotating, shorten, exact, min_ii):
    reserve = len(strided_bases(body))
    graph = build_graph(list(body), model, rotating)
    schedule = modulo_schedule(graph, max_ii=max_ii, max_stages=max_stages,
                               reserve_scalar=reserve, min_ii=min_ii)
    if exact and schedule.ii > schedule.bounds.mii:
        found, _ = smallest_exact(graph, max_ii=schedule.ii - 1, max_stages=max_stages or 8,
                                  reserve_scalar=reserve)
        schedule = found.schedule if found is not None else schedule
    return shorten_lifetimes(schedule) if shorten else schedule


def search_limit(body, model: SlotModel) -> int:
    """The largest II worth searching for a wide body: 1.25·MII + 2 (beyond that a narrower
    body is better, and the search of a large body can take long)."""
    mii = max(analyse(list(body), model).mii, len(strided_bases(body)))
    return mii + mii // 4 + 2


def remainder_drop(body, kept: int, per_iteration: int) -> set:
    """Labels to leave out of a partial last iteration that keeps the first ``kept`` of its
    ``per_iteration`` packed vectors: the loads of the others (packed ``x{b}``, float32
    ``l{k}`` and ``q{k}`` with k = 2b + h) and everything they feed."""
    if kept >= per_iteration:
        return set()
    names = {op.label for op in body}
    missing = [n for b in range(kept, per_iteration)
               for n in (f"x{b}", f"q{2 * b}", f"q{2 * b + 1}", f"l{2 * b}", f"l{2 * b + 1}")
               if n in names]
    return closure_of_consumers(body, missing) if missing else set()


def emit_loop(body, iterations: int, style: str, *, carried: dict, pool, model: SlotModel,
              last_drop=(), per_iteration: int = 1, gates=None, **schedule_options) -> Loop:
    """Assembly for ``iterations`` iterations of ``body`` in ``style`` (see module docstring).

    ``carried`` maps loop-carried values to fixed registers (initialised by the
    caller); ``pool`` lists the vector registers free for the other values;
    ``last_drop`` the op labels left out of the last iteration (:func:`remainder_drop`);
    ``gates`` (pipelined only) maps iterations to an op issued before them, such as the
    wait for the DMA bringing their data (:func:`rslab.schedule.expand`);
    ``schedule_options`` go to :func:`schedule_body` (pipelined style).
    """
    if style not in STYLES:
        raise ValueError(f"style must be one of {STYLES}, got {style!r}")
    if not isinstance(iterations, int) or iterations < 1:
        raise ValueError(f"iterations must be a positive int, got {iterations!r}")
    if gates and style != "pipelined":
        raise ValueError("gates: only a pipelined loop waits inside; split a plain loop instead")
    gates = dict(gates or {})
    key = (tuple(body), iterations, style, tuple(carried.items()), tuple(pool), model.key(),
           frozenset(last_drop), tuple(sorted(gates.items())),
           tuple(sorted(schedule_options.items())))
    loop = cached("loop", key, lambda: _emit(list(body), iterations, style, dict(carried),
                                             list(pool), model, set(last_drop),
                                             schedule_options, gates))
    return replace(loop, per_iteration=per_iteration)


def _emit(body, iterations, style, carried, pool, model, last_drop, options, gates) -> Loop:
    if style == "pipelined":
        return _pipelined(body, iterations, carried, pool, model, last_drop, options, gates)
    graph = build_graph(body, model)
    times = (list(range(graph.n)) if style == "naive"
             else list_schedule(graph, by_depth=style == "paired"))
    return _sequential(graph, times, iterations, style, carried, pool, last_drop)


# ------------------------------------------------------------------ plain loops


def _interval_colour(intervals: dict, pool: list, what: str) -> dict:
    """value -> register for half-open [start, end) intervals on a line (first fit)."""
    free_at = {}
    out = {}
    for v, (s, e) in sorted(intervals.items(), key=lambda kv: (kv[1][0], kv[0])):
        for r in pool:
            if free_at.get(r, -1) <= s:
                out[v] = r
                free_at[r] = e
                break
        else:
            raise ValueError(f"registers: {len(pool)} registers are too few for {what}")
    return out


def _plain_registers(graph, times, carried, pool, style) -> dict:
    """value -> register of a plain loop: carried values pinned, the others coloured."""
    ops = graph.ops
    missing = {ops[e.src].dst for e in graph.edges
               if e.kind == "flow" and e.distance > 0} - set(carried)
    if missing:
        raise ValueError(f"carried: no register for loop-carried {sorted(missing)}")
    intervals = {}
    for k, op in enumerate(ops):
        if op.dst is None or op.is_push or op.dst in carried:
            continue
        end = times[k] + graph.latency(k)
        for e in graph.edges:
            if e.kind == "flow" and e.src == k:
                end = max(end, times[e.dst] + 1)
        intervals[op.dst] = (times[k], end)
    regs = dict(carried)
    regs.update(_interval_colour(intervals, pool, f"the {style} loop body"))
    return regs


def _sequential(graph, times, iterations, style, carried, pool, last_drop) -> Loop:
    ops = graph.ops
    regs = _plain_registers(graph, times, carried, pool, style)
    length = max(times) + 1
    bases = sorted({op.addr.base: op.addr.stride for op in ops
                    if op.addr is not None and op.addr.stride}.items())

    def text(op):
        srcs = [regs.get(getattr(s, "name", s), getattr(s, "name", s))
                for s in op.register_srcs()]
        dst = None if op.dst is None or op.is_push else regs.get(op.dst, op.dst)
        return op.assembly(dst, srcs, op.addr.offset if op.addr is not None else None)

    def body_lines(drop, with_step):
        rows = [[] for _ in range(length)]
        for k, op in enumerate(ops):
            if op.label not in drop:
                rows[times[k]].append(text(op))
        lines = [" ; ".join(r) if r else "nop" for r in rows]
        steps = [f"sadd {b}, {b}, {s}" for b, s in bases]
        if with_step and steps:
            scalar_free = style in ("local", "paired") and not any(
                slot_of(ops[k].opcode) == "scalar" for k in range(len(ops))
                if times[k] == length - 1)
            if scalar_free and len(steps) == 1:
                lines[-1] = steps[0] if lines[-1] == "nop" else lines[-1] + " ; " + steps[0]
            else:
                lines += steps
        return lines

    full = iterations - 1 if last_drop else iterations
    out = []
    if full:
        out += [f"loop {full}"] + body_lines(set(), True) + ["endloop"]
    if last_drop:
        out += body_lines(last_drop, False)
    return Loop("\n".join(out) + "\n", style, iterations, len(body_lines(set(), True)),
                carried=dict(carried),
                registers_used=len(set(regs.values()) - set(carried.values())),
                bounds=analyse(graph))


# ------------------------------------------------------------------ software pipelining


def _register_candidates(body, model, options, schedule) -> list:
    """The schedules to try after ``schedule`` did not fit the registers (within the search
    limit of the body)."""
    out = []
    limit = options.get("max_ii") or search_limit(body, model) + schedule.ii // 8
    if schedule.ii < limit:
        try:
            out.append(schedule_body(body, model, **{**options, "min_ii": schedule.ii + 1,
                                                     "max_ii": limit}))
        except ValueError:
            pass
    if schedule.stage_count > 1:
        out.append(schedule_body(body, model, **{**options,
                                                 "max_stages": schedule.stage_count - 1}))
    return out


def _pipelined(body, iterations, carried, pool, model, last_drop, options, gates) -> Loop:
    """Modulo-scheduled and expanded; when a schedule's registers do not fit the pool, the
    next candidates are the schedule at the next II and the one with a stage fewer (fewer
    iterations in flight), smallest II first."""
    candidates = [schedule_body(body, model, **options)]
    tried = set()
    while candidates:
        candidates.sort(key=lambda s: (s.ii, s.stage_count))
        schedule = candidates.pop(0)
        try:
            exp = expand(schedule, iterations, registers=pool, carried_registers=carried,
                         last_drop=last_drop, gates=gates)
            break
        except ValueError as exc:
            if not str(exc).startswith("registers:"):
                raise
            tried.add((schedule.ii, schedule.stage_count))
            candidates += [s for s in _register_candidates(body, model, options, schedule)
                           if (s.ii, s.stage_count) not in tried]
    else:
        raise ValueError(f"registers: no schedule of this body fits the pool of {len(pool)}")
    used = {r for regs in exp.registers.values() for r in regs} - set(carried.values())
    return Loop(exp.text, "pipelined", iterations, exp.unroll * schedule.ii,
                carried=dict(carried), schedule=schedule, expansion=exp,
                registers_used=len(used), bounds=schedule.bounds)
