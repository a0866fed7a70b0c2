"""``python -m rslab bench --only token_laws`` as a reader runs it: the worst target of every draw
of the sampler, the fixed-point draw under its guarantee, and the table printed from them."""

import json
import subprocess
import sys

import numpy as np
import pytest

from rslab.bench.token_laws import token_law_text
from rslab.numerics import divergence_bound as db
from rslab.numerics.fixed_invcdf import GUARANTEE
from rslab.numerics.methods import sampler_draws, variant_name

DRAWS = [variant_name(*d) for d in sampler_draws()]


def bench(*args):
    return subprocess.run([sys.executable, "-m", "rslab", "bench", "--only", "token_laws",
                           *args], capture_output=True, text=True, timeout=600)


@pytest.mark.heavy  # about a minute: the search over every family row for every draw
def test_the_worst_target_of_every_draw_in_json_and_in_its_table():
    """An odd vocabulary (not a multiple of the 128 lanes): each draw's worst row with its
    χ² interval, the bound's sample size 2a²/χ², the fixed-point draw's guarantee, and the
    table the command prints from the same figures (one run: the search takes a while)."""
    proc = bench("--vocab", "300", "--json")
    assert proc.returncode == 0, proc.stderr
    t = json.loads(proc.stdout)["token_laws"]
    assert t["vocab"] == 300 and t["rows"] > 0 and t["seconds"] > 0
    worst = {r["draw"]: r for r in t["worst"]}
    assert list(worst) == DRAWS
    for r in worst.values():
        assert r["chi2_lo"] <= r["chi2"] <= r["chi2_hi"]
        if r["chi2"] > 0:
            assert r["bound_samples"] >= 2 * db.ADVANTAGE**2 / r["chi2"] * (1 - 1e-12)
        detects = [r[k] for k in ("detect_tokens", "detect_vectors", "detect_bins")
                   if r[k] is not None and not np.isnan(r[k])]
        assert all(d >= r["bound_samples"] for d in detects)
    fixed = worst["fixed-u96"]
    assert fixed["chi2_hi"] <= GUARANTEE and fixed["bound_samples"] >= 1e10
    assert worst["invcdf-u24"]["chi2"] > 1e3 * GUARANTEE
    assert {e["row"] for e in t["weights_error"]} and set(t["wide48_vector_cause"]) == \
        {"peaked", "zipf", "flat"}
    lines = token_law_text({"token_laws": t}).splitlines()
    assert lines[0].startswith("Worst target per draw over") and "V = 300" in lines[0]
    rows = {line.split()[0]: line for line in lines[2:2 + len(DRAWS)]}
    assert list(rows) == DRAWS
    assert float(rows["fixed-u96"].split()[-10]) == float(f"{fixed['chi2']:.4g}")
    assert lines[-1].startswith(f"{len(DRAWS)} draws in ") and "target ≤ 180 s" in lines[-1]


def test_the_benchmarks_run_in_their_modules_order_whichever_was_imported_first():
    """This module imported the token-law benchmark before the others: the registry's order
    (what ``bench`` runs and ``bench --help`` lists) is still that of ``bench.MODULES``."""
    from rslab import bench

    order = [fn.__module__.rsplit(".", 1)[1] for fn in bench.load().values()]
    assert order == sorted(order, key=bench.MODULES.index) and order[-1] == "token_laws"
