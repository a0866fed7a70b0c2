"""The exercises with one numeric or yes/no answer: id, question, variant, oracle, points.

Each exercise is asked on a **variant** of what the book's prose works out (another latency,
slot count, divisor, seed or tail mass), so the number in the prose is not the answer. Its
``params`` are the public variant (what ``check()`` uses in a student's session), ``book``
the parameters of the prose (the number a student might copy; ``None`` when the prose
states none). The instructor's file may change the parameters (``[exercise.ID]``): the
hidden variant. ``page`` is the exercise's label in the pages today; ``id`` is stable
(the pages may rename their labels: keep the id).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from rslab.exercises import oracles as o

KINDS = ("integer", "number", "yes/no")


@dataclass(frozen=True)
class Exercise:
    """One checked exercise (see the module docstring); ``rel_tol`` for a ``number``."""

    id: str
    page: str
    question: str
    oracle: Callable
    params: dict
    book: dict | None
    kind: str = "integer"
    points: float = 1.0
    rel_tol: float = 0.0
    notes: str = field(default="", compare=False)

    def text(self, params: dict) -> str:
        """The question as the variant ``params`` asks it."""
        return self.question.format(**params)


EXERCISES = {e.id: e for e in (
    Exercise("machine-chains", "02_machine: machine-chains",
             "With VALU latency {valu_latency} and {valu_slots} VALU slots, what is the fewest "
             "independent dependency chains (interleaved, {valu_slots} ops a bundle, each round "
             "in new bundles) that keep every VALU slot busy?", o.chains_to_fill_valu,
             {"valu_latency": 4, "valu_slots": 3},
             {"valu_latency": 3, "valu_slots": 2}),
    Exercise("machine-in-flight", "02_machine: machine-in-flight",
             "With the SFU's hold-issue of {sfu_hold} cycle and latency {sfu_latency}, how many "
             "exp2 results are in flight when pushes issue at full rate?",
             o.results_in_flight, {"sfu_latency": 21, "sfu_hold": 1},
             {"sfu_latency": 13, "sfu_hold": 1}),
    Exercise("machine-strides", "02_machine: machine-strides",
             "On a VMEM of {vmem_banks} banks, how many strides from 1 to {max_stride} words "
             "make vld.s conflict exactly {degree}-way?", o.strides_with_conflict,
             {"vmem_banks": 32, "degree": 4, "max_stride": 64},
             {"vmem_banks": 128, "degree": 4, "max_stride": 64}),
    Exercise("machine-branch", "02_machine: machine-branch",
             "Replace the hardware loop of the naive sum-exp (ex.sumexp_naive) by a counter: "
             "sli s7, N before it, ssub s7, s7, 1 in the loop's second bundle and "
             "bnz s7, top in a bundle of its own at its end. With a taken-branch penalty of "
             "{branch_penalty} cycles, how many cycles does an iteration cost more than with "
             "the hardware loop?", o.branch_loop_cost, {"branch_penalty": 4},
             {"branch_penalty": 2}, points=2.0),
    Exercise("dataflow-third-slot", "03_dataflow: dataflow-hold",
             "On a machine whose SFU push holds the unit {sfu_hold} extra cycle(s) "
             "(sfu_hold = {sfu_hold}), does a third VALU slot alone make dataflow (a′) "
             "faster?", o.third_slot_speeds_up_a1, {"sfu_hold": 2}, {"sfu_hold": 0},
             kind="yes/no", points=2.0),
    Exercise("dataflow-unroll", "03_dataflow: dataflow-unroll",
             "How many packed vectors per iteration does the row-max pass (emit_rowmax) take "
             "on a machine with VALU latency {valu_latency}?", o.rowmax_unroll,
             {"valu_latency": 8}, {"valu_latency": 3}),
    Exercise("pipelining-hold", "04_pipelining: pipelining-ex1",
             "With hold-issue {sfu_hold}, what II does the modulo scheduler find for the "
             "chapter's sum-exp loop?", o.sumexp_ii, {"sfu_hold": 3}, {"sfu_hold": 2}),
    Exercise("pipelining-workers", "04_pipelining: pipelining-ex5",
             "At VALU latency {valu_latency}, how many workers (1, 2 or 4) does the sum-exp "
             "loop need for its RecMII to be at most its ResMII?", o.workers_for_resmii,
             {"valu_latency": 6}, {"valu_latency": 3}),
    Exercise("pipelining-stages", "04_pipelining: pipelining-stages",
             "At SFU latency {sfu_latency}, how many stages does the chapter's sum-exp "
             "schedule have?", o.sumexp_stages, {"sfu_latency": 25}, {"sfu_latency": 13}),
    Exercise("results-valu-slots", "09_results: results-third-valu",
             "With {valu_slots} VALU slots, what II does the residual Gumbel row's loop reach "
             "(the study's loop, one packed vector an iteration: draw_loops.draw_loop)?",
             o.residual_row_ii, {"valu_slots": 4}, {"valu_slots": 3}),
    Exercise("algorithm-emitted", "01_algorithm: algorithm-ex1",
             "With acceptance probability α = {alpha} at every position and S = {drafts} "
             "drafts, what is the expected number of tokens a request emits?",
             o.expected_emitted, {"alpha": 0.7, "drafts": 5}, None, kind="number",
             rel_tol=1e-6),
    Exercise("algorithm-key-words", "01_algorithm: algorithm-ex5",
             "How many of the two Philox key words differ between seeds {seed_a} and "
             "{seed_b}?", o.philox_words_differing,
             {"seed_a": 5, "seed_b": 5 + 2**32 + 1}, {"seed_a": 0, "seed_b": 2**32}),
    Exercise("div8-tau", "05_div8: div8-halve-tau",
             "Predict the scaled pipeline's count of g = 0 per 2^20 draws if τ were "
             "multiplied by {tau_scale} (within 5 %).", o.zeros_per_2_20,
             {"tau_scale": 0.25}, {"tau_scale": 0.5}, kind="number", rel_tol=0.05,
             points=2.0),
    Exercise("div8-atom", "05_div8: div8-atom-ks",
             "What is the mass of the Div{divisor} atom: the fraction of lattice draws whose "
             "second layer fl(t/{divisor}) falls on the fast log's zero plateau (counted "
             "exactly, within 0.3 %)?", o.divisor_atom, {"divisor": 16}, {"divisor": 8},
             kind="number", rel_tol=0.003),
    Exercise("div14-differ", "06_div14: div14-div4-div8",
             "How many lattice points' second layers differ between Div{a} and Div{b} "
             "(search.second_layer)?", o.divisors_differ, {"a": 4, "b": 16},
             {"a": 8, "b": 16}),
    Exercise("div14-power", "06_div14: div14-power",
             "How many samples does a 64-bin χ² test at α = {alpha} need to reject "
             "Div{divisor} with probability {power} (within 1 %)?", o.samples_to_reject,
             {"divisor": 8, "power": 0.8, "alpha": 0.001},
             {"divisor": 8, "power": 0.5, "alpha": 0.001}, kind="number", rel_tol=0.01),
    Exercise("beyond-divisor-ks", "07_beyond: beyond-div64",
             "What is the exact KS distance of Div{divisor}'s noise over the lattice (within "
             "0.5 %)?", o.divisor_ks, {"divisor": 24}, {"divisor": 64}, kind="number",
             rel_tol=0.005),
    Exercise("beyond-tail", "07_beyond: beyond-half-tail",
             "On targets.peaked({tail}), what probability does the Fast Gumbel-max draw (Div8) "
             "give to the tail tokens together (within 1 %)?", o.peaked_tail_probability,
             {"tail": 0.3}, {"tail": 0.5}, kind="number", rel_tol=0.01, points=2.0),
    Exercise("cores-bytes-term", "10_many_cores: many-cores-bytes-term",
             "On a chip of {cores} cores (each DMA engine 128 B/cycle, latency 200) whose HBM "
             "moves {hbm_bytes_per_cycle} B/cycle, how many cycles is the bytes term of the "
             "chip's bound (the larger of its dma and hbm terms, each one DMA latency plus the "
             "bytes over the engines together or over the HBM) at the first-step reject, "
             "R = 2, V = 154,880?", o.chip_bytes_term,
             {"cores": 6, "hbm_bytes_per_cycle": 512},
             {"cores": 8, "hbm_bytes_per_cycle": 1152}),
)}
"""Every checked exercise by its stable id."""
