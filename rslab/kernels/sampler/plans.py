"""How the sampler is compiled: :class:`KernelPlan`, the optimised plan, the baselines, the steps.

A plan says how each loop body becomes code (``naive``, ``local`` or
``pipelined``, :mod:`rslab.kernels.loops.emit`), how many packed vectors an
iteration takes, whether the glue code is bundled and whether DMAs are issued
ahead. The program (:mod:`rslab.kernels.sampler.program`) is the same for every
plan: same phases, same random numbers, same outputs.

**The baselines** (the note's two). Each must stay what it claims to be — the
natural translation a programmer writes first — so that the speedup measures
optimisation, not a baseline made slow on purpose. Do not add waits, serialise
independent work or drop the hardware loops here; if a baseline gets faster by
an honest simplification, that is fine and the measured speedup shrinks.

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

**The steps** (:func:`optimisation_steps`) from the first translation to the
optimised sampler: each keeps the previous step's choices and changes one thing,
so the cycles a step saves are the price of exactly one missing optimisation:

0. the first translation (:data:`ALL_ACCEPT_BASELINE`);
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

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class KernelPlan:
    """How the sampler is compiled: loop styles, iteration widths, glue and DMA policy.

    ``*_style`` is ``naive``, ``local`` or ``pipelined`` (``rslab.kernels.loops.emit``);
    ``rowmax_u`` / ``final_u`` packed vectors per loop iteration (the Exact path's
    final rows always take two: one Philox evaluation covers 512 tokens);
    ``sumexp_workers`` accumulators; ``land_fp32``: the row-max pass also stores the
    unpacked float32 halves (dataflow (a′) of chapter 3), and the sum-exp pass and
    the residual row read them instead of unpacking again (else dataflow (b));
    ``bundle_glue`` packs straight-line ops into bundles (else one op per bundle);
    ``prefetch`` issues the next row's DMA ahead and splits the q row into chunks
    (else each DMA is waited for when issued).
    """

    name: str
    rowmax_style: str = "pipelined"
    rowmax_u: int = 2
    sumexp_style: str = "pipelined"
    sumexp_workers: int = 4
    sumexp_u: int = 2
    final_style: str = "pipelined"
    final_u: int = 1
    land_fp32: bool = True
    bundle_glue: bool = True
    prefetch: bool = True


OPTIMISED = KernelPlan("optimised")

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
