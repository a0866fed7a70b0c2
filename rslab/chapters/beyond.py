"""The chapter "Beyond the note": its table, its live figures and its Monte Carlo check.

* :func:`draw_table`: one row per draw with its cycles (:mod:`rslab.kernels.studies.draw_table`,
  the whole sampler's from :func:`rslab.kernels.sampler.scenarios.run_draws`)
  beside the noise and token figures of :mod:`rslab.numerics.draw_comparison`, and the
  design note's Div8 and Div14 rows (the note's measured χ², nothing else of ours);
  :func:`shown_table` the columns the page shows; :func:`worst_cases` each draw's worst
  target over the adversarial families, and :func:`target_answer` the verdict from it;
* :func:`tail_figure` (with :func:`tail_control`): the live figure that recomputes the
  exact token laws of the peaked target at a tail mass; :func:`method_figure` (with
  :func:`method_control`) redraws one draw's relative errors from the computed laws;
* :func:`argmax_montecarlo` draws ``rows`` residual rows of a target with
:mod:`rslab.reference`'s Fast-path residual draw (request r = 0..rows−1 of one
seed, so every row has its own key and words) and compares the tokens with
:func:`rslab.numerics.token_law.run_law` on a partition of the vocabulary into,
per run, its first token and the rest (ties favour the first: that is where an
error in the tie rule would show).
"""

from __future__ import annotations

import time

import numpy as np
from scipy import stats as sps

from rslab import note
from rslab.kernels.sampler.scenarios import run_draws
from rslab.kernels.studies.draw_table import ROW_DRAWS, rowmax_per_packed
from rslab.numerics import adversary, fixed_invcdf
from rslab.numerics import draw_comparison as dc
from rslab.numerics.methods import RECOMMENDED, draw, resolve_noise, sampler_draws, variant_name
from rslab.numerics.targets import VOCAB
from rslab.numerics.token_law import run_law
from rslab.reference import path_math, residual_draw
from rslab.scale import by_scale
from rslab.viz import draw_plots as dp
from rslab.viz.controls import choice_control, float_control

CHUNK_ROWS = 512
NOTE_ROWS = ({"draw": "the note's Div8", "note_chi2": note.CHI2_DIV8},
             {"draw": "the note's Div14", "note_chi2": note.CHI2_DIV14})
DETECT_TARGET = 1e10
"""The issue's target: no bias a blind test sees before 10^10 samples."""
TAIL_STEP = 1e-3


def page_vocab(scale: str | None = None) -> int:
    """The rows' vocabulary at the current (or the given) scale (the note's at book scale)."""
    return by_scale(quick=16_384, book=VOCAB, full=VOCAB, scale=scale)


def swept_draws(scale: str | None = None) -> tuple:
    """The draws of the tail-mass figure at the current (or the given) scale."""
    book = (("gumbel", "div8"),) + dc.INVCDF_VARIANTS + (RECOMMENDED,)
    return by_scale(quick=(("gumbel", "div8"), ("invcdf", "wide48"), RECOMMENDED), book=book,
                    full=book, scale=scale)


def page_noises(scale: str | None = None) -> tuple:
    """The noises whose lattice statistics the page tabulates."""
    quick = (("gumbel", "div8"), ("gumbel", "div32"), ("gumbel", "rangered"), ("race", "scaled"),
             ("race", "naive"))
    return by_scale(quick=quick, book=dc.ARGMAX_VARIANTS, full=dc.ARGMAX_VARIANTS, scale=scale)


def page_law_draws(scale: str | None = None) -> tuple:
    """The draws whose exact token laws the page computes on its three targets."""
    quick = (("gumbel", "div8"), ("race", "scaled"), ("race", "naive"))
    argmax = by_scale(quick=quick, book=dc.ARGMAX_VARIANTS, full=dc.ARGMAX_VARIANTS, scale=scale)
    return argmax + dc.INVCDF_VARIANTS + (RECOMMENDED,)


def page_sampler_draws(scale: str | None = None) -> tuple:
    """The draws the page runs in the whole sampler (Div8 always among them)."""
    quick = (("gumbel", "div8"), ("race", "scaled"), ("invcdf", "wide48"), RECOMMENDED)
    return by_scale(quick=quick, book=sampler_draws(), full=sampler_draws(), scale=scale)


def page_sampler(vocab: int, scale: str | None = None) -> list[dict]:
    """The whole sampler with the page's draws at both test points (no baselines)."""
    return run_draws(vocab, page_sampler_draws(scale), progress=False, baselines=False)


SHORT_ROW = 16_384
"""A short row, where a per-row constant weighs more than at the note's vocabulary."""


def short_row_sampler(sampler: list[dict], vocab: int) -> list[dict]:
    """Div8 and the recommended draw in the whole sampler at :data:`SHORT_ROW` tokens: the
    page's own rows when it runs at that vocabulary, else two new runs per test point."""
    if vocab == SHORT_ROW:
        return [r for r in sampler if r["draw"] in ("gumbel-div8", variant_name(*RECOMMENDED))]
    return run_draws(SHORT_ROW, (RECOMMENDED,), progress=False, baselines=False)


def swept_tails() -> tuple:
    """The tail masses the tail-mass figure precomputes at the current scale (down to 10^-6,
    where the float32 inverse CDF and the argmax draws fail)."""
    return by_scale(quick=(1e-2, 0.1), book=(1e-6, 1e-5, 1e-4) + dc.TAIL_MASSES,
                    full=(1e-6, 1e-5, 1e-4) + dc.TAIL_MASSES)


def samples_text(n: float) -> str:
    """A number of samples for a sentence: ``inf`` (no bias to see) in words."""
    return f"{n:.2e} samples" if np.isfinite(n) else "no number of samples"


def argmax_montecarlo(target, method: str, noise, rows: int, *, seed: int = 1) -> dict:
    """χ² of sampled against exact cell counts (see the module docstring)."""
    if isinstance(rows, bool) or not isinstance(rows, (int, np.integer)) or rows < 1:
        raise ValueError(f"rows must be a positive integer, got {rows!r}")
    noise = resolve_noise(method, noise)
    if draw(method).score is None:
        raise ValueError(f"method must be an argmax draw ('gumbel' or 'race'), got {method!r}")
    start = time.perf_counter()
    math = path_math("fast", draw(method).pipeline(noise))
    w = target.row()
    tokens = np.concatenate([
        residual_draw(method, noise, math, seed, req, 0, np.broadcast_to(w, (req.size, w.size)))[0]
        for req in np.array_split(np.arange(rows), -(-rows // CHUNK_ROWS))])
    law = run_law(target, method, noise)
    run = np.searchsorted(np.cumsum(target.counts), tokens, side="right")
    first = tokens == target.starts[run]
    drawn = np.concatenate([np.bincount(run[first], minlength=target.levels),
                            np.bincount(run[~first], minlength=target.levels)])
    cells = np.concatenate([law.first, law.total - law.first])
    live = cells > 0
    expected = rows * cells
    chi = float(((drawn[live] - expected[live]) ** 2 / expected[live]).sum())
    df = int(live.sum()) - 1
    return {"rows": rows, "chi2": chi, "df": df, "p": float(sps.chi2.sf(chi, df)),
            "drawn_where_exact_is_zero": int(drawn[~live].sum()), "drawn": drawn.tolist(),
            "expected": expected.tolist(), "seconds": time.perf_counter() - start}


def draw_table(loops: list[dict], noise: list[dict], tokens: list[dict], vocab: int,
               sampler: list[dict] = ()) -> list[dict]:
    """The chapter's table: per draw, cycles per packed vector of the bonus (with the row-max
    pass where one is needed) and residual rows, the whole sampler's cycles at both test
    points (``sampler``: rows of :func:`rslab.kernels.sampler.scenarios.run_draws`), the
    noise bias, the token TV on each target, the samples a blind test needs on the worst
    target, the tail and the reproducibility. Draws without a loop (Div14: ``t/14`` needs a
    divide; the Exact path) have no cycles, and the naive race no sampler program."""
    by_loop = {(r["draw"], r["kind"]): r for r in loops}
    whole = {(r["draw"], r["name"]): r["cycles"] for r in sampler}
    by_noise = {r["name"]: r for r in noise}
    rowmax = rowmax_per_packed(vocab)
    out = []
    names = [variant_name(m, n) for m, n in ROW_DRAWS]
    names += [n for n in dict.fromkeys([r["name"] for r in noise] + [t["method"] for t in tokens])
              if n not in names]
    for name in names:
        method = name.split("-")[0] if "-" in name else "gumbel"
        row = {"draw": name, "bonus": None, "residual": None}
        if (name, "bonus") in by_loop:
            row["bonus"] = by_loop[(name, "bonus")]["cycles_per_packed"] + (
                rowmax if draw(method).linear else 0.0)
            row["residual"] = by_loop[(name, "residual")]["cycles_per_packed"]
        row["all_accept"] = whole.get((name, "all-accept"))
        row["first_reject"] = whole.get((name, "first-reject"))
        n = by_noise.get(name)
        row["expected_chi2"] = n["expected_chi2"] if n else None
        row["noise_detect"] = n["detect"] if n else None
        row["g_max"] = n["g_max"] if n else None
        mine = [t for t in tokens if t["method"] == name]
        row["tv"] = {t["target"]: t["tv"] for t in mine}
        row["detect_blind"] = min((t["detect_blind"] for t in mine), default=None)
        row["detect_aimed"] = min((t["detect_aimed"] for t in mine), default=None)
        row["reproducibility"] = draw(method).reproducibility
        out.append(row)
    return out + [dict(r) for r in NOTE_ROWS]


def shown_table(rows: list[dict], peaked: str) -> list[dict]:
    """The columns of :func:`draw_table` the page shows (``peaked``: the peaked target's name)."""
    out = []
    for r in rows:
        tv = r.get("tv", {})
        out.append({"draw": r["draw"], "bonus cycles": r.get("bonus"),
                    "residual cycles": r.get("residual"),
                    "sampler all-accept": r.get("all_accept"),
                    "sampler first-reject": r.get("first_reject"),
                    "E[χ²] 10^9": r.get("expected_chi2", r.get("note_chi2")),
                    "TV peaked": tv.get(peaked), "TV zipf": tv.get("zipf"),
                    "TV flat": tv.get("flat"), "blind detect": r.get("detect_blind"),
                    "aimed detect": r.get("detect_aimed"), "largest g": r.get("g_max"),
                    "reproducible": r.get("reproducibility")})
    return out


COSTS = ("all_accept", "first_reject")
"""What a draw must not cost more of than Div8: the whole sampler's cycles at each test
point."""


def page_worst_draws(scale: str | None = None) -> tuple:
    """The draws whose worst targets the page searches: at quick scale the float32 inverse
    CDFs and the fixed-point one; else every sampler draw too."""
    quick = (("invcdf", "u24"), ("invcdf", "wide48"), RECOMMENDED)
    return by_scale(quick=quick, book=sampler_draws() + (RECOMMENDED,),
                    full=sampler_draws() + (RECOMMENDED,), scale=scale)


def worst_cases(vocab: int, draws=None, executor=None) -> list[dict]:
    """Each draw's worst target over :func:`rslab.numerics.adversary.family_rows` at
    ``vocab`` (:func:`rslab.numerics.adversary.search`), with its guarantee where it has one."""
    rows = adversary.search(draws or page_worst_draws(), vocab, executor=executor)
    for r in rows:
        r["guarantee"] = fixed_invcdf.chi2_bound(vocab) if r["draw"] == variant_name(
            *RECOMMENDED) else None
    return rows


def argmax_search_note(argmax_worst: list[dict], vocab: int) -> str:
    """What the worst-case search covered for the argmax draws, in a sentence."""
    if not argmax_worst:
        return ("At this scale the search covers the inverse CDFs only; the book scale adds "
                "Gumbel-max and the race.")
    total = len(adversary.family_rows(vocab))
    searched = min(w["rows"] for w in argmax_worst)
    if searched == total:
        return "Gumbel-max and the race are searched on every row too."
    return (f"Gumbel-max and the race are searched on {searched} of the {total} rows (those "
            f"whose exact argmax law fits this machine), so their worst is a lower bound on "
            f"their worst.")


def target_answer(rows: list[dict], worst: list[dict]) -> dict:
    """The verdict from the worst case: Div8's row; the draws no test of any kind can tell
    from their targets before 10^10 samples on their worst target (the divergence bound),
    with whether their whole sampler costs no more cycles than Div8's at both test points
    (None where the draw has no sampler program); and the draw of the largest bound."""
    base = next(r for r in rows if r["draw"] == "gumbel-div8")
    by_name = {r["draw"]: r for r in rows}
    meets = []
    for w in worst:
        if w["bound_samples"] < DETECT_TARGET:
            continue
        row = by_name.get(w["draw"], {})
        cheap = None if any(row.get(c) is None for c in COSTS) else all(
            row[c] <= base[c] for c in COSTS)
        meets.append({"draw": w["draw"], "bound_samples": w["bound_samples"],
                      "no_more_cycles": cheap})
    return {"base": base, "meets": meets, "best": max(worst, key=lambda w: w["bound_samples"])}


def verdict_text(meet: dict, vocab: int) -> str:
    """One draw of :func:`target_answer`'s ``meets``, with what its cycles say at ``vocab``."""
    cost = {True: "no more cycles than Div8", False: "more cycles than Div8",
            None: "no sampler program yet"}[meet["no_more_cycles"]]
    return f"{meet['draw']} ({cost} at both test points, V = {vocab:,})"


GRID_FRACTION_BITS = (32, 40, 48, 52, 56, 62)
GRID_UNIFORM_BITS = (32, 48, 56, 64, 72, 80, 96, 128)


def guarantee_grid(vocab: int, fraction_bits=GRID_FRACTION_BITS,
                   uniform_bits=GRID_UNIFORM_BITS) -> list[dict]:
    """The fixed-point draw's χ² bound for every row of ``vocab`` tokens at each fixed-point
    width F and uniform width b (:func:`rslab.numerics.fixed_invcdf.chi2_bound`)."""
    return [{"fraction_bits": f, "uniform_bits": b,
             "chi2_bound": fixed_invcdf.chi2_bound(vocab, f, b)}
            for f in fraction_bits for b in uniform_bits]


def least_enough(grid: list[dict], chi2: float) -> dict:
    """The narrowest fixed-point width that meets ``chi2`` with the widest uniform of the grid,
    and the narrowest uniform that meets it with the widest fixed point (``ValueError`` when
    no width of the grid meets it)."""
    wide_f = max(g["fraction_bits"] for g in grid)
    wide_b = max(g["uniform_bits"] for g in grid)
    met = [g for g in grid if g["chi2_bound"] <= chi2]
    fs = [g["fraction_bits"] for g in met if g["uniform_bits"] == wide_b]
    bs = [g["uniform_bits"] for g in met if g["fraction_bits"] == wide_f]
    if not fs or not bs:
        raise ValueError(f"chi2: no width of the grid keeps the bound at {chi2:g}")
    return {"fraction_bits": min(fs), "uniform_bits": min(bs)}


def tail_control(tails) -> object:
    """The tail mass of the peaked target: from the smallest of 0.001 and ``tails`` (in
    steps of it) to 0.5 live, ``tails`` precomputed."""
    value = 0.1 if 0.1 in tails else tails[0]
    lo = min(TAIL_STEP, *tails)
    return float_control("tail", lo, 0.5, step=lo, frames=tails, value=value,
                         label="tail mass", fmt=lambda t: f"{t:g}")


def tail_figure(variants, vocab: int, sweep: dict | None = None):
    """``draw(tail)`` for a live figure: the samples a blind test needs on ``peaked(tail)``
    per draw, from the exact token laws, taken from ``sweep`` (:func:`dc.tail_sweep`) when it
    holds ``tail``, else computed."""
    sweep = sweep or {}

    def draw(tail: float):
        tail = round(float(tail), 6)
        here = sweep if all(tail in s["tail"] for s in sweep.values()) and sweep else \
            dc.tail_sweep(variants, (tail,), vocab=vocab)
        detect = {n: s["detect"][s["tail"].index(tail)] for n, s in here.items()}
        text = f"tail mass {tail:g}, V = {vocab:,}; samples to detect: " + ", ".join(
            f"{n} {d:.3g}" for n, d in detect.items())
        return dp.draw_tail_frame(tail, here), text

    return draw


def method_control(methods, value: str = "invcdf-wide48") -> object:
    """The draw whose relative errors are shown (every draw of the computed laws)."""
    methods = list(dict.fromkeys(methods))
    return choice_control("method", methods, value=value if value in methods else methods[0],
                          label="draw")


def method_figure(laws: dict, chosen_targets: dict):
    """``draw(method)`` for a live figure: one draw's relative errors on each target, from
    the computed laws ``laws`` ((method, target) → row of :func:`dc.token_rows`)."""

    def draw(method: str):
        tvs = ", ".join(f"{name} {laws[(method, t.name)]['tv']:.2e}"
                        for name, t in chosen_targets.items())
        return dp.draw_method_frame(method, laws, chosen_targets), f"{method}: TV {tvs}"

    return draw
