"""How often a split row's float32 merge changes an outcome (rslab.numerics.split_effect),
and where strong scaling ends (rslab.kernels.sampler.chip_curves)."""

import numpy as np

from rslab.fixtures import sampled_inputs
from rslab.kernels.sampler.chip_curves import curve_point, scaling_end
from rslab.numerics import fixed_invcdf as fx
from rslab.numerics.fastlog import fast_exp2
from rslab.numerics.rng import uniform_from_index
from rslab.numerics.split_effect import (
    LATTICE,
    acceptance_flips,
    accepted,
    residual_same,
    row_change,
)
from rslab.numerics.split_sum import SplitSum, even_split


def test_accepted_counts_the_lattice_prefix_by_brute_force():
    u = uniform_from_index(np.arange(LATTICE, dtype=np.uint32))
    qx = np.float32(0.013)
    for px in (np.float32(0.0051), np.nextafter(np.float32(0.0051), np.float32(1))):
        assert accepted(qx, px) == int((u * qx < px).sum())
    p1 = np.float32(0.0051)
    p2 = p1 * np.float32(1.000001)  # a few lattice steps of u·q apart
    assert acceptance_flips(qx, p1, p2) == int(((u * qx < p1) != (u * qx < p2)).sum()) > 0
    assert acceptance_flips(np.float32(0), p1, p2) == 0


def test_the_coupling_of_two_rows_is_bounded_by_their_laws():
    rng = np.random.default_rng(0)
    w1 = rng.random(256).astype(np.float32)
    w2 = w1.copy()
    w2[[3, 200]] *= np.float32(1.5)
    assert residual_same(w1, w1) == 1
    same = residual_same(w1, w2)
    n1, scale = fx.exact_counts(w1)
    n2, _ = fx.exact_counts(w2)
    best = sum(min(a, b) for a, b in zip(n1, n2, strict=True))  # the best coupling
    assert 0 < same <= best / scale < 1


def test_one_order_changes_nothing_and_a_split_changes_little():
    l, q, ids = sampled_inputs(1, 2, 4864, seed=3)
    one = SplitSum((0, 4864))
    for s in range(2):
        same = row_change(l[0, s], q[0, s], int(ids[0, s]), fast_exp2, one, one)
        assert same == {"decision": 0.0, "residual": 0.0, "total": 0.0}
        other = row_change(l[0, s], q[0, s], int(ids[0, s]), fast_exp2, one,
                           even_split(4864, 4, merge="online"))
        assert 0 <= other["total"] < 1e-3


def test_scaling_ends_at_the_fewest_cores_within_a_tenth_of_the_fastest():
    def p(cores, cycles):
        return {"name": "t", "mode": "m", "R": 1, "cores": cores, "cycles": cycles,
                "binding": "hbm", "exchange_cycles": 10, "bound_cycles": 100, "ratio": 1.0}
    (row,) = scaling_end([p(1, 1000), p(2, 520), p(4, 300), p(8, 290), p(16, 295)])
    assert row["ends_at"] == 4 and row["best_cores"] == 8 and row["speedup"] == 3.45
    # the page's curve (first-step reject, R = 2, the cycles measured at book scale): the
    # same end on the quick grid (1, 8, 32, 64) and the book grid (1, 2, ..., 64)
    book = {1: 25480, 2: 13488, 4: 6567, 8: 4122, 16: 3827, 32: 3423, 64: 3710}
    for cores in ((1, 8, 32, 64), tuple(book)):
        (row,) = scaling_end([p(c, book[c]) for c in cores])
        assert row["ends_at"] == 32


def test_a_curve_point_is_one_chip_run_against_its_bound():
    pt = curve_point("first-reject", 2, 4, "sequential", 1280)
    assert pt["tokens_match_reference"] and pt["cores_per_row"] == 2
    assert pt["ratio"] == round(pt["cycles"] / pt["bound_cycles"], 3) >= 1
    assert pt["tokens"] == 2 and pt["tokens_per_kcycle"] > 0
