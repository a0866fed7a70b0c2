"""The fifth review of the Div14 chapter: the screening says which of two causes dropped a
candidate of smaller λ (a KS rank that is noise, or an atom the KS sees), the χ² sees an atom
a bin edge runs through, the stage tables' predicted mean carries the seeds'
finite-population factor, and Div9 and Div14 are both on the integers' front of λ and KS."""

from types import SimpleNamespace

import pytest

from rslab.chapters import div14
from rslab.numerics import montecarlo as mc
from rslab.numerics import search
from rslab.numerics.fastlog import DEFAULT_FASTLOG2 as FL


def _row(name, divisor, mean_ks, chi2, lam, exact_ks, samples=3 * 2**20):
    return {"name": name, "divisor": divisor, "mean_ks": mean_ks, "chi2": chi2, "lam": lam,
            "exact_ks": exact_ks, "samples": samples, "seeds": 3}


def _result(screening, finals, n=2**20):
    cfg = SimpleNamespace(samples_per_seed=n, rng="hw", log2=FL)
    return SimpleNamespace(config=cfg, screening=screening, finals=finals)


def test_a_drop_below_the_ks_null_is_noise_and_one_above_it_is_the_atom():
    winner = _row("div8", 8.0, 7.26e-4, 43.5, 7.9e-7, 2.6e-4)
    noise = _row("div14", 14.0, 7.29e-4, 42.2, 6.6e-7, 4.7e-5)           # quick: null 8.5e-4
    atom = _row("div9", 9.0, 7.3e-4, 42.0, 6.0e-7, 1.5e-3)               # above the null
    edge = _row("div2", 2.0, 4.3e-3, 7007.4, 2.2e-3, 4.1e-3)
    text = div14.screening_text(_result([winner, noise, atom, edge], [winner]))
    assert text["noise"] == ["div14"]
    assert "div14's law is 4.70e-05 from the ideal, below the KS null" in text["cause"]
    assert "its KS rank is sampling noise" in text["cause"]
    assert "div9's law is 1.50e-03 from the ideal, above" in text["cause"]
    assert "the KS sees its plateau atom (2.9e-04)" in text["cause"]
    assert [r["name"] for r in text["edge_rows"]] == ["div2"] and text["off_max"] == 43.5
    assert "div2 7,007, against at most 44 for the others" in text["edge"]
    assert text["null"] == pytest.approx(0.8687 / 2**10 * (1 - 2**-12) ** 0.5, rel=1e-3)


def test_no_drop_is_said_as_none():
    winner = _row("div8", 8.0, 7.26e-4, 43.5, 6.0e-7, 2.6e-4)
    text = div14.screening_text(_result([winner, _row("div10", 10.0, 7.3e-4, 41.3, 7.7e-7,
                                                      8.3e-5)], [winner]))
    assert text["dropped"].startswith("No candidate") and text["cause"] == text["edge"] == ""


def test_the_stage_tables_predicted_mean_carries_the_finite_population_factor():
    n = 2**28                                      # book-like: f = 1 − 2^−4
    fpc = mc.stream_fpc(n)
    row = _row("div14", 14.0, 1e-4, 720.0, 6.575e-7, 4.7e-5, samples=10 * n)
    table = div14.ranking_rows([row], fpc)[0]["E[χ²] from λ"]
    assert table == f"{fpc * 63 + 10 * n * 6.575e-7:,.1f}"
    assert table == f"{mc.predicted_chi2(6.575e-7, 10 * n, fpc=fpc).mean():,.1f}"
    assert div14.ranking_rows([row])[0]["E[χ²] from λ"] == f"{63 + 10 * n * 6.575e-7:,.1f}"


@pytest.mark.heavy
def test_div9_and_div14_are_both_on_the_front_of_lambda_and_ks_over_7_to_16():
    rows = div14.atom_rows(div14.KNOB_DIVISORS)
    front = search.pareto_front([r["lam"] for r in rows], [r["exact_ks"] for r in rows])
    on = [r["name"] for r, f in zip(rows, front, strict=True) if f]
    assert on == ["div9", "div11", "div13", "div14", "div15"]
