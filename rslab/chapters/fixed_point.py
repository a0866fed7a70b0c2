"""The chapter "An exact draw in integers": the fixed-point inverse CDF worked by hand, its
guarantee derived term by term, its domain, its worst row and its cycles.

* :func:`worked_example`: a row of four tokens in two blocks of two lanes, drawn with
  ``F = 7`` fraction bits (every quantised value below 2^8) and 8-bit uniforms: every
  uniform of every level enumerated through :func:`rslab.numerics.fixed_invcdf.pick`, the
  token law as the product of the two levels' counts, and the same law from
  :func:`rslab.numerics.fixed_invcdf.exact_counts` on the row laid out in blocks of 128;
  :func:`level_table` and :func:`example_table` show it; :func:`live_example` redraws it at
  other widths (:func:`fraction_control`, :func:`uniform_control`);
* :func:`guarantee_terms`: the bound of :func:`rslab.numerics.fixed_invcdf.chi2_bound`
  computed one term at a time, so that a reader can redo it;
* :func:`rounding_figures`: the rounding row of :func:`rslab.numerics.adversary.rounding_row`
  against the bound; :func:`fixed_worst` the recommended draw's worst row over the
  adversarial families;
* :func:`domain_error`: what the draw says to a weight outside its domain;
  :func:`order_and_scale` (with :func:`order_scale_table`): the rounding row reordered and
  rescaled, its χ² against the bound;
* :func:`guarantee_grid` and :func:`least_enough`: the bound for other widths;
* :func:`chapter_sampler`, :func:`fixed_cycles` and :func:`all_accept_extra`: its cycles in
  the whole sampler, its tail per row, and its cycles against Div8's at another vocabulary.
"""

from __future__ import annotations

import math

import numpy as np

from rslab.kernels.sampler.scenarios import run_draws
from rslab.numerics import adversary, fixed_invcdf
from rslab.numerics import divergence_bound as db
from rslab.numerics.methods import RECOMMENDED, variant_name
from rslab.viz import draw_plots as dp
from rslab.viz.controls import int_control
from rslab.viz.tables import markdown_table

EXAMPLE_WEIGHTS = (112.0, 56.0, 31.9, 0.1)
EXAMPLE_LANES = 2
EXAMPLE_FRACTION_BITS = 7
"""F: the largest value of a level becomes an integer in [128, 256), eight bits."""
EXAMPLE_UNIFORM_BITS = 8
SAMPLER_DRAWS = (("invcdf", "wide48"), RECOMMENDED)
"""The draws the chapter runs in the whole sampler beside Div8."""
GRID_FRACTION_BITS = (32, 40, 48, 52, 56, 62)
GRID_UNIFORM_BITS = (32, 48, 56, 64, 72, 80, 96, 128)


# ----------------------------------------------------------------- the worked example

def _level(title: str, names: list[str], x, fraction_bits: int, uniform_bits: int) -> dict:
    """One exact level over the values ``x``: its integers, prefix sums, the uniforms that
    choose each value (first, last) and their count, enumerated with ``pick``."""
    x = np.asarray(x, np.float32)
    c = fixed_invcdf.quantise(x, fraction_bits)
    q = fixed_invcdf.total(c)
    span = 1 << uniform_bits
    picked = np.array([fixed_invcdf.pick(c, u, uniform_bits) for u in range(span)])
    counts = np.bincount(picked, minlength=x.size)
    first = [int(np.flatnonzero(picked == i)[0]) if counts[i] else None for i in range(x.size)]
    last = [int(np.flatnonzero(picked == i)[-1]) if counts[i] else None for i in range(x.size)]
    e = fixed_invcdf.max_exponent(x)
    quanta = float(x.sum(dtype=np.float64)) * 2.0 ** (fraction_bits - e)
    return {"title": title, "names": names, "values": x.astype(float).tolist(),
            "exponent": e, "quantised": [int(v) for v in c],
            "prefix": np.cumsum([int(v) for v in c]).tolist(), "total": q,
            "first": first, "last": last, "counts": counts.tolist(),
            "formula_counts": [int(n) for n in fixed_invcdf.level_counts(
                x, fraction_bits, uniform_bits)],
            "P": (counts / span).tolist(), "p": (x / x.sum(dtype=np.float64)).tolist(),
            "quanta": quanta, "bound": fixed_invcdf.level_bound(x.size, quanta, uniform_bits)}


def worked_example(weights=EXAMPLE_WEIGHTS, lanes: int = EXAMPLE_LANES,
                   fraction_bits: int = EXAMPLE_FRACTION_BITS,
                   uniform_bits: int = EXAMPLE_UNIFORM_BITS) -> dict:
    """The two-level draw on a short row, enumerated (see the module docstring)."""
    w = np.asarray(weights, np.float32)
    if w.size % lanes:
        raise ValueError(f"weights: {w.size} tokens do not fill blocks of {lanes} lanes")
    blocks = w.reshape(-1, lanes)
    sums = blocks.sum(axis=1, dtype=np.float32)
    levels = [_level("level 1: the block", [f"block {b}" for b in range(len(blocks))], sums,
                     fraction_bits, uniform_bits)]
    levels += [_level(f"level 2, inside block {b}", [f"token {b * lanes + i}" for i in
                                                      range(lanes)], blk, fraction_bits,
                      uniform_bits) for b, blk in enumerate(blocks)]
    span = 1 << uniform_bits
    counts = [levels[0]["counts"][t // lanes] * levels[1 + t // lanes]["counts"][t % lanes]
              for t in range(w.size)]
    row = np.zeros(-(-w.size // lanes) * fixed_invcdf.LANES, np.float32)
    at = [(t // lanes) * fixed_invcdf.LANES + t % lanes for t in range(w.size)]
    row[at] = w
    package, _ = fixed_invcdf.exact_counts(row, fraction_bits, uniform_bits)
    p = w / w.sum(dtype=np.float64)
    P = np.array(counts) / span**2
    return {"weights": w.astype(float).tolist(), "lanes": lanes, "fraction_bits": fraction_bits,
            "uniform_bits": uniform_bits, "levels": levels, "counts": counts,
            "P": P.tolist(), "p": p.tolist(), "chi2": db.chi2(P, p),
            "package_counts": [int(package[i]) for i in at],
            "tokens": w.size}


def live_example(weights=EXAMPLE_WEIGHTS):
    """``draw(fraction_bits, uniform_bits)``: the worked example's two levels at those widths,
    captioned with its χ² against the exact weights and its bound's shape."""
    def draw(fraction_bits: int, uniform_bits: int):
        ex = worked_example(weights, fraction_bits=fraction_bits, uniform_bits=uniform_bits)
        never = [f"token {t}" for t, n in enumerate(ex["counts"]) if n == 0]
        caption = (f"F = {fraction_bits}, b = {uniform_bits}: χ² against the exact weights "
                   f"{ex['chi2']:.2g}; "
                   + (f"{', '.join(never)} never drawn" if never else "every token drawn"))
        return dp.plot_two_levels(ex), caption
    return draw


def fraction_control(frames=(4, 7, 10)):
    """The example's fixed-point fraction bits F, 2 to 14 (7 first shown)."""
    return int_control("fraction_bits", 2, 14, frames=frames, value=7, label="fraction bits F")


def uniform_control(frames=(6, 8, 11)):
    """The example's uniform bits b, 4 to 12 (8 first shown)."""
    return int_control("uniform_bits", 4, 12, frames=frames, value=8, label="uniform bits b")


def level_table(level: dict) -> str:
    """One level of the worked example as Markdown."""
    return markdown_table([{
        "value": level["names"][i], "x": f"{level['values'][i]:g}",
        f"c = ⌊x·2^(7−E)⌋, E = {level['exponent']}": str(level["quantised"][i]),
        "prefix C": str(level["prefix"][i]),
        "uniforms U": (f"{level['first'][i]} … {level['last'][i]}" if level["counts"][i]
                       else "none"),
        "N": str(level["counts"][i]), "P = N/256": f"{level['P'][i]:.4f}",
        "p": f"{level['p'][i]:.4f}"} for i in range(len(level["names"]))])


def example_table(example: dict) -> str:
    """The worked example's token law: the two levels' counts and their product."""
    lanes = example["lanes"]
    rows = []
    for t in range(example["tokens"]):
        b, lane = divmod(t, lanes)
        n1, n2 = example["levels"][0]["counts"][b], example["levels"][1 + b]["counts"][lane]
        rows.append({"token": str(t), "weight": f"{example['weights'][t]:g}",
                     "N₁ (its block)": str(n1), "N₂ (its lane)": str(n2),
                     "N₁·N₂ of 65,536": f"{n1 * n2:,}", "P": f"{example['P'][t]:.5f}",
                     "p": f"{example['p'][t]:.5f}",
                     "P − p": f"{example['P'][t] - example['p'][t]:+.5f}"})
    return markdown_table(rows)


# ----------------------------------------------------------------- the guarantee

def guarantee_terms(vocab: int) -> dict:
    """The bound for every row of ``vocab`` tokens, one term at a time (the derivation at the
    top of :mod:`rslab.numerics.fixed_invcdf`), the bound itself, and the range of the block
    level's quanta (the log2 of its top; whether both levels' worst is the smallest, 2^62)."""
    u, depth = fixed_invcdf.UNIT_ROUNDOFF, fixed_invcdf.TREE_DEPTH
    gamma = depth * u / (1 - depth * u)
    n_blocks = -(-int(vocab) // fixed_invcdf.LANES)
    k1 = fixed_invcdf.worst_level_bound(n_blocks)
    ratio = (1 + gamma) / (1 - gamma)
    sums = gamma / (1 - gamma)
    root = math.sqrt(ratio * k1) + sums
    chi1 = root**2
    k2 = fixed_invcdf.worst_level_bound(min(fixed_invcdf.LANES, int(vocab)))
    total = chi1 + k2 + chi1 * k2
    smallest, top = fixed_invcdf.quanta_range(n_blocks)
    # which end of S is worse: the lattice's n·S_top/2^(2b) against the quantisation's
    # ~n/2^F at the smallest; they meet at b = F + (log2 n + 1)/2 (module docstring)
    f = fixed_invcdf.FRACTION_BITS
    widths = range(f, 2 * f + 1)
    smallest_from = next(b for b in widths if all(
        fixed_invcdf.level_bound(n_blocks, smallest, c) >= fixed_invcdf.level_bound(
            n_blocks, top, c) for c in range(b, widths[-1] + 1)))
    return {"vocab": int(vocab), "blocks": n_blocks, "gamma": gamma, "sums": sums,
            "top_quanta_bits": math.log2(top),
            "crossover_bits": f + (math.log2(n_blocks) + 1) / 2,
            "smallest_worst_from": smallest_from,
            "k1_top": fixed_invcdf.level_bound(n_blocks, top),
            "worst_at_smallest": k1 == fixed_invcdf.level_bound(n_blocks, smallest) and k2 ==
            fixed_invcdf.level_bound(min(fixed_invcdf.LANES, int(vocab)), smallest),
            "ratio": ratio, "k1": k1, "quant": math.sqrt(ratio * k1), "root": root,
            "chi1": chi1, "k2": k2, "total": total, "share_sums": sums**2 / total,
            "bound": fixed_invcdf.chi2_bound(vocab),
            "samples": db.samples_no_test_sees(total)}


def guarantee_table(t: dict) -> str:
    """:func:`guarantee_terms` as the steps a reader can redo."""
    rows = [("γ", "7u/(1 − 7u), u = 2⁻²⁴", t["gamma"]),
            ("√χ²(π′‖π)", "γ/(1 − γ): the block sums' own error", t["sums"]),
            (f"K₁ = K({t['blocks']:,}, 2⁶²)", "β²nS + α² + 2αβn: quantisation and lattice",
             t["k1"]),
            ("√((1+γ)/(1−γ)·K₁)", "the same, measured against the exact block masses",
             t["quant"]),
            ("χ²₁", "(√((1+γ)/(1−γ)·K₁) + γ/(1 − γ))²: the block's choice", t["chi1"]),
            ("K₂ = K(128, 2⁶²)", "the lane's choice inside the block", t["k2"]),
            ("χ²", "χ²₁ + K₂ + χ²₁·K₂: the two levels chained", t["total"])]
    return markdown_table([{"term": a, "what it is": b, "value": f"{v:.4g}"}
                           for a, b, v in rows])


ROUNDING_ROW = "the rounding row"
POWER_OF_TWO = "scaled by 2⁻¹⁰⁰"


def order_and_scale(vocab: int) -> list[dict]:
    """The rounding row of ``vocab`` tokens (:func:`rslab.numerics.adversary.rounding_row`)
    reordered and rescaled, each with its exact χ² and its share of the bound: the bound holds
    for all of them, the law does not stay the same (a power-of-two scale keeps it while no
    weight is subnormal)."""
    row = adversary.rounding_row(vocab)
    bound = fixed_invcdf.chi2_bound(vocab)
    rows = [(ROUNDING_ROW, row),
            ("its tokens in a random order", row[np.random.default_rng(0).permutation(row.size)]),
            ("its tokens sorted, heaviest first", np.sort(row)[::-1].copy()),
            ("scaled by 3", row * np.float32(3)),
            (POWER_OF_TWO, row * np.float32(2.0**-100)),
            ("scaled by 2⁻¹¹⁰ (its light weights subnormal)", row * np.float32(2.0**-110))]
    out = []
    for name, w in rows:
        chi = fixed_invcdf.exact_chi2(w)
        out.append({"row": name, "chi2": chi, "share": chi / bound})
    return out


def order_scale_table(rows: list[dict]) -> str:
    """:func:`order_and_scale` as Markdown."""
    return markdown_table([{"row": r["row"], "exact χ²": f"{r['chi2']:.3g}",
                            "share of the bound": f"{r['share']:.2g}"} for r in rows])


def domain_error() -> str:
    """The draw's error for a weight above its domain (2^121)."""
    try:
        fixed_invcdf.check_weights(np.array([1.0, 2.0**121], np.float32))
    except ValueError as exc:
        return str(exc)
    raise AssertionError("a weight of 2^121 was accepted")


def rounding_figures(vocab: int) -> dict:
    """The rounding row's exact χ² (:func:`rslab.numerics.fixed_invcdf.exact_chi2`) at 256
    tokens and at ``vocab``, each against the bound for that many tokens."""
    small, here = (fixed_invcdf.exact_chi2(adversary.rounding_row(v)) for v in (256, vocab))
    return {"chi2_256": small, "share_256": small / fixed_invcdf.chi2_bound(256),
            "chi2": here, "share": here / fixed_invcdf.chi2_bound(vocab),
            "samples": db.samples_no_test_sees(here)}


def fixed_worst(vocab: int) -> dict:
    """The recommended draw's worst row over the adversarial families."""
    return adversary.search((RECOMMENDED,), vocab)[0]


def guarantee_grid(vocab: int, fraction_bits=GRID_FRACTION_BITS,
                   uniform_bits=GRID_UNIFORM_BITS) -> list[dict]:
    """The fixed-point draw's χ² bound for every row of ``vocab`` tokens at each fixed-point
    width F and uniform width b (:func:`rslab.numerics.fixed_invcdf.chi2_bound`, each level
    at its worst quanta)."""
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


# ----------------------------------------------------------------- cycles

def chapter_sampler(vocab: int) -> list[dict]:
    """Div8, the float32 inverse CDF and the recommended draw in the whole sampler at both
    test points (no baselines)."""
    return run_draws(vocab, SAMPLER_DRAWS, progress=False, baselines=False)


def fixed_cycles(sampler: list[dict], points: dict) -> dict:
    """Per test point: the three draws' cycles and speed against Div8, and the fixed-point
    tail's cycles per row (its row phase over the float32 inverse CDF's, per request;
    ``points``: test point name → its ``TestPoint``)."""
    by = {(r["draw"], r["name"]): r for r in sampler}
    fixed = variant_name(*RECOMMENDED)
    out = {}
    for name, phase in (("all-accept", "bonus"), ("first-reject", "residual")):
        rows = {d: by[(d, name)] for d in ("gumbel-div8", "invcdf-wide48", fixed)}
        tail = (rows[fixed]["phases"][phase] - rows["invcdf-wide48"]["phases"][phase]) \
            / points[name].R
        out[name] = {"rows": rows, "tail_per_row": tail, "phase": phase}
    return out


def all_accept_extra(vocab: int) -> tuple[float, float]:
    """The recommended draw's whole sampler at all-accept against Div8's at ``vocab``: its
    extra cycles per request (one bonus row each), and its speed against Div8's."""
    from rslab.fixtures import TEST_POINTS

    rows = {r["draw"]: r for r in run_draws(vocab, (RECOMMENDED,), progress=False,
                                            baselines=False) if r["name"] == "all-accept"}
    fixed = rows[variant_name(*RECOMMENDED)]
    extra = (fixed["cycles"] - rows["gumbel-div8"]["cycles"]) / TEST_POINTS["all-accept"].R
    return extra, fixed["vs_div8"]
