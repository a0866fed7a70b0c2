"""Three ways to turn one loop body (a list of ``rslab.schedule.Op``) into assembly.

The full sampler kernels are built from loop bodies; how a body becomes code is
the only thing that differs between the baselines and the optimised kernel:

* ``naive``: the first translation a programmer writes. One op per bundle in
  program order, a hardware loop around it; the scoreboard makes every op wait
  for its operands, so one vector walks through the whole dependency chain
  before the next one starts. No interleaving.
* ``local``: a plain (not software-pipelined) loop. The body is list-scheduled:
  independent ops of one iteration share bundles, as soon as their operands
  are ready, but iteration i+1 starts only after the last bundle of iteration i.
* ``pipelined``: modulo-scheduled by :func:`rslab.schedule.modulo_schedule`
  and expanded by :func:`rslab.schedule.expand` (prologue / kernel / epilogue).
  ``expand`` allocates registers by circular-arc colouring (values share a
  register when their lifetimes around the unrolled kernel never overlap).

Every style returns a :class:`LoopCode`: assembly text plus the figures of the
loop (II, ResMII, RecMII, stage count) when it was modulo-scheduled.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from rslab.schedule import (
    Op,
    Schedule,
    SlotModel,
    build_graph,
    check_schedule,
    closure_of_consumers,
    expand,
    modulo_schedule,
    slot_of,
)

STYLES = ("naive", "local", "pipelined")


@dataclass
class LoopCode:
    """Assembly ``text`` of a loop over ``iterations`` iterations, and its figures."""

    text: str
    style: str
    iterations: int
    body_bundles: int
    ii: int | None = None
    res_mii: int | None = None
    rec_mii: int | None = None
    stage_count: int | None = None
    registers_used: int = 0

    def figures(self) -> dict:
        return {"ii": self.ii, "res_mii": self.res_mii, "rec_mii": self.rec_mii,
                "stage_count": self.stage_count}


def remainder_drop(body, packed_left: int, u: int) -> set:
    """Labels to leave out of a partial last iteration that keeps the first ``packed_left``
    of its ``u`` packed vectors: the loads of the others (``x{b}`` and the float32 loads
    ``q{2b}``, ``q{2b+1}``, ``l{2b}``, ``l{2b+1}``) and everything they feed."""
    names = {op.label for op in body}
    dropped = [n for b in range(packed_left, u)
               for n in (f"x{b}", f"q{2 * b}", f"q{2 * b + 1}", f"l{2 * b}", f"l{2 * b + 1}")
               if n in names]
    return closure_of_consumers(body, dropped) if dropped else set()


def emit_loop(body, iterations: int, style: str, *, carried: dict, pool, model: SlotModel,
              last_drop=()) -> LoopCode:
    """Assembly for ``iterations`` iterations of ``body`` in ``style`` (see module docstring).

    ``carried`` maps loop-carried values to fixed registers (initialised by the
    caller); ``pool`` lists the vector registers free for the other values;
    ``last_drop`` the op labels left out of the last iteration.
    """
    if style not in STYLES:
        raise ValueError(f"style must be one of {STYLES}, got {style!r}")
    if not isinstance(iterations, int) or iterations < 1:
        raise ValueError(f"iterations must be a positive int, got {iterations!r}")
    key = (tuple(body), iterations, style, tuple(carried.items()), tuple(pool), repr(model),
           frozenset(last_drop))
    code = _EMITTED.get(key)
    if code is None:
        if len(_EMITTED) >= _EMITTED_MAX:
            _EMITTED.clear()
        code = _EMITTED[key] = _emit(body, iterations, style, carried, pool, model, last_drop)
    return replace(code)


_EMITTED: dict = {}
_EMITTED_MAX = 512
"""Emitted loops by their arguments: a kernel repeats the same loop many times."""


def _emit(body, iterations, style, carried, pool, model, last_drop) -> LoopCode:
    if style == "pipelined":
        return _pipelined(list(body), iterations, dict(carried), list(pool), model,
                          set(last_drop))
    graph = build_graph(list(body), model)
    times = list(range(graph.n)) if style == "naive" else _list_schedule(graph)
    return _sequential(graph, times, iterations, style, dict(carried), list(pool),
                       set(last_drop))


# ------------------------------------------------------------------ plain loops


def _list_schedule(graph) -> list:
    """Cycle-by-cycle list schedule of one iteration (no overlap with the next).

    Each cycle, ready ops (operands available) are placed by priority (longest
    latency path to the end of the iteration) while their slots are free; an
    SFU push may go whenever the SFU is free, and a pop only takes the FIFO
    head, so results leave in push order.
    """
    model = graph.model
    n = graph.n
    preds = {i: [] for i in range(n)}
    succs = {i: [] for i in range(n)}
    for e in graph.edges:
        if e.distance == 0 and e.src != e.dst:
            preds[e.dst].append(e)
            succs[e.src].append(e)
    height = [0] * n
    for k in reversed(range(n)):
        height[k] = max([graph.latency(k)] + [e.latency + height[e.dst] for e in succs[k]])
    pop_of = {p: q for p, q in graph.fifo_pairs}
    times = [None] * n
    busy: dict = {}
    fifo: list = []  # push indices in push order, not yet popped
    t = 0
    while any(x is None for x in times):
        ready = [k for k in range(n) if times[k] is None and all(
            times[e.src] is not None and times[e.src] + e.latency <= t for e in preds[k])]
        for k in sorted(ready, key=lambda k: (-height[k], k)):
            op = graph.ops[k]
            slot = slot_of(op.opcode)
            span = model.op_busy(op.opcode)
            if any(busy.get((slot, t + c), 0) >= model.units[slot] for c in range(span)):
                continue
            if op.is_pop:
                if not fifo or pop_of[fifo[0]] != k or busy.get(("pop", t)):
                    continue
                fifo.pop(0)
                busy[("pop", t)] = 1
            if op.is_push:
                fifo.append(k)
            for c in range(span):
                busy[(slot, t + c)] = busy.get((slot, t + c), 0) + 1
            times[k] = t
        t += 1
    return times


def _op_text(op: Op, regs: dict, imm_shift: int = 0) -> str:
    def reg(name):
        return regs.get(name, name)

    srcs = [reg(s.name if hasattr(s, "distance") else s) for s in op.srcs
            if not (isinstance(s, str) and s.startswith("@"))]
    dst = [] if op.dst is None or op.is_push else [reg(op.dst)]
    if op.addr is not None:
        imm = op.addr.offset + imm_shift * op.addr.stride
        mem = [f"[{op.addr.base} + {imm}]" if imm >= 0 else f"[{op.addr.base} - {-imm}]"]
        parts = srcs[:1] + mem + srcs[1:] if op.opcode.startswith("vst") else dst + mem + srcs
    else:
        parts = dst + srcs
    return op.opcode + (" " + ", ".join(parts) if parts else "") + op.tail


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


def _sequential(graph, times, iterations, style, carried, pool, last_drop) -> LoopCode:
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
    length = max(times) + 1
    bases = sorted({op.addr.base: op.addr.stride for op in ops
                    if op.addr is not None and op.addr.stride}.items())

    def body_lines(drop, with_step):
        rows = [[] for _ in range(length)]
        for k, op in enumerate(ops):
            if op.label not in drop:
                rows[times[k]].append(_op_text(op, regs))
        lines = [" ; ".join(r) if r else "nop" for r in rows]
        steps = [f"sadd {b}, {b}, {s}" for b, s in bases]
        if with_step and steps:
            scalar_free = style == "local" and not any(
                slot_of(ops[k].opcode) == "scalar" for k in range(len(ops))
                if times[k] == length - 1)
            if scalar_free and len(steps) == 1:
                lines[-1] = steps[0] if lines[-1] == "nop" else lines[-1] + " ; " + steps[0]
            else:
                lines += steps
        return lines

    full = iterations - 1 if last_drop else iterations
    text = []
    if full:
        text += [f"loop {full}"] + body_lines(set(), True) + ["endloop"]
    if last_drop:
        text += body_lines(last_drop, False)
    body_len = len(body_lines(set(), True))
    return LoopCode("\n".join(text) + "\n", style, iterations, body_len,
                    registers_used=len(set(regs.values()) - set(carried.values())))


# ------------------------------------------------------------------ software pipelining


def _pipelined(body, iterations, carried, pool, model, last_drop) -> LoopCode:
    schedule = _schedule(tuple(body), model)
    exp = expand(schedule, iterations, registers=pool, carried_registers=carried,
                 last_drop=last_drop)
    used = {r for regs in exp.registers.values() for r in regs} - set(carried.values())
    b = schedule.bounds
    return LoopCode(exp.text, "pipelined", iterations, exp.unroll * schedule.ii, ii=schedule.ii,
                    res_mii=b.res_mii, rec_mii=b.rec_mii, stage_count=schedule.stage_count,
                    registers_used=len(used))


_SCHEDULES: dict = {}


def _schedule(body: tuple, model: SlotModel):
    """The modulo schedule of ``body`` (cached: the sampler reuses a few bodies many times)."""
    key = (body, repr(model))
    if key not in _SCHEDULES:
        graph = build_graph(body, model)
        bases = {op.addr.base for op in graph.ops if op.addr is not None and op.addr.stride}
        schedule = modulo_schedule(graph, reserve_scalar=len(bases))
        _SCHEDULES[key] = shorten_lifetimes(schedule, reserve_scalar=len(bases))
    return _SCHEDULES[key]


def shorten_lifetimes(schedule, *, reserve_scalar: int = 0):
    """Delay ops by whole multiples of II towards their consumers (as late as possible).

    Iterative modulo scheduling places every op as early as its operands allow,
    so a value computed early and consumed at the end of a long chain (a load,
    an unpack) holds a register for several IIs. Moving an op by k·II keeps its
    row of the modulo reservation table, so the move is always resource-legal;
    it is made only while every consumer still sees the value in time. SFU
    pushes and pops keep their cycles (their order in the FIFO is fixed).
    """
    g, ii = schedule.graph, schedule.ii
    times = list(schedule.times)
    succs = {k: [] for k in range(g.n)}
    for e in g.edges:
        succs[e.src].append(e)
    changed = True
    while changed:
        changed = False
        for k in sorted(range(g.n), key=lambda k: -times[k]):
            op = g.ops[k]
            others = [e for e in succs[k] if e.dst != k]
            if op.is_push or op.is_pop or not others:
                continue
            latest = min(times[e.dst] - e.latency + e.distance * ii for e in others)
            steps = (latest - times[k]) // ii
            if steps > 0:
                times[k] += steps * ii
                changed = True
        # a loop-carried counter and the ops that read it before it is redefined move together
        for k in range(g.n):
            group = {k} | {e.src for e in g.edges if e.kind == "anti" and e.dst == k}
            if len(group) == 1 or any(g.ops[j].is_push or g.ops[j].is_pop for j in group):
                continue
            out = [e for j in group for e in succs[j] if e.dst not in group]
            if not out:
                continue
            steps = min((times[e.dst] - e.latency + e.distance * ii - times[e.src]) // ii
                        for e in out)
            if steps > 0:
                for j in group:
                    times[j] += steps * ii
                changed = True
    low = min(times)
    times = [t - (low // ii) * ii for t in times]
    out = Schedule(g, ii, times, schedule.bounds, schedule.attempts)
    check_schedule(out, reserve_scalar=reserve_scalar)
    return out
