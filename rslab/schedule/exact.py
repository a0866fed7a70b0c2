"""Exact modulo scheduling at one II, as an integer program: does *any* schedule exist?

Iterative modulo scheduling (:func:`rslab.schedule.modulo.modulo_schedule`) is a
heuristic. When it ends above the lower bound MII, this module answers the
question it leaves open, within a stated bound on the stage count: is there a
schedule at this II with at most ``max_stages`` stages?

The program (solved by HiGHS through :func:`scipy.optimize.milp`):

* op i issues at ``t_i = II·k_i + Σ_ρ ρ·y_iρ``: stage ``k_i`` (an integer in
  ``[0, max_stages)``) and row ``ρ`` of the modulo reservation table (``y_iρ``
  binary, one row per op);
* every dependence edge: ``t_dst − t_src ≥ latency − distance·II``;
* every resource row: the ops booking it (an SFU push books ``1 + sfu_hold``
  consecutive rows, a pop also books the single pop port) fit the slot count,
  less the scalar slots reserved for the loop's pointer increments;
* SFU results leave in push order: for pairs a, b of (push, pop) the number of
  whole IIs between the pushes equals that between the pops — one integer
  ``z_ab`` with ``II·z_ab + 1 ≤ t_push_a − t_push_b ≤ II·z_ab + II − 1`` and
  the same for the pops (the condition of :func:`rslab.schedule.fifo_order_ok`).

The FIFO depth is not in the program; a schedule it returns is checked with
:func:`rslab.schedule.check_schedule`, which includes the depth. The objective
is the sum of issue times, so the schedule found is compact.

Answers: ``found`` (with a checked schedule), ``none`` (the program is
infeasible: no schedule exists at this II with at most ``max_stages`` stages),
``too deep`` (a schedule exists but overflows the FIFO, so the question stays
open) or ``unknown`` (the time limit ran out).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from scipy.optimize import Bounds as VarBounds
from scipy.optimize import LinearConstraint, milp
from scipy.sparse import lil_matrix

from rslab.schedule.body import Graph, build_graph
from rslab.schedule.bounds import analyse, increment_slots
from rslab.schedule.model import SlotModel, slot_of
from rslab.schedule.modulo import Schedule, check_schedule

STATUSES = ("found", "none", "too deep", "unknown")


@dataclass
class ExactResult:
    """The answer at one II: ``status`` (one of ``STATUSES``), the schedule if found."""

    ii: int
    status: str
    max_stages: int
    schedule: Schedule | None
    seconds: float
    message: str = ""


def _positive_int(name, value):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


class _Program:
    """The integer program of one (graph, II, stage bound): rows of coefficients and bounds.

    Variables: ``k_i`` (n), ``y_iρ`` (n·II), ``z_ab`` (one per couple of FIFO pairs).
    """

    def __init__(self, graph: Graph, ii: int, max_stages: int, reserve_scalar: int):
        self.g, self.ii, self.max_stages, self.reserve = graph, ii, max_stages, reserve_scalar
        self.n = graph.n
        pairs = list(graph.fifo_pairs)
        self.pairs = pairs
        self.couples = [(a, b) for a in range(len(pairs)) for b in range(a + 1, len(pairs))]
        self.n_vars = self.n + self.n * ii + len(self.couples)
        self.rows, self.lo, self.hi = [], [], []

    def y(self, i, row):
        return self.n + i * self.ii + row

    def z(self, c):
        return self.n + self.n * self.ii + c

    def add(self, coefs: dict, low: float, high: float):
        self.rows.append(coefs)
        self.lo.append(low)
        self.hi.append(high)

    def time_of(self, i, sign=1, into=None) -> dict:
        """The coefficients of ``sign·t_i`` (added into ``into``)."""
        into = {} if into is None else into
        into[i] = into.get(i, 0) + sign * self.ii
        for row in range(1, self.ii):
            into[self.y(i, row)] = into.get(self.y(i, row), 0) + sign * row
        return into

    def dependences(self) -> str | None:
        """One row per op (one MRT row each) and per edge; the reason if a self-loop cannot hold."""
        for i in range(self.n):
            self.add({self.y(i, row): 1 for row in range(self.ii)}, 1, 1)
        for e in self.g.edges:
            if e.src == e.dst:
                if e.latency - e.distance * self.ii > 0:
                    return f"self-recurrence of {self.g.ops[e.src].label} exceeds II"
                continue
            coefs = self.time_of(e.dst)
            self.time_of(e.src, -1, coefs)
            self.add(coefs, e.latency - e.distance * self.ii, np.inf)
        return None

    def resources(self):
        """Every (resource, MRT row) holds at most its units (less the reserved scalar slots)."""
        usage = {}  # (resource, row) -> {var: count}
        m, ii = self.g.model, self.ii
        for i, op in enumerate(self.g.ops):
            slot = slot_of(op.opcode)
            for row in range(ii):
                booked = [(slot, (row + c) % ii) for c in range(m.op_busy(op))]
                if op.is_pop:
                    booked.append(("pop", row))
                for key in booked:
                    cell = usage.setdefault(key, {})
                    cell[self.y(i, row)] = cell.get(self.y(i, row), 0) + 1
        for (res, row), coefs in usage.items():
            cap = 1 if res == "pop" else m.units[res]
            if res == "scalar" and row >= ii - self.reserve:
                cap -= 1
            self.add(coefs, -np.inf, cap)

    def fifo_order(self):
        """Pops leave in push order: as many whole IIs between two pops as between their pushes."""
        for c, (a, b) in enumerate(self.couples):
            for which in (0, 1):  # pushes, then pops
                coefs = self.time_of(self.pairs[a][which])
                self.time_of(self.pairs[b][which], -1, coefs)
                coefs[self.z(c)] = -self.ii
                self.add(coefs, 1, self.ii - 1)

    def solve(self, time_limit: float):
        """HiGHS on the rows, minimising Σ t_i."""
        A = lil_matrix((len(self.rows), self.n_vars))
        for r, coefs in enumerate(self.rows):
            for var, value in coefs.items():
                if value:
                    A[r, var] = value
        n, ii = self.n, self.ii
        lower, upper = np.zeros(self.n_vars), np.ones(self.n_vars)
        upper[:n] = self.max_stages - 1
        lower[n + n * ii:] = -self.max_stages
        upper[n + n * ii:] = self.max_stages
        cost = np.zeros(self.n_vars)
        for var, value in self.time_of_all().items():
            cost[var] = value
        return milp(cost, constraints=LinearConstraint(A.tocsr(), self.lo, self.hi),
                    integrality=np.ones(self.n_vars), bounds=VarBounds(lower, upper),
                    options={"time_limit": float(time_limit), "disp": False})

    def time_of_all(self) -> dict:
        total = {}
        for i in range(self.n):
            self.time_of(i, 1, total)
        return total

    def times(self, x) -> list:
        """Issue cycles from a solution, shifted so the earliest op is in stage 0."""
        x = np.rint(x).astype(int)
        ii = self.ii
        times = [int(ii * x[i] + sum(row * x[self.y(i, row)] for row in range(ii)))
                 for i in range(self.n)]
        shift = min(times) // ii * ii
        return [t - shift for t in times]


TIME_LIMIT = 60.0
"""Seconds the integer program may take at one II before it answers "unknown"."""


def _check_arguments(ii, max_stages, reserve_scalar, time_limit):
    ii = _positive_int("ii", ii)
    max_stages = _positive_int("max_stages", max_stages)
    if isinstance(reserve_scalar, bool) or not isinstance(reserve_scalar, int) \
            or reserve_scalar < 0:
        raise ValueError(f"reserve_scalar must be a non-negative int, got {reserve_scalar!r}")
    if not time_limit > 0:
        raise ValueError(f"time_limit must be positive, got {time_limit!r}")
    return ii, max_stages


def exact_schedule(body_or_graph, ii: int, *, model: SlotModel | None = None,
                   max_stages: int = 8, reserve_scalar: int = 0,
                   time_limit: float = TIME_LIMIT, rotating=()) -> ExactResult:
    """Decide whether a modulo schedule at ``ii`` with at most ``max_stages`` stages exists
    (``reserve_scalar``: the loop's strided bases, as :func:`modulo_schedule` takes them)."""
    graph = body_or_graph if isinstance(body_or_graph, Graph) else build_graph(
        body_or_graph, model, rotating)
    ii, max_stages = _check_arguments(ii, max_stages, reserve_scalar, time_limit)
    start = time.perf_counter()
    slots = increment_slots(graph, ii, reserve_scalar)
    if reserve_scalar and not slots:
        return ExactResult(ii, "none", max_stages, None, time.perf_counter() - start,
                           "no scalar slot left for the pointer increments")
    program = _Program(graph, ii, max_stages, slots)
    reason = program.dependences()
    if reason is not None:
        return ExactResult(ii, "none", max_stages, None, time.perf_counter() - start, reason)
    program.resources()
    program.fifo_order()
    result = program.solve(time_limit)
    seconds = time.perf_counter() - start
    if result.status == 2:
        return ExactResult(ii, "none", max_stages, None, seconds, result.message)
    if result.x is None:
        return ExactResult(ii, "unknown", max_stages, None, seconds, result.message)
    schedule = Schedule(graph, ii, program.times(result.x), analyse(graph), {ii: "exact"},
                        slots)
    try:
        check_schedule(schedule)
    except ValueError as exc:
        if "overflows the SFU FIFO" not in str(exc):
            raise AssertionError(f"the integer program's schedule breaks a constraint it "
                                 f"encodes: {exc}") from None
        return ExactResult(ii, "too deep", max_stages, None, seconds, str(exc))
    return ExactResult(ii, "found", max_stages, schedule, seconds, result.message)


def smallest_exact(body_or_graph, *, model: SlotModel | None = None, max_ii: int,
                   **kw) -> tuple[ExactResult | None, list[ExactResult]]:
    """The first II from MII up to ``max_ii`` at which ``exact_schedule`` finds a schedule,
    and the answers at every II tried."""
    graph = body_or_graph if isinstance(body_or_graph, Graph) else build_graph(
        body_or_graph, model, kw.pop("rotating", ()))
    tried = []
    reserve = kw.get("reserve_scalar", 0)
    first = analyse(graph, reserve_scalar=reserve).mii
    for ii in range(first, _positive_int("max_ii", max_ii) + 1):
        result = exact_schedule(graph, ii, **kw)
        tried.append(result)
        if result.status == "found":
            return result, tried
    return None, tried
