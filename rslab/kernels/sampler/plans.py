"""The baselines the optimised sampler is measured against (DESIGN §6, the note's two baselines).

They are the *same program structure* as :mod:`rslab.kernels.sampler.program` (same
phases, same random numbers, same outputs); only the :class:`KernelPlan`
differs. Each must stay what it claims to be — the natural translation a
programmer writes first — so that the speedup measures optimisation, not a
baseline made slow on purpose. Do not add waits, serialise independent work
or drop the hardware loops here; if a baseline gets faster by an honest
simplification, that is fine and the measured speedup shrinks.

* :data:`ALL_ACCEPT_BASELINE` — the first semantically correct translation,
  the note's baseline for all-accept. Every loop is written the obvious way:
  one packed vector per iteration, one accumulator, and each op in its own
  bundle in program order (``naive`` loops), so one vector walks through the
  whole dependency chain (load → unpack → subtract → multiply → exp2 push →
  pop → add) before the next starts; the row is read as packed BF16 by every
  pass (dataflow (b), the note's); straight-line code is one op per bundle;
  each DMA is issued when its data is needed and waited for at once.
* :data:`FIRST_REJECT_BASELINE` — the note's "already partly optimised"
  baseline for first-step reject: the acceptance check is the optimised one
  (pipelined row max and sum-exp, bundled glue, DMAs ahead), the residual and
  bonus rows are plain loops (``local``: list-scheduled within an iteration,
  not software-pipelined).
"""

from rslab.kernels.sampler.program import KernelPlan, build_kernel

ALL_ACCEPT_BASELINE = KernelPlan(
    "first translation", rowmax_style="naive", rowmax_u=1, sumexp_style="naive",
    sumexp_workers=1, sumexp_u=1, final_style="naive", final_u=1, land_fp32=False,
    bundle_glue=False, prefetch=False)
FIRST_REJECT_BASELINE = KernelPlan("acceptance pipelined, residual not", final_style="local")

BASELINES = {"all-accept": ALL_ACCEPT_BASELINE, "first-reject": FIRST_REJECT_BASELINE}


def baseline_plan(scenario: str) -> KernelPlan:
    """The baseline plan of a test point (``all-accept`` or ``first-reject``)."""
    if scenario not in BASELINES:
        raise ValueError(f"scenario must be one of {sorted(BASELINES)}, got {scenario!r}")
    return BASELINES[scenario]


def build_baseline(layout, path: str = "fast", scenario: str = "all-accept", model=None):
    """The baseline program of ``scenario`` for ``layout`` on ``path``."""
    return build_kernel(layout, path, baseline_plan(scenario), model)
