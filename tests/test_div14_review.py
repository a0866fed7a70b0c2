"""The second review of the Div14 chapter, one test per result it asked for: the c1 knob's
winners and knee, what a paired χ² test can separate, Div10 against Div8 at the note's
screening, Div14 off the front on the note's grid, the atom's range and the sampler's draws."""

import numpy as np
import pytest

from rslab import note
from rslab.chapters import div14
from rslab.kernels.sampler.draws import sampler_draw
from rslab.numerics import montecarlo as mc
from rslab.numerics import search, separation
from rslab.numerics.fastlog import DEFAULT_FASTLOG2 as FL


def test_winners_text_and_knee_read_a_knob_study():
    lam = {4: [9.0, 8.0], 5: [5.0, 6.0], 6: [4.0, 3.0], 7: [3.0, 2.9], 8: [3.05, 2.95]}
    study = {k: np.array(v) for k, v in lam.items()}
    assert div14.winners_text(study, (7.0, 8.0)) == "div8 at 4 and 6–8 bits; div7 at 5 bits"
    assert div14.knob_knee(study, 0.03) == 7
    assert div14.knob_knee(study, 0.0) == 8


def test_the_paired_chi2_difference_law_matches_a_simulation():
    # two laws near the uniform one over 64 bins, drawn from the same uniforms: b moves a's
    # bin edges a little; the draws fall in the cells between all 126 edges (multinomial)
    rng = np.random.default_rng(0)
    edges_a = np.linspace(0, 1, 65)[1:-1] + rng.normal(0, 1e-4, 63)
    edges_b = edges_a + rng.normal(0, 5e-5, 63)
    cuts = np.sort(np.concatenate([edges_a, edges_b]))
    cells = np.diff(np.concatenate([[0], cuts, [1]]))
    mids = np.concatenate([[0], cuts]) + cells / 2
    bin_of = [np.searchsorted(e, mids) for e in (edges_a, edges_b)]
    dev = [np.bincount(b, cells, minlength=64) - 1 / 64 for b in bin_of]
    n, reps = 10**7, 3000
    counts = rng.multinomial(n, cells, size=reps)
    chi = [((np.stack([np.bincount(b, c, minlength=64) for c in counts]) - n / 64) ** 2
            / (n / 64)).sum(axis=1) for b in bin_of]
    diffs = chi[1] - chi[0]
    mean, sd = separation.chi2_difference(dev[0], dev[1], n)
    assert np.std(diffs) == pytest.approx(sd, rel=0.1)
    assert abs(np.mean(diffs) - mean) < 4 * sd / np.sqrt(reps)


def test_paired_power_is_the_level_at_no_difference_and_grows_with_it():
    assert separation.paired_power(0.0, 1.0, 10) == pytest.approx(separation.LEVEL, rel=1e-6)
    powers = [separation.paired_power(m, 1.0, 10) for m in (0.5, 1.0, 2.0)]
    assert powers == sorted(powers) and powers[-1] > 0.99
    with pytest.raises(ValueError, match="seeds"):
        separation.paired_power(1.0, 1.0, 1)


def test_the_note_finals_rarely_separate_lambdas_a_few_1e8_apart():
    fpc = mc.stream_fpc(note.FINALS[1])
    for k in (9.0, 10.5):
        r = div14.pair_separation(14.0, k, note.FINALS[1], note.FINALS[0], fpc)
        assert 3e-8 < abs(r["dlam"]) < 1e-7 and 0.05 < r["power"] < 0.5
    assert div14.pair_separation(8.0, 14.0, note.FINALS[1], note.FINALS[0], fpc)["power"] > 0.8


def test_div10_worse_than_div8_is_a_likely_draw_of_the_notes_screening():
    r = div14.pair_separation(8.0, 10.0, note.SCREENING[1], note.SCREENING[0],
                              mc.stream_fpc(note.SCREENING[1]))
    assert r["dlam"] < 0 and 0.2 < 1 - r["b_below"] < 0.5


def test_on_the_notes_grid_a_neighbour_beats_div14_on_both_criteria():
    rows = {r["name"]: r for r in search.exact_search((14.0, 14.0625), processes=1,
                                                       progress=False)}
    assert rows["div(14.0625)"]["lam"] < rows["div14"]["lam"]
    assert rows["div(14.0625)"]["exact_ks"] < rows["div14"]["exact_ks"]


def test_lambda_sees_an_atom_when_an_edge_lies_in_the_range_it_collects():
    assert div14.atom_on_edge(2.5625) and not div14.atom_on_edge(2.5)
    lam = search.lambda_by_divisor((2.5, 2.5625), FL)
    assert lam[1] > 50 * lam[0]


def test_the_sampler_program_offers_no_div14():
    with pytest.raises(ValueError, match="noise"):
        sampler_draw("fast", "gumbel", "div14")
    assert sampler_draw("fast", "gumbel", "div8") == ("gumbel", "div8")


@pytest.mark.heavy
def test_the_c1_width_moves_the_winner_and_stops_lowering_lambda_at_11_bits():
    study = div14.knob_study("c1_bits", tuple(range(4, 17)))
    winners = {search.divisor_name(div14.KNOB_DIVISORS[int(np.argmin(v))]) for v in study.values()}
    assert len(winners) > 1 and "div14" not in winners
    assert div14.knob_knee(study, 0.03) == 11
    for a in range(4, 10):
        assert np.all(study[a + 1] < study[a])
