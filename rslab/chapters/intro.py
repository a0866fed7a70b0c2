"""The introduction: the recommended draw's guarantee, and the headline cycles (ours beside the
note's)."""

import math
from decimal import Decimal

from rslab import note
from rslab.chapters.beyond import DETECT_TARGET
from rslab.chapters.fixed_point import guarantee_terms
from rslab.chapters.prose import ROUNDING, point_label, power
from rslab.chapters.results import headline
from rslab.kernels.sampler.scenarios import run_scenarios
from rslab.numerics.divergence_bound import ADVANTAGE, samples_no_test_sees
from rslab.numerics.fixed_invcdf import (
    MAX_WEIGHT,
    UNIFORM_BITS,
    UNIFORM_WORDS,
    WORDS_PER_ROW,
    chi2_bound,
)
from rslab.numerics.invcdf import LANES
from rslab.numerics.methods import RECOMMENDED, variant_name
from rslab.viz.results_plots import PHASE_LABELS
from rslab.viz.tables import markdown_table


def headline_runs(vocab: int, path: str = "fast") -> list[dict]:
    """The two test points' runs at ``vocab`` (:func:`run_scenarios`' rows)."""
    return run_scenarios(vocab, path, progress=False)["scenarios"]


def items_of(rows) -> list[dict]:
    """Per test point of ``rows``: optimised cycles against the floor and the speedups, beside
    the note's figures (:func:`rslab.chapters.results.headline`)."""
    return headline(rows, note.SCENARIOS)


def headline_items(vocab: int, path: str = "fast") -> list[dict]:
    """:func:`items_of` the two test points' runs at ``vocab``."""
    return items_of(headline_runs(vocab, path))


def test_points(rows) -> str:
    """The test points in words: "all-accept (S = 4 drafts, R = 8 requests) and …"."""
    return " and ".join(f"{point_label(r['name'])} (S = {r['S']} drafts, R = {r['R']} requests)"
                        for r in rows)


def slower_phases(row: dict) -> list[str]:
    """The phases (by their labels) in which a run's optimised program spends more cycles
    than its baseline."""
    base, opt = row["baseline_phases"], row["optimized_phases"]
    return [PHASE_LABELS[k] for k in PHASE_LABELS if opt.get(k, 0) > base.get(k, 0)]


def recommended(vocab: int = note.VOCAB) -> dict:
    """The recommended draw's name, shape and guarantee at ``vocab``: blocks of ``LANES``
    tokens, its uniforms and their bits; its χ² bound over every row of weights in
    [0, MAX_WEIGHT], the shares of it that the float32 block sums' own term and their cross
    term with the quantisation (2·sums·√(ratio·K₁)) make, and the bound with exact block sums
    (γ = 0: the quantisation and lattice levels alone) as a share of it; the samples below
    which no test's advantage exceeds ``ADVANTAGE``, and the largest advantage any test has
    at the book's target of ``DETECT_TARGET`` samples."""
    bound = chi2_bound(vocab)
    terms = guarantee_terms(vocab)
    exact_sums = terms["k1"] + terms["k2"] + terms["k1"] * terms["k2"]
    return {"name": variant_name(*RECOMMENDED), "bound": bound, "advantage": ADVANTAGE,
            "samples": samples_no_test_sees(bound), "target": DETECT_TARGET,
            "advantage_at_target": math.sqrt(DETECT_TARGET * bound / 2),
            "sums_share": terms["share_sums"], "exact_sums_share": exact_sums / terms["total"],
            "cross_share": 2 * terms["sums"] * terms["quant"] / terms["total"],
            "max_weight_log2": round(math.log2(MAX_WEIGHT)), "uniform_bits": UNIFORM_BITS,
            "uniforms": WORDS_PER_ROW // UNIFORM_WORDS, "lanes": LANES}


def ceil_to(x: float, decimals: int) -> str:
    """``x`` rounded up to ``decimals`` places, for a bound in prose: 0.03065 → "0.031"."""
    return f"{Decimal(repr(float(x))).quantize(Decimal(1).scaleb(-decimals), ROUNDING['up'])}"


def speed_words(speedup: float) -> str:
    """The optimised program against a baseline in words: "2.88× faster" or "1.07× slower"."""
    if speedup >= 1:
        return f"{speedup:.2f}× faster"
    return f"{1 / speedup:.2f}× slower"


ON_NOTE_CHIP = f"on its chip at V = {note.VOCAB:,}"
"""Where the note's figures beside ours were measured."""


def note_where(vocab: int) -> str:
    """Where the note's figures were measured, said against this table's ``vocab``."""
    return ON_NOTE_CHIP + ("" if vocab == note.VOCAB else f", not this table's {vocab:,}")


def model_table(items, vocab: int = note.VOCAB) -> str:
    """Markdown: per test point, the model's optimised cycles at ``vocab`` against the floor
    of its work, and the note's optimised cycles beside them."""
    return markdown_table([{"test point": point_label(it["name"]),
                            "optimised program (cycles)": f"{it['optimised']:,}",
                            "floor of its own work (cycles)": f"{it['floor']:,}",
                            "optimised / floor": f"{it['ratio']:.2f}",
                            f"the note's optimised program, {note_where(vocab)} (cycles)":
                                f"{it['note_optimised']:,}"}
                           for it in items])


def speedup_table(items, vocab: int = note.VOCAB) -> str:
    """Markdown: per test point and baseline, how much faster (or slower) the optimised
    program runs at ``vocab``, then the note's speedup against its own baseline, labelled."""
    ours = [{"test point": point_label(it["name"]), "baseline": base,
             "optimised program": speed_words(s)}
            for it in items for base, s in it["speedups"]]
    notes = [{"test point": point_label(it["name"]),
              "baseline": f"the note's {it['note_baseline']}, {note_where(vocab)}",
              "optimised program": speed_words(it["note_speedup"]) + " (the note's)"}
             for it in items]
    return markdown_table(ours + notes)


def scale_note(runs, items, vocab: int) -> tuple[str, dict]:
    """The sentence on the optimised programs that run slower than a baseline at ``vocab``
    (none at the note's vocabulary, the book's build checks), and those programs' slower
    phases, by test point."""
    speedups = {it["name"]: it["speedups"] for it in items}
    slower = {r["name"]: slower_phases(r) for r in runs
              if any(s < 1 for _, s in speedups[r["name"]])}
    if vocab == note.VOCAB:
        return ("At the note's vocabulary the optimised program is faster than every "
                "baseline at both test points."), slower
    return "".join(f"At V = {vocab:,}, this page's scale, the optimised {point_label(name)} "
                   f"program is slower than its baseline (its {words(phases)} phases take "
                   "longer than the baseline's); the book's build runs this page at the "
                   "note's V. "
                   for name, phases in slower.items()), slower


def gap_sentence(gap: dict) -> str:
    """The note's cycles beside the model's (:func:`note_gap`), in words."""
    aa, fr = gap["all-accept"], gap["first-reject"]
    if gap["comparable"]:
        return (f"On its chip the note's all-accept program took {aa['note']:,} cycles, "
                f"{aa['below_floor_pct']:.0f} % below the floor of the model's program "
                f"({aa['floor']:,}): no program doing this program's work runs that fast on "
                "the model, so the two machines, or the two programs, differ. At first-step "
                f"reject it is the other way round: the model's {fr['model']:,} cycles "
                f"against the note's {fr['note']:,}.")
    return (f"The note measured {aa['note']:,} (all-accept) and {fr['note']:,} (first-step "
            f"reject) cycles on its chip, at V = {note.VOCAB:,}; at this page's V the "
            "model's cycles are no measure of those. Built at the book's scale, this "
            "paragraph sets the two side by side.")


def power_of_two(exponent: int) -> str:
    """2^exponent for prose: "2¹²⁰"."""
    return power(2, exponent)


def words(names) -> str:
    """"a", "a and b", "a, b and c"."""
    names = list(names)
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def note_gap(items, vocab: int) -> dict:
    """The note's optimised cycles beside the model's, per test point: ``comparable`` only at
    the note's vocabulary; then how far the note's cycles sit below (positive) or above the
    floor of the model's program, in per cent."""
    out = {"comparable": vocab == note.VOCAB}
    for it in items:
        out[it["name"]] = {"note": it["note_optimised"], "model": it["optimised"],
                           "floor": it["floor"],
                           "below_floor_pct": 100 * (1 - it["note_optimised"] / it["floor"])}
    return out
