"""The divisor search, the tail analysis and ``python -m rslab search``."""

import json
import math
import subprocess
import sys

import numpy as np
import pytest

from rslab.numerics import montecarlo as mc
from rslab.numerics import search, stats, tails
from rslab.numerics.gumbel import get_noise, lattice_noise


def test_pareto_front_keeps_exactly_the_undominated_points():
    a = [1, 2, 3, 2, 4]
    b = [5, 3, 1, 4, 4]
    assert search.pareto_front(a, b).tolist() == [True, True, True, False, False]
    assert search.pareto_front([1, 1], [2, 2]).tolist() == [True, True]


def test_fine_grid_and_presets():
    grid = search.fine_grid(2.0, 16.0, 1 / 16)
    assert len(grid) == 225 and grid[0] == 2.0 and grid[-1] == 16.0
    full = search.search_config("full")
    assert full.samples_per_seed == 10**8
    assert len(full.screen_seeds) == 3 and len(full.final_seeds) == 10
    assert set(search.INTEGER_DIVISORS) <= set(full.divisors)
    assert any(k != int(k) for k in full.divisors)
    assert len(full.grid) >= 200 and not set(full.screen_seeds) & set(full.final_seeds)
    quick = search.search_config("quick")
    assert quick.samples_per_seed < full.samples_per_seed


@pytest.mark.parametrize("bad", [[0], [-2.0], [float("nan")], [float("inf")], [True], ["8"],
                                 [8, 8.0], []])
def test_bad_divisors_are_rejected(bad):
    with pytest.raises(ValueError, match="divisor"):
        search.check_divisors(bad)


@pytest.mark.parametrize("change, match", [
    ({"samples_per_seed": 0}, "samples"), ({"screen_seeds": (1, 1)}, "distinct"),
    ({"processes": 0}, "processes"), ({"finalists": 0}, "finalists"), ({"rng": "x"}, "rng"),
    ({"baseline": -1.0}, "divisor"),
])
def test_bad_config_is_rejected(change, match):
    with pytest.raises(ValueError, match=match):
        search.search_config("quick", **change)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    cfg = search.search_config("quick", divisors=(8.0, 14.0), screen_seeds=(1, 2),
                               final_seeds=(5, 6), samples_per_seed=2**16, finalists=1,
                               grid=(14.0,), processes=2)
    result = search.run_search(cfg, progress=False)
    return result, result.write(tmp_path_factory.mktemp("s") / "out")


def test_search_stages_are_consistent(tiny):
    result, _ = tiny
    assert {r["name"] for r in result.screening} == {"div8", "div14"}
    assert [r["rank_sum"] for r in result.screening] == sorted(r["rank_sum"]
                                                               for r in result.screening)
    names = [r["name"] for r in result.finals]
    assert "div8" in names and len(names) == 2
    promoted = next(r["name"] for r in result.screening if r["name"] != "div8")
    assert promoted in names
    base = next(r for r in result.finals if r["name"] == "div8")
    assert base["ks_change_pct"] == 0 and base["chi2_change_pct"] == 0
    for r in result.finals:
        assert r["samples"] == 2 * 2**16 and r["seeds"] == 2
    assert result.best in names
    assert [r["divisor"] for r in result.exact] == [14.0]
    assert set(result.finalist_tails) == set(names)


def test_search_matches_a_direct_monte_carlo_run(tiny):
    result, _ = tiny
    direct = mc.run({"div14": get_noise("div14")}, [1, 2], 2**16, progress=False)["div14"]
    row = next(r for r in result.screening if r["name"] == "div14")
    assert row["chi2"] == direct.chi2 and row["mean_ks"] == direct.mean_ks


def test_exact_rows_match_the_law(tiny):
    result, _ = tiny
    law = mc.LatticeLaw.of("div14", get_noise("div14"))
    row = next(r for r in result.exact if r["name"] == "div14")
    assert row["lam"] == law.noncentrality() and row["exact_ks"] == law.exact_ks()
    assert row["g_max"] == tails.largest_finite(law)


@pytest.mark.parametrize("name", ["div(10.25)", "scaled", "naive"])
def test_exact_row_ks_is_the_ks_over_distinct_values(name):
    # naive has +inf outputs, scaled a plateau's atom at 0
    g = lattice_noise(name)
    s = np.sort(g, kind="stable")
    ends = mc.run_ends(s)
    want = mc.atoms_ks(stats.gumbel2_cdf(s[ends]), ends)
    assert np.float64(search.exact_row(name, g)["exact_ks"]).tobytes() == \
        np.float64(want).tobytes()


def test_result_files(tiny):
    result, (json_path, csv_path) = tiny
    data = json.loads(json_path.read_text())
    assert data["best"] == result.best
    assert data["config"]["samples_per_seed"] == 2**16
    lines = csv_path.read_text().splitlines()
    assert lines[0].startswith("stage,name,divisor")
    assert len(lines) == 1 + len(result.screening) + len(result.finals) + len(result.exact)


def test_tail_figures_against_the_ideal_law():
    law = mc.LatticeLaw.of("precise", get_noise("precise"))
    g_max = tails.largest_finite(law)
    # the lattice's largest uniform is 1 - 2^-24: g_max = -log2(-log2(1 - 2^-24))
    assert g_max == pytest.approx(-math.log2(-math.log2(1 - 2**-24)), abs=1e-5)
    assert tails.law_sf(law, g_max) == 0.0
    ys = np.array([0.0, 4.0, 8.0])
    assert np.allclose(tails.law_sf(law, ys), tails.ideal_sf(ys), rtol=0, atol=2**-24)
    # a tail token far beyond the reach of the lattice never wins; near the bulk it wins as often
    assert tails.tail_token_win(law, 40.0) == 0.0
    assert tails.tail_token_win(law, 18.0) == pytest.approx(tails.ideal_tail_token_win(18.0),
                                                            rel=0.01)
    with pytest.raises(ValueError, match="m must"):
        tails.tail_token_win(law, 10.0, m=0)
    with pytest.raises(ValueError, match="law"):
        tails.tail_summary("not a law")


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "rslab", "search", *args], capture_output=True,
                          text=True, timeout=300)


@pytest.mark.parametrize("args, match", [
    (["--divisors", "0,8"], "divisors"), (["--divisors", "a,b"], "divisors"),
    (["--samples", "0"], "--samples"), (["--samples", "1.5"], "--samples"),
    (["--grid", "2:1:1"], "--grid"), (["--grid", "2:16"], "--grid"),
    (["--screen-seeds", "x"], "--screen-seeds"), (["--scale", "huge"], "--scale"),
    (["--processes", "-1"], "--processes"), (["--rng", "mt"], "--rng"),
])
def test_cli_rejects_bad_flags(args, match):
    proc = run_cli(*args)
    assert proc.returncode == 2
    assert match in proc.stderr and "Traceback" not in proc.stderr


def test_cli_rejects_values_the_config_refuses():
    proc = run_cli("--scale", "quick", "--screen-seeds", "1,1")
    assert proc.returncode == 2 and "distinct" in proc.stderr and "Traceback" not in proc.stderr


def test_cli_runs_and_writes_files(tmp_path):
    out = tmp_path / "res"
    proc = run_cli("--scale", "quick", "--divisors", "8", "--samples", "65536",
                   "--screen-seeds", "1", "--final-seeds", "2", "--grid", "none",
                   "--processes", "1", "--output", str(out), "--no-progress")
    assert proc.returncode == 0, proc.stderr
    assert "screening" in proc.stdout and "finals" in proc.stdout and "div8" in proc.stdout
    data = json.loads(out.with_suffix(".json").read_text())
    assert data["config"]["divisors"] == [8.0] and data["exact"] == []
    assert out.with_suffix(".csv").exists()
