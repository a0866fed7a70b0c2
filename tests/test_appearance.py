"""The appearance test: exact advantages for a bias carried by rare tokens, and where a χ²
test's figure is valid."""

import numpy as np
import pytest

from rslab.numerics import adversary, appearance
from rslab.numerics import divergence_bound as db
from rslab.numerics.detect import approximation_holds, samples_to_detect_cells
from rslab.numerics.token_law import exact_token_probs


def test_a_never_drawn_set_is_seen_at_ln2_over_its_mass():
    p = np.array([0.5, 0.5 - 1e-4, 1e-4])
    P = np.array([0.5, 0.5, 0.0])
    got = appearance.samples_to_see(P, p)
    assert got["side"] == "under" and got["tokens"] == 1
    assert got["samples"] == np.ceil(np.log(2) / -np.log1p(-1e-4))
    assert appearance.advantage_at(P, p, got["samples"])["advantage"] >= 0.5
    assert appearance.advantage_at(P, p, got["samples"] - 1)["advantage"] < 0.5


def test_a_rarely_given_token_drawn_too_often_rises_then_falls():
    """Over-drawn: the advantage of its set peaks and falls back (both laws show it at last)."""
    p = np.array([1 - 1e-12, 1e-12])
    P = np.array([1 - 1e-6, 1e-6])
    got = appearance.samples_to_see(P, p)
    assert got["side"] == "over" and got["samples"] == pytest.approx(np.log(2) / 1e-6, rel=1e-3)
    assert got["samples"] == int(got["samples"])
    assert appearance.advantage_at(P, p, 1e16)["advantage"] < 0.01


def test_no_test_beats_the_bound():
    """An exact test's advantage never exceeds the TV bound n·TV."""
    rng = np.random.default_rng(3)
    for _ in range(20):
        p = rng.dirichlet(np.full(50, 0.2))
        P = rng.dirichlet(np.full(50, 0.2))
        for n in (1, 10, 1000):
            tv = db.figures(P, p)["tv"]
            assert appearance.advantage_at(P, p, n)["advantage"] <= n * tv + 1e-12


def test_equal_laws_are_never_seen_and_bad_input_is_named():
    p = np.full(4, 0.25)
    assert appearance.samples_to_see(p, p)["samples"] == float("inf")
    with pytest.raises(ValueError, match="P and p"):
        appearance.samples_to_see(p, p[:3])
    with pytest.raises(ValueError, match="advantage"):
        appearance.samples_to_see(p, p, 1.5)
    with pytest.raises(ValueError, match="samples"):
        appearance.advantage_at(p, p, 0)


def test_the_chi2_figure_is_withheld_where_rare_tokens_carry_the_bias():
    """wide48 on a BF16 logit row: the χ² over tokens is carried by a token of target
    probability far below 10^-20, so no χ² figure over tokens is given; the never-drawn tokens
    are seen by the appearance test, after the TV bound's sample size."""
    V = 16_384
    w = adversary.logit_weights(adversary.bf16_logits(V, 8.0))
    P, p = exact_token_probs(w, "invcdf", "wide48"), adversary.target_of(w)
    f = db.figures(P, p)
    assert np.isnan(f["detect_tokens"]) and f["bound_samples_chi2"] < 1
    seen = appearance.samples_to_see(P, p)
    assert f["bound_samples_tv"] == f["bound_samples"] <= seen["samples"] < 1e10
    never = (P == 0) & (p > 0)
    assert never.sum() > 1000


def test_the_approximation_holds_where_the_cells_expect_five():
    terms, p = np.array([1.0, 1.0]), np.array([0.5, 1e-9])
    assert not approximation_holds(terms, p, 1e6)
    assert approximation_holds(terms, p, 1e10)
    assert approximation_holds(np.array([9.0, 1.0]), p, 100)
    assert np.isnan(samples_to_detect_cells([0.5, 0.5], [1.0, 0.0]))
    assert samples_to_detect_cells([0.5, 0.5], [0.5, 0.5]) == float("inf")
