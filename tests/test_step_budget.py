"""A sampler program's step budget grows with its work: a long run is not an endless loop."""

import pytest

from rslab.fixtures import VOCAB
from rslab.kernels.sampler.layout import STEP_ROWS, step_budget
from rslab.machine.simulator import DEFAULT_MAX_STEPS, MAX_STEPS_LIMIT


def test_the_budget_is_the_default_up_to_the_notes_all_accept_work_then_grows_with_it():
    assert step_budget(1, 16) == DEFAULT_MAX_STEPS
    assert step_budget(40, 154_880) == DEFAULT_MAX_STEPS
    assert step_budget(40, 154_881) == 2 * DEFAULT_MAX_STEPS
    assert step_budget(64 * 5, 154_880) == 8 * DEFAULT_MAX_STEPS
    assert step_budget(10**6, 10**6) == MAX_STEPS_LIMIT
    assert STEP_ROWS == 40 * 154_880


@pytest.mark.heavy
def test_sixty_four_requests_on_one_core_run_to_the_end():
    """The chip bench's grid point that once hit the default budget (all-accept, R = 64,
    one core, the note's vocabulary)."""
    from rslab.kernels.sampler.chip_curves import curve_point

    point = curve_point("all-accept", 64, 1, "sequential", VOCAB)
    assert point["tokens_match_reference"] and point["cycles"] > 1_000_000
