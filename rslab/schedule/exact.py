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
from rslab.schedule.bounds import analyse
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


def exact_schedule(body_or_graph, ii: int, *, model: SlotModel | None = None,
                   max_stages: int = 8, reserve_scalar: int = 0,
                   time_limit: float = 60.0, rotating=()) -> ExactResult:
    """Decide whether a modulo schedule at ``ii`` with at most ``max_stages`` stages exists."""
    graph = body_or_graph if isinstance(body_or_graph, Graph) else build_graph(
        body_or_graph, model, rotating)
    ii = _positive_int("ii", ii)
    max_stages = _positive_int("max_stages", max_stages)
    if isinstance(reserve_scalar, bool) or not isinstance(reserve_scalar, int) \
            or not 0 <= reserve_scalar < ii:
        raise ValueError(f"reserve_scalar must be an int in [0, ii), got {reserve_scalar!r}")
    if not time_limit > 0:
        raise ValueError(f"time_limit must be positive, got {time_limit!r}")
    start = time.perf_counter()
    n, m = graph.n, graph.model
    pairs = list(graph.fifo_pairs)
    couples = [(a, b) for a in range(len(pairs)) for b in range(a + 1, len(pairs))]
    # variables: k_i (n), y_iρ (n·II), z_ab (one per couple of FIFO pairs)
    n_vars = n + n * ii + len(couples)

    def y(i, row):
        return n + i * ii + row

    def z(c):
        return n + n * ii + c

    rows, lo, hi = [], [], []

    def add(coefs: dict, low: float, high: float):
        rows.append(coefs)
        lo.append(low)
        hi.append(high)

    def time_of(i, sign=1, into=None):
        into = {} if into is None else into
        into[i] = into.get(i, 0) + sign * ii
        for row in range(1, ii):
            into[y(i, row)] = into.get(y(i, row), 0) + sign * row
        return into

    for i in range(n):
        add({y(i, row): 1 for row in range(ii)}, 1, 1)
    for e in graph.edges:
        if e.src == e.dst:
            if e.latency - e.distance * ii > 0:
                return ExactResult(ii, "none", max_stages, None, time.perf_counter() - start,
                                   f"self-recurrence of {graph.ops[e.src].label} exceeds II")
            continue
        coefs = time_of(e.dst)
        time_of(e.src, -1, coefs)
        add(coefs, e.latency - e.distance * ii, np.inf)
    usage = {}  # (resource, row) -> {var: count}
    for i, op in enumerate(graph.ops):
        slot = slot_of(op.opcode)
        for row in range(ii):
            booked = [(slot, (row + c) % ii) for c in range(m.op_busy(op.opcode))]
            if op.is_pop:
                booked.append(("pop", row))
            for key in booked:
                cell = usage.setdefault(key, {})
                cell[y(i, row)] = cell.get(y(i, row), 0) + 1
    for (res, row), coefs in usage.items():
        cap = 1 if res == "pop" else m.units[res]
        if res == "scalar" and row >= ii - reserve_scalar:
            cap -= 1
        add(coefs, -np.inf, cap)
    for c, (a, b) in enumerate(couples):
        for which in (0, 1):  # pushes, then pops
            coefs = time_of(pairs[a][which])
            time_of(pairs[b][which], -1, coefs)
            coefs[z(c)] = -ii
            add(coefs, 1, ii - 1)
    A = lil_matrix((len(rows), n_vars))
    for r, coefs in enumerate(rows):
        for var, value in coefs.items():
            if value:
                A[r, var] = value
    lower = np.zeros(n_vars)
    upper = np.ones(n_vars)
    upper[:n] = max_stages - 1
    lower[n + n * ii:] = -max_stages
    upper[n + n * ii:] = max_stages
    cost = np.zeros(n_vars)  # Σ t_i
    total = {}
    for i in range(n):
        time_of(i, 1, total)
    for var, value in total.items():
        cost[var] = value
    result = milp(cost, constraints=LinearConstraint(A.tocsr(), lo, hi),
                  integrality=np.ones(n_vars), bounds=VarBounds(lower, upper),
                  options={"time_limit": float(time_limit), "disp": False})
    seconds = time.perf_counter() - start
    if result.status == 2:
        return ExactResult(ii, "none", max_stages, None, seconds, result.message)
    if result.x is None:
        return ExactResult(ii, "unknown", max_stages, None, seconds, result.message)
    x = np.rint(result.x).astype(int)
    times = [int(ii * x[i] + sum(row * x[y(i, row)] for row in range(ii))) for i in range(n)]
    shift = min(times) // ii * ii
    times = [t - shift for t in times]
    schedule = Schedule(graph, ii, times, analyse(graph), {ii: "exact"})
    try:
        check_schedule(schedule, reserve_scalar=reserve_scalar)
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
    for ii in range(analyse(graph).mii, _positive_int("max_ii", max_ii) + 1):
        result = exact_schedule(graph, ii, **kw)
        tried.append(result)
        if result.status == "found":
            return result, tried
    return None, tried
