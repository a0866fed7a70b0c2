"""The modulo scheduler on textbook cases: RecMII binds, ResMII binds, MVE needed."""

import numpy as np
import pytest

from rslab.machine import MachineConfig, assemble, simulate
from rslab.schedule import (
    Addr,
    Op,
    SlotModel,
    Use,
    analyse,
    build_graph,
    check_schedule,
    expand,
    fifo_order_ok,
    modulo_schedule,
    register_copies,
)


def test_recurrence_binds_and_names_the_circuit():
    body = [Op("vmul.f32", "t", ("x", "v60")), Op("vadd.f32", "x", ("t", "v61"))]
    b = analyse(body)
    assert (b.res_mii, b.rec_mii) == (1, 6)
    assert set(b.critical_circuit) == {"t", "x"}
    assert b.binding.startswith("recurrence")
    assert modulo_schedule(body).ii == 6


def test_distance_two_recurrence_halves_recmii():
    body = [Op("vmul.f32", "t", (Use("x", 2), "v60")), Op("vadd.f32", "x", ("t", "v61"))]
    assert analyse(body).rec_mii == 3


def test_resources_bind_and_sfu_hold_is_counted():
    body = [Op("vld", "x", addr=Addr("s1", 0, 512))]
    body += [Op("vmul.f32", f"y{k}", ("x", "v60")) for k in range(4)]
    body += [Op("vexp2", f"@e{k}", (f"y{k}",)) for k in range(4)]
    body += [Op("vpop", f"e{k}", (f"@e{k}",)) for k in range(4)]
    b = analyse(body)
    assert b.usage["sfu"] == 8 and b.usage["valu"] == 8
    assert b.res_mii == 8 and b.rec_mii == 0
    assert analyse(body, SlotModel().replace(sfu_hold=2)).res_mii == 12
    assert analyse(body, SlotModel().replace(sfu_hold=2)).res_binding == "sfu"
    s = modulo_schedule(body)
    assert s.ii == 8
    for slot, rows in s.mrt().items():
        assert all(len(row) <= s.graph.model.units[slot] for row in rows)


def test_fifo_order_condition():
    assert fifo_order_ok([(0, 13), (2, 15)], 10)
    assert not fifo_order_ok([(0, 15), (2, 13)], 10)      # second result popped first
    assert fifo_order_ok([(0, 25), (8, 13)], 10) is False  # pops cross an II boundary
    assert fifo_order_ok([(0, 13), (8, 21)], 10)


def test_fifo_depth_bounds_ii_and_overflow_is_rejected():
    body = []
    for k in range(8):
        body += [Op("vexp2", f"@e{k}", ("v1",)), Op("vpop", f"e{k}", (f"@e{k}",))]
    shallow = SlotModel().replace(fifo_depth=4, sfu_hold=0)
    assert analyse(body, shallow).fifo_mii == 28  # 8 entries held ≥ 13 + 1 cycles, 4 at a time
    s = modulo_schedule(body)  # depth 16: fits
    check_schedule(s)
    s.graph.model = shallow
    with pytest.raises(ValueError, match="FIFO"):
        check_schedule(s)


def _mve_body():
    # x lives from its load to the last add: far longer than II = 2
    return [Op("vld", "x", addr=Addr("s1", 0, 512)),
            Op("vadd.f32", "a", ("x", "v60")),
            Op("vmul.f32", "b", ("a", "v60")),
            Op("vadd.f32", "c", ("b", "x")),
            Op("vst", None, ("c",), addr=Addr("s2", 0, 512), name="store")]


def test_modulo_variable_expansion_runs_correctly_on_the_machine():
    body = _mve_body()
    s = modulo_schedule(body, reserve_scalar=2)
    assert s.ii == 2
    copies = register_copies(s)
    assert copies["x"] > 1
    n = 11
    exp = expand(s, n, registers=[f"v{i}" for i in range(40)])
    assert exp.unroll == max(copies.values()) and exp.kernel_passes >= 1
    x = np.random.default_rng(0).normal(size=(n, 128)).astype(np.float32)
    text = "sli s1, 0\nsli s2, 65536\nvli v60, 0x3fc00000\n" + exp.text + "halt\n"
    run = simulate(assemble(text), MachineConfig(), vmem=x)
    got = run.read_vmem(65536, n * 128, np.float32).reshape(n, 128)
    c = np.float32(1.5)
    np.testing.assert_array_equal(got, (x + c) * c + x)
    assert run.stalls["raw"] <= 3  # only the setup's constant feeds in late


def test_unexpanded_schedule_would_be_wrong():
    s = modulo_schedule(_mve_body(), reserve_scalar=2)
    assert max(s.lifetimes().values()) > s.ii


@pytest.mark.parametrize("bad", [
    lambda: analyse([]),
    lambda: analyse([Op("vexp2", "e", ("v1",))]),
    lambda: analyse([Op("vexp2", "@e", ("v1",))]),
    lambda: analyse([Op("frob", "x")]),
    lambda: analyse([Op("vadd.f32", "x", ("v1", "v2")), Op("vadd.f32", "x", ("v1", "v2"))]),
    lambda: Use("x", -1),
    lambda: SlotModel(sfu_hold=-1),
    lambda: modulo_schedule([Op("vadd.f32", "x", ("v1", "v2"))], max_stages=0),
])
def test_bad_input_raises_value_error(bad):
    with pytest.raises(ValueError):
        bad()


def test_stage_table_covers_each_iteration_once_per_op():
    body = _mve_body()
    s = modulo_schedule(body, reserve_scalar=2)
    table = s.stage_table(iterations=3)
    cells = [c for row in table.values() for c in row]
    assert len(cells) == 3 * len(body)
    assert {c[0] for c in cells} == {0, 1, 2}


def test_pinned_carried_value_read_in_its_own_iteration_bounds_the_recurrence():
    """ctr = ctr + 1, then a long chain reads ctr: the next ctr must wait for that read."""
    body = [Op("vadd.u32", "ctr", ("ctr", "v60"))]
    prev = "ctr"
    for k in range(4):
        body.append(Op("vmul.f32", f"c{k}", (prev, "v61")))
        prev = f"c{k}"
    body.append(Op("vsel", "idx", ("v62", "ctr", prev)))  # reads ctr late in the chain
    graph = build_graph(body)
    anti = [(graph.ops[e.src].label, graph.ops[e.dst].label, e.distance)
            for e in graph.edges if e.kind == "anti"]
    assert ("idx", "ctr", 1) in anti
    assert analyse(body).rec_mii == 4 * 3 + 3  # ctr → 4 muls → idx, then the anti edge
    assert not [e for e in build_graph(body, rotating=("ctr",)).edges if e.kind == "anti"]


def test_the_slot_model_is_derived_from_the_machine():
    from rslab.machine import MachineConfig
    from rslab.machine.isa import POP_OPS, SFU_OPS

    cfg = MachineConfig()
    assert SlotModel() == SlotModel.from_config(cfg)
    assert SlotModel().units == dict(cfg.slots) and SlotModel().latency == dict(cfg.latency)
    other = cfg.with_(slots={"valu": 3}, latency={"sfu": 20}, sfu_hold=2)
    m = SlotModel.from_config(other)
    assert (m.units["valu"], m.latency["sfu"], m.op_busy(Op("vexp2", "@e", ("x",)))) == (3, 20, 3)
    assert {op for op in SFU_OPS if m.op_busy(Op(op, "@e", ("x",))) == 3} == SFU_OPS
    assert POP_OPS == {"vpop"}
    with pytest.raises(ValueError, match="MachineConfig"):
        SlotModel.from_config({"valu": 2})


def test_op_assembly_text():
    from rslab.schedule import Addr

    assert Op("vadd.f32", "a", ("b", "c")).assembly("v1", ["v2", "v3"]) == "vadd.f32 v1, v2, v3"
    load = Op("vld", "x", addr=Addr("s1", 0, 512))
    assert load.assembly("v4", [], 1024) == "vld v4, [s1 + 1024]"
    assert load.assembly("v4", [], -512) == "vld v4, [s1 - 512]"
    store = Op("vst.s", None, ("x", "2"), addr=Addr("s2", 4, 0))
    assert store.assembly(None, ["v5", "2"], 4) == "vst.s v5, [s2 + 4], 2"


def test_the_worst_recurrence_is_found_without_enumerating_circuits():
    """Lawler's search (for graphs with too many circuits to list) finds the largest latency
    per iteration, exactly, and a circuit that has it, as the enumeration does."""
    import random
    from collections import namedtuple
    from fractions import Fraction

    from rslab.machine.bottleneck import circuits, max_ratio_circuit

    E = namedtuple("E", "src dst latency distance")
    rng = random.Random(36)
    for _ in range(300):
        n = rng.randint(1, 7)
        edges = []
        for _ in range(rng.randint(0, 14)):
            a, b = rng.randrange(n), rng.randrange(n)
            d = rng.choice([0, 0, 1, 2, 3]) if a < b else rng.choice([1, 2, 3])
            edges.append(E(a, b, rng.choice([0, 1, 3, 4, 13]), d))
        ratios = [Fraction(sum(e.latency for e in c), sum(e.distance for e in c))
                  for c in circuits(n, edges)]
        worst, circuit = max_ratio_circuit(n, edges)
        assert worst == max(ratios, default=None)
        if circuit:
            assert Fraction(sum(e.latency for e in circuit),
                            sum(e.distance for e in circuit)) == worst


@pytest.mark.parametrize("ii", [3, 7, 40])
def test_the_free_row_search_agrees_with_the_eviction_check(ii):
    """On random reservation tables (loads booked 1–9 cycles by their bank conflicts, pops,
    reserved scalar rows), the first row op k can take without evicting is the first row whose
    eviction set is empty."""
    import random

    from rslab.schedule.bodytext import parse_body
    from rslab.schedule.modulo import _IMS

    text = ("a = vld [s1 + 0 + 512*i]\nb = vld.s [s2 + 0 + 4*i], 8\n"
            "c = vld.s [s3 + 0 + 4*i], 2\n@e = vexp2 a\ne = vpop @e\nd = vadd.f32 e, b\n"
            "f = vadd.f32 d, c\nq = sadd s5, 1\nvst f, [s4 + 0 + 512*i]\n")
    body = parse_body(text)
    graph = build_graph(body.ops, SlotModel())
    rng = random.Random(ii)
    for _ in range(200):
        ims = _IMS(graph, ii, {"scalar": {ii - 1: rng.randint(0, 1)}})
        times, mrt = [None] * graph.n, {}
        for k in rng.sample(range(graph.n), rng.randint(0, graph.n - 1)):
            ims._place(k, rng.randrange(2 * ii), times, mrt, set())
        k = rng.choice([j for j in range(graph.n) if times[j] is None])
        first = rng.randrange(ii)
        want = next((t for t in range(first, first + ii)
                     if ims._resource_conflicts(k, t, mrt) == set()
                     and not ims._fifo_conflicts(k, t, times)), None)
        assert ims._free_slot(k, first, first + ii - 1, times, mrt) == want
