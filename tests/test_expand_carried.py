"""Modulo variable expansion of carried values, loops that wait inside, and the register fit.

Every loop is simulated and checked against a direct evaluation of its body.
"""

import random

import numpy as np
import pytest

from rslab.kernels.loops.emit import emit_loop
from rslab.machine import MachineConfig, assemble, simulate
from rslab.schedule import Addr, Op, SlotModel, Use, build_graph, expand, modulo_schedule

CONST = {"v60": 3, "v61": 5, "v62": 7}


def evaluate(body, n, start):
    """Lane 0 of the carried values after ``n`` iterations of a u32 body, in program order."""
    env = dict(start)
    for _ in range(n):
        old, vals = dict(env), {}
        for op in body:
            def read(s, old=old, vals=vals):
                if isinstance(s, Use):
                    return old[s.name]
                return vals[s] if s in vals else env[s] if s in env else CONST[s]
            a, b = (read(s) for s in op.srcs)
            vals[op.dst] = (a + b) % 2**32 if op.opcode == "vadd.u32" else a ^ b
        env.update({k: vals[k] for k in env})
    return env


def random_body(rng):
    """Two counters (``a`` read late in a chain, ``b`` by a second accumulator) and two sums."""
    body = [Op("vadd.u32", "a", ("a", "v60")),
            Op("vadd.u32", "b", (Use("b", 1) if rng.random() < 0.5 else "b", "v61"))]
    if rng.random() < 0.5:
        body = body[::-1]
    prev = "a"
    for k in range(rng.randint(0, 6)):
        body.append(Op(rng.choice(["vadd.u32", "vxor"]), f"c{k}",
                       (prev, rng.choice(["v62", "b"]) if k else "v62")))
        prev = f"c{k}"
    return body + [Op("vadd.u32", "acc", ("acc", prev)), Op("vxor", "acc2", ("acc2", "b"))]


def test_rotating_values_enter_and_leave_by_the_callers_register():
    """Renamed counters read their first value from, and leave their last in, the register the
    caller gave, on machines with one or two VALU slots and several latencies."""
    rng = random.Random(7)
    checked = 0
    for trial in range(120):
        body, n = random_body(rng), rng.randint(1, 12)
        rotating = tuple(rng.sample(["a", "b"], rng.randint(1, 2)))
        lat, slots = rng.choice([1, 3, 5]), 1 + trial % 2
        model = SlotModel().replace(latency={"valu": lat}, units={"valu": slots})
        carried = {"a": "v50", "b": "v51", "acc": "v52", "acc2": "v53"}
        code = emit_loop(body, n, "pipelined", carried=carried, model=model,
                         pool=[f"v{i}" for i in range(24)], rotating=rotating)
        text = ("vli v60, 3\nvli v61, 5\nvli v62, 7\nvli v50, 10\nvli v51, 100\nvli v52, 0\n"
                "vli v53, 0\n" + code.text + "halt\n")
        run = simulate(assemble(text), MachineConfig().with_(latency={"valu": lat},
                                                             slots={"valu": slots}))
        want = evaluate(body, n, {"a": 10, "b": 100, "acc": 0, "acc2": 0})
        got = {v: int(run.vreg(int(r[1:]), np.uint32)[0]) for v, r in carried.items()}
        assert got == want, (trial, rotating, code.text)
        checked += code.ii < 3 * lat  # the renaming let the chain overlap the counter
    assert checked > 30


def test_renaming_removes_the_pinned_recurrence():
    body = [Op("vadd.u32", "ctr", ("ctr", "v60"))]
    prev = "ctr"
    for k in range(4):
        body.append(Op("vadd.u32", f"c{k}", (prev, "v61")))
        prev = f"c{k}"
    body.append(Op("vsel", "idx", ("v62", "ctr", prev)))
    pinned = emit_loop(body, 20, "pipelined", carried={"ctr": "v50", "idx": "v51"},
                       pool=[f"v{i}" for i in range(20)], model=SlotModel())
    renamed = emit_loop(body, 20, "pipelined", carried={"ctr": "v50", "idx": "v51"},
                        pool=[f"v{i}" for i in range(20)], model=SlotModel(), rotating=("ctr",))
    assert pinned.ii == 15 and renamed.ii == 3


@pytest.mark.parametrize("seed", range(4))
def test_a_loop_waits_at_its_gates_without_draining(seed):
    """Gates (here a counted scalar op) issue once each, before their iteration; the loads,
    stores and the carried sum are those of the plain loop."""
    rng = random.Random(seed)
    for _ in range(30):
        n = rng.randint(2, 40)
        body = [Op("vld", "x", addr=Addr("s1", 0, 512)), Op("vadd.u32", "y", ("x", "v60")),
                Op("vxor", "z", ("y", "v61"))]
        prev = "z"
        for k in range(rng.randint(0, 4)):
            body.append(Op("vadd.u32", f"w{k}", (prev, "v60")))
            prev = f"w{k}"
        body += [Op("vadd.u32", "acc", ("acc", prev)),
                 Op("vst", None, (prev,), addr=Addr("s2", 0, 512), name="st")]
        schedule = modulo_schedule(build_graph(body), reserve_scalar=2)
        gates = {g: "sadd s20, s20, 1" for g in rng.sample(range(1, n), min(n - 1, 3))}
        exp = expand(schedule, n, registers=[f"v{i}" for i in range(30)],
                     carried_registers={"acc": "v50"}, gates=gates)
        text = ("sli s1, 0\nsli s2, 65536\nvli v60, 3\nvli v61, 5\nvli v50, 0\nsli s20, 0\n"
                + exp.text + "halt\n")
        data = np.arange(n * 128, dtype=np.uint32)
        run = simulate(assemble(text), vmem={0: data})
        x = data.reshape(n, 128).astype(np.uint64)
        stored = x + 3 ^ 5
        for _ in range(len(body) - 5):
            stored = stored + 3
        stored %= 2**32
        np.testing.assert_array_equal(run.read_vmem(65536, n * 128, np.uint32).reshape(n, 128),
                                      stored.astype(np.uint32))
        assert run.vreg(50, np.uint32)[0] == int(stored[:, 0].sum() % 2**32)
        assert run.sreg(20) == len(gates)
    with pytest.raises(ValueError, match="gates"):
        expand(schedule, 4, registers=[f"v{i}" for i in range(30)],
               carried_registers={"acc": "v50"}, gates={4: "nop"})


def test_a_schedule_whose_registers_do_not_fit_gives_way_to_one_that_does():
    """Eight independent exp2 chains at their MII hold seven registers: with six the emitter
    takes a schedule with fewer iterations in flight (or a larger II) instead of failing."""
    body = []
    for k in range(8):
        body.append(Op("vld", f"x{k}", addr=Addr("s1", 512 * k, 4096)))
        body.append(Op("vexp2", f"@e{k}", (f"x{k}",)))
        body.append(Op("vpop", f"e{k}", (f"@e{k}",)))
        body.append(Op("vadd.f32", f"acc{k}", (f"acc{k}", f"e{k}")))
    carried = {f"acc{k}": f"v{40 + k}" for k in range(8)}
    wide = emit_loop(body, 16, "pipelined", carried=carried, model=SlotModel(),
                     pool=[f"v{i}" for i in range(30)])
    narrow = emit_loop(body, 16, "pipelined", carried=carried, model=SlotModel(),
                       pool=[f"v{i}" for i in range(6)])
    assert narrow.registers_used <= 6 < wide.registers_used
    assert narrow.ii > wide.ii or narrow.stage_count < wide.stage_count
    with pytest.raises(ValueError, match="registers"):
        emit_loop(body, 16, "pipelined", carried=carried, model=SlotModel(), pool=["v0"])


def test_parallel_moves_give_every_register_its_source_in_any_permutation():
    """The moves after a loop that leave a carried value's last iterations in its registers:
    any assignment dst <- src, with or without a free register, in bundles of one, two or
    three moves (a bundle reads its registers before it writes them)."""
    import random

    from rslab.schedule.expand import parallel_moves

    rng = random.Random(36)
    regs = [f"v{i}" for i in range(8)]
    for _ in range(2000):
        moves = {d: rng.choice(regs) for d in rng.sample(regs, rng.randint(1, 7))}
        width, temps = rng.choice([1, 2, 3]), rng.choice([[], ["v20"]])
        try:
            bundles = parallel_moves(moves, "vmov", width, temps)
        except ValueError:
            assert width == 1 and not temps
            continue
        state = {r: r for r in regs + ["v20"]}
        for bundle in bundles:
            assert len(bundle) <= width
            writes = {op.split()[1].rstrip(","): state[op.split()[2]] for op in bundle}
            state.update(writes)
        assert all(state[d] == s for d, s in moves.items()), (moves, bundles)
