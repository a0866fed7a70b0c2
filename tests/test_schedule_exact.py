"""The integer-program scheduler: finds what exists, proves what cannot; its schedules run."""

import numpy as np
import pytest

from rslab.kernels.studies.steady import steady_state
from rslab.kernels.studies.sumexp_loop import packed_row, sumexp_body, sumexp_numpy, sumexp_program
from rslab.machine import MachineConfig, assemble, simulate
from rslab.machine.bf16 import round_to_bf16
from rslab.schedule import Op, SlotModel, Use, check_schedule, modulo_schedule
from rslab.schedule.exact import exact_schedule, smallest_exact

FAST_VALU = MachineConfig().with_(latency={"valu": 1})


def test_below_the_recurrence_bound_there_is_no_schedule():
    body = [Op("vmul.f32", "t", ("x", "v60")), Op("vadd.f32", "x", ("t", "v61"))]
    assert exact_schedule(body, 5).status == "none"   # RecMII 6
    found = exact_schedule(body, 6)
    assert found.status == "found"
    check_schedule(found.schedule)


def test_below_the_resource_bound_there_is_no_schedule():
    body = [Op("vmul.f32", f"y{k}", ("v1", "v60")) for k in range(5)]   # 5 VALU ops, 2 slots
    assert exact_schedule(body, 2).status == "none"
    assert exact_schedule(body, 3).status == "found"


def test_found_schedules_keep_the_fifo_order():
    """Two pushes whose pops would have to swap places: the first push's chain is longer."""
    body = [Op("vexp2", "@a", ("v1",)), Op("vpop", "a", ("@a",)),
            Op("vmul.f32", "b0", ("v2", "v60")), Op("vmul.f32", "b1", ("b0", "v60")),
            Op("vexp2", "@b", ("b1",)), Op("vpop", "b", ("@b",)),
            Op("vadd.f32", "s", (Use("s", 1), "a")), Op("vadd.f32", "s2", ("s", "b"))]
    result = smallest_exact(body, max_ii=12)[0]
    pairs = [(result.schedule.times[p], result.schedule.times[q])
             for p, q in result.schedule.graph.fifo_pairs]
    assert result.status == "found"
    check_schedule(result.schedule)          # includes the FIFO order
    assert len(pairs) == 2


def test_exact_and_heuristic_reach_mii_and_the_loop_runs():
    """One worker at VALU latency 1: the program finds II 10 = MII, and so does the heuristic
    (before its tight recurrences were scheduled first it stopped at 11)."""
    model = SlotModel.from_config(FAST_VALU)
    heuristic = modulo_schedule(sumexp_body(workers=1), model, reserve_scalar=1)
    assert heuristic.ii == heuristic.bounds.mii == 10
    row = round_to_bf16(np.random.default_rng(4).normal(size=6 * 256).astype(np.float32))
    m = float(row.max())
    text, loop = sumexp_program(6, m, model=model, workers=1, scheduler="exact")
    assert loop.schedule.ii == 10
    run = simulate(assemble(text), FAST_VALU, vmem=packed_row(row))
    assert run.sreg_f32(3) == sumexp_numpy(row, m, workers=1)
    steady = steady_state(lambda it: sumexp_program(2 * it, 0.0, model=model, workers=1,
                                                    scheduler="exact")[0], 8, 4, FAST_VALU)
    assert steady["ii"] == 10 and steady["stalls_per_iter"] == 0


def test_bad_arguments_raise():
    body = [Op("vmul.f32", "y", ("v1", "v60"))]
    for kw, word in (({"ii": 0}, "ii"), ({"ii": 2, "max_stages": 0}, "max_stages"),
                     ({"ii": 2, "reserve_scalar": -1}, "reserve_scalar"),
                     ({"ii": 2, "time_limit": 0}, "time_limit")):
        with pytest.raises(ValueError, match=word):
            exact_schedule(body, **kw)
    with pytest.raises(ValueError, match="scheduler"):
        sumexp_program(4, 0.0, scheduler="magic")
