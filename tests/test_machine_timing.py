"""Timing of small programs against first principles (the issue model of rslab.machine)."""

from math import gcd

import numpy as np
import pytest

from rslab.machine import CAUSES, MachineConfig, assemble, simulate

CFG = MachineConfig()
LAT = CFG.latency


def run(text, config=CFG, **kw):
    return simulate(assemble(text), config, **kw)


def check_accounting(r):
    """Every cycle is an issue, a named stall or the final drain."""
    assert r.cycles == r.bundles + sum(r.stalls.values()) + r.drain
    assert set(r.stalls) == set(CAUSES)


@pytest.mark.parametrize("n", [1, 2, 7])
@pytest.mark.parametrize("valu", [1, 3, 5])
def test_dependent_chain_takes_n_times_latency(n, valu):
    cfg = CFG.with_(latency={"valu": valu})
    r = run("vadd.f32 v1, v1, v2\n" * n + "halt\n", cfg)
    assert r.cycles == n * valu
    assert r.stalls["raw"] == (n - 1) * (valu - 1)
    check_accounting(r)


@pytest.mark.parametrize("slots", [1, 2, 4])
def test_independent_ops_limited_by_valu_slots(slots):
    n = 12
    cfg = CFG.with_(slots={"valu": slots})
    bundles = []
    ops = [f"vadd.f32 v{10 + i}, v1, v2" for i in range(n)]
    for i in range(0, n, slots):
        bundles.append(" ; ".join(ops[i:i + slots]))
    r = run("\n".join(bundles) + "\nhalt\n", cfg)
    k = n // slots
    assert r.cycles == (k - 1) + LAT["valu"]
    assert sum(r.stalls.values()) == 0
    assert r.slot_use["valu"] == n
    check_accounting(r)


def test_too_many_ops_for_the_slots_is_rejected():
    from rslab.machine import MachineError

    with pytest.raises(MachineError, match="valu slots"):
        run("vmov v1, v2 ; vmov v3, v2 ; vmov v4, v2\nhalt")


@pytest.mark.parametrize("hold", [0, 1, 3])
def test_sfu_issue_throughput_is_one_push_per_hold_plus_one(hold):
    n = 6
    cfg = CFG.with_(sfu_hold=hold)
    text = "vexp2 v1\n" * n + "vpop v2\n" * n + "halt\n"
    r = run(text, cfg)
    pushes = [i * (1 + hold) for i in range(n)]
    t = pushes[-1]
    for p in pushes:                      # each pop: in order, after its push's latency
        t = max(t + 1, p + LAT["sfu"])
    assert r.stalls["sfu-hold"] == (n - 1) * hold
    assert r.cycles == t + LAT["pop"]
    check_accounting(r)


def test_pop_waits_for_the_sfu_latency():
    r = run("vexp2 v1\nvpop v2\nvadd.f32 v3, v2, v2\nhalt", trace=True)
    b = r.trace.bundles
    assert b[1].cycle == LAT["sfu"] and b[1].cause == "sfu-wait"
    assert b[1].stall == LAT["sfu"] - 1
    assert b[2].cycle == LAT["sfu"] + LAT["pop"]
    assert r.cycles == LAT["sfu"] + LAT["pop"] + LAT["valu"]


def test_latency_is_not_throughput_for_the_sfu():
    # Throughput: a push every 2 cycles. Latency: 13 cycles to the FIFO head.
    n = 8
    r = run("vexp2 v1\n" * n + "halt", trace=True)
    issues = [b.cycle for b in r.trace.bundles[:n]]
    assert np.diff(issues).tolist() == [1 + CFG.sfu_hold] * (n - 1)
    assert r.cycles == issues[-1] + LAT["sfu"]          # halt drains the FIFO
    assert r.fifo_left == n


def test_fifo_full_stalls_until_a_pop_frees_an_entry():
    cfg = CFG.with_(fifo_depth=2, latency={"pop": 4})
    r = run("vexp2 v1\nvexp2 v1\nvpop v2\nvexp2 v1\nhalt", cfg, trace=True)
    b = r.trace.bundles
    pop_cycle = b[2].cycle
    assert pop_cycle == LAT["sfu"]
    assert b[3].cause == "fifo-full"
    assert b[3].cycle == pop_cycle + 4
    assert r.stalls["fifo-full"] == 3
    check_accounting(r)


def test_fifo_occupancy_never_exceeds_depth():
    cfg = CFG.with_(fifo_depth=3, latency={"pop": 2})
    text = ("vexp2 v1\n" * 3) + ("vpop v2\nvexp2 v1\n" * 5) + "vpop v2\n" * 3 + "halt"
    r = run(text, cfg, trace=True)
    _, occ = r.trace.fifo_occupancy()
    assert occ.max() == 3 and occ[-1] == 0
    assert r.stalls["fifo-full"] > 0


@pytest.mark.parametrize("stride", [1, 2, 3, 4, 16, 128, 0, -1])
def test_strided_load_bank_conflict_holds_the_port_k_cycles(stride):
    k = gcd(abs(stride), 128) if stride else 1
    text = f"vld.s v1, [s1 + 0], {stride}\nvld.s v2, [s1 + 0], {stride}\nhalt"
    r = run(text, sregs={1: 4096}, trace=True)
    b = r.trace.bundles
    assert b[1].cycle == max(1, k)
    assert r.stalls["bank-conflict"] == k - 1
    assert r.cycles == b[1].cycle + k - 1 + LAT["ld"]
    check_accounting(r)


def test_store_bank_conflict_and_unrelated_bundles_are_not_held():
    text = "vst.s v1, [s1 + 0], 8\nvadd.f32 v2, v3, v3\nvst v1, [s1 + 0]\nhalt"
    r = run(text, sregs={1: 0}, trace=True)
    b = r.trace.bundles
    assert b[1].cycle == 1                  # the VALU bundle is not held by the st port
    assert b[2].cycle == 8 and b[2].cause == "bank-conflict"


@pytest.mark.parametrize("ports", [1, 2, 3])
def test_a_bank_conflict_holds_only_its_own_port(ports):
    """Stride 8 holds a store port 8 cycles; with more ports the next stores use the others."""
    cfg = MachineConfig().with_(slots={"st": ports})
    text = "vst.s v1, [s1 + 0], 8\nvst v1, [s1 + 0]\nvst v1, [s1 + 512]\nhalt"
    r = run(text, cfg, sregs={1: 0}, trace=True)
    cycles = [b.cycle for b in r.trace.bundles][:3]
    expected = {1: [0, 8, 9], 2: [0, 1, 2], 3: [0, 1, 2]}[ports]
    assert cycles == expected
    assert r.stalls["bank-conflict"] == expected[-1] - 2
    check_accounting(r)


def test_a_bundle_needs_as_many_free_ports_as_it_has_stores():
    cfg = MachineConfig().with_(slots={"st": 2})
    text = ("vst.s v1, [s1 + 0], 8\nvst v1, [s1 + 0] ; vst v2, [s1 + 512]\nhalt")
    r = run(text, cfg, sregs={1: 0}, trace=True)
    assert [b.cycle for b in r.trace.bundles][:2] == [0, 8]
    assert r.trace.bundles[1].cause == "bank-conflict"


def test_contiguous_loads_stream_one_per_cycle():
    text = "\n".join(f"vld v{i}, [s1 + {512 * i}]" for i in range(8)) + "\nhalt"
    r = run(text)
    assert r.cycles == 7 + LAT["ld"]
    assert sum(r.stalls.values()) == 0


def test_hardware_loop_has_zero_overhead():
    n = 25
    r = run(f"sli s1, 0\nloop {n}\nsadd s1, s1, 1\nendloop\nhalt")
    assert r.sreg(1) == n
    assert r.cycles == 1 + n
    assert r.stalls["branch"] == 0


def test_taken_branch_costs_the_penalty():
    n = 25
    text = f"sli s1, {n}\ntop:\nsadd s1, s1, -1\nbnz s1, top\nhalt"
    r = run(text)
    assert r.sreg(1) == 0
    assert r.cycles == 4 * n - 1       # 2 bundles + 2 penalty cycles per taken branch
    assert r.stalls["branch"] == CFG.branch_penalty * (n - 1)
    check_accounting(r)


def test_loop_count_from_register_and_zero_count_skips():
    r = run("sli s2, 5\nloop s2\nsadd s1, s1, 2\nendloop\nloop 0\nsadd s1, s1, 100\nendloop\nhalt")
    assert r.sreg(1) == 10
    r = run("sld s2, [s3 + 0]\nloop s2\nsadd s1, s1, 1\nendloop\nhalt",
            vmem=np.array([3], dtype=np.uint32), trace=True)
    assert r.sreg(1) == 3
    assert r.trace.bundles[1].cause == "raw" and r.trace.bundles[1].cycle == LAT["ld"]


def test_nested_loops():
    r = run("loop 3\nloop 4\nsadd s1, s1, 1\nendloop\nsadd s2, s2, 1\nendloop\nhalt")
    assert (r.sreg(1), r.sreg(2)) == (12, 3)
    assert r.cycles == 3 * 5


def test_scalar_latency_feeds_vector_ops():
    r = run("sli s1, 7\nvbcast v1, s1\nhalt", trace=True)
    assert r.trace.bundles[1].cycle == LAT["scalar"]
    r = run("vred.max s1, v1\nvbcast v2, s1\nhalt", trace=True)
    assert r.trace.bundles[1].cycle == LAT["xlu"]


def test_halt_drains_everything_in_flight():
    r = run("vld v1, [s0 + 0]\nhalt")
    assert r.cycles == LAT["ld"] and r.drain == LAT["ld"] - 1
    r = run("halt")
    assert r.cycles == 0 and r.ops == 0 and r.bundles == 0


def test_dma_wait_stalls_until_the_transfer_lands():
    n = 4096
    cfg = CFG.with_(dma_latency=50, dma_bytes_per_cycle=64)
    hbm = np.arange(n // 4, dtype=np.uint32)
    text = (f"sli s1, 1024\nsli s2, 0\nsli s3, {n}\n"
            "dma s1, s2, s3\ndma s1, s2, s3, 1\ndmawait 0\ndmawait\nvld v1, [s1 + 0]\nhalt")
    r = run(text, cfg, hbm=hbm, trace=True)
    b = r.trace.bundles
    start = b[3].cycle
    done0 = start + 50 + n // 64
    done1 = start + n // 64 + 50 + n // 64        # the engine is busy with the first copy
    assert b[5].cycle == done0 and b[5].cause == "dma-wait"
    assert b[6].cycle == done1
    assert np.array_equal(r.read_vmem(1024, n // 4), hbm)


def test_design_sumexp_body_is_resource_bound_at_ten_cycles():
    """The note's sum-exp body, 20 VALU ops (4 pops) + 4 exp2 pushes: ResMII 10, SFU 8, no stall."""
    valu = [f"vadd.f32 v{20 + i}, v1, v2" for i in range(16)]
    pops = [f"vpop v{40 + i}" for i in range(4)]
    body = []
    for c in range(10):
        ops = []
        if c in (0, 2, 4, 6):
            ops.append("vexp2 v1")
        ops += (pops[c - 6:c - 5] if c >= 6 else []) + valu[:2 - (1 if c >= 6 else 0)]
        valu = valu[2 - (1 if c >= 6 else 0):]
        body.append(" ; ".join(ops))
    text = ("vexp2 v1\nnop\nvexp2 v1\nnop\nvexp2 v1\nnop\nvexp2 v1\n"
            "sumexp:\nloop 20\n" + "\n".join(body) + "\nendloop\n"
            + "vpop v3\n" * 4 + "halt\n")
    r = run(text, trace=True)
    ss = r.trace.steady_state("sumexp")
    assert ss["cycles_per_iter"] == 10 and ss["stalls_per_iter"] == 0
    assert r.slot_use["valu"] == 20 * 20 + 4 and r.slot_use["sfu"] == 4 * 21
    _, occ = r.trace.fifo_occupancy()
    assert occ.max() <= CFG.fifo_depth


def test_in_bundle_reads_see_values_before_the_bundle():
    v1 = np.full(128, 1.0, np.float32)
    v2 = np.full(128, 2.0, np.float32)
    r = run("vmov v1, v2 ; vmov v2, v1\nhalt", vregs={1: v1, 2: v2})
    assert r.vreg(1)[0] == 2.0 and r.vreg(2)[0] == 1.0
    r = run("vld v1, [s1 + 0] ; sadd s1, s1, 512\nhalt",
            vmem={0: np.full(128, 5, np.uint32), 512: np.full(128, 6, np.uint32)})
    assert r.vreg(1, np.uint32)[0] == 5 and r.sreg(1) == 512


def test_branch_not_taken_costs_nothing():
    r = run("bnz s1, skip\nsadd s2, s2, 1\nskip:\nhalt")
    assert r.cycles == 2 and r.sreg(2) == 1
    r = run("bz s1, skip\nsadd s2, s2, 1\nskip:\nhalt")
    assert r.cycles == 1 + CFG.branch_penalty and r.sreg(2) == 0
