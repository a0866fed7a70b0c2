"""The introduction: the book's headline table, computed (our figures beside the note's)."""

from rslab import note
from rslab.chapters.results import headline
from rslab.kernels.sampler.scenarios import run_scenarios


def headline_items(vocab: int, path: str = "fast") -> list[dict]:
    """The two test points at ``vocab``: optimised cycles against the floor and the speedups
    (:func:`rslab.chapters.results.headline`)."""
    return headline(run_scenarios(vocab, path, progress=False)["scenarios"], note.SCENARIOS)
