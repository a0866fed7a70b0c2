"""The third review of the Div14 chapter: where the 63 edge errors predict λ (and where the
slider's caption says they cannot), near-ties among the knob winners, how often the pooled
χ² orders a close pair by λ, and what decided the finals for the smallest λ."""

from types import SimpleNamespace

import numpy as np

from rslab import note
from rslab.chapters import div14
from rslab.numerics import montecarlo as mc


def test_the_edges_predict_lambda_only_without_an_atom_on_an_edge_or_a_straddling_edge():
    scope = div14.edge_prediction_scope((6.0, 8.0, 10.0, 14.0))
    assert scope["divisors"] == {"clean": [8.0, 14.0], "straddling": [10.0], "on_edge": [6.0]}
    assert scope["clean"] < 0.01 < 0.02 < scope["straddling"]
    assert scope["on_edge"] > 10


def test_the_edge_caption_flags_an_atom_on_an_edge_and_straddling_edges():
    assert "atom lies on a bin edge" in div14.edge_caption(6.0)
    assert "2 edge(s) across a segment boundary" in div14.edge_caption(10.0)
    assert "edge" not in div14.edge_caption(14.0).split(")")[-1]


def test_near_ties_among_the_knob_winners_are_said_as_ties():
    study = {4: np.array([2.0, 1.0, 1.0005]), 5: np.array([1.0, 2.0, 3.0]),
             6: np.array([1.0, 2.0, 1.01])}
    divisors = (7.0, 8.0, 9.0)
    assert div14.knob_winners(study, divisors) == {4: ("div8", "div9"), 5: ("div7",),
                                                   6: ("div7",)}
    assert (div14.winners_text(study, divisors)
            == "div7 at 5 and 6 bits; div8 and div9, tied within 0.1 %, at 4 bits")


def test_the_pooled_chi2_orders_a_close_pair_by_lambda_though_the_paired_test_rarely_rejects():
    fpc = mc.stream_fpc(note.FINALS[1])
    for k in (9.0, 10.5):
        r = div14.pair_separation(14.0, k, note.FINALS[1], note.FINALS[0], fpc)
        assert r["power"] < 0.5 and div14.order_right(r) > 0.9


def _final(name, mean_ks, chi2, lam):
    return {"name": name, "mean_ks": mean_ks, "chi2": chi2, "lam": lam,
            "samples": 10**9, "expected_chi2": 63 + 1e9 * lam}


def test_the_finals_text_says_whether_the_ks_half_cost_the_smallest_lambda_the_win():
    ks_lost = SimpleNamespace(finals=[_final("div14", 1.0, 707.1, 6.6e-7),
                                      _final("div9", 1.5, 677.1, 6.0e-7),
                                      _final("div8", 2.6, 849.6, 7.9e-7)], config=None)
    assert "the KS half, not χ² noise" in div14.smallest_lambda_text(ks_lost)
    noise = SimpleNamespace(finals=[_final("div8", 1.0, 100.0, 7.9e-7),
                                    _final("div10", 1.1, 104.0, 7.7e-7)], config=None)
    assert "does not rank it first either" in div14.smallest_lambda_text(noise)
    won = SimpleNamespace(finals=[_final("div9", 1.0, 677.1, 6.0e-7)], config=None)
    assert "wins" in div14.smallest_lambda_text(won)
