"""Iterative modulo scheduling (Rau 1994) and the check of a modulo schedule.

:func:`modulo_schedule` runs iterative modulo scheduling from II = MII upward
(height-based priority, eviction under a budget; when the budget runs out, once more
with the ops of the tight recurrences first) with the modulo reservation table, the
SFU FIFO order (results are popped in push order) and depth as extra constraints;
:func:`check_schedule` verifies every constraint of a :class:`Schedule`, however it was
found.
"""

from __future__ import annotations

import functools
from collections import Counter
from dataclasses import dataclass

from rslab.schedule.body import Graph, build_graph
from rslab.schedule.bounds import (
    Bounds,
    analyse,
    elementary_circuits,
    increment_slots,
    res_mii,
)
from rslab.schedule.model import SlotModel, slot_of


@dataclass
class Schedule:
    """A modulo schedule: issue cycle of each op (iteration 0) at initiation interval II."""

    graph: Graph
    ii: int
    times: list
    bounds: Bounds
    attempts: dict  # II tried -> "ok" or the reason it failed
    reserved_scalar: int = 0  # scalar slots kept free per II (rows II−1, II−2, …): pointers

    @property
    def stages(self) -> list:
        return [t // self.ii for t in self.times]

    @property
    def stage_count(self) -> int:
        return max(self.stages) + 1

    @property
    def length(self) -> int:
        """Cycles from the first issue to the last issue of one iteration, plus one."""
        return max(self.times) + 1

    def mrt(self) -> dict:
        """Modulo reservation table: resource -> II rows of op labels."""
        return _mrt_of(self.graph, self.times, self.ii)

    def stage_table(self, iterations: int | None = None):
        """Which iteration is in which stage: {cycle: [(iteration, stage, label)]} for the
        first ``iterations`` iterations (default: the stage count)."""
        iterations = self.stage_count if iterations is None else iterations
        table = {}
        for i in range(iterations):
            for k, t in enumerate(self.times):
                table.setdefault(t + i * self.ii, []).append(
                    (i, t // self.ii, self.graph.ops[k].label))
        return dict(sorted(table.items()))

    def lifetimes(self) -> dict:
        """value -> cycles from the issue of its definition to the issue of its last read."""
        return _lifetimes(self.graph, self.times, self.ii)

    def fifo_occupancy(self) -> int:
        """Most FIFO entries held (push until the pop frees it) at any cycle of the steady state."""
        return _fifo_occupancy(self.graph, self.times, self.ii)

    def listing(self) -> str:
        """LLVM-style ``cycle c (stage s) label: op`` listing."""
        lines = [f"II = {self.ii}, stages = {self.stage_count}, ResMII = {self.bounds.res_mii}, "
                 f"RecMII = {self.bounds.rec_mii}"]
        for k in sorted(range(self.graph.n), key=lambda k: (self.times[k], k)):
            op = self.graph.ops[k]
            lines.append(f"cycle {self.times[k]:3d} (stage {self.times[k] // self.ii}) "
                         f"{op.label}: {op.opcode}")
        return "\n".join(lines)


def _mrt_of(graph, times, ii):
    table = {slot: [[] for _ in range(ii)] for slot in graph.model.units}
    for k, t in enumerate(times):
        op = graph.ops[k]
        for c in range(graph.model.op_busy(op)):
            table[slot_of(op.opcode)][(t + c) % ii].append(op.label)
    return table


def _lifetimes(graph, times, ii):
    life = {}
    for e in graph.edges:
        if e.kind != "flow":
            continue
        producer = graph.ops[e.src]
        if producer.is_push:
            continue
        span = times[e.dst] + e.distance * ii - times[e.src]
        life[producer.dst] = max(life.get(producer.dst, 0), span)
    for op in graph.ops:
        if op.dst is not None and not op.is_push:
            life.setdefault(op.dst, 0)
    return life


def _fifo_occupancy(graph, times, ii):
    pairs = [(times[p], times[q]) for p, q in graph.fifo_pairs]
    return _fifo_occupancy_pairs(pairs, ii, graph.model.latency["pop"])


def fifo_order_ok(pairs, ii: int) -> bool:
    """Whether pops, repeated every II cycles, take results in push order.

    ``pairs`` are (push cycle, pop cycle) of one iteration. Push k of iteration
    i issues at T_k + i·II; results leave in push order, so the pops must come
    in the same global order: for every two pairs the number of whole II
    periods between the pushes equals that between the pops.
    """
    for a in range(len(pairs)):
        ta, pa = pairs[a]
        for b in range(a + 1, len(pairs)):
            tb, pb = pairs[b]
            if (ta - tb) % ii == 0 or (pa - pb) % ii == 0:
                return False
            if (ta - tb) // ii != (pa - pb) // ii:
                return False
    return True


class _IMS:
    """Rau's iterative modulo scheduler at one II."""

    def __init__(self, graph: Graph, ii: int, reserved: dict, first=frozenset()):
        self.g, self.ii = graph, ii
        self.reserved = reserved  # resource -> {row: units taken}
        self.first = first  # ops scheduled before all others (then by height)
        self.preds = {i: [] for i in range(graph.n)}
        self.succs = {i: [] for i in range(graph.n)}
        for e in graph.edges:
            self.preds[e.dst].append(e)
            self.succs[e.src].append(e)
        self.partner = {}
        for p, q in graph.fifo_pairs:
            self.partner[p] = q
            self.partner[q] = p
        self.height = self._heights()
        self.shape = [(slot_of(op.opcode), graph.model.op_busy(op), op.is_pop)
                      for op in graph.ops]  # what each op books: slot, cycles, a pop's row

    def _heights(self):
        n = self.g.n
        h = [0] * n
        for _ in range(n + 1):
            changed = False
            for e in self.g.edges:
                v = h[e.dst] + e.latency - e.distance * self.ii
                if v > h[e.src]:
                    h[e.src] = v
                    changed = True
            if not changed:
                return h
        raise _Infeasible("recurrence exceeds II")

    def _usage(self, k, t):
        slot, busy, pop = self.shape[k]
        rows = [(slot, (t + c) % self.ii) for c in range(busy)]
        if pop:
            rows.append(("pop", t % self.ii))
        return rows

    def _free_runs(self, res, mrt) -> list[int]:
        """For each MRT row, how many rows from it on (cyclically, at most II) have a unit of
        ``res`` free."""
        cap, taken, ii = self._capacity(res), self.reserved.get(res, {}), self.ii
        free = [len(mrt.get((res, r), ())) + taken.get(r, 0) < cap for r in range(ii)]
        if all(free):
            return [ii] * ii
        runs, run = [0] * ii, 0
        for r in reversed(range(2 * ii)):
            run = run + 1 if free[r % ii] else 0
            runs[r % ii] = min(run, ii)
        return runs

    def _capacity(self, res):
        return 1 if res == "pop" else self.g.model.units[res]

    def _resource_conflicts(self, k, t, mrt):
        """Ops that must leave for op k to issue at t; None if the row can never hold it (an
        op booked longer than II books some rows more than once)."""
        victims = set()
        for (res, row), need in Counter(self._usage(k, t)).items():
            free = self._capacity(res) - self.reserved.get(res, {}).get(row, 0)
            if need > free:
                return None
            used = mrt.get((res, row), [])
            victims.update(used[:max(0, len(used) + need - free)])
        return victims

    def _held(self, p, q, times) -> tuple | None:
        """(push, pop) cycles of a pair, an unplaced end taken as close as the SFU latency
        allows (None when neither end is placed)."""
        tp, tq, lat = times[p], times[q], self.g.model.latency["sfu"]
        if tp is None and tq is None:
            return None
        return (tp if tp is not None else tq - lat, tq if tq is not None else tp + lat)

    def _fifo_conflicts(self, k, t, times):
        """Pushes and pops whose order conflicts with op k at t, and, when the FIFO would
        overflow, those of the pairs whose entries are held while k's is (``None`` among them
        when no other pair's is: the entry alone overflows)."""
        if k not in self.partner:
            return set()
        bad = set()
        if self.g.ops[k].is_push:  # two pushes in one row: the order of their results is lost
            bad |= {x for p, q in self.g.fifo_pairs if p != k and times[p] is not None
                    and (t - times[p]) % self.ii == 0 for x in (p, q)}
        pk = self.partner[k]
        pair = (k, pk) if self.g.ops[k].is_push else (pk, k)
        placed = list(times)
        placed[k] = t
        mine = self._held(*pair, placed)
        held = {(p, q): self._held(p, q, times) for p, q in self.g.fifo_pairs
                if (p, q) != pair and self._held(p, q, times) is not None}
        if times[pk] is not None:
            for (p, q), span in held.items():
                if times[p] is not None and times[q] is not None \
                        and not fifo_order_ok([mine, span], self.ii):
                    bad |= {p, q}  # two pushes in one row conflict as much as two pops
        lat = self.g.model.latency["pop"]
        if _fifo_occupancy_pairs([*held.values(), mine], self.ii, lat) > \
                self.g.model.fifo_depth:
            rows = _held_rows(*mine, lat, self.ii)
            over = {x for (p, q), span in held.items() if rows & _held_rows(*span, lat, self.ii)
                    for x in (p, q) if times[x] is not None}
            bad |= over or {None}
        return bad

    def run(self, budget):
        n = self.g.n
        times = [None] * n
        last = [None] * n
        mrt = {}
        unscheduled = set(range(n))
        while unscheduled:
            if budget <= 0:
                raise _Infeasible(BUDGET)
            budget -= 1
            k = max(unscheduled, key=lambda i: (i in self.first, self.height[i], -i))
            estart, lstart = self._window(k, times)
            # A free row inside the window the placed successors allow (leaving it evicts a
            # successor, which then evicts this op back: a pinned accumulator and its reader
            # ping-pong so), or from estart on when the window is empty.
            last_t = min(estart + self.ii - 1, lstart) if lstart >= estart else estart + self.ii - 1
            chosen = self._free_slot(k, estart, last_t, times, mrt)
            if chosen is None:
                # Rau's rule: never the same slot twice in a row (it may leave the window)
                chosen = estart if last[k] is None or estart > last[k] else last[k] + 1
                victims = self._resource_conflicts(k, chosen, mrt)
                for _ in range(self.ii):
                    if victims is not None:
                        break
                    chosen += 1
                    victims = self._resource_conflicts(k, chosen, mrt)
                if victims is None:
                    raise _Infeasible(f"no row can hold {self.g.ops[k].label}")
                victims |= self._fifo_conflicts(k, chosen, times)
                if None in victims:
                    raise _Infeasible(f"SFU FIFO depth at {self.g.ops[k].label}")
                for v in victims:
                    self._unplace(v, times, mrt, unscheduled)
            self._place(k, chosen, times, mrt, unscheduled)
            last[k] = chosen
            for e in self.succs[k]:
                s = e.dst
                if s != k and times[s] is not None and \
                        times[s] < chosen + e.latency - e.distance * self.ii:
                    self._unplace(s, times, mrt, unscheduled)
            for e in self.preds[k]:
                p = e.src
                if p != k and times[p] is not None and \
                        chosen < times[p] + e.latency - e.distance * self.ii:
                    self._unplace(p, times, mrt, unscheduled)
        return times

    def _free_slot(self, k, first, last, times, mrt):
        """The first cycle in [first, last] where op k needs no eviction, or None."""
        slot, busy, pop = self.shape[k]
        if busy > self.ii:  # it books some rows twice: ask row by row
            fits = [self._resource_conflicts(k, t, mrt) == set() for t in range(self.ii)]
        else:
            runs = self._free_runs(slot, mrt)
            pops = self._free_runs("pop", mrt) if pop else [1] * self.ii
            fits = [runs[r] >= busy and pops[r] > 0 for r in range(self.ii)]
        for t in range(first, int(last) + 1):
            if fits[t % self.ii] and not self._fifo_conflicts(k, t, times):
                return t
        return None

    def _window(self, k, times) -> tuple[int, int]:
        """(earliest, latest) issue cycle of op k that the placed predecessors and successors
        allow (latest may be below earliest: then some neighbour has to move)."""
        early = [times[e.src] + e.latency - e.distance * self.ii for e in self.preds[k]
                 if e.src != k and times[e.src] is not None]
        late = [times[e.dst] - e.latency + e.distance * self.ii for e in self.succs[k]
                if e.dst != k and times[e.dst] is not None]
        lstart = min(late, default=float("inf"))
        if early:
            return max(0, *early), lstart
        # only successors placed: the II cycles up to the latest (negative times are shifted
        # away by ``_normalise``)
        return (0, lstart) if not late else (lstart - self.ii + 1, lstart)

    def _place(self, k, t, times, mrt, unscheduled):
        times[k] = t
        unscheduled.discard(k)
        for key in self._usage(k, t):
            mrt.setdefault(key, []).append(k)

    def _unplace(self, k, times, mrt, unscheduled):
        if times[k] is None:
            return
        for key in self._usage(k, times[k]):
            mrt[key].remove(k)
        times[k] = None
        unscheduled.add(k)


def _held_rows(push: int, pop: int, pop_latency: int, ii: int) -> set:
    """The MRT rows in which a FIFO entry pushed at ``push`` and popped at ``pop`` is held."""
    return {(push + c) % ii for c in range(min(pop + pop_latency - push, ii))}


def _fifo_occupancy_pairs(pairs, ii, pop_latency):
    """Entries held at the fullest cycle: from each push until ``pop_latency`` after its pop."""
    best = 0
    for c in range(ii):
        best = max(best, sum((c - tp) // ii - (c - tq - pop_latency) // ii for tp, tq in pairs))
    return best


class _Infeasible(Exception):
    pass


BUDGET = "budget exhausted"


class _Circuits:
    """The graph's elementary circuits as (distance, delay, ops), enumerated once, at the first
    II that needs them (None: too many to enumerate)."""

    def __init__(self, graph: Graph):
        self.graph = graph

    @functools.cached_property
    def _sums(self):
        try:
            return [(sum(e.distance for e in c), sum(e.latency for e in c),
                     frozenset(e.src for e in c)) for c in elementary_circuits(self.graph)]
        except ValueError:  # too many to enumerate: no retry
            return None

    def tight(self, ii: int) -> frozenset:
        """The ops on circuits with less than one II of slack at ``ii``
        (distance·II − delay < II): their windows are narrower than the II."""
        if self._sums is None:
            return frozenset()
        return frozenset().union(*(ops for distance, delay, ops in self._sums
                                   if (distance - 1) * ii < delay))


def _schedule_at(graph, ii, reserved, budget, circuits: _Circuits):
    """Issue cycles at ``ii`` by height; if the budget runs out, again with the ops of the tight
    recurrences first (ops whose window is a single cycle, like a pinned accumulator and its
    reader, then find a row with room before the other ops fill it)."""
    try:
        return _IMS(graph, ii, reserved).run(budget)
    except _Infeasible as exc:
        first = circuits.tight(ii) if str(exc) == BUDGET else frozenset()
        if not first:
            raise
    try:
        return _IMS(graph, ii, reserved, first).run(budget)
    except _Infeasible as exc:
        raise _Infeasible(f"{exc} (also with the tight recurrences first)") from None


def _normalise(times, ii):
    """Shift so the earliest op issues in stage 0 (keeps each op's MRT row)."""
    low = min(times)
    shift = -(low // ii) * ii
    return [t + shift for t in times]


def modulo_schedule(body_or_graph, model: SlotModel | None = None, *, max_ii: int | None = None,
                    max_stages: int | None = None, budget_ratio: int = 20,
                    reserve_scalar: int = 0, rotating=(), min_ii: int = 1) -> Schedule:
    """The smallest-II modulo schedule found by iterative modulo scheduling.

    ``max_stages`` bounds the stage count (the iterations a register group can
    hold in flight); ``reserve_scalar`` (the loop's strided bases) keeps scalar slots free in
    the last rows for the loop's pointer increments (``increment_slots``: fewer when
    the body's scalar ops leave fewer free, the kernel then unrolls further); ``min_ii``
    starts the search
    above MII (a caller whose registers did not fit at a smaller II).
    """
    graph = body_or_graph if isinstance(body_or_graph, Graph) else build_graph(
        body_or_graph, model, rotating)
    if max_stages is not None and (not isinstance(max_stages, int) or max_stages < 1):
        raise ValueError(f"max_stages must be a positive int, got {max_stages!r}")
    if not isinstance(reserve_scalar, int) or reserve_scalar < 0:
        raise ValueError(f"reserve_scalar must be a non-negative int, got {reserve_scalar!r}")
    if isinstance(min_ii, bool) or not isinstance(min_ii, int) or min_ii < 1:
        raise ValueError(f"min_ii must be a positive int, got {min_ii!r}")
    bounds = analyse(graph)
    start = max(bounds.mii, res_mii(graph, reserve_scalar)[0], min_ii)
    max_ii = max_ii or start + sum(graph.latency(i) for i in range(graph.n)) + 1
    attempts, circuits = {}, _Circuits(graph)
    for ii in range(start, max_ii + 1):
        slots = increment_slots(graph, ii, reserve_scalar)
        if reserve_scalar and not slots:
            attempts[ii] = "no scalar slot left for the pointer increments"
            continue
        reserved = {"scalar": {ii - 1 - j: 1 for j in range(slots)}}
        try:
            times = _normalise(_schedule_at(graph, ii, reserved, budget_ratio * graph.n,
                                                 circuits), ii)
        except _Infeasible as exc:
            attempts[ii] = str(exc)
            continue
        if max_stages is not None and max(times) // ii + 1 > max_stages:
            attempts[ii] = f"{max(times) // ii + 1} stages > max_stages {max_stages}"
            continue
        attempts[ii] = "ok"
        schedule = Schedule(graph, ii, times, bounds, attempts, slots)
        check_schedule(schedule)
        return schedule
    last = max(attempts, default=max_ii)
    raise ValueError(f"no modulo schedule from II {start} to {max_ii}"
                     + (f" (at II {last}: {attempts[last]})" if attempts else ""))


def op_after_op(graph: Graph, *, reserve_scalar: int = 0) -> Schedule:
    """The body's own order as a schedule: one op a bundle, in program order, each as soon as
    its operands and slot allow, and the next iteration after the last op (with room for the
    pointer increments of ``reserve_scalar`` strided bases): no overlap, so the fewest values
    live at once (every carried value renamed: a read of its previous value may come after
    the new one). Its II is what a loop costs that is not pipelined at all."""
    graph = graph.renamed()
    model = graph.model
    preds = {k: [] for k in range(graph.n)}
    for e in graph.edges:
        if e.distance == 0:
            preds[e.dst].append(e)
    times, busy, t = [], {}, 0
    for k, op in enumerate(graph.ops):
        t = max([t] + [times[e.src] + e.latency for e in preds[k]])
        slot, span = slot_of(op.opcode), model.op_busy(op)
        while any(busy.get((slot, t + c), 0) >= model.units[slot] for c in range(span)):
            t += 1
        for c in range(span):
            busy[slot, t + c] = busy.get((slot, t + c), 0) + 1
        times.append(t)
        t += 1
    ii = max([t + 1 for _, t in busy]
             + [-(-(times[e.src] + e.latency - times[e.dst]) // e.distance)
                for e in graph.edges if e.distance > 0])
    scalar_end = max([t + 1 for slot, t in busy if slot == "scalar"], default=0)
    while reserve_scalar and not 0 < increment_slots(graph, ii, reserve_scalar) \
            <= ii - scalar_end:
        ii += 1
    schedule = Schedule(graph, ii, times, analyse(graph), {ii: "op after op"},
                        increment_slots(graph, ii, reserve_scalar))
    check_schedule(schedule)
    return schedule


def check_schedule(schedule: Schedule) -> None:
    """Raise ValueError unless every dependence, slot (less the reserved scalar slots), FIFO
    order and depth constraint holds."""
    g, ii, times = schedule.graph, schedule.ii, schedule.times
    for e in g.edges:
        if times[e.dst] < times[e.src] + e.latency - e.distance * ii:
            raise ValueError(f"schedule breaks {e.kind} edge {g.ops[e.src].label} → "
                             f"{g.ops[e.dst].label}")
    for slot, rows in schedule.mrt().items():
        for r, row in enumerate(rows):
            extra = 1 if slot == "scalar" and r >= ii - schedule.reserved_scalar else 0
            if len(row) + extra > g.model.units[slot]:
                raise ValueError(f"schedule overbooks {slot} in row {r}: {row}")
    pops = [times[q] % ii for _, q in g.fifo_pairs]
    if len(set(pops)) != len(pops):
        raise ValueError("schedule puts two pops in one MRT row")
    pairs = [(times[p], times[q]) for p, q in g.fifo_pairs]
    if not fifo_order_ok(pairs, ii):
        raise ValueError("schedule pops SFU results out of push order")
    if schedule.fifo_occupancy() > g.model.fifo_depth:
        raise ValueError("schedule overflows the SFU FIFO")
