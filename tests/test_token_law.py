"""Exact token laws: the grouped argmax law against brute force, against Monte Carlo, and
what the tail cut-off of the Fast noise does."""

import itertools

import numpy as np
import pytest

from rslab.chapters.beyond import argmax_montecarlo
from rslab.numerics import targets
from rslab.numerics.argmax_law import NoiseAtoms, argmax_law
from rslab.numerics.detect import critical_noncentrality, samples_to_detect
from rslab.numerics.draw_comparison import invcdf_montecarlo, parse_variant
from rslab.numerics.token_law import run_law, token_law

N = 2**24
VALUES = np.array([-1.0, 0.0, 0.5, 1.0, 3.0], np.float32)
COUNTS = np.array([N // 2, N // 8, N // 8, N // 8, N - N // 2 - 3 * (N // 8)], np.int64)


def brute_force(counts, params, values, kind):
    """Every combination of atoms for every token: the winner (first of the highest score)."""
    run = np.repeat(np.arange(len(counts)), counts)
    prob = COUNTS / N
    P = np.zeros(run.size)
    for combo in itertools.product(range(values.size), repeat=run.size):
        c = list(combo)
        score = params[run] + values[c] if kind == "add" else params[run] * values[c]
        P[int(np.argmax(score))] += np.prod(prob[c])
    return P


@pytest.mark.parametrize("kind,params,values", [
    ("add", [0.0, 0.5, -0.5, 0.5], VALUES),        # cross-run ties at equal scores
    ("add", [3.0, 0.5, -0.5, 0.5], VALUES),        # a one-token run above every other
    ("mul", [2.0, 0.5, 1.0, 0.5], np.array([0.25, 0.5, 1.0, 2.0, np.inf], np.float32)),
])
def test_argmax_law_matches_brute_force(kind, params, values):
    counts = np.array([1, 2, 1, 2])
    params = np.array(params, np.float32)
    law = argmax_law(counts, params, NoiseAtoms("t", values, COUNTS), kind,
                     -100.0 if kind == "add" else 0.0, np.full(4, 1 / 6))
    P = brute_force(counts, params, values, kind)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    assert np.allclose(law.total, np.add.reduceat(P, starts), rtol=0, atol=1e-15)
    assert np.allclose(law.first, P[starts], rtol=0, atol=1e-15)
    assert np.allclose(law.last, P[starts + counts - 1], rtol=0, atol=1e-15)
    assert abs(law.total.sum() - 1) < 1e-14


def test_noise_atoms_need_the_whole_lattice():
    with pytest.raises(ValueError, match="2\\^24"):
        NoiseAtoms.of("x", np.zeros(10, np.float32))


def test_argmax_law_agrees_with_monte_carlo_through_the_reference():
    """Div8 on a flat row: the exact law (ties at the noise's top atom favour token 0) against
    rows drawn by the reference; χ² within its law, and far from the ideal law's count."""
    t = targets.flat(512)
    out = argmax_montecarlo(t, "gumbel", "div8", 3000, seed=4)
    assert out["p"] > 1e-3
    assert out["drawn_where_exact_is_zero"] == 0
    law = run_law(t, "gumbel", "div8")
    assert law.first[0] > law.last[0]  # the lowest index wins the ties


def test_monte_carlo_rejects_a_wrong_law():
    """The same check against the ideal law fails where the Fast noise cuts the tail."""
    t = targets.peaked(0.05, 16_384)  # the tail sits 18.2 below the head, near the cut-off
    out = argmax_montecarlo(t, "gumbel", "div8", 1500, seed=2)
    ideal = t.counts * t.run_probs
    drawn_runs = np.add(out["drawn"][:2], out["drawn"][2:])
    chi_ideal = float((((drawn_runs - 1500 * ideal) ** 2) / (1500 * ideal)).sum())
    assert out["p"] > 1e-3 and chi_ideal > 50


def test_invcdf_law_agrees_with_the_monte_carlo_engine():
    out = invcdf_montecarlo(targets.peaked(0.3, 20_000), 2**22, seed=3)
    assert out["drawn_where_exact_is_zero"] == 0
    assert out["p_exact"] > 1e-3
    lo, hi = out["predicted_band"]
    assert lo <= out["chi2_target"] <= hi


def test_u24_monte_carlo_draws_as_the_sampler_does():
    """Its draws are the Fast path's residual rows, one key per row (requests 0..n−1), not
    one key's stream: the counts equal the reference row draw's tokens on the same seed."""
    from rslab.draws import draw_tokens
    from rslab.randomness import RESIDUAL

    t, n = targets.peaked(0.3, 3000), 3000
    out = invcdf_montecarlo(t, n, seed=4)
    tokens = draw_tokens("invcdf", "u24", 4, np.arange(n), 0, RESIDUAL,
                         np.broadcast_to(t.row(), (n, t.vocab)))
    assert np.array_equal(out["drawn"], np.bincount(tokens, minlength=t.vocab))
    assert out["fpc"] == 1 - n / 2**32
    with pytest.raises(ValueError, match="samples"):
        invcdf_montecarlo(t, 0)


def test_the_u24_checks_words_are_distinct():
    """At one position the key is a bijection of the request and the word of counter 0 one
    of the key: the check's n words are drawn without replacement (its ``fpc``)."""
    from rslab.randomness import random_words

    words = random_words("fast", 1, np.arange(2**20), 0, "residual", [0])[:, 0]
    assert np.unique(words).size == words.size


def test_fast_gumbel_never_draws_an_unreachable_tail():
    """A tail 2^20 below the head needs more noise than the Fast noise's range: TV = tail."""
    d = token_law(targets.peaked(0.1, 154_880), "gumbel", "div8")
    assert d.tv == pytest.approx(0.1, rel=1e-6)
    assert d.worst_rel == pytest.approx(1.0)
    wide = token_law(targets.peaked(0.1, 8192), "invcdf", "wide")
    assert wide.tv < 1e-3


def test_token_law_arguments():
    with pytest.raises(ValueError, match="target must be a Target"):
        token_law("flat", "gumbel")
    with pytest.raises(ValueError, match="method: the Exact path"):
        token_law(targets.flat(256), "race", path="exact")
    with pytest.raises(ValueError, match="path must be"):
        token_law(targets.flat(256), "gumbel", path="slow")


def test_targets():
    z = targets.zipf()
    assert z.vocab == targets.VOCAB and 100 < z.levels < 1000
    assert np.all(np.diff(z.weights) < 0)
    p = targets.peaked(0.2, 1000)
    assert p.probs().sum() == pytest.approx(1.0) and p.probs()[0] == pytest.approx(0.8)
    for bad in (lambda: targets.peaked(1.5), lambda: targets.flat(1),
                lambda: targets.target("bumpy")):
        with pytest.raises(ValueError):
            bad()


def test_detection_thresholds():
    assert critical_noncentrality(1) == pytest.approx(10.83, abs=0.01)
    assert samples_to_detect(0.0, 5) == float("inf")
    assert samples_to_detect(1e-6, 1) == pytest.approx(critical_noncentrality(1) * 1e6)
    with pytest.raises(ValueError, match="df"):
        critical_noncentrality(0)
    with pytest.raises(ValueError, match="lam"):
        samples_to_detect(-1.0, 3)


def test_parse_variant():
    assert parse_variant("race") == ("race", "scaled")
    assert parse_variant("race-naive") == ("race", "naive")
    assert parse_variant("rangered") == ("gumbel", "rangered")
    assert parse_variant("gumbel-div14") == ("gumbel", "div14")
    with pytest.raises(ValueError, match="noise"):
        parse_variant("race-wide")
