"""Hypothesis profiles of the property tests: ``quick`` (``make test``: a fixed seed, modest
example counts) and ``long`` (``make fuzz``: ``RSLAB_FUZZ=long``, many thousands of examples,
the seed given to pytest with ``--hypothesis-seed``)."""

import os

from hypothesis import HealthCheck, settings

PROFILE = os.environ.get("RSLAB_FUZZ", "quick")
EXAMPLES = {
    "quick": {"programs": 300, "sampler": 150, "numerics": 150, "cli": 60, "schedules": 20,
              "pipeline": 300, "kernels": 10},
    "long": {"programs": 20_000, "sampler": 5_000, "numerics": 5_000, "cli": 2_000,
             "schedules": 400, "pipeline": 5_000, "kernels": 300},
}
if PROFILE not in EXAMPLES:
    raise ValueError(f"RSLAB_FUZZ must be one of {sorted(EXAMPLES)}, got {PROFILE!r}")


def examples(kind: str) -> settings:
    """The settings of one property test: its example count under the current profile."""
    return settings(max_examples=EXAMPLES[PROFILE][kind], deadline=None, database=None,
                    derandomize=PROFILE == "quick", print_blob=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much])
