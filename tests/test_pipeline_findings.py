"""The tools on a kernel engineer's own loops (issue 36, findings K1 and K3–K7), through the
command line as a reader types it: ``rslab pipeline BODY.s -o P.s`` then ``rslab sim P.s``.
Each loop's II is derived by hand in its test; the program must compute what the body's
iterations run one after another compute (the sequential meaning,
:mod:`rslab.schedule.sequential`, run by ``rslab sim`` too), and ``sim`` must measure the
cycles per source iteration ``pipeline`` promised, and name the same bottleneck."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from rslab.machine.units import tree_sum
from rslab.schedule.bodytext import parse_body
from rslab.schedule.sequential import sequential_program

ROOT = Path(__file__).resolve().parents[1]
ROW = np.random.default_rng(36).standard_normal(64 * 1024).astype(np.float32)
"""VMEM from byte 0: the loops' input rows (64 vectors of 128 float32 at 512 bytes each from
byte 0, another 64 from byte 65536, ...)."""


def rslab(*args, timeout=300):
    return subprocess.run([sys.executable, "-m", "rslab", *map(str, args)], capture_output=True,
                          text=True, timeout=timeout)


def ok(proc) -> str:
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    return proc.stdout


def run_loop(tmp_path, body: str, regs: str, *options):
    """(pipeline's JSON report, sim's JSON on the program, sim's JSON on the body run op
    after op), the registers ``regs`` read at the end of both."""
    src, out, seq = tmp_path / "body.s", tmp_path / "piped.s", tmp_path / "seq.s"
    src.write_text(body)
    np.save(tmp_path / "row.npy", ROW)
    rep = json.loads(ok(rslab("pipeline", src, "-o", out, "--json", *options)))
    n = rep["iterations"]
    seq.write_text(sequential_program(parse_body(body), n))
    runs = [json.loads(ok(rslab("sim", f, "--vmem", tmp_path / "row.npy", "--json",
                                 "--regs", regs))) for f in (out, seq)]
    assert runs[0]["registers"] == runs[1]["registers"], (runs[0]["registers"], body)
    return rep, runs[0], runs[1]


def per_source(sim: dict) -> float:
    return sim["loops"][0]["cycles_per_source_iter"]


def same_bottleneck(rep, sim):
    assert rep["bottleneck"]["sentence"] == sim["loops"][0]["bottleneck"]["sentence"], \
        (rep["bottleneck"], sim["loops"][0]["bottleneck"])


DOT2 = """iterations 64
carried acc=v50,v51
before: sli s1, 0
before: sli s2, 65536
before: vli v50, 0 ; vli v51, 0
after: vadd.f32 v52, v50, v51
after: vred.add s3, v52
a = vld [s1 + 0 + 512*i]
b = vld [s2 + 0 + 512*i]
p = vmul.f32 a, b
acc = vadd.f32 acc[-2], p
"""


def test_k1_a_dot_product_with_two_accumulators_reads_both_after_the_loop(tmp_path):
    """acc[-2]: two interleaved sums, iterations -1 and -2 in v50 and v51 after the loop. By
    hand: two loads on one port, II 2 (the recurrence: 3 cycles over 2 iterations)."""
    rep, sim, _ = run_loop(tmp_path, DOT2, "s3,v50,v51")
    a, b = ROW[:64 * 128].reshape(64, 128), ROW[16384:16384 + 64 * 128].reshape(64, 128)
    acc = np.zeros((2, 128), np.float32)
    for i in range(64):
        acc[i % 2] = acc[i % 2] + a[i] * b[i]
    assert sim["registers"]["s3"]["f32"] == float(tree_sum(acc[1] + acc[0]))
    assert sim["registers"]["v50"]["f32_lanes_0_7"] == acc[1][:8].tolist()  # iteration 63
    assert sim["registers"]["v51"]["f32_lanes_0_7"] == acc[0][:8].tolist()  # iteration 62
    assert rep["ii"] == 2 and per_source(sim) == 2
    same_bottleneck(rep, sim)


MAX3 = """carried m=v50,v51,v52
before: sli s1, 0
before: vli v50, 1.0 ; vli v51, 2.0
before: vli v52, 3.0
x = vld [s1 + 0 + 512*i]
m = vmax.f32 m[-3], x
"""


@pytest.mark.parametrize("n", [0, 2, 13, 63])
def test_k1_three_registers_hold_the_last_three_iterations_at_every_trip_count(tmp_path, n):
    """m[-3] once left the wrong values for trips 2, 3, 5, 6, 7, 13 and 63: v50 v51 v52 hold
    iterations n-1, n-2, n-3 (the before: values for the iterations before the loop)."""
    rep, sim, _ = run_loop(tmp_path, MAX3, "v50,v51,v52", "--iterations", n)
    x = ROW[:max(n, 1) * 128].reshape(-1, 128)
    history = [np.float32(3.0) * np.ones(128, np.float32), np.full(128, 2.0, np.float32),
               np.ones(128, np.float32)]  # iterations -3, -2, -1
    for i in range(n):
        history.append(np.maximum(history[-3], x[i]))
    for reg, value in zip(("v50", "v51", "v52"), history[::-1], strict=False):
        assert sim["registers"][reg]["f32_lanes_0_7"] == value[:8].tolist(), (n, reg)
    assert rep["ii"] == 1  # one load a cycle; the max's 3 cycles over 3 iterations


COLUMN = (ROOT / "rslab" / "examples" / "column_sum_body.s").read_text()


def test_k3_a_column_sum_books_its_bank_conflict(tmp_path):
    """A stride-128 column of a row-major 128 x 128 matrix: all 128 lanes in one bank, a
    128-way conflict that holds the one load port 128 cycles: II 128 by hand, and 128
    cycles per iteration in the run (pipeline once promised 3); the pressure table shows
    the port busy all the time."""
    rep, sim, _ = run_loop(tmp_path, COLUMN, "s3")
    assert (rep["res_mii"], rep["res_binding"], rep["ii"]) == (128, "ld", 128)
    loop = sim["loops"][0]
    assert per_source(sim) == 128 and loop["units"]["ld"]["utilisation"] == 1.0
    same_bottleneck(rep, sim)


ONLINE = (ROOT / "rslab" / "examples" / "online_softmax_body.s").read_text()


def test_k4_online_softmax_reads_the_old_and_the_new_max(tmp_path):
    """d = vsub m[-1], m was refused as a cycle within one iteration. By hand: nine VALU ops
    on two slots (4.5), two pushes holding the SFU 2 cycles each (4), the sum's recurrence
    sc → s: 3 + 3 = 6 cycles an iteration: II 6."""
    rep, sim, _ = run_loop(tmp_path, ONLINE, "s3,s4,v50,v51")
    assert rep["ii"] == 6 and per_source(sim) == 6 and "m" in rep["renamed"]
    same_bottleneck(rep, sim)
    packaged = json.loads(ok(rslab("pipeline", "--example", "online_softmax_body", "--json")))
    assert packaged["program"] == rep["program"]


POOL = """iterations 40
registers v0-v7 s30-s31
before: sli s1, 0
before: sli s2, 300000
after: sli s3, 300156
after: sld s4, [s3 + 0]
x = vld [s1 + 0 + 512*i]
r = vred.add x
q = sadd r, 3
sst q, [s2 + 0 + 4*i]
"""


def test_k5_a_small_pool_raises_the_ii_instead_of_refusing(tmp_path):
    """Two scalar registers for r (the reduction's result, 8 cycles to its reader) and q: at
    II 3 (two scalar ops and the increments' slot) r alone needs three; the pool was refused.
    By hand II 5 fits (r and q share the two registers), the scheduler reaches 6 and says
    why in one line."""
    rep, sim, _ = run_loop(tmp_path, POOL, "s4")
    assert rep["mii"] == 3 and rep["ii"] == 6 and per_source(sim) == 6
    assert rep["bottleneck"]["why_above"] == "II raised to 6 for the pool's registers"


FIFO1 = """iterations 16
carried acc=v50
before: sli s1, 0
before: vli v50, 0
x = vld [s1 + 0 + 512*i]
@e = vexp2 x
e = vpop @e
@f = vlog2 x
f = vpop @f
t = vadd.f32 e, f
acc = vadd.f32 acc[-1], t
"""


def test_k5_a_fifo_of_depth_one_is_searched(tmp_path):
    """With one FIFO entry, each result is held from its push until a cycle after its pop:
    13 + 1 cycles, two of them an iteration: II 28 by hand (none was found up to II 85)."""
    rep, sim, _ = run_loop(tmp_path, FIFO1, "v50", "--config", "fifo_depth=1")
    assert (rep["mii"], rep["ii"]) == (28, 28)
    src, out = tmp_path / "body.s", tmp_path / "piped.s"
    sim = json.loads(ok(rslab("sim", out, "--config", "fifo_depth=1", "--json")))
    assert per_source(sim) == 28
    proc = rslab("pipeline", src, "--config", "fifo_depth=1", "--ii", "27")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and len(proc.stderr) < 200
    assert "--ii 27: II 27 is below MII 28 (bound by fifo)" in proc.stderr


INCREMENTS = """iterations 40
before: sli s1, 0
before: sli s2, 300000
after: sli s3, 300000
after: vld v40, [s3 + 19968]
x = vld [s1 + 0 + 512*i]
r = vred.add x
q = sadd r, 3
w = vbcast q
vst w, [s2 + 0 + 512*i]
"""


def test_k6_pointer_increments_are_counted_per_kernel_pass(tmp_path):
    """One scalar op and two bases: counted per source iteration, three scalar slots (II 3);
    per pass of an unrolled kernel, the body needs one scalar slot and one free for the
    increments: II 2 by hand."""
    rep, sim, _ = run_loop(tmp_path, INCREMENTS, "v40")
    assert (rep["mii"], rep["ii"], rep["pointer_increments"]) == (2, 2, 2)
    assert rep["unroll"] >= 2 and per_source(sim) == 2


STRIDES = """iterations 20
before: sli s1, 1024
before: sli s2, 300000
after: sadd s5, s1, 0
a = vld [s1 + 0 + 512*i]
b = vld [s1 + 4 + 1024*i]
c = vld [s1 - 1024 + 0*i]
t = vadd.f32 a, b
u = vmul.f32 t, c
vst u, [s2 + 0 + 512*i]
@p = vexp2 u
@q = vlog2.p u
q = vpop @q
p = vpop @p
v = vsub.f32 p, q
vst v, [s2 + 65536 + 512*i]
"""


def test_k7_several_strides_a_fixed_row_and_pops_in_push_order(tmp_path):
    """s1 read with strides 512, 1024 and 0, and after the loop: its strided operands get
    copies of it; the pops take the pushes' results in push order (the report says so).
    By hand: three loads on one port, II 3 (the two pushes need 4 cycles: II 4)."""
    rep, sim, seq = run_loop(tmp_path, STRIDES, "s5")
    assert rep["ii"] == 4 and per_source(sim) == 4 and len(rep["base_copies"]) == 2
    assert rep["notes"] == ["line 13: vpop @q takes the result of @p (line 11): the FIFO "
                            "returns results in push order",
                            "line 14: vpop @p takes the result of @q (line 12): the FIFO "
                            "returns results in push order"]
    assert sim["registers"]["s5"]["u32"] == 1024
    same_bottleneck(rep, sim)


BF16 = """iterations 40
before: sli s1, 0
before: sli s2, 200000
before: vli v60, 0.5 ; vli v61, 0.25
before: vli v62, 0
after: sli s3, 200000
after: vld v40, [s3 + 19968]
x = vld [s1 + 0 + 512*i]
lo = vunpack.lo x
hi = vunpack.hi x
slo = vmul.f32 lo, v60
shi = vmul.f32 hi, v60
blo = vadd.f32 slo, v61
bhi = vadd.f32 shi, v61
rlo = vmax.f32 blo, v62
rhi = vmax.f32 bhi, v62
y = vpack rlo, rhi
vst y, [s2 + 0 + 512*i]
"""


def test_the_unroll_removes_the_iis_rounding_and_both_tools_say_so(tmp_path):
    """BF16 scale + bias + ReLU: nine VALU ops on two slots, 4.5 cycles per iteration,
    rounded up to II 5; two source iterations scheduled as one: II 9 for two, 4.5 each."""
    rep, sim, _ = run_loop(tmp_path, BF16, "v40")
    assert rep["ii"] == 5 and per_source(sim) == 5
    assert rep["bottleneck"]["rounding"] == 0.5 and rep["bottleneck"]["unroll"] == 2
    same_bottleneck(rep, sim)
    rep, sim, _ = run_loop(tmp_path, BF16, "v40", "--unroll", "2")
    assert rep["ii"] == 9 and rep["body_unroll"] == 2 and per_source(sim) == 4.5
    same_bottleneck(rep, sim)
    sweep = json.loads(ok(rslab("pipeline", tmp_path / "body.s", "--sweep", "--json")))
    best = {r["unroll"]: min(x["cycles_per_source_iteration"] for x in sweep["rows"]
                             if x["unroll"] == r["unroll"] and x["status"] == "ok")
            for r in sweep["rows"]}
    assert best == {1: 5, 2: 4.5, 3: 14 / 3, 4: 4.5}


IIR = """iterations 32
before: sli s1, 0
before: sli s2, 2000512
before: vli v60, 0.5
after: sli s3, 2000512
after: vld v40, [s3 + 15872]
yp = vld [s2 - 512 + 512*i]
x = vld [s1 + 0 + 512*i]
t = vmul.f32 yp, v60
y = vadd.f32 t, x
vst y, [s2 + 0 + 512*i]
"""


def test_a_recurrence_through_memory_is_named_by_both_tools(tmp_path):
    """y[i] = 0.5·y[i−1] + x[i], y read back from memory: store (1) → load (4) → mul (3) →
    add (3): II 11 by hand."""
    rep, sim, _ = run_loop(tmp_path, IIR, "v40")
    assert rep["ii"] == 11 and per_source(sim) == 11
    assert rep["bottleneck"]["name"] == "t → y → vst:11 → yp → t"
    same_bottleneck(rep, sim)


def test_the_emitted_ops_carry_their_body_op_into_the_timeline_and_the_trace(tmp_path):
    rep, sim, _ = run_loop(tmp_path, DOT2, "s3")
    out = tmp_path / "piped.s"
    assert "#@ a i0 s0" in out.read_text()
    text = ok(rslab("sim", out, "--timeline", "10:20", "--trace", tmp_path / "t.json",
                    "--vmem", tmp_path / "row.npy"))
    assert " acc i" in text and " b i1 s0 " in text
    events = json.loads((tmp_path / "t.json").read_text())["traceEvents"]
    args = [e["args"] for e in events if e.get("ph") == "X" and "body_op" in e.get("args", {})]
    assert {a["body_op"] for a in args} == {"a", "b", "p", "acc"}
    its = sorted(a["source_iteration"] for a in args if a["body_op"] == "acc")
    assert its == list(range(64))


def test_the_output_is_not_the_body(tmp_path):
    (tmp_path / "body.s").write_text(DOT2)
    proc = rslab("pipeline", tmp_path / "body.s", "-o", tmp_path / "body.s")
    assert proc.returncode == 2 and "is the body file itself" in proc.stderr
    assert (tmp_path / "body.s").read_text() == DOT2
