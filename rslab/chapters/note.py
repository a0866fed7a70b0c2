"""The appendix "The design note, summarised": the note's figures as one table."""

import math

from IPython.display import Markdown

from rslab import note
from rslab.chapters.prose import point_label
from rslab.viz.tables import markdown_table

FIGURES = (
    ("Validation sample count of the Div8 step", f"2^{note.SAMPLES.bit_length() - 1}"),
    ("Exact zeros of the noise, scaled first layer, at that count", f"{note.ZEROS_SCALED:,}"),
    ("… predicted by the second log's plateau", f"≈{note.PLATEAU_PREDICTION:,}"),
    ("… predicted by the first log's quantisation", f"≈{note.FIRST_LOG_PREDICTION}"),
    ("Second-layer input behind the zeros (per-value trace)", f"≈{note.SECOND_LAYER_INPUT}"),
    ("Outputs where the chip's simulator and its silicon disagreed",
     f"{note.SILICON_MISMATCHES} of 2^20"),
    ("64-bin χ² of Div8 at 10^9 samples", f"{note.CHI2_DIV8:.2f}"),
    ("64-bin χ² of Div14 at 10^9 samples",
     f"{note.CHI2_DIV14:.2f} ({note.CHI2_CHANGE_PCT:+.2f} %)"),
    ("Mean per-seed KS, Div8 → Div14 (finals)", f"{note.KS_CHANGE_PCT:+.2f} %"),
    ("Divisor search: screening, finals (seeds × samples)",
     f"{note.SCREENING[0]} seeds × 10^{math.log10(note.SCREENING[1]):.0f}, "
     f"{note.FINALS[0]} seeds × 10^{math.log10(note.FINALS[1]):.0f}"),
    ("Sum-exp loop: ResMII, exp2 latency, cycles per iteration",
     f"{note.SUMEXP_RESMII}, {note.EXP2_LATENCY}, {note.SUMEXP_II} (no stall)"),
    ("Residual-Gumbel loop body", f"{note.RESIDUAL_BODY} cycles, about "
                                  f"{note.RESIDUAL_STALLS} stall per pass"),
    *((f"Sampler, {point_label(name)} (V = {note.VOCAB:,}): its baseline → optimised cycles",
       f"{base:,} → {opt:,} ({base / opt:.2f}×)") for name, (base, opt) in note.SCENARIOS.items()),
)
"""(what was measured, the note's figure), grouped by subject: numerics, then cycles."""


def figures_table() -> Markdown:
    """The note's figures, each with what it measures."""
    rows = [{"What the note gives": what, "The note's figure": value}
            for what, value in FIGURES]
    return Markdown(markdown_table(rows))
