"""From the first translation to the optimised sampler, one change at a time.

Each step is a :class:`rslab.kernels.sampler.program.KernelPlan` that keeps the
previous step's choices and changes one thing, so the cycles a step saves are
the price of exactly one missing optimisation:

0. the first translation (:data:`rslab.kernels.sampler.plans.ALL_ACCEPT_BASELINE`);
1. straight-line code bundled, DMAs issued ahead into three row buffers;
2. loop bodies list-scheduled (``local``): independent ops of one iteration
   share bundles, iterations still run one after the other;
3. software pipelining (``pipelined``): iterations overlap at the II of the
   modulo schedule, still one packed vector and one accumulator per iteration;
4. more independent work per iteration: two packed vectors in the row max and
   sum-exp, four sum-exp accumulators (the recurrence of the sum no longer binds);
5. the row max lands float32 halves (dataflow (a′)): the optimised kernel.
"""

from __future__ import annotations

from dataclasses import replace

from tqdm import tqdm

from rslab.kernels.sampler.plans import ALL_ACCEPT_BASELINE
from rslab.kernels.sampler.program import OPTIMISED, KernelPlan
from rslab.kernels.sampler.run import run_sampler


def optimisation_steps() -> list[tuple[str, KernelPlan]]:
    """``(what changed, plan)`` from the first translation to the optimised kernel."""
    glue = replace(ALL_ACCEPT_BASELINE, name="glue bundled, DMAs ahead", bundle_glue=True,
                   prefetch=True)
    local = replace(glue, name="loops list-scheduled", rowmax_style="local",
                    sumexp_style="local", final_style="local")
    pipelined = replace(local, name="loops software-pipelined", rowmax_style="pipelined",
                        sumexp_style="pipelined", final_style="pipelined")
    wider = replace(pipelined, name="2 vectors / iteration, 4 accumulators",
                    rowmax_u=OPTIMISED.rowmax_u, sumexp_u=OPTIMISED.sumexp_u,
                    sumexp_workers=OPTIMISED.sumexp_workers)
    landed = replace(wider, name="float32 landed (a′)", land_fp32=True)
    steps = [("first translation", ALL_ACCEPT_BASELINE), (glue.name, glue),
             (local.name, local), (pipelined.name, pipelined), (wider.name, wider),
             (landed.name, landed)]
    if replace(landed, name=OPTIMISED.name) != OPTIMISED:
        raise AssertionError("the last step must be the optimised plan")
    return steps


def run_steps(inputs, path: str = "fast", *, seed: int = 0, progress: bool = True) -> list[dict]:
    """Cycles, cycles per phase and tokens of every step on ``inputs``."""
    rows = []
    steps = optimisation_steps()
    first = None
    for label, plan in tqdm(steps, desc="optimisation steps", disable=not progress,
                            leave=False):
        run = run_sampler(inputs, path, plan, seed=seed)
        first = first or run.cycles
        rows.append({"step": label, "cycles": int(run.cycles),
                     "speedup": first / run.cycles,
                     "phases": {k: int(v) for k, v in run.phases.items()},
                     "tokens_match_reference": bool(run.tokens_match)})
    return rows
