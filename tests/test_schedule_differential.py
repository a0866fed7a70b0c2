"""Iterative modulo scheduling against the integer program on small random bodies: the
heuristic reaches the smallest II at which a schedule exists (the exact scheduler proves none
exists below it), on the default machine and on one with two SFUs."""

from fuzzing import examples
from hypothesis import given
from hypothesis import strategies as st

from rslab.schedule import Op, SlotModel, analyse, build_graph, check_schedule, modulo_schedule
from rslab.schedule.exact import exact_schedule

LIVE_INS = ("v50", "v51")
MODELS = {"default": SlotModel(), "two SFUs": SlotModel().replace(units={"sfu": 2})}


@st.composite
def bodies(draw):
    """VALU ops and push/pop pairs on earlier values, and maybe a pinned accumulator
    ``acc0 += x`` with a reader ``r0 = acc0 + v50`` anywhere in the body."""
    ops, values = [], []
    for k in range(draw(st.integers(2, 8))):
        pool = st.sampled_from(values + list(LIVE_INS))
        if draw(st.integers(0, 4)) == 0:
            ops += [Op(draw(st.sampled_from(["vexp2", "vlog2"])), f"@e{k}", (draw(pool),)),
                    Op("vpop", f"e{k}", (f"@e{k}",))]
            values.append(f"e{k}")
        else:
            opcode = draw(st.sampled_from(["vadd.f32", "vmul.f32", "vmax.f32"]))
            ops.append(Op(opcode, f"t{k}", (draw(pool), draw(pool))))
            values.append(f"t{k}")
    if draw(st.booleans()):
        ops.append(Op("vadd.f32", "acc0", ("acc0", draw(st.sampled_from(values)))))
        if draw(st.booleans()):
            ops.insert(draw(st.integers(0, len(ops) - 1)), Op("vadd.f32", "r0", ("acc0", "v50")))
    return ops


@examples("schedules")
@given(body=bodies(), model=st.sampled_from(sorted(MODELS)))
def test_heuristic_reaches_the_exact_ii(body, model):
    graph = build_graph(body, MODELS[model])
    schedule = modulo_schedule(graph)
    check_schedule(schedule)
    for ii in range(analyse(graph).mii, schedule.ii):
        answer = exact_schedule(graph, ii, time_limit=20)
        assert answer.status != "found", (
            f"a schedule exists at II {ii} < {schedule.ii}: {schedule.attempts[ii]}")
