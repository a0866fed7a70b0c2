"""The design note's figures: what it measured on its chip, in one place.

The book began as a design note on rejection sampling for speculative decoding on a
proprietary accelerator. Its figures were measured on that chip (or its simulator); they
are the note's, never ours, and every page that shows one labels it so. The modules that
compare the model with the note import them from here; the appendix "The design note"
lists them with what each means.
"""

SAMPLES = 1 << 20
"""The note's validation sample count (2^20)."""
ZEROS_SCALED = 8627
"""Exact zeros of the noise with the scaled first layer and no divisor, at 2^20 samples."""
PLATEAU_PREDICTION = 8609
"""The note's prediction of those zeros from the second log's plateau."""
FIRST_LOG_PREDICTION = 0.5
"""The note's prediction of those zeros from the first log's quantisation."""
SECOND_LAYER_INPUT = 1.0000002384
"""The second layer's input the note's per-value trace found behind the zeros."""
SILICON_MISMATCHES = 57
"""FP32 outputs on which the note's simulator and its silicon disagreed (of 2^20)."""

CHI2_SAMPLES = 10**9
"""Sample count of the note's 64-bin χ² measurements."""
CHI2_DIV8 = 851.50
"""The note's aggregate 64-bin χ² of the Div8 pipeline at 10^9 samples."""
CHI2_DIV14 = 752.78
"""The note's aggregate 64-bin χ² of Div14 at 10^9 samples."""
CHI2_CHANGE_PCT = -11.59
"""The note's change of the aggregate χ², Div8 → Div14."""
KS_CHANGE_PCT = -65.03
"""The note's change of the mean per-seed KS distance, Div8 → Div14 (finals)."""
BEST_DIVISOR = 14.0
"""The divisor the note chose after its finals."""
SCREENING = (3, 10**8)
"""The note's screening: seeds × samples per seed."""
FINALS = (10, 10**8)
"""The note's finals: seeds × samples per seed."""

SUMEXP_II = 10
"""The note's sum-exp loop: a 10-cycle static loop with no steady-state stall."""
SUMEXP_RESMII = 10
"""The note's ResMII of the sum-exp body, below the exp2 latency."""
EXP2_LATENCY = 13
"""The note's exp2 result latency, in cycles."""
RESIDUAL_BODY = 28
"""The note's residual-Gumbel body: 28 cycles ..."""
RESIDUAL_STALLS = 1
"""... with about one stall cycle per pass."""

VOCAB = 154_880
"""The vocabulary of the note's results (BF16 logits)."""
POINTS = {"all-accept": (4, 8), "first-reject": (4, 2)}
"""The note's two test points: (S drafts per request, R requests)."""
SCENARIOS = {"all-accept": (1_530_302, 128_453), "first-reject": (55_896, 38_032)}
"""The note's measured cycles (baseline, optimised) at its two test points: all-accept
with S = 4 drafts and R = 8 requests against the first correct implementation,
first-step reject with S = 4 and R = 2 against an already partly optimised baseline."""
