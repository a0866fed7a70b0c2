"""The cause of the Exact path's bias: the framework's uniforms are the lattice's cell endpoints
in its upper half, and centred cells with the same 24 bits remove nearly all of the bias."""

import numpy as np
import pytest

from rslab.numerics import lattice_bias as lb
from rslab.numerics import targets
from rslab.numerics.rng import UNIFORM_BITS, uniform_from_index
from rslab.numerics.token_law import token_law


def test_the_frameworks_uniforms_are_centres_below_a_half_and_endpoints_above():
    k = np.arange(2**UNIFORM_BITS)
    u = uniform_from_index(k).astype(np.float64)
    low = k < 2 ** (UNIFORM_BITS - 1)
    assert np.array_equal(u[low], (k[low] + 0.5) * 2.0**-UNIFORM_BITS)
    assert np.array_equal(u[~low], k[~low] * 2.0**-UNIFORM_BITS)
    assert np.array_equal(lb.uniforms("centred"), (k + 0.5) * 2.0**-UNIFORM_BITS)


@pytest.mark.heavy  # tens of seconds: three 2^24-point laws (the Beyond page claims the same)
def test_only_the_cells_centres_move_the_exact_paths_tail():
    """On peaked(0.1) at the note's vocabulary: the framework's endpoints give the tail 4 %
    too little, the same uniforms with float64 logs the same, centred cells of the same 24 bits
    less than 0.1 % (the χ² over the runs a thousand times smaller)."""
    t = targets.peaked(0.1)
    rows = {r["lattice"]: r for r in lb.lattice_rows(
        t, lb.lattice_atoms(("endpoints", "endpoints, float64 logs", "centred")))}
    end, f64, centred = (rows[n] for n in ("endpoints", "endpoints, float64 logs", "centred"))
    assert end["tail_rel"] < -0.03
    assert f64["tail"] == pytest.approx(end["tail"], rel=1e-6)
    assert abs(centred["tail_rel"]) < 1e-3
    assert centred["chi2_runs"] < 1e-3 * end["chi2_runs"]
    assert centred["detect_runs"] > 1000 * end["detect_runs"]


@pytest.mark.heavy
def test_the_endpoint_lattice_is_the_frameworks_exact_path_and_23_centred_bits_beat_it():
    t = targets.peaked(0.1)
    rows = {r["lattice"]: r for r in lb.lattice_rows(t, lb.lattice_atoms())}
    framework = token_law(t, "gumbel", path="exact")
    assert np.allclose(rows["endpoints"]["runs"] / (t.counts * t.run_probs) - 1,
                       framework.run_rel, rtol=0, atol=1e-9)
    assert abs(rows["centred"]["tail_rel"]) < abs(rows["centred, 23 bits"]["tail_rel"]) \
        < abs(rows["endpoints"]["tail_rel"]) / 10


def test_a_lattice_is_named():
    with pytest.raises(ValueError, match="lattice"):
        lb.uniforms("centred, 22 bits")


def test_the_upper_tail_of_the_endpoint_lattice_falls_short_of_the_ideal_law():
    """Near the top P(g > y) counts whole cells: the endpoints' count never passes the ideal
    law's and falls short by half a cell on average, the centres' scatters around it."""
    atoms = lb.lattice_atoms(("endpoints", "centred"))
    ys = np.linspace(18, 22, 401)
    tails = lb.upper_tail(atoms, ys)
    assert np.all(tails["endpoints"] <= 1 + 1e-3) and np.mean(tails["endpoints"]) < 0.97
    assert abs(np.mean(tails["centred"]) - 1) < 0.01
