"""The design-space sweep: exact points, the best divisor per design, the CLI with its files,
and the same table on Dask as on one process."""

import json
import subprocess
import sys

import pytest

from rslab.numerics import search, sweep
from rslab.numerics.fastlog import DEFAULT_FASTLOG2


def test_a_point_is_the_exact_search_of_its_design():
    design = DEFAULT_FASTLOG2
    row = sweep.point((design, {"c1_bits": design.c1_bits}, 14.0))
    t = search._first_layer(design)
    exact = search.exact_row("div14", search.second_layer(t, 14.0, design))
    assert row["lam"] == exact["lam"] and row["exact_ks"] == exact["exact_ks"]
    assert row["expected_chi2"] == 63 + 1e9 * row["lam"]
    assert 0 <= row["zero_mass"] < 1e-3


def test_best_rows_pick_the_smallest_lambda_per_design():
    rows = [{"a": 1, "divisor": 8.0, "name": "div8", "lam": 2.0, "exact_ks": 1.0},
            {"a": 1, "divisor": 14.0, "name": "div14", "lam": 1.0, "exact_ks": 1.0},
            {"a": 2, "divisor": 8.0, "name": "div8", "error": "no first layer"}]
    best = sweep.best_rows(rows, (("a", (1, 2)),))
    assert best[0]["best"] == "div14" and best[0]["div8_lam"] == 2.0
    assert best[1] == {"a": 2, "error": "no first layer"}


@pytest.mark.parametrize("axes, what", [
    ({"no_such_knob": (1,)}, "not a FastLog2 field"),
    ({"index_bits": ()}, "at least one value"),
    ({"index_bits": (6, 6)}, "distinct"),
    ({"index_bits": (13,)}, "index_bits must be an integer in 1..12"),
])
def test_bad_axes_are_value_errors(axes, what):
    with pytest.raises(ValueError, match=what):
        sweep.sweep_config("quick", axes=axes)


def test_presets_grow_with_the_scale():
    quick, book, full = (sweep.sweep_config(s) for s in ("quick", "book", "full"))
    assert quick.points < book.points < full.points


def test_the_command_writes_the_table_and_runs_on_a_running_dask_scheduler(tmp_path):
    distributed = pytest.importorskip("distributed")
    cmd = [sys.executable, "-m", "rslab", "sweep", "--scale", "quick", "--axis", "c1_bits=9",
           "--divisors", "8,14"]
    proc = subprocess.run(cmd + ["--processes", "1", "--output", str(tmp_path / "one")],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "points/s per core" in proc.stdout and "best" in proc.stdout
    one = json.loads((tmp_path / "one.json").read_text())
    assert one["points"] == 2 and len(one["best"]) == 1
    assert one["best"][0]["best"] in ("div8", "div14")
    assert (tmp_path / "one.csv").read_text().startswith("index_bits,c1_bits,name,divisor")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, host="127.0.0.1",
                                  dashboard_address=None) as cluster:
        remote = subprocess.run(cmd + ["--dask", cluster.scheduler_address, "--no-progress",
                                       "--output", str(tmp_path / "two")],
                                capture_output=True, text=True, timeout=600)
    assert remote.returncode == 0, remote.stderr
    two = json.loads((tmp_path / "two.json").read_text())
    assert one["rows"] == two["rows"] and two["backend"] == "dask" and two["workers"] == 2


def test_bad_axes_on_the_command_line_are_one_error_line():
    proc = subprocess.run([sys.executable, "-m", "rslab", "sweep", "--axis", "c1_bits=99"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "c1_bits must be an integer in 4..40" in proc.stderr
    assert "Traceback" not in proc.stderr
