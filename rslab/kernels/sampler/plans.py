"""How the sampler is compiled: :class:`KernelPlan`, the optimised plan, the baselines, the steps.

A plan says how each loop body becomes code (``naive``, ``paired``, ``local`` or
``pipelined``, :mod:`rslab.kernels.loops.emit`), how many packed vectors an
iteration takes, whether the glue code is bundled and whether DMAs are issued
ahead, and which of the final rows' bodies is used. The program
(:mod:`rslab.kernels.sampler.program`) is the same for every plan: same phases,
same random numbers, same outputs.

**The baselines** (the note's two, and a second first translation). Each must
stay what it claims to be — the natural translation a programmer writes first —
so that the speedup measures optimisation, not a baseline made slow on purpose.
Do not add waits, serialise independent work or drop the hardware loops here; if
a baseline gets faster by an honest simplification, that is fine and the
measured speedup shrinks.

* :data:`ALL_ACCEPT_BASELINE` — the first semantically correct translation,
  the note's baseline for all-accept. Every loop is written the obvious way:
  one packed vector per iteration, one accumulator, and each op in its own
  bundle in program order (``naive`` loops), so one vector walks through the
  whole dependency chain (load → unpack → subtract → multiply → exp2 push →
  pop → add) before the next starts; the row is read as packed BF16 by every
  pass (dataflow (b), the note's); straight-line code is one op per bundle;
  each DMA is issued when its data is needed and waited for at once.
* :data:`PAIRED_BASELINE` — the same first translation as the machine chapter
  writes sum-exp: the ops of a packed vector's two halves side by side (``paired``
  loops: ops of equal dependence depth share a bundle, both exp2 pushes go before
  the pops; two sum-exp accumulators, one per half). The note does not say which
  of the two its first correct implementation was; the results show the speedup
  against both, so the reader sees how much of a speedup is the baseline's choice.
* :data:`FIRST_REJECT_BASELINE` — the note's "already partly optimised"
  baseline for first-step reject: the acceptance check is the optimised one
  (pipelined row max and sum-exp, bundled glue, DMAs ahead, the first row in
  chunks), the residual and bonus rows are plain loops (``local``: list-scheduled
  within an iteration, not software-pipelined) of their natural body: one packed
  vector per iteration, one argmax state per stream, p recomputed from the logits.

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
5. the row max lands float32 halves (dataflow (a′));

then the steps that lower the bound itself (fewer ops on the binding unit):

6. the final rows' token counters renamed by modulo variable expansion
   (:mod:`rslab.schedule.expand`) instead of pinned: one counter per stream, no
   counter-plus-offset add;
7. the argmax over the block of an iteration's streams, the winning iteration
   recomputed once per row (:mod:`rslab.kernels.ops.block_argmax`);
8. the sum-exp pass stores e over the landed row on its idle store slot, and the
   residual row loads e instead of recomputing it;
9. the program's first row fetched in chunks, so its row max starts on the
   first chunk (and its transfer starts before the tables have landed);
10. the q row of a residual in chunks sized to the residual loop's pace (each lands
    before the loop reaches it): the faster residual row no longer waits;
11. one software-pipelined loop over a row that arrives in chunks, waiting for each
    chunk inside it, instead of one loop per chunk (each filling and draining its
    pipeline);
12. two packed vectors per final-row iteration on the Fast path (the Exact path
    already takes two: one Philox block);
13. the Exact path's loop-invariant Philox ops hoisted out of the final rows
    (c1, c2, c3 are constant over a row): the optimised kernel.
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
    (else each DMA is waited for when issued); ``rotate_counters``: the final rows'
    token counters, one per stream, renamed by modulo variable expansion (else one
    pinned counter plus offsets); ``argmax``: ``streams`` (a best score and token per
    stream) or ``block`` (one per iteration, the winner recomputed); ``store_e``: the
    sum-exp pass stores e over the landed row and the residual row loads it;
    ``first_row_chunks``: DMAs of the program's first row (with ``prefetch``); ``q_fit``:
    a residual's q row after its first tenth in chunks sized so that each lands before
    the residual loop needs it (else a fifth, then the rest); ``gate_chunks``: a pipelined
    loop over a row arriving in chunks waits for each chunk inside (no drain between
    chunks) instead of running one loop per chunk;
    ``hoist_philox``: the Exact path computes the row-invariant Philox ops once per row.
    """

    name: str
    rowmax_style: str = "pipelined"
    rowmax_u: int = 2
    sumexp_style: str = "pipelined"
    sumexp_workers: int = 4
    sumexp_u: int = 2
    final_style: str = "pipelined"
    final_u: int = 2
    land_fp32: bool = True
    bundle_glue: bool = True
    prefetch: bool = True
    rotate_counters: bool = True
    argmax: str = "block"
    store_e: bool = True
    first_row_chunks: int = 4
    q_fit: bool = True
    gate_chunks: bool = True
    hoist_philox: bool = True

    def __post_init__(self):
        if self.argmax not in ("streams", "block"):
            raise ValueError(f"argmax must be 'streams' or 'block', got {self.argmax!r}")
        if self.store_e and not self.land_fp32:
            raise ValueError("store_e stores e over the landed row: it needs land_fp32")
        value = self.first_row_chunks
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 4:
            raise ValueError(f"first_row_chunks must be an int in 1..4 (free DMA tags), got "
                             f"{value!r}")


OPTIMISED = KernelPlan("optimised")

_NATURAL_ROWS = {"final_u": 1, "rotate_counters": False, "argmax": "streams", "store_e": False,
                 "q_fit": False, "hoist_philox": False}
"""The final rows' natural body: what the baselines and the first steps use."""

ALL_ACCEPT_BASELINE = KernelPlan(
    "first translation", rowmax_style="naive", rowmax_u=1, sumexp_style="naive",
    sumexp_workers=1, sumexp_u=1, final_style="naive", land_fp32=False,
    bundle_glue=False, prefetch=False, first_row_chunks=1, gate_chunks=False, **_NATURAL_ROWS)
PAIRED_BASELINE = replace(ALL_ACCEPT_BASELINE, name="first translation, halves paired",
                          rowmax_style="paired", sumexp_style="paired", final_style="paired",
                          sumexp_workers=2)
FIRST_REJECT_BASELINE = replace(OPTIMISED, name="acceptance pipelined, residual not",
                                final_style="local", **_NATURAL_ROWS)

BASELINES = {"all-accept": ALL_ACCEPT_BASELINE, "first-reject": FIRST_REJECT_BASELINE}
ALSO_COMPARED = {"all-accept": (PAIRED_BASELINE,), "first-reject": ()}
"""Baselines a test point is also measured against: for all-accept, the other first
translation (the note's speedup is against its first correct implementation)."""


def baseline_plan(scenario: str) -> KernelPlan:
    """The baseline plan of a test point (``all-accept`` or ``first-reject``)."""
    if scenario not in BASELINES:
        raise ValueError(f"scenario must be one of {sorted(BASELINES)}, got {scenario!r}")
    return BASELINES[scenario]


def optimisation_steps() -> list[tuple[str, KernelPlan]]:
    """``(what changed, plan)`` from the first translation to the optimised kernel."""
    changes = [
        ("glue bundled, DMAs ahead", {"bundle_glue": True, "prefetch": True}),
        ("loops list-scheduled", {"rowmax_style": "local", "sumexp_style": "local",
                                  "final_style": "local"}),
        ("loops software-pipelined", {"rowmax_style": "pipelined", "sumexp_style": "pipelined",
                                      "final_style": "pipelined"}),
        ("2 vectors / iteration, 4 accumulators", {
            "rowmax_u": OPTIMISED.rowmax_u, "sumexp_u": OPTIMISED.sumexp_u,
            "sumexp_workers": OPTIMISED.sumexp_workers}),
        ("float32 landed (a′)", {"land_fp32": True}),
        ("counters renamed (MVE)", {"rotate_counters": True}),
        ("block argmax, winner recomputed", {"argmax": "block"}),
        ("sum-exp stores e for the residual", {"store_e": True}),
        ("first row in chunks", {"first_row_chunks": OPTIMISED.first_row_chunks}),
        ("q chunks sized to the residual loop", {"q_fit": True}),
        ("chunk waits inside the loop", {"gate_chunks": True}),
        ("2 vectors / final-row iteration", {"final_u": OPTIMISED.final_u}),
        ("Philox invariants hoisted", {"hoist_philox": True}),
    ]
    steps = [("first translation", ALL_ACCEPT_BASELINE)]
    for name, change in changes:
        steps.append((name, replace(steps[-1][1], name=name, **change)))
    if replace(steps[-1][1], name=OPTIMISED.name) != OPTIMISED:
        raise AssertionError("the last step must be the optimised plan")
    return steps
