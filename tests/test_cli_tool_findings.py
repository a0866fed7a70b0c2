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
    (["sim", SUMEXP, "--config", f"vmem_bytes={2**50}"], "at most 268,435,456"),
    (["sim", SUMEXP, "--config", "vregs=100000000"], "vregs=100000000: at most 1,024"),
    (["sim", SUMEXP, "--timeline", "0:99999999999"], "at most 2000 cycles wide"),
    (["sim", SUMEXP, "--config", "sfu_latency=1000000000", "--timeline", "0:50"],
     "sfu_latency=1000000000: at most 1,000"),
    (["pipeline", ROOT / "examples" / "sumexp_body.s", "--config", "sfu_latency=1000000000"],
     "at most 1,000"),
    (["pipeline", ROOT / "examples" / "sumexp_body.s", "--iterations", "1e30"],
     "--iterations must be in 0 … 1,000,000,000"),
    (["bench", "--vocab", "1e12"], "must be at most 1,000,000"),
    (["sweep", "--dask", "tls://127.0.0.1:8786"], "must be local or tcp://HOST:PORT"),
    (["search", "--dask", "inproc://x"], "must be local or tcp://HOST:PORT"),
]


@pytest.mark.parametrize("args, needle", CASES)
def test_settings_beyond_their_bounds_are_one_error_line(args, needle):
    one_error(rslab(*args), needle)


def test_other_surfaces(files):
    one_error(rslab("sim", SUMEXP, "--vmem", files / "row.npz"), "(.npz)")
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


def test_pointer_increments_are_in_the_bound_and_exact_finds_the_schedule(files):
    proc = rslab("pipeline", files / "unpack.s", "--exact", "--json")
    assert proc.returncode == 0, proc.stderr
    rep = json.loads(proc.stdout)
    assert (rep["res_mii"], rep["res_binding"], rep["mii"], rep["ii"]) == (2, "scalar", 2, 2)
    assert rep["usage"]["scalar"] == 2 and rep["exact"][0]["status"] == "found"
    assert isinstance(rep["reservation_table"], list)


def test_pipeline_pipes_into_sim(files):
    proc = subprocess.run(f"{sys.executable} -m rslab pipeline {files / 'unpack.s'} -o - | "
                          f"{sys.executable} -m rslab sim - --json", shell=True,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["cycles"] > 0 and "ResMII 2" in proc.stderr


def test_run_sampler_refuses_what_the_reference_refuses():
    from rslab.kernels.sampler.run import run_sampler

    l = np.zeros((1, 2, 256), np.float32)
    q = np.full((1, 1, 256), 1 / 256, np.float32)
    ids = np.zeros((1, 1), np.int64)
    with pytest.raises(ValueError, match="noise: unknown noise name 'bogus'"):
        run_sampler((l, q, ids), "exact", noise="bogus")
    with pytest.raises(ValueError, match=r"inputs: the target logits must be \[R, S\+1, V\]"):
        run_sampler((l[0], q, ids), "exact")
