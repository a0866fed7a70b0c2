"""Regression tests of issue 26, through the command line as a reader runs it: each hostile
input is one ``error:`` line naming the setting, the bound or FILE:LINE, exit status 2, no
traceback, and before any work starts; each report holds what a kernel engineer reads."""

import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
SUMEXP = ROOT / "examples" / "sumexp.s"
UNPACK = ("x = vld [s1 + 0 + 512*i]\ny = vunpack.lo x\nvst y, [s2 + 0 + 512*i]\n")


def rslab(*args, stdin=None, timeout=120):
    return subprocess.run([sys.executable, "-m", "rslab", *map(str, args)], input=stdin,
                          capture_output=True, text=True, timeout=timeout)


def one_error(proc, needle):
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    errors = [line for line in proc.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1 and needle in errors[0], proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("findings")
    np.savez(tmp / "row.npz", a=np.zeros(4, np.uint32), b=np.ones(4, np.uint32))
    (tmp / "unpack.s").write_text(UNPACK)
    (tmp / "nan.s").write_text("sli s1, 0x7fc00000\nvbcast v1, s1\nhalt\n")
    (tmp / "v70.s").write_text("vmov v70, v1\nhalt\n")
    return tmp


CASES = [
    (["sim", SUMEXP, "--config", "valu_slots=1000000000000"],
     "valu_slots=1000000000000: at most 64"),
    (["sim", SUMEXP, "--config", f"vmem_bytes={2**50}"], "at most 67,108,864"),
    (["sim", SUMEXP, "--config", "vregs=100000000"], "vregs=100000000: at most 1,024"),
    (["sim", SUMEXP, "--timeline", "0:99999999999"], "at most 2000 cycles wide"),
    (["sim", SUMEXP, "--config", "sfu_latency=1000000000", "--timeline", "0:50"],
     "sfu_latency=1000000000: at most 1,000"),
    (["pipeline", ROOT / "examples" / "sumexp_body.s", "--config", "sfu_latency=1000000000"],
     "at most 1,000"),
    (["pipeline", ROOT / "examples" / "sumexp_body.s", "--iterations", "1e30"],
     "--iterations must be in 0 … 1,000,000,000"),
    (["bench", "--vocab", "1e12"], "must be at most 1,000,000"),
    (["sim", SUMEXP, "--max-steps", "1e12"], "--max-steps: at most 100,000,000 steps"),
    (["sweep", "--dask", "tls://127.0.0.1:8786"], "must be local or tcp://HOST:PORT"),
    (["search", "--dask", "inproc://x"], "must be local or tcp://HOST:PORT"),
]


@pytest.mark.parametrize("args, needle", CASES)
def test_settings_beyond_their_bounds_are_one_error_line(args, needle):
    one_error(rslab(*args), needle)


def test_a_reader_that_stops_reading_ends_the_command_quietly():
    proc = subprocess.run(f"{sys.executable} -m rslab sim {SUMEXP} --timeline 0:2000 | head -1",
                          shell=True, capture_output=True, text=True, timeout=120)
    assert proc.stdout.startswith(str(SUMEXP)) and proc.stderr == "", proc.stderr


def test_other_surfaces(files):
    one_error(rslab("sim", SUMEXP, "--vmem", files / "row.npz"), "an .npz archive")
    proc = rslab("sim", files / "v70.s")
    one_error(proc, f"{files / 'v70.s'}:1: error:")
    assert "cycle None" not in proc.stderr
    proc = rslab("sim", files / "nan.s", "--json", "--regs", "v1,s1")
    regs = json.loads(proc.stdout, parse_constant=lambda c: pytest.fail(f"{c} is not JSON"))
    assert regs["registers"]["s1"]["f32"] == "nan"
    for command in (["sweep", "--scale", "quick"], ["search", "--noises", "race"]):
        start = time.perf_counter()
        one_error(rslab(*command, "--output", "/dev/null/x"), "output: cannot create the folder")
        assert time.perf_counter() - start < 30  # refused before the run, not after


def test_sweep_and_search_declare_the_run_options_once():
    for command in ("sweep", "search"):
        text = rslab(command, "--help").stdout
        for option in ("--scale", "--processes", "--dask", "--output", "--no-progress",
                       "--json"):
            assert text.count(f"  {option}") == 1, (command, option)


def test_pointer_increments_take_a_slot_per_kernel_pass_and_exact_finds_the_schedule(files):
    """Two bases advance once per pass: at II 1 (a load, an unpack, a store) the kernel
    unrolls twice, one increment in the free scalar slot of each block."""
    proc = rslab("pipeline", files / "unpack.s", "-o", files / "unpack_out.s", "--exact",
                 "--json")
    assert proc.returncode == 0, proc.stderr
    rep = json.loads(proc.stdout)
    assert (rep["res_mii"], rep["mii"], rep["ii"], rep["pointer_increments"]) == (1, 1, 1, 2)
    assert rep["usage"]["scalar"] == 0 and rep["exact"][0]["status"] == "found"
    assert rep["unroll"] % 2 == 0 and "tables" not in rep
    assert rep["reserved"] == [{"slot": "scalar", "row": 0, "op": (
        f"sadd s1 (pointer, block {rep['unroll'] - 1} of {rep['unroll']}), "
        f"sadd s2 (pointer, block {rep['unroll'] - 2} of {rep['unroll']})")}]
    assert {(o["op"], o["slot"], o["stage"]) for o in rep["schedule"]} >= {("x", "ld", 0)}
    sim = json.loads(rslab("sim", files / "unpack_out.s", "--json").stdout)
    assert sim["loops"][0]["cycles_per_source_iter"] == 1


def test_pipeline_pipes_into_sim(files):
    proc = subprocess.run(f"{sys.executable} -m rslab pipeline {files / 'unpack.s'} -o - | "
                          f"{sys.executable} -m rslab sim - --json", shell=True,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["cycles"] > 0 and "ResMII 1" in proc.stderr


def test_run_sampler_refuses_what_the_reference_refuses():
    from rslab.kernels.sampler.run import run_sampler

    l = np.zeros((1, 2, 256), np.float32)
    q = np.full((1, 1, 256), 1 / 256, np.float32)
    ids = np.zeros((1, 1), np.int64)
    with pytest.raises(ValueError, match="noise: unknown noise name 'bogus'"):
        run_sampler((l, q, ids), "exact", noise="bogus")
    with pytest.raises(ValueError, match=r"inputs: the target logits must be \[R, S\+1, V\]"):
        run_sampler((l[0], q, ids), "exact")


def test_sim_reports_what_binds_each_loop(files):
    (files / "padded.s").write_text("vli v1, 0\nloop 20\nvadd.f32 v2, v1, v1\nnop\nnop\n"
                                    "endloop\nhalt\n")
    proc = rslab("sim", files / "padded.s")
    assert proc.returncode == 0, proc.stderr
    assert "(none)" not in proc.stdout
    assert "bound by latency the code waits out in 2 empty bundles (nops)" in proc.stdout
    rep = json.loads(rslab("sim", "--example", "sumexp", "--json", "--timeline", "40:50").stdout)
    (loop,) = rep["loops"]
    assert loop["binding"] == {"unit": "valu", "utilisation": 1.0}
    assert loop["units"]["valu"]["booked"] == 20 and loop["cycles_per_source_iter"] == 10
    sub = next(o for o in loop["ops"] if o["op"].startswith("vexp2"))
    assert sub["pressure"] == 2.0 and sub["slot"] == "sfu"
    assert isinstance(rep["timeline"], list) and {"op", "issue", "ready", "cause"} <= set(
        rep["timeline"][0])


def test_a_stalled_loop_names_the_cause_and_the_op_it_waited_for(files):
    (files / "chain.s").write_text("vli v1, 0\nloop 20\nvadd.f32 v1, v1, v1\nendloop\nhalt\n")
    proc = rslab("sim", files / "chain.s")
    assert "bound by stalls: raw 2 cycles per iteration" in proc.stdout, proc.stdout
    assert "raw on vadd.f32 v1, v1, v1" in proc.stdout


def test_isa_lists_every_mnemonic_with_its_cycles_on_this_machine():
    from rslab.machine.isa import SPECS

    rows = json.loads(rslab("isa", "--json", "--config", "sfu_latency=20").stdout)["mnemonics"]
    assert {r["mnemonic"] for r in rows} >= set(SPECS)
    exp2 = next(r for r in rows if r["mnemonic"] == "vexp2")
    assert (exp2["slot"], exp2["latency_class"], exp2["cycles"], exp2["busy"]) == \
        ("sfu", "sfu", 20, 2)
    assert "vunpack.lo" in rslab("isa").stdout
    one_error(rslab("isa", "vunpak.lo"), "(did you mean vunpack.lo?)")


CHAIN = ("iterations 20\n"
         "before: sli s10, 4096\n"
         "before: sli s12, 4096      # a copy of the base: s10 advances in the loop\n"
         "before: vli v1, 1.0\n"
         "after: vld v5, [s12 + 10240]   # the last iteration's store\n"
         "x = vld [s10 + 0 + 512*i]     # what the iteration before stored\n"
         "y = vadd.f32 x, v1\n"
         "vst y, [s10 + 512 + 512*i]\n")


def test_a_store_and_the_next_iterations_load_stay_in_order(tmp_path):
    """Memory aliasing: each iteration loads what the previous one stored, so the 20th store
    holds 20.0 (the pipelined program once stored 1.0 there: its loads overtook the stores).
    The report names the dependence, and the recurrence through memory binds."""
    (tmp_path / "chain.s").write_text(CHAIN)
    out = rslab("pipeline", tmp_path / "chain.s", "-o", "-")
    assert out.returncode == 0, out.stderr
    assert "memory dependences: vst:8 → x (store → load, 1 iteration(s) later" in out.stderr
    assert "RecMII 8 (critical recurrence: x → y → vst:8 → x)" in out.stderr
    sim = rslab("sim", "-", "--json", "--regs", "v5", stdin=out.stdout)
    assert json.loads(sim.stdout)["registers"]["v5"]["f32_lanes_0_7"] == [20.0] * 8


def test_a_store_through_a_base_of_unknown_value_is_ordered_at_every_distance(tmp_path):
    """s11 is a copy of s10 the scheduler cannot see: each iteration loads what the one
    before stored through it, so the sixth store still holds the first load's value."""
    body = tmp_path / "unknown.s"
    body.write_text("iterations 6\nbefore: sli s10, 4096\nbefore: smov s11, s10\n"
                    "before: sli s12, 4096\nafter: vld v5, [s12 + 3072]\n"
                    "x = vld [s10 + 0 + 512*i]\nvst x, [s11 + 512 + 512*i]\n")
    np.save(tmp_path / "vmem.npy", np.full(1024 + 128, 7.5, np.float32) * (
        np.arange(1024 + 128) >= 1024))
    out = rslab("pipeline", body, "-o", tmp_path / "unknown_out.s")
    assert out.returncode == 0, out.stderr
    assert "vst:7 → x (store → load, 1 iteration(s) later" in out.stdout
    sim = rslab("sim", tmp_path / "unknown_out.s", "--vmem", tmp_path / "vmem.npy", "--json",
                "--regs", "v5")
    assert json.loads(sim.stdout)["registers"]["v5"]["f32_lanes_0_7"] == [7.5] * 8


LOOP = "x = vld [s1 + 0 + 512*i]\nvst x, [s2 + 65536 + 512*i]\n"
HOSTILE_BODIES = [  # (body, the line the error names, what it says)
    ("before: vadd.f32 v1\n" + LOOP, 1, "before: vadd.f32 takes 3 operand(s), got 1"),
    ("before: loop 3\n" + LOOP + "after: endloop\n", 1,
     "before: loop: a before: or after: line holds a bundle of ops, not a loop directive"),
    ("before: vli v100, 0\n" + LOOP, 1, "before: v100 is not a register of the machine"),
    ("before: top: nop\n" + LOOP, 1, "before: no branch can reach a label here"),
    ("", 1, "the body has no op"),
    ("# only a comment\niterations 4\n", 1, "the body has no op"),
    ("top: " + LOOP, 1, "top: is a label: a loop body has none"),
    ("registers\n" + LOOP, 1, "registers: needs at least one register"),
    ("v1 = vld [s1 + 0 + 512*i]\n", 1, "v1 names a register: give the value another name"),
    (LOOP + "x = vld [s1 + 512 + 512*i]\n", 3, "x is defined on line 1 already"),
    ("x = vld [s1 - 512 + 512*i]\n", 1,  # s1 is 0: no before: line writes it
     "in iteration 0 this load touches bytes [-512, 0), outside VMEM [0, 4,194,304)"),
    ("before: sli s1, 4096\nx = vld [s1 + 0 + 2147483644*i]\n", 2,
     "in iteration 15 this load touches bytes [32,212,258,756, 32,212,259,268), outside VMEM"),
    ("x = vld [s1 + 0 + 6*i]\n", 1, "in iteration 1 this load is at byte 6, not a multiple of 4"),
    ("carried acc=v50\nx = vld [s1 + 0 + 512*i]\ny = vadd.f32 acc[-1], x\n", 3,
     "acc[-1] names no value of the body"),
    ("x = vld [s1 + 0 + 512*i]\n" + "".join(f"@e{k} = vexp2 x\n" for k in range(17))
     + "".join(f"e{k} = vpop @e{k}\n" for k in range(17)), 18,
     "this push would be result 17 waiting in the SFU FIFO (depth 16)"),
    ("x = vld [s1 + 0 + 512*i]\ny = vadd.f32 x, x\xe9\u2603\n", 2,
     "vadd.f32: expected a vector register, got 'x\xe9\u2603'"),
    ("".join(f"x{k} = vld [s1 + 0 + 512*i]\n" for k in range(257)), 257,
     "a body holds at most 256 ops: this is one more"),
    ("x = vld [s1 + 0 + 512*i]  # " + "a" * 2**20 + "\n", 1,
     "the body is 1,048,605 characters long, at most 1,048,576: this line crosses"),
]


@pytest.mark.parametrize("body, line, needle", HOSTILE_BODIES)
def test_a_hostile_body_is_one_error_naming_its_line(tmp_path, body, line, needle):
    (tmp_path / "b.s").write_text(body)
    one_error(rslab("pipeline", tmp_path / "b.s"), f"{tmp_path / 'b.s'}:{line}: error: {needle}")


@pytest.mark.parametrize("n", [0, 1])
def test_one_iteration_or_none(tmp_path, n):
    """Trip counts 0 and 1: a program that runs, stores nothing or one iteration's vector."""
    (tmp_path / "b.s").write_text("before: sli s1, 0\nbefore: vli v1, 2.0\nbefore: sli s2, 4096\n"
                                  "vst v1, [s2 + 0 + 512*i]\n")
    out = rslab("pipeline", tmp_path / "b.s", "--iterations", n, "-o", "-")
    assert out.returncode == 0, out.stderr
    code = out.stdout + "sli s3, 4096\nvld v5, [s3 + 0]\nhalt\n"  # after the program's halt
    sim = rslab("sim", "-", "--json", "--regs", "v5", stdin=code.replace("halt\n", "", 1))
    assert json.loads(sim.stdout)["registers"]["v5"]["f32_lanes_0_7"] == [2.0 * n] * 8


def test_a_long_chain_is_scheduled_in_seconds(tmp_path):
    """A chain of 40 ops, each reading its predecessor twice, once hung in the search for
    recurrences (2^40 paths, no circuit); 250 take about as long as 40."""
    for n in (40, 250):
        chain = "".join(f"x{k + 1} = vadd.f32 x{k}, x{k}\n" for k in range(n))
        (tmp_path / "chain.s").write_text("before: sli s2, 65536\nx0 = vld [s1 + 0 + 512*i]\n"
                                          + chain + f"vst x{n}, [s2 + 0 + 512*i]\n")
        out = rslab("pipeline", tmp_path / "chain.s", "--json", timeout=60)
        assert out.returncode == 0 and json.loads(out.stdout)["rec_mii"] == 0, out.stderr


def test_fourteen_stores_to_one_address_keep_their_order(tmp_path):
    """Each store waits for the one before it, not for all of them (the dependences two others
    imply are left out, or the recurrences would be too many to enumerate); the last wins."""
    stores = "".join(f"t{k} = vli {k}.5\nvst t{k}, [s2 + 0 + 0*i]\n" for k in range(14))
    (tmp_path / "b.s").write_text("before: sli s2, 4096\nbefore: sli s3, 4096\n"
                                  "after: vld v5, [s3 + 0]\n" + stores)
    out = rslab("pipeline", tmp_path / "b.s", "-o", "-")
    assert out.returncode == 0, out.stderr
    memory = json.loads(rslab("pipeline", tmp_path / "b.s", "--json").stdout)["memory"]
    assert [m["kind"] for m in memory] == ["store → store"] * 14  # 13 in a row, last to first
    sim = rslab("sim", "-", "--json", "--regs", "v5", stdin=out.stdout)
    assert json.loads(sim.stdout)["registers"]["v5"]["f32_lanes_0_7"] == [13.5] * 8


UNROLLED_MEMORY = (
    "iterations 15\nbefore: sli s10, 0\nbefore: smov s11, s10\nbefore: sli s13, 0\n"
    "before: sli s2, 262144\n"
    "carried acc=v54\nbefore: vld v54, [s2 + 0]\n"
    "w = vld.s [s13 + 4 + 4*i], 32\nm = vld.s [s11 + 0 + 0*i], 1\n"
    "acc = vadd.f32 acc[-1], m\nu = vmul.f32 acc, w\nvst u, [s2 + 0 + 512*i]\n")


def test_a_report_with_many_memory_dependences_prints_a_few_and_counts_the_rest(tmp_path):
    """Unrolled three times, a store and a zero-stride load through a base of unknown value
    meet in every pair of copies: the text names the first few and counts the others;
    ``--json`` lists them all."""
    (tmp_path / "b.s").write_text(UNROLLED_MEMORY)
    out = rslab("pipeline", tmp_path / "b.s", "--unroll", "3", "-o", tmp_path / "o.s")
    assert out.returncode == 0, out.stderr
    line = next(x for x in out.stdout.splitlines() if x.startswith("memory dependences:"))
    full = json.loads(rslab("pipeline", tmp_path / "b.s", "--unroll", "3", "--json").stdout)
    assert len(full["memory"]) > 8 and line.count("iteration(s) later") == 8
    assert line.endswith(f"; and {len(full['memory']) - 8} more (--json lists them all)")
