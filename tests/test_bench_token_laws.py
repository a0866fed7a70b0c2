"""``python -m rslab bench --only token_laws`` as a reader runs it: the worst-target table in
text and in JSON, every draw of the sampler in it, the fixed-point draw under its guarantee."""

import json
import subprocess
import sys

import pytest

from rslab.numerics import divergence_bound as db
from rslab.numerics.fixed_invcdf import GUARANTEE
from rslab.numerics.methods import sampler_draws, variant_name

DRAWS = [variant_name(*d) for d in sampler_draws()]


def bench(*args):
    return subprocess.run([sys.executable, "-m", "rslab", "bench", "--only", "token_laws",
                           *args], capture_output=True, text=True, timeout=600)


def test_the_text_table_names_every_draws_worst_target():
    proc = bench("--vocab", "128")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("Worst target per draw"))
    assert "V = 128" in lines[head]
    assert lines[head + 1].split()[:3] == ["draw", "worst", "target"]
    rows = {line.split()[0]: line for line in lines[head + 2:head + 2 + len(DRAWS)]}
    assert list(rows) == DRAWS
    chi2 = float(rows["fixed-u96"].split()[-9])
    assert 0 <= chi2 <= GUARANTEE
    assert any(line.startswith("The weights' own error") for line in lines)
    assert lines[-1].startswith(f"{len(DRAWS)} draws in ") and "target ≤ 180 s" in lines[-1]


def test_the_json_holds_the_bound_the_interval_and_the_tests_per_draw():
    """An odd vocabulary (not a multiple of the 128 lanes): each draw's worst row with its
    χ² interval, the bound's sample size 2a²/χ², and the fixed-point draw's guarantee."""
    proc = bench("--vocab", "300", "--json")
    assert proc.returncode == 0, proc.stderr
    t = json.loads(proc.stdout)["token_laws"]
    assert t["vocab"] == 300 and t["rows"] > 0 and t["seconds"] > 0
    worst = {r["draw"]: r for r in t["worst"]}
    assert list(worst) == DRAWS
    for r in worst.values():
        assert r["chi2_lo"] <= r["chi2"] <= r["chi2_hi"]
        if r["chi2"] > 0:
            assert r["bound_samples"] == pytest.approx(2 * db.ADVANTAGE**2 / r["chi2"])
        assert min(r["detect_tokens"], r["detect_vectors"], r["detect_bins"]) >= \
            r["bound_samples"]
    fixed = worst["fixed-u96"]
    assert fixed["chi2_hi"] <= GUARANTEE and fixed["bound_samples"] >= 1e10
    assert worst["invcdf-u24"]["chi2"] > 1e3 * GUARANTEE
    assert {e["row"] for e in t["weights_error"]} and set(t["wide48_vector_cause"]) == \
        {"peaked", "zipf", "flat"}
