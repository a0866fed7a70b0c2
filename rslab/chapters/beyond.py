"""The chapter "Beyond the note": the draws' verdict, their bias and their cycles, as tables.

* the verdict: :func:`bias_rows` per draw (the fewest samples at which a test is known to see
  its bias, on the worst row the search found or on the page's three targets; the samples
  below which no test can gain 0.1, on that row or, for a draw with a guarantee, on every
  row) and :func:`verdict_rows` beside the whole sampler's cycles; :func:`verdict_table`
  shows them;
* the page's other tables with human headers: :func:`noise_table`, :func:`token_table`,
  :func:`lattice_table`, :func:`worst_table`, :func:`loops_table`, :func:`sampler_table`;
* :func:`never_drawn`: the float32 inverse CDF's tokens that are never drawn on a row of
  BF16 logits, and the exact test that sees them; :func:`lost_by_vector` splits them by
  whether their vector is ever drawn (float32 resolution inside a drawn vector, the block
  choice's 2^-24 step for a vector never drawn);
* :func:`tail_figure` (with :func:`tail_control`): the live figure that recomputes the
  exact token laws of the peaked target at a tail mass; :func:`method_figure` (with
  :func:`method_control`) redraws one draw's relative errors from the computed laws;
* :func:`argmax_montecarlo` draws ``rows`` residual rows of a target with
  :mod:`rslab.reference`'s Fast-path residual draw (request r = 0..rows−1 of one
  seed, so every row has its own key and words) and compares the tokens with
  :func:`rslab.numerics.token_law.run_law` on a partition of the vocabulary into,
  per run, its first token and the rest (ties favour the first: that is where an
  error in the tie rule would show), a run whose cell expects fewer than 5 draws taken
  whole (one count in a cell that expects ε adds 1/ε to χ² and would decide the test);
  its p-value is simulated from the exact law, and it says which relative change of the
  tail's mass it would see half the time;
"""

from __future__ import annotations

import time

import numpy as np
from scipy import stats as sps

from rslab.chapters.prose import and_list, figure
from rslab.kernels.sampler.scenarios import run_draws
from rslab.numerics import adversary, appearance, fixed_invcdf, invcdf
from rslab.numerics import divergence_bound as db
from rslab.numerics import draw_comparison as dc
from rslab.numerics.detect import ALPHA
from rslab.numerics.methods import RECOMMENDED, draw, resolve_noise, sampler_draws, variant_name
from rslab.numerics.montecarlo import lattice_uniforms
from rslab.numerics.stats import gumbel2_cdf
from rslab.numerics.targets import VOCAB
from rslab.numerics.token_law import exact_token_probs, noise_atoms, run_law
from rslab.reference import path_math, residual_draw
from rslab.scale import by_scale
from rslab.viz import draw_plots as dp
from rslab.viz.controls import choice_control, float_control
from rslab.viz.tables import markdown_table

CHUNK_ROWS = 512
MC_SIMULATIONS = 100_000
"""Multinomial samples of the exact law behind :func:`argmax_montecarlo`'s p-value."""
DETECT_TARGET = 1e10
"""The book's target: no bias a test sees before 10^10 samples (ten times the note's longest
χ² measurement of its noise)."""
TAIL_STEP = 1e-3
REPRODUCIBLE = {"gumbel": "any split of the row", "race": "any split of the row",
                "invcdf": "the same order of sums", "fixed": "the same block sums"}
"""What a draw's tokens stay bit-exact under (:attr:`rslab.numerics.methods.Draw.reproducibility`
in a table's words)."""


def page_vocab(scale: str | None = None) -> int:
    """The rows' vocabulary at the current (or the given) scale (the note's at book scale)."""
    return by_scale(quick=16_384, book=VOCAB, full=VOCAB, scale=scale)


def swept_draws(scale: str | None = None) -> tuple:
    """The draws of the tail-mass figure at the current (or the given) scale."""
    book = (("gumbel", "div8"),) + dc.INVCDF_VARIANTS + (RECOMMENDED,)
    return by_scale(quick=(("gumbel", "div8"), ("invcdf", "wide48"), RECOMMENDED), book=book,
                    full=book, scale=scale)


def top_ties(vocab: int, noise: str = "div8") -> dict:
    """On a flat row of ``vocab`` tokens with Gumbel-max's Fast ``noise`` (its lattice law):
    the probability that the row's largest score is shared by two tokens or more (``tie``,
    exact: Σ over the atoms a of F(a)^V − F(a⁻)^V − V·m_a·F(a⁻)^(V−1)) and the distance
    between the noise's two largest values (``top_gap``)."""
    atoms = noise_atoms("gumbel", noise, "fast")
    mass = atoms.counts / atoms.counts.sum()
    below = np.concatenate([[0.0], np.cumsum(mass)[:-1]])
    tie = (below + mass) ** vocab - below**vocab - vocab * mass * below ** (vocab - 1)
    return {"tie": float(tie.sum()), "top_gap": float(atoms.values[-1] - atoms.values[-2])}


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


def page_worst_draws(scale: str | None = None) -> tuple:
    """The draws whose worst targets the page searches: at quick scale the float32 inverse
    CDFs and the fixed-point one; else every sampler draw too."""
    quick = (("invcdf", "u24"), ("invcdf", "wide48"), RECOMMENDED)
    return by_scale(quick=quick, book=sampler_draws() + (RECOMMENDED,),
                    full=sampler_draws() + (RECOMMENDED,), scale=scale)


def worst_cases(vocab: int, draws=None, executor=None) -> list[dict]:
    """Each draw's worst target over :func:`rslab.numerics.adversary.family_rows` at
    ``vocab`` (:func:`rslab.numerics.adversary.search`)."""
    return adversary.search(draws or page_worst_draws(), vocab, executor=executor)


def swept_tails() -> tuple:
    """The tail masses the tail-mass figure precomputes at the current scale (down to 10^-6,
    where the float32 inverse CDF and the argmax draws fail)."""
    return by_scale(quick=(1e-2, 0.1), book=(1e-6, 1e-5, 1e-4) + dc.TAIL_MASSES,
                    full=(1e-6, 1e-5, 1e-4) + dc.TAIL_MASSES)


def token_agreement(outputs: dict, a: str, b: str) -> dict:
    """How often two draws agree on the token each request draws (the one after its accepted
    drafts; ``outputs``: method → the reference's output on the same inputs and seed): the
    draws, the same token, the same vector of 128 tokens."""
    oa, ob = outputs[a], outputs[b]
    if not np.array_equal(oa.num_accepted, ob.num_accepted):
        raise ValueError(f"outputs: {a} and {b} accept different drafts (not the same inputs)")
    rows = np.arange(oa.tokens.shape[0])
    ta, tb = oa.tokens[rows, oa.num_accepted], ob.tokens[rows, ob.num_accepted]
    lanes = fixed_invcdf.LANES
    return {"drawn": int(rows.size), "tokens": int(np.sum(ta == tb)),
            "blocks": int(np.sum(ta // lanes == tb // lanes))}


def bound_text(n: float) -> str:
    """The bound's sample size in a table, rounded down (below it no test gains the
    advantage): ``< 1`` where it says nothing."""
    return "< 1" if n is not None and n < 1 else figure(n, 3, rounding="down")


def samples_text(n: float) -> str:
    """A number of samples for a sentence: ``inf`` (no bias to see) in words."""
    return f"{figure(n)} samples" if np.isfinite(n) else "no number of samples"


# ----------------------------------------------------------------- the verdict

def worst_seen(w: dict) -> tuple[float, str]:
    """The fewest samples at which a test sees a worst row's bias half the time, and which
    test: a χ² test over tokens, vectors or bins where its approximation holds, or the exact
    appearance test (NaN and '' if none does)."""
    tests = {"χ² over tokens": w["detect_tokens"], "χ² over vectors": w["detect_vectors"],
             "χ² over bins": w["detect_bins"], "appearance test": w["detect_appear"]}
    valid = {k: v for k, v in tests.items() if not np.isnan(v)}
    if not valid:
        return float("nan"), ""
    name = min(valid, key=valid.get)
    return valid[name], name


def search_names(table_targets, vocab: int) -> dict:
    """Each target's name → the name of the search's row with the same weights
    (:func:`rslab.numerics.adversary.family_rows`), or None where the search has no such row."""
    rows = adversary.family_rows(vocab)
    return {t.name: next((n for n, r in rows.items() if np.array_equal(r, t.row())), None)
            for t in table_targets}


def bias_rows(worst: list[dict], token: list[dict], vocab: int) -> dict:
    """Per draw (name → row): the fewest samples at which a test sees its bias half the time
    and where (the search's row it is seen on soonest, which need not be its worst row by χ²,
    or one of the three targets if that is sooner); the samples below which no test gains 0.1
    on the searched row where that bound is smallest (``bound_on``; χ² and TV forms,
    :func:`rslab.numerics.divergence_bound.figures`) or, for the recommended draw, on every
    row of ``vocab`` tokens (its guarantee, :func:`rslab.numerics.fixed_invcdf.chi2_bound`)."""
    out = {}
    for name in dict.fromkeys([w["draw"] for w in worst] + [t["method"] for t in token]):
        seen, where = float("inf"), ""
        w = next((w for w in worst if w["draw"] == name), None)
        for f in (w["tried"] if w is not None else ()):
            n, test = worst_seen(f)
            if not np.isnan(n) and n < seen:
                seen, where = n, f"{f['target']}, by the {test}"
        for t in token:
            if t["method"] == name and t["detect_seen"] < seen:
                seen, where = t["detect_seen"], t["target"]
        tight = min(w["tried"], key=lambda f: f["bound_samples"]) if w is not None else None
        row = {"seen": seen, "seen_on": where, "bound_on": tight and tight["target"],
               "bound": tight and tight["bound_samples"], "every_row": False}
        if name == variant_name(*RECOMMENDED):
            row.update(bound=db.samples_no_test_sees(fixed_invcdf.chi2_bound(vocab)),
                       every_row=True)
        out[name] = row
    return out


def verdict(row: dict, speed: float) -> str:
    """A draw's verdict from its bias row and its sampler's speed against Div8's (the slower
    test point): it meets the target only with a bound over every row past 10^10 at no more
    cycles than Div8; it fails where a test sees it before."""
    if row["every_row"] and row["bound"] >= DETECT_TARGET:
        return "meets it on every row" if speed >= 1 else "bias met on every row; slower"
    if row["seen"] < DETECT_TARGET:
        return "fails: a test sees it"
    return "not shown either way"


def verdict_rows(sampler: list[dict], bias: dict) -> list[dict]:
    """The verdict table's rows: per draw of the whole-sampler runs, its speed against Div8's
    at both test points, its bias figures and its verdict."""
    by = {(r["draw"], r["name"]): r for r in sampler}
    out = []
    for name in dict.fromkeys(r["draw"] for r in sampler):
        b = bias.get(name)
        if b is None:
            continue
        speed = {p: by[(name, p)]["vs_div8"] for p in ("all-accept", "first-reject")}
        out.append({"draw": name, "all_accept": speed["all-accept"],
                    "first_reject": speed["first-reject"], **b,
                    "reproducible": REPRODUCIBLE[name.split("-")[0]],
                    "verdict": verdict(b, min(speed.values()))})
    return out


def verdict_table(rows: list[dict]) -> str:
    """The verdict as Markdown: speed against Div8, bias (each figure with the row it holds
    on), reproducibility, verdict."""
    return markdown_table([{
        "draw": r["draw"], "speed vs Div8: all-accept": f"{r['all_accept']:.2f}×",
        "first-step reject": f"{r['first_reject']:.2f}×",
        "a test sees the bias at (samples)": figure(r["seen"]) + (
            f" (on {r['seen_on']})" if r["seen_on"] else ""),
        "no test gains 0.1 before (samples)": bound_text(r["bound"]) + (
            " (every row)" if r["every_row"]
            else f" (on {r['bound_on']})" if r["bound_on"] else ""),
        "bit-exact under": r["reproducible"], "verdict": r["verdict"]} for r in rows])


# ----------------------------------------------------------------- the page's other tables

def noise_table(noise: list[dict], note_chi2: dict) -> str:
    """The noises' lattice statistics (``note_chi2``: draw → the note's χ² at 10^9)."""
    return markdown_table([{
        "noise": r["name"], "E[χ²], 64 bins, 10⁹ samples": f"{r['expected_chi2']:.1f}",
        "the note's χ²": f"{note_chi2[r['name']]:.1f}" if r["name"] in note_chi2 else "—",
        "exact KS distance": f"{r['exact_ks']:.2g}", "largest finite g": f"{r['g_max']:.2f}",
        "mass on the plateau": f"{r['plateau']:.2g}"} for r in noise])


def token_table(token: list[dict], targets: tuple) -> str:
    """Per draw and target: the total variation and the fewest samples at which a test sees
    the bias half the time (``∞``: no bias; ``targets``: the target names, in order)."""
    by = {(r["method"], r["target"]): r for r in token}
    rows = []
    for m in dict.fromkeys(r["method"] for r in token):
        row = {"draw": m}
        for t in targets:
            r = by[(m, t)]
            row[f"{t.split('(')[0]}: TV"] = figure(r["tv"]) if r["tv"] else "0"
            row[f"{t.split('(')[0]}: seen at"] = figure(r["detect_seen"])
        rows.append(row)
    return markdown_table(rows)


def lattice_table(rows: list[dict]) -> str:
    """The Exact path's tail on each lattice of :mod:`rslab.numerics.lattice_bias`."""
    return markdown_table([{
        "uniforms": r["lattice"], "random bits": str(r["bits"]), "P(tail)": f"{r['tail']:.6f}",
        "against the target": f"{100 * r['tail_rel']:+.3f} %",
        "a blind χ² over the two runs sees it at (samples)": figure(r["detect_runs"])}
        for r in rows])


def worst_table(worst: list[dict]) -> str:
    """Each draw's worst row: χ², TV, the bound and the tests (— where a χ² test's
    approximation does not hold)."""
    return markdown_table([{
        "draw": w["draw"], "worst row": w["target"], "χ²": figure(w["chi2"]),
        "TV": figure(w["tv"]), "no test gains 0.1 before": bound_text(w["bound_samples"]),
        "χ² over tokens": figure(w["detect_tokens"]),
        "χ² over vectors": figure(w["detect_vectors"]),
        "appearance test (best token set)": figure(w["detect_appear"])} for w in worst])


def loops_table(loops: list[dict]) -> str:
    """The row loops' schedule figures."""
    return markdown_table([{
        "draw": r["draw"], "row": r["kind"], "II": str(r["ii"]), "ResMII": str(r["res_mii"]),
        "RecMII": str(r["rec_mii"]),
        "what binds": r["binding"] + (" + recurrence" if r["rec_mii"] == r["ii"] else ""),
        "cycles per 256 tokens": f"{r['cycles_per_packed']:g}",
        "measured": f"{r['measured_per_packed']:g}"} for r in loops])


def sampler_table(sampler: list[dict]) -> str:
    """The whole sampler's runs: cycles, floor, DMA wait, task bound, against Div8."""
    return markdown_table([{
        "draw": r["draw"], "test point": r["name"], "cycles": f"{r['cycles']:,}",
        "floor": f"{r['bound_cycles']:,}", "cycles / floor": f"{r['ratio']:.2f}",
        "of which DMA wait": f"{r['dma_wait']:,}",
        "task bound": f"{r['task_bound_cycles']:,} ({r['task_binding']})",
        "speed vs Div8": f"{r['vs_div8']:.2f}×",
        "tokens = reference": "yes" if r["tokens_match_reference"] else "no"} for r in sampler])


def rng_table(checks: list[dict]) -> str:
    """The tests of the RNG models' words (:func:`rslab.numerics.rng_checks.stream_checks`)."""
    return markdown_table([{
        "model": r["model"], "key": str(r["key"]), "words": f"{r['words']:,}",
        "top 8 bits: χ²": f"{r['top 8 bits']['chi2']:.1f}",
        "top 8 bits: p": f"{r['top 8 bits']['p']:.2g}", "top 14 bits: p":
        f"{r['top 14 bits']['p']:.2g}",
        "pairs 128 apart: χ² (approximate)": f"{r['lag-128 pairs']['chi2']:.1f}",
        "pairs: p": f"{r['lag-128 pairs']['p']:.2g}"} for r in checks])


def ks_point(g) -> tuple[float, float]:
    """The KS distance of the noise values ``g`` (one per lattice point) from the ideal law,
    and the g where it is reached."""
    s = np.sort(np.asarray(g, np.float32))
    f = gumbel2_cdf(s)
    i = np.arange(s.size)
    terms = np.maximum((i + 1) / s.size - f, f - i / s.size)
    k = int(np.argmax(terms))
    return float(terms[k]), float(s[k])


# ----------------------------------------------------------------- why wide48 fails

def never_drawn(vocab: int, scale: float = 8.0) -> dict:
    """The float32 inverse CDF (``wide48``) on the row of BF16 logits of scale ``scale``: the
    tokens it never draws and their mass, the appearance test on them (samples at which its
    advantage reaches ½, its advantage at 10^10 samples, and the samples at which the test
    that rejects the target when none of them appears has level 10^-3), the TV and χ², the
    largest χ² term and its token's probabilities, and the bound's two forms."""
    w = adversary.logit_weights(adversary.bf16_logits(vocab, scale))
    P, p = exact_token_probs(w, "invcdf", "wide48"), adversary.target_of(w)
    never = (P == 0) & (p > 0)
    mass = float(p[never].sum())
    terms = (P - p) ** 2 / np.where(p > 0, p, 1.0)
    top = int(np.argmax(terms))
    f = db.figures(P, p)
    return {"row": f"bf16 logits(σ={scale:g})", "tokens": int(never.sum()), "mass": mass,
            "half": float(np.log(2) / -np.log1p(-mass)),
            "level": float(np.log(1 / ALPHA) / -np.log1p(-mass)),
            "at_target": float(-np.expm1(DETECT_TARGET * np.log1p(-mass))),
            "best": appearance.samples_to_see(P, p), "tv": f["tv"], "chi2": f["chi2"],
            "top_share": float(terms[top] / terms.sum()), "top_p": float(p[top]),
            "top_P": float(P[top]), "bound_chi2": f["bound_samples_chi2"],
            "bound_tv": f["bound_samples_tv"], "detect_tokens": f["detect_tokens"],
            "detect_vectors": f["detect_vectors"], **lost_by_vector(w, P, p)}


BLOCK_STEP = 2.0**-24
"""The block choice's step: a 24-bit uniform gives each vector a multiple of it."""
K_STEP = 2.0**-48
"""``wide48``'s step inside a vector, as a share of the vector's sum (48 bits of K)."""


def _side_before(wb) -> np.ndarray:
    """Per lane, the float32 sum of the lanes before it on its side of the vector's heaviest
    lane h, as ``wide48`` scans them (running maximum of the prefix scan below h, of the suffix
    scan above h; 0 at h and at each side's first lane)."""
    s = np.maximum.accumulate(invcdf.lane_scan(wb), axis=1)
    q = np.maximum.accumulate(invcdf.suffix_scan(wb)[:, ::-1], axis=1)[:, ::-1]
    zero = np.zeros((wb.shape[0], 1), np.float32)
    before = np.concatenate([zero, s[:, :-1]], axis=1)
    after = np.concatenate([q[:, 1:], zero], axis=1)
    lanes, h = np.arange(invcdf.LANES), np.argmax(wb, axis=1)[:, None]
    return np.where(lanes < h, before, np.where(lanes > h, after, 0)).astype(np.float32)


def _lattice_dead_mass(masses) -> float:
    """The mass of the vectors (target ``masses``) that no 24-bit lattice uniform reaches
    when the block sums are exact: the vector choice's lattice alone."""
    edges = np.concatenate([[0.0], np.cumsum(masses)]) / np.sum(masses)
    hits = np.diff(np.searchsorted(lattice_uniforms().astype(np.float64), edges, side="left"))
    return float(masses[(hits == 0) & (masses > 0)].sum())


def lost_by_vector(w, P, p) -> dict:
    """``wide48``'s never-drawn tokens split by whether their 128-token vector is ever drawn
    (counts and target masses); the vectors lighter than a block-choice step, how many of them
    are never drawn and how many are drawn with a whole step or more; in the drawn vectors, the
    share of never-drawn tokens lighter than one float32 step of the sum before them on their
    side, and than half a step (absorbed by the add), the share whose vector's step of
    ``wide48``'s K (``K_STEP`` of its sum) is coarser than that float32 step, and the first
    token absorbed where it is not (lane, weight, that sum and its step, the lane heaviest
    before it on its side, the vector's heaviest lane); the target mass of the vectors no
    lattice uniform would reach with exact block sums (``lattice_dead_mass``) and the row's
    total over its heaviest weight."""
    wb, Pb, pb = (invcdf.blocks_of(np.ravel(x)) for x in (w, P, p))
    dead = (Pb.sum(1) == 0) & (pb.sum(1) > 0)
    never = (Pb == 0) & (pb > 0)
    lost_dead, lost_live = never & dead[:, None], never & ~dead[:, None]
    light = pb.sum(1) < BLOCK_STEP
    side = _side_before(wb)
    step = np.spacing(side)
    below = lost_live & (side > 0) & (wb < step)
    absorbed = lost_live & (side > 0) & (wb < step / 2)
    k_coarser = lost_live & (side > 0) & (K_STEP * wb.sum(1, dtype=np.float64)[:, None] > step)
    n_live = max(int(lost_live.sum()), 1)
    return {"dead_tokens": int(lost_dead.sum()), "dead_mass": float(pb[lost_dead].sum()),
            "live_tokens": int(lost_live.sum()), "live_mass": float(pb[lost_live].sum()),
            "light_vectors": int(light.sum()), "dead_vectors": int(dead.sum()),
            "light_dead": int((light & dead).sum()),
            "lattice_dead_mass": _lattice_dead_mass(pb.sum(1)),
            "total_over_max": float(np.sum(w, dtype=np.float64) / np.max(w)),
            "dead_steps": float(pb[dead].sum(1).max(initial=0) / BLOCK_STEP),
            "light_up": int((light & (Pb.sum(1) >= BLOCK_STEP)).sum()),
            "below_step_share": float(below.sum() / n_live),
            "absorbed_share": float(absorbed.sum() / n_live),
            "k_coarser_share": float(k_coarser.sum() / n_live),
            "top_in_live": bool(not dead[int(np.argmax(np.abs(P - p) ** 2 / np.where(p > 0, p, 1)))
                                          // invcdf.LANES]),
            "example": _lost_example(wb, side, step, absorbed & ~k_coarser)}


def _lost_example(wb, side, step, below) -> dict | None:
    """The first token of ``below`` (lost below a float32 step of the sum before it): its
    vector, lane and weight, that sum and its step, the heaviest lane before it on its side
    and its weight, the vector's heaviest lane and its sum."""
    if not below.any():
        return None
    v, lane = (int(i) for i in np.argwhere(below)[0])
    h = int(np.argmax(wb[v]))
    ahead = np.arange(lane) if lane < h else np.arange(lane + 1, invcdf.LANES)
    top = int(ahead[np.argmax(wb[v, ahead])])
    return {"vector": v, "lane": lane, "weight": float(wb[v, lane]),
            "side": float(side[v, lane]), "step": float(step[v, lane]),
            "ahead_lane": top, "ahead": float(wb[v, top]), "heaviest": h,
            "vector_sum": float(np.sum(wb[v], dtype=np.float64))}


def tail_test(p_mass: float, P_mass: float, samples: float) -> dict:
    """The appearance test on a set of target mass ``p_mass`` that the draw gives only
    ``P_mass``, both ways. Rejecting "the samples are the draw's" when a token of the set
    appears among ``samples``: its size (under the draw), power (under the target) and
    advantage. Rejecting "the samples are the target's" when none appears: the fewest samples
    at which its level is ``ALPHA``, and its power there."""
    def shown(mass, n):
        return float(np.clip(-np.expm1(n * np.log1p(-max(mass, 0.0))), 0.0, 1.0))

    level = int(np.ceil(np.log(1 / ALPHA) / -np.log1p(-p_mass)))
    size, power = shown(P_mass, samples), shown(p_mass, samples)
    return {"size": size, "power": power, "advantage": power - size,
            "level_samples": level, "level_power": 1 - shown(P_mass, level)}


def never_drawn_table(nd: dict) -> str:
    """:func:`never_drawn`'s bound and tests, each with its samples."""
    rows = [("no test gains 0.1 before: a / TV", nd["bound_tv"]),
            ("no test gains 0.1 before: 2a² / χ² (below one sample: says nothing)",
             nd["bound_chi2"]),
            ("appearance test, the never-drawn tokens: advantage ½ at", nd["half"]),
            ("the same tokens, rejecting the target at level 10⁻³ when none appears",
             nd["level"]),
            ("appearance test, the best likelihood-ratio set: advantage ½ at",
             nd["best"]["samples"]),
            ("χ² over tokens, power ½ at", nd["detect_tokens"]),
            ("χ² over vectors of 128, power ½ at", nd["detect_vectors"])]
    return markdown_table([{"bound or test": a, "samples": bound_text(n) if i < 2 else figure(n)}
                           for i, (a, n) in enumerate(rows)])


def argmax_search_note(argmax_worst: list[dict], vocab: int) -> str:
    """What the worst-case search covered for the argmax draws, in a sentence."""
    if not argmax_worst:
        quick, book = page_worst_draws("quick"), page_worst_draws("book")
        names = [f"`{variant_name(*d)}`" for d in quick]
        more = [f"`{variant_name(*d)}`" for d in book if d not in quick]
        return (f"At this scale the search covers {and_list(names)} only; the book scale adds "
                f"{and_list(more)}.")
    total = len(adversary.family_rows(vocab))
    searched = min(w["rows"] for w in argmax_worst)
    if searched == total:
        return "Gumbel-max and the race are searched on every row too."
    return (f"Gumbel-max and the race are searched on {searched} of the {total} rows (those "
            f"whose exact argmax law fits this machine), so their worst is a lower bound on "
            f"their worst.")


# ----------------------------------------------------------------- the Monte Carlo check

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
    group = _mc_groups(expected, target.levels)
    tested = np.bincount(group[live], expected[live])
    chi = float(((np.bincount(group[live], drawn[live]) - tested) ** 2 / tested).sum())
    df = tested.size - 1
    # the χ² law of the merged counts under the exact law itself, simulated (the asymptotic
    # one is shown beside it)
    sims = np.random.default_rng(seed).multinomial(rows, tested / tested.sum(),
                                                   size=MC_SIMULATIONS)
    sim_chi = ((sims - tested) ** 2 / tested).sum(axis=1)
    p_sim = (1 + int(np.sum(sim_chi >= chi * (1 - 1e-12)))) / (1 + MC_SIMULATIONS)
    tail = float(cells[1:target.levels].sum() + cells[target.levels + 1:].sum())
    # what the test resolves, from the same simulated law: its 10^-3 critical value, the
    # relative shift δ of the tail's mass (each tail cell in proportion, the head
    # compensating) it rejects half the time, and its power against the target's own law
    critical = float(np.quantile(sim_chi, 1 - 1e-3))
    power_at = _mc_power(rows, group, live, tested, critical, seed)
    resolved = _mc_resolved(power_at, cells, target.levels)
    ideal = np.concatenate([target.run_probs, target.run_probs * (target.counts - 1)])
    ideal_tail = float(ideal[1:target.levels].sum() + ideal[target.levels + 1:].sum())
    return {"rows": rows, "chi2": chi, "df": df, "cells_tested": tested.size,
            "smallest_cell": float(expected[live].min()),
            "p": float(sps.chi2.sf(chi, df)) if df > 0 else 1.0,
            "p_simulated": p_sim, "simulations": MC_SIMULATIONS, "critical": critical,
            "critical_asymptotic": float(sps.chi2.isf(1e-3, df)) if df > 0 else float("nan"),
            "tail_expected": rows * tail, "tail_resolved": resolved,
            "target_distance": ideal_tail / tail - 1 if tail > 0 else float("inf"),
            "target_power": power_at(ideal),
            "drawn_where_exact_is_zero": int(drawn[~live].sum()), "drawn": drawn.tolist(),
            "expected": expected.tolist(), "seconds": time.perf_counter() - start}


MC_POWER_SIMULATIONS = 20_000
"""Multinomial samples per law behind the power of :func:`argmax_montecarlo`'s test."""


MC_MIN_EXPECTED = 5
"""A cell of :func:`argmax_montecarlo` that expects fewer draws is merged (:func:`_mc_groups`)."""


def _mc_groups(expected: np.ndarray, levels: int) -> np.ndarray:
    """The tested cell of each of the ``2·levels`` cells (a run's first token, then the rest
    of each run): a run whose live cell expects fewer than :data:`MC_MIN_EXPECTED` draws is
    one cell, and the cells still below it are pooled into one (one count in a cell that
    expects ε adds about 1/ε to χ², and would decide the test alone)."""
    group = np.arange(expected.size)
    first, rest = expected[:levels], expected[levels:]
    small = ((first > 0) & (first < MC_MIN_EXPECTED)) | ((rest > 0) & (rest < MC_MIN_EXPECTED))
    group[levels:][small] = np.arange(levels)[small]
    total = np.bincount(group, expected, minlength=expected.size)
    group = np.where(total[group] < MC_MIN_EXPECTED, expected.size, group)
    return np.unique(group, return_inverse=True)[1].reshape(-1)


def _mc_power(rows: int, group: np.ndarray, live: np.ndarray, tested: np.ndarray,
              critical: float, seed: int):
    """``power(law)``: how often ``rows`` draws of ``law`` (over all cells) fail the χ² test of
    the merged cells ``group`` against their exact counts ``tested`` at the simulated
    ``critical`` value (or land where the exact law is 0)."""
    n = int(group[live].max()) + 1

    def power(law) -> float:
        law = np.asarray(law, np.float64)
        merged = np.append(np.bincount(group[live], law[live], minlength=n), law[~live].sum())
        sims = np.random.default_rng(seed + 1).multinomial(rows, merged / merged.sum(),
                                                           size=MC_POWER_SIMULATIONS)
        chi = ((sims[:, :n] - tested) ** 2 / tested).sum(axis=1)
        return float(np.mean((chi > critical) | (sims[:, n] > 0)))
    return power


def _mc_resolved(power, cells: np.ndarray, levels: int) -> float:
    """The relative shift δ > 0 of the tail's mass (tail cells × (1 + δ), the head's cell
    compensating) that ``power`` sees half the time: bisection on a log scale."""
    in_tail = np.ones(cells.size, bool)
    in_tail[[0, levels]] = False
    tail = float(cells[in_tail].sum())
    if not 0 < tail < 1:
        return float("inf")

    def moved(d):
        law = cells.astype(np.float64).copy()
        law[in_tail] *= 1 + d
        head = law[~in_tail].sum()
        law[~in_tail] *= (1 - tail * (1 + d)) / head if head > 0 else 0
        return law
    lo, hi = 0.0, min(1.0, (1 - tail) / tail * 0.999)
    while power(moved(hi)) < 0.5:
        if hi >= (1 - tail) / tail * 0.99:
            return float("inf")
        lo, hi = hi, min(2 * hi, (1 - tail) / tail * 0.999)
    for _ in range(14):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if power(moved(mid)) < 0.5 else (lo, mid)
    return (lo + hi) / 2


# ----------------------------------------------------------------- the live figures

def tail_control(tails) -> object:
    """The tail mass of the peaked target: from the smallest of 0.001 and ``tails`` (in
    steps of it) to 0.5 live, ``tails`` precomputed."""
    value = 0.1 if 0.1 in tails else tails[0]
    lo = min(TAIL_STEP, *tails)
    return float_control("tail", lo, 0.5, step=lo, frames=tails, value=value,
                         label="tail mass", fmt=lambda t: f"{t:g}")


def tail_figure(variants, vocab: int, sweep: dict | None = None):
    """``draw(tail)`` for a live figure: the samples at which a test sees each draw's bias on
    ``peaked(tail)``, from the exact token laws, taken from ``sweep`` (:func:`dc.tail_sweep`)
    when it holds ``tail``, else computed."""
    sweep = sweep or {}

    def draw(tail: float):
        tail = round(float(tail), 6)
        here = sweep if all(tail in s["tail"] for s in sweep.values()) and sweep else \
            dc.tail_sweep(variants, (tail,), vocab=vocab)
        detect = {n: s["detect"][s["tail"].index(tail)] for n, s in here.items()}
        text = f"tail mass {tail:g}, V = {vocab:,}; samples to see the bias: " + ", ".join(
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
