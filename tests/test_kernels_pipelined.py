"""Pipelined loops against NumPy on the same inputs, remainders, argmax ties and NaN."""

import numpy as np
import pytest

from rslab.kernels.studies.argmax_loop import VARIANTS, argmax_reference, run_argmax
from rslab.kernels.studies.gumbel_loop import (
    LOG2E,
    gumbel_reference,
    gumbel_scores_numpy,
    run_gumbel,
)
from rslab.kernels.studies.steady import residual_figures, steady_state
from rslab.kernels.studies.sumexp_loop import packed_row, sumexp_numpy, sumexp_program
from rslab.machine import MachineConfig, assemble, simulate
from rslab.machine.bf16 import round_to_bf16


def _row(v, seed, scale=3.0):
    return round_to_bf16(np.random.default_rng(seed).normal(size=v).astype(np.float32) * scale)


@pytest.mark.parametrize("v,workers", [(8 * 256, 4), (7 * 256 - 5, 4), (256, 4), (6 * 256, 2),
                                       (6 * 256, 1)])
def test_sumexp_matches_numpy_bit_for_bit(v, workers):
    row = _row(v, v + workers)
    m = float(row.max())
    text, loop = sumexp_program(-(-v // 256), m, workers=workers)
    run = simulate(assemble(text), MachineConfig(), vmem=packed_row(row))
    assert run.sreg_f32(3) == sumexp_numpy(row, m, workers=workers)
    assert abs(run.sreg_f32(3) - np.exp(row.astype(np.float64) - m).sum()) < 1e-4 * v


def test_sumexp_remainder_needs_one_accumulator_per_vector():
    with pytest.raises(ValueError, match="partial iteration"):
        sumexp_program(5, 0.0, workers=2)


def test_sumexp_reaches_res_mii_with_no_steady_state_stall():
    config = MachineConfig()
    text, loop = sumexp_program(16, 0.0)
    assert loop.schedule.ii == loop.schedule.bounds.res_mii == 10
    steady = steady_state(lambda it: sumexp_program(2 * it, 0.0)[0], 8, 4, config)
    assert steady["ii"] == 10 and steady["stalls_per_iter"] == 0


def test_sumexp_one_worker_is_recurrence_bound():
    _, loop = sumexp_program(8, 0.0, workers=1)
    assert loop.schedule.bounds.rec_mii == 12 and loop.schedule.ii == 12


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("workers", [1, 2])
def test_argmax_ties_go_to_lowest_index(variant, workers):
    s = np.random.default_rng(workers).integers(-3, 4, size=128 * 4).astype(np.float32)
    r = run_argmax(s, variant=variant, workers=workers)
    assert (r.token, r.value) == argmax_reference(s, variant) == (int(np.argmax(s)), 3.0)


@pytest.mark.parametrize("variant", VARIANTS)
def test_argmax_nan_rule(variant):
    s = np.random.default_rng(5).normal(size=512).astype(np.float32)
    s[[7, 300]] = np.nan
    r = run_argmax(s, variant=variant, workers=2)
    token, value = argmax_reference(s, variant)
    assert r.token == token
    if variant == "select":
        assert token == int(np.nanargmax(s)) and r.value == value
    else:
        assert token == -1 and np.isnan(r.value)


@pytest.mark.parametrize("variant", VARIANTS)
def test_argmax_all_minus_inf_gives_index_zero(variant):
    r = run_argmax(np.full(256, -np.inf, np.float32), variant=variant)
    assert r.token == 0 and r.value == -np.inf


def test_independent_max_shortens_the_recurrence():
    sel = run_argmax(np.zeros(256, np.float32), variant="select").schedule
    mx = run_argmax(np.zeros(256, np.float32), variant="max").schedule
    assert (sel.bounds.rec_mii, mx.bounds.rec_mii) == (6, 3)
    assert (sel.ii, mx.ii) == (6, 3)


def _residual_inputs(v, seed):
    rng = np.random.default_rng(seed)
    logits = _row(v, seed, 2.0)
    m = logits.max()
    s = np.exp2((logits - m) * LOG2E).sum(dtype=np.float32)
    q = rng.dirichlet(np.ones(v)).astype(np.float32)
    return logits, dict(q=q, m=m, r=np.float32(1 / s))


@pytest.mark.parametrize("kind", ["bonus", "residual"])
@pytest.mark.parametrize("v,ppi", [(1000, 1), (5 * 256, 2)])
def test_gumbel_loops_match_numpy(kind, v, ppi):
    logits, kw = _residual_inputs(v, v + ppi)
    res = run_gumbel(kind, logits, key=987, packed_per_iter=ppi, **kw)
    token, value = gumbel_reference(kind, logits, key=987, **kw)
    assert (res.token, res.value) == (token, value)
    assert res.token < v


def test_residual_zero_weight_scores_minus_inf():
    logits, kw = _residual_inputs(512, 3)
    kw["q"] = np.zeros(512, np.float32)
    kw["q"][:256] = 1.0
    scores = gumbel_scores_numpy("residual", logits, key=1, **kw)
    assert np.all(scores[:256] == -np.inf) and np.all(np.isfinite(scores[256:512]))
    res = run_gumbel("residual", logits, key=1, **kw)
    assert res.token >= 256


def test_residual_loop_at_res_mii_without_stalls():
    r = residual_figures()
    assert r["ii"] == r["res_mii"] and r["measured_ii"] == r["ii"]
    assert r["stalls_per_iter"] == 0
