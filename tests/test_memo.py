"""The build's cache of deterministic results: computed once per folder, the same bits."""

import numpy as np
import pytest

from rslab import memo, note
from rslab.chapters.intro import headline_items
from rslab.chapters.results import headline
from rslab.kernels.sampler import scenarios
from rslab.numerics import search
from rslab.numerics.fastlog import DEFAULT_FASTLOG2

CALLS = []


@memo.cached
def _square(x, *, plus=0):
    CALLS.append(x)
    return {"y": np.float64(x) ** 2 + plus}


def test_computed_once_per_folder_and_arguments(tmp_path, monkeypatch):
    CALLS.clear()
    monkeypatch.setenv(memo.ENV, str(tmp_path / "a"))
    assert _square(3.0) == _square(3.0) == {"y": 9.0}
    assert _square(3.0, plus=1) == {"y": 10.0}
    assert CALLS == [3.0, 3.0]
    monkeypatch.setenv(memo.ENV, str(tmp_path / "b"))  # a new build: computed again
    _square(3.0)
    assert CALLS == [3.0, 3.0, 3.0]


def test_without_a_folder_nothing_is_kept(monkeypatch):
    CALLS.clear()
    monkeypatch.delenv(memo.ENV, raising=False)
    _square(2.0)
    _square(2.0)
    assert CALLS == [2.0, 2.0]


def test_a_cached_grid_point_is_the_computed_one(tmp_path, monkeypatch):
    monkeypatch.setenv(memo.ENV, str(tmp_path))
    args = (10.25, DEFAULT_FASTLOG2, (8.0, 20.0))
    first, again = search.divisor_row(*args), search.divisor_row(*args)
    plain = search.divisor_row.uncached(*args)
    assert first == again == plain
    assert len(list(tmp_path.iterdir())) == 1


def test_one_entry_however_the_arguments_are_passed(tmp_path, monkeypatch):
    CALLS.clear()
    monkeypatch.setenv(memo.ENV, str(tmp_path))
    assert _square(3.0) == _square(x=3.0) == _square(3.0, plus=0)
    assert CALLS == [3.0]


def test_an_argument_known_by_its_address_is_no_key(tmp_path, monkeypatch):
    CALLS.clear()
    monkeypatch.setenv(memo.ENV, str(tmp_path))
    arg = object()
    assert memo.key(_square, (arg,), {}) is None
    assert memo.key(_square, (3.0,), {}).startswith("_square-")
    with pytest.raises(TypeError):  # no arithmetic on an object: computed, not looked up
        _square(arg)
    assert CALLS == [arg] and not list(tmp_path.iterdir())


def test_the_headline_and_the_draws_read_the_results_chapters_runs(tmp_path, monkeypatch):
    monkeypatch.setenv(memo.ENV, str(tmp_path))
    ours = headline_items(256)
    names = sorted(p.name.split("-")[0] for p in tmp_path.iterdir())
    assert names == ["optimised_run", "optimised_run", "run_scenarios"]
    monkeypatch.setattr(scenarios, "run_sampler", None)  # read, not run: the same figures
    again = scenarios.run_scenarios(256, "fast", progress=False)
    assert ours == headline(again["scenarios"], note.SCENARIOS)
    div8 = scenarios.run_draws(256, [], progress=False, baselines=False)
    assert [r["cycles"] for r in div8] == [r["optimized_cycles"] for r in again["scenarios"]]
