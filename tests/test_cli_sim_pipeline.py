"""rslab sim and rslab pipeline as a reader runs them: subprocesses on files, exit status 2
and the line named on errors."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from rslab.kernels.studies.sumexp_loop import sumexp_numpy, sumexp_program
from rslab.machine import MachineConfig, assemble, simulate
from rslab.machine.examples import sumexp_inputs

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


def rslab(*args, stdin=None, cwd=None):
    return subprocess.run([sys.executable, "-m", "rslab", *map(str, args)], input=stdin,
                          capture_output=True, text=True, timeout=600, cwd=cwd)


def test_sim_reports_cycles_stalls_loops_and_writes_a_timeline_and_a_trace(tmp_path):
    trace = tmp_path / "t.json"
    proc = rslab("sim", EXAMPLES / "sumexp.s", "--timeline", "--trace", trace, "--json")
    assert proc.returncode == 0, proc.stderr
    rep = json.loads(proc.stdout)
    expected = simulate(assemble((EXAMPLES / "sumexp.s").read_text()))
    assert rep["cycles"] == expected.cycles and rep["ops"] == expected.ops
    assert {c: s["cycles"] for c, s in rep["stalls"].items()} == expected.stalls
    assert all(s["meaning"] for s in rep["stalls"].values())
    (loop,) = rep["loops"]
    assert loop["cycles_per_iter"] == 10 and loop["stalls_per_iter"] == 0
    assert rep["timeline"][0] == {"pc": 0, "line": 2, "op": "sli s1, 0", "issue": 0, "ready": 1,
                                  "stall": 0, "cause": None}
    assert max(op["issue"] for op in rep["timeline"]) == 39
    assert json.loads(trace.read_text())["traceEvents"]


def test_sim_text_output_names_every_section():
    proc = rslab("sim", EXAMPLES / "sumexp.s", "--timeline", "40:60")
    assert proc.returncode == 0, proc.stderr
    for text in ("cycles", "IPC", "stall cycles", "sfu-wait", "slot utilisation",
                 "steady state", "Timeline, cycles 40-59", "raw: a source register"):
        assert text in proc.stdout, text


def test_sim_reads_stdin_and_changes_the_machine():
    """A program without a '# machine:' line runs on the machine --config gives."""
    source = (EXAMPLES / "sumexp.s").read_text().partition("\n")[2]
    assert "# machine:" not in source
    proc = rslab("sim", "-", "--config", "valu_slots=3", "sfu_latency=20", "--json",
                 stdin=source)
    assert proc.returncode == 0, proc.stderr
    config = MachineConfig().with_(slots={"valu": 3}, latency={"sfu": 20})
    assert json.loads(proc.stdout)["cycles"] == simulate(assemble(source), config).cycles
    assert json.loads(proc.stdout)["cycles"] != simulate(assemble(source)).cycles


def test_sim_computes_the_sum_of_a_row_loaded_from_vmem(tmp_path):
    words, _, values = sumexp_inputs(64, seed=3)
    np.save(tmp_path / "row.npy", words)
    proc = rslab("sim", EXAMPLES / "sumexp.s", "--vmem", tmp_path / "row.npy", "--regs", "s3",
                 "--json")
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)["registers"]["s3"]["u32"]
    assert got == int(np.float32(sumexp_numpy(values, 0.0)).view(np.uint32))


@pytest.mark.parametrize("program, where, what", [
    ("sli s1, 0\nvadd.f32 v1, v2\nhalt\n", "2", "takes 3 operand"),
    ("sli s1, 0\nloop 2\nvfoo v1\nendloop\nhalt\n", "3", "unknown mnemonic"),
    ("sli s1, 0\nvunpak.lo v1, v2\nhalt\n", "2", "(did you mean vunpack.lo?)"),
    ("sli s1, 6\nvld v1, [s1 + 0]\nhalt\n", "2", "unaligned VMEM address"),
])
def test_sim_errors_name_the_file_and_line(tmp_path, program, where, what):
    path = tmp_path / "bad.s"
    path.write_text(program)
    proc = rslab("sim", path)
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"{path}:{where}: error: ") and what in proc.stderr
    assert len(proc.stderr.splitlines()) == 1 and "cycle None" not in proc.stderr


@pytest.mark.parametrize("args, what", [
    (["--config", "foo=1"], "unknown machine setting 'foo'"),
    (["--config", "valu_slots=x"], "--config valu_slots=x: the value must be an integer"),
    (["--config", "valu_slots=0"], "slots['valu'] must be an integer >= 1"),
    (["--vmem", "no-such.npy"], "--vmem no-such.npy"),
    (["--timeline", "9:3"], "START < END"),
    (["--regs", "s99"], "--regs: s99 does not exist"),
])
def test_sim_bad_options_are_one_error_line(args, what):
    proc = rslab("sim", EXAMPLES / "sumexp.s", *args)
    assert proc.returncode == 2
    assert what in proc.stderr and "Traceback" not in proc.stderr


def test_pipeline_emits_the_books_sum_exp_program(tmp_path):
    out = tmp_path / "sumexp.s"
    proc = rslab("pipeline", EXAMPLES / "sumexp_body.s", "-o", out)
    assert proc.returncode == 0, proc.stderr
    for text in ("ResMII 10 (binding: valu", "RecMII 3 (critical recurrence: acc0 → acc0)",
                 "Modulo reservation table, II = 10", "Stage table, II = 10, 4 stages",
                 f"rslab sim {out}"):
        assert text in proc.stdout, text
    assert out.read_text() == sumexp_program(64, 0.0)[0]
    assert "loop 29  # 1 source iteration per pass" in out.read_text()
    assert out.read_text() == (EXAMPLES / "sumexp.s").read_text(), \
        "examples/sumexp.s is stale: regenerate it with rslab pipeline"


def test_pipeline_json_and_the_integer_program():
    proc = rslab("pipeline", EXAMPLES / "sumexp_body.s", "--exact", "--iterations", "8",
                 "--json")
    assert proc.returncode == 0, proc.stderr
    rep = json.loads(proc.stdout)
    assert (rep["res_mii"], rep["res_binding"], rep["rec_mii"]) == (10, "valu", 3)
    assert rep["ii"] == 10 and rep["iterations"] == 8
    assert rep["exact"] == [{"ii": 10, "status": "found", "reason": "",
                             "seconds": rep["exact"][0]["seconds"]}]
    assert simulate(assemble(rep["program"])).cycles > 0


def test_pipeline_machine_changes_move_the_bound():
    proc = rslab("pipeline", EXAMPLES / "sumexp_body.s", "--config", "valu_slots=4", "--json")
    assert proc.returncode == 0, proc.stderr
    rep = json.loads(proc.stdout)
    assert rep["res_mii"] == 8 and rep["res_binding"] == "sfu"


BODY = "carried acc=v50\nx = vld [s1 + 0 + 512*i]\nacc = vadd.f32 acc[-1], x\n"


@pytest.mark.parametrize("body, where, what", [
    (BODY.replace("acc[-1]", "acc"), "3", "acc is read before it is defined"),
    (BODY.replace("carried acc=v50\n", "\n"), "3", "acc is loop-carried"),
    (BODY.replace("vld [s1 + 0 + 512*i]", "vld [s1 * 2]"), "2", "memory operand"),
    (BODY.replace("vadd.f32", "vfma"), "3", "unknown opcode 'vfma'"),
    (BODY.replace("vadd.f32", "vadd"), "3",
     "unknown opcode 'vadd' (did you mean vadd.f32 or vadd.u32?)"),
    (BODY + "@e = vexp2 x\n", "4", "pushes never popped"),
    (BODY + "y = vpop x\n", "4", "vpop must read an @fifo token"),
    (BODY.replace("acc=v50", "acc=v50 b=v51"), "1", "b is not a loop-carried value"),
    ("iterations many\n" + BODY, "1", "iterations must be an integer in 0 … 1,000,000,000"),
    # the findings of issue 26: each once exited 0 with a program rslab sim rejects
    ("y = vadd.f32 v1, v2\nx = vadd.f32 y, v1\nvst x, [s2 + 0 + 512*i]\n"
     "registers v0-v47\n", "4", "v1 is a live-in of the body"),
    ("carried acc=v3\nregisters v3-v8\nx = vld [s1 + 0 + 512*i]\nacc = vadd.f32 acc[-1], x\n",
     "2", "v3 holds the carried acc"),
    ("x = vld [s1 + 0]\ny = vadd.f32 x\nvst y, [s2 + 0]\n", "2",
     "vadd.f32 takes 3 operand(s), got 2"),
    ("registers v100-v200\n" + BODY, "1", "v100 is not a register of the machine (v0-v63)"),
    ("registers v0-v999999999\n" + BODY, "1", "at most 1024 of each kind"),
    (BODY + "y = vli 8589934592\n", "4", "does not fit in 32 bits"),
    (BODY + "vld v1, [s1 + 0]\n", "4", "vld writes a register: give its value a name"),
    (BODY + "y = vst x, [s2 + 0]\n", "4", "vst defines no value: drop 'y ='"),
    (BODY.replace("acc[-1]", "acc[-2]"), "1",
     "acc is read 2 iterations back: give it 2 registers, its values of iterations -1 … -2: "
     "carried acc=v50,vN"),
    (BODY.replace("acc[-1]", "acc[-9]"), "3", "the distance must be 1 … 8"),
    (BODY + "e = vpop @e\n@e = vexp2 x\n", "4", "@e is read before it is defined"),
    ("before: vli v1, 0 ; vli v2, 0 ; vli v3, 0\n" + BODY, "1",
     "before: this bundle needs 3 valu slots, the machine has 2: split it over two lines"),
    (BODY + "vst x, [s2 + 0]\nvst x, [s2 + 512]\nr = vred.add y\n", "6",
     "vred.add: expected a vector register, got 'y'"),
])
def test_pipeline_errors_name_the_line(tmp_path, body, where, what):
    path = tmp_path / "body.s"
    path.write_text(body)
    proc = rslab("pipeline", path)
    assert proc.returncode == 2, proc.stdout
    assert proc.stderr.startswith(f"{path}:{where}: error: ") and what in proc.stderr, \
        proc.stderr
    assert len(proc.stderr.splitlines()) == 1


def test_usage_lines_name_the_program_both_ways():
    assert rslab("sim", "--help").stdout.startswith("usage: python -m rslab sim")
    script = Path(sys.executable).with_name("rslab")
    proc = subprocess.run([script, "pipeline", "--help"], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0 and proc.stdout.startswith("usage: rslab pipeline")
    assert "VALUE = OPCODE SOURCES" in proc.stdout  # the body format is in the help


def test_bench_help_lists_the_benchmarks():
    from rslab import bench

    proc = rslab("bench", "--help")
    assert proc.returncode == 0
    assert "benchmarks: " + ", ".join(bench.load()) in proc.stdout


def test_argument_errors_are_in_words():
    proc = rslab("bench", "--vocab", "0")
    assert proc.returncode == 2
    assert "argument --vocab: must be a positive integer, got '0'" in proc.stderr
    assert "invalid" not in proc.stderr
