"""The draws on the core: tokens equal the reference's on the same weights and key, loops at
II = ResMII, and bad arguments."""

import numpy as np
import pytest

from rslab.kernels.studies import draw_table as dt
from rslab.kernels.studies.draw_loops import DRAWS, KINDS, check_draw, draw_program, run_draw
from rslab.kernels.studies.invcdf_row import invcdf_program, run_invcdf
from rslab.randomness import BONUS, RESIDUAL, fast_key


def _inputs(v, seed, masked=0.1):
    inputs = dt.row_inputs(v, seed)
    if masked:
        rng = np.random.default_rng(seed)
        logits = inputs["logits"].copy()
        logits[rng.random(v) < masked] = -np.inf
        logits[0] = max(logits[0], np.float32(0))  # keep a finite maximum
        q = inputs["q"]
        from rslab import reference as ref

        e = ref.softmax_numerators(logits[None], "fast")
        r = np.float32(1) / e.sum(dtype=np.float32)
        inputs = {**inputs, "logits": logits, "m": float(logits.max()), "r": float(r),
                  "bonus": e, "residual": ref.residual_weights(e * r, q[None])}
    return inputs


@pytest.mark.parametrize("v,seed", [(1000, 1), (777, 2)])
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("method,noise", dt.ROW_DRAWS)
def test_tokens_equal_the_reference(method, noise, kind, v, seed):
    inputs = _inputs(v, seed)
    key = int(fast_key(seed, 3, 1, BONUS if kind == "bonus" else RESIDUAL)[0])
    res = dt.run_row(kind, method, noise, inputs, key)
    assert res.token == dt.reference_token(kind, method, noise, inputs, seed, 3, 1)
    assert 0 <= res.token < v


def test_residual_race_never_draws_a_zero_weight():
    inputs = _inputs(512, 3, masked=0)
    q = np.zeros(512, np.float32)
    q[:256] = 1.0  # p − q ≤ 0 on the first half
    inputs["q"] = q
    key = int(fast_key(0, 0, 0, RESIDUAL)[0])
    for noise in ("scaled", "naive"):
        assert run_draw("residual", "race", noise, inputs["logits"], q=q, m=inputs["m"],
                        r=inputs["r"], key=key).token >= 256
    for noise in ("u24", "wide"):
        assert run_invcdf("residual", noise, inputs["logits"], q=q, m=inputs["m"],
                          r=inputs["r"], key=key).token >= 256


@pytest.mark.parametrize("kind", KINDS)
def test_loops_run_at_the_resource_bound(kind):
    for method, noise in dt.ROW_DRAWS:
        f = dt.loop_figures(kind, method, noise)
        assert f["ii"] == f["res_mii"] and f["measured_per_packed"] == f["cycles_per_packed"]
        assert f["stalls_per_iter"] == 0


def test_inverse_cdf_rows_take_fewer_cycles_than_div8():
    """Its fixed per-row cost (group sums, two scans, the search) is paid back on long rows."""
    rows = {(r["draw"], r["kind"]): r for r in dt.row_runs(16_384)}
    for kind in KINDS:
        assert rows[("invcdf-wide", kind)]["total_cycles"] < rows[("gumbel-div8", kind)][
            "total_cycles"]
    assert all(r["matches_reference"] for r in rows.values())


def test_bad_arguments():
    with pytest.raises(ValueError, match="kind must be one of"):
        check_draw("middle", "gumbel", "div8")
    with pytest.raises(ValueError, match=r"\(method, noise\)"):
        check_draw("bonus", "gumbel", "div14")
    with pytest.raises(ValueError, match="n_packed"):
        draw_program("bonus", "gumbel", "div8", 0)
    with pytest.raises(ValueError, match="multiple of 2"):
        invcdf_program("bonus", "wide", 3)
    with pytest.raises(ValueError, match="noise must be one of"):
        invcdf_program("bonus", "u16", 2)
    with pytest.raises(ValueError, match="q: the residual row"):
        run_draw("residual", "race", "scaled", np.zeros(256, np.float32))
    assert set(DRAWS) <= set(dt.ROW_DRAWS)


def test_wide48_reads_the_head_vector_from_both_ends():
    """A heavy token in the middle of its vector: tokens on both sides of it are drawn, and
    each equals the reference's."""
    v = 512
    logits = np.full(v, -3.0, np.float32)
    logits[60] = 0.0  # the heaviest lane of the first vector, which holds most of the mass
    logits[128:] = -12.0
    inputs = {**dt.row_inputs(v, 0), "logits": logits, "m": 0.0}
    from rslab import reference as ref

    inputs["bonus"] = ref.softmax_numerators(logits[None], "fast")
    sides = set()
    for seed in range(40):
        key = int(fast_key(seed, 0, 0, BONUS)[0])
        res = dt.run_row("bonus", "invcdf", "wide48", inputs, key)
        assert res.token == dt.reference_token("bonus", "invcdf", "wide48", inputs, seed, 0, 0)
        if res.token < 128:
            sides.add(int(np.sign(res.token - 60)))
    assert sides == {-1, 0, 1}
