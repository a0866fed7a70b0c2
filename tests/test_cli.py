"""The command line answers --help and rejects bad input with a clear message."""

import json
import subprocess
import sys

from rslab.kernels.sampler.draws import SAMPLER_DRAWS
from rslab.numerics.methods import variant_name


def run(*args):
    return subprocess.run([sys.executable, "-m", "rslab", *args], capture_output=True, text=True,
                          timeout=300)


def test_help_lists_commands():
    proc = run("--help")
    assert proc.returncode == 0
    assert "usage: python -m rslab" in proc.stdout
    assert "bench" in proc.stdout


def test_unknown_command_is_an_error():
    proc = run("no-such-command")
    assert proc.returncode == 2
    assert "invalid choice" in proc.stderr


def test_bench_rejects_unknown_benchmark():
    proc = run("bench", "--only", "no-such-benchmark")
    assert proc.returncode == 2
    assert "--only" in proc.stderr


def test_bench_prints_the_kernel_table_and_stable_json():
    proc = run("bench", "--only", "kernels", "--vocab", "512")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    header = next(line for line in lines if line.startswith("| test point"))
    assert "baseline" in header and "optimised" in header and "speedup" in header
    assert "floor" in header and "also against" in header
    assert any(line.startswith("| test point | phase | achieved | floor | binding |")
               for line in lines)
    assert any(line.startswith("| all-accept | 4 | 8 | 512 | fast") for line in lines)
    assert any(line.startswith("| first-reject | 4 | 2 | 512 | fast") for line in lines)
    proc = run("bench", "--only", "kernels", "--vocab", "512", "--path", "exact", "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert [r["name"] for r in out["scenarios"]] == ["all-accept", "first-reject"]
    for r in out["scenarios"]:
        assert {"S", "R", "vocab", "path", "baseline_cycles", "optimized_cycles", "speedup",
                "tokens_match_reference"} <= set(r)
        assert r["path"] == "exact" and r["tokens_match_reference"]
        for which in ("optimized_floor", "baseline_floor"):
            phases = r[which]
            assert {"max", "sumexp", "acceptance", "dma_wait"} <= set(phases)
            for f in phases.values():
                assert {"achieved", "bound_cycles", "binding", "ratio"} <= set(f)
        assert r["optimized_floor"]["sumexp"]["bound_cycles"] > 0
        assert r["optimized_floor"]["sumexp"]["ratio"] >= 1
        dma, task = r["optimized_dma"], r["optimized_task_bound"]
        assert dma["engine_cycles"] <= r["optimized_bound_cycles"] <= r["optimized_cycles"]
        assert task["bytes"] <= dma["bytes"] and task["bound_cycles"] <= r["optimized_cycles"]
    assert [a["baseline"] for a in out["scenarios"][0]["also_against"]] == \
        ["first translation, halves paired"]
    assert {"sumexp", "residual_gumbel"} <= set(out["loops"])


def test_search_knows_the_new_noises():
    proc = run("search", "--noises", "rangered,race-naive", "--noises-only")
    assert proc.returncode == 0, proc.stderr
    for name in ("gumbel-rangered", "race-naive"):
        assert any(line.strip().startswith(name) for line in proc.stdout.splitlines())
    proc = run("search", "--noises", "race-wide", "--noises-only")
    assert proc.returncode == 2 and "--noises" in proc.stderr
    proc = run("search", "--noises", "invcdf-wide48", "--noises-only")
    assert proc.returncode == 2 and "no noise" in proc.stderr and "token_laws" in proc.stderr


def test_bench_draws_prints_every_draw_and_checks_tokens():
    proc = run("bench", "--only", "draws", "--vocab", "512", "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)["draws"]
    names = {r["draw"] for r in out["rows"]}
    assert {"gumbel-div8", "race-scaled", "invcdf-wide", "gumbel-rangered"} <= names
    assert out["all_tokens_match"]
    sampler = {(r["draw"], r["name"]): r for r in out["sampler"]}
    assert set(sampler) == {(variant_name(*d), name) for d in SAMPLER_DRAWS
                            for name in ("all-accept", "first-reject")}
    for (_, name), r in sampler.items():
        assert r["tokens_match_reference"] and r["bound_cycles"] <= r["cycles"]
        assert r["dma_engine_cycles"] <= r["bound_cycles"]
        assert r["task_bound_cycles"] <= r["cycles"] and r["task_ratio"] >= 1
        div8 = sampler[("gumbel-div8", name)]["cycles"]
        assert r["vs_div8"] == round(div8 / r["cycles"], 3)
        assert r["speedup"] == round(r["baseline_cycles"] / r["cycles"], 3)
    proc = run("bench", "--only", "no-such")
    assert "token_laws" in proc.stderr and "draws" in proc.stderr
