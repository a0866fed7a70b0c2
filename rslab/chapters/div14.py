"""Chapter 6, *Div14 search*: why powers of two differ, what a divisor changes (the fast log's
error at the 63 bin edges), what the sampled selection can and cannot separate, λ beside the
plateau's atom and the KS distance, the tail no divisor changes, and how the best divisor
moves with the fit's knobs."""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy import stats as sps

from rslab import note
from rslab.chapters.prose import and_list
from rslab.numerics import montecarlo as mc
from rslab.numerics import search, separation, stats, tails
from rslab.numerics.fastlog import DEFAULT_FASTLOG2, FastLog2
from rslab.numerics.gumbel import parse_divisor, second_layer_parts
from rslab.viz import search_plots as sp
from rslab.viz.controls import float_control, int_control

KNOB_DIVISORS = tuple(float(k) for k in range(7, 17))
"""The divisors of the knob figures, 7 to 16: an integer k ≤ 6 puts its plateau's atom on a
bin edge (``atom_on_edge``), which swamps λ."""
N = note.CHI2_SAMPLES
"""The sample size at which the chapter quotes an expected χ² (the note's 10^9)."""


def expected_chi2(lam: float, n: float = N) -> float:
    """The mean of the 64-bin χ² at ``n`` samples of a law with noncentrality ``lam``."""
    return mc.N_BINS - 1 + n * lam


# --- what a divisor changes: the fast log's error at the bin edges -------------------------

def bin_deviations(g) -> tuple[np.ndarray, np.ndarray]:
    """The 64 bins' probabilities minus 1/64, and P(g < e) at the 63 inner edges, of the 2^24
    lattice outputs ``g`` (exact)."""
    s = np.sort(np.asarray(g, np.float32), kind="stable")
    cuts = stats.search_sorted(s, stats.bin_edges(mc.N_BINS), side="left")
    p = np.diff(np.concatenate([[0], cuts, [s.size]])) / mc.LATTICE_SIZE
    return p - 1 / mc.N_BINS, cuts / mc.LATTICE_SIZE


@functools.lru_cache(maxsize=2)
def first_layer_deviations(log2: FastLog2 = DEFAULT_FASTLOG2):
    """``_deviations`` of the noise with ``log2``'s first layer and an exact second log: the
    part of the bias every divisor shares."""
    t = search._first_layer(log2)
    return bin_deviations(-np.log2(t.astype(np.float64)))


def edge_error(k: float, log2: FastLog2 = DEFAULT_FASTLOG2) -> tuple[np.ndarray, np.ndarray]:
    """The 63 inner bin edges e of g, and the fast log's error ``fl(x) − log2 x`` at the point
    ``x = t_e/k`` (float32) where the second log decides on which side of e a draw falls
    (``t_e = 2^−e``)."""
    e = stats.bin_edges(mc.N_BINS)
    x = (np.exp2(-e) / k).astype(np.float32)
    return e, log2(x).astype(np.float64) - np.log2(x.astype(np.float64))


def edge_shifts(k: float, log2: FastLog2 = DEFAULT_FASTLOG2) -> tuple[np.ndarray, np.ndarray]:
    """The 63 inner edges and the shift of P(g < e) that the fast log's error at ``t_e/k``
    predicts at each: (ln 2)² t_e 2^−t_e ε(t_e/k), the density of t at ``t_e`` times the
    move of the crossing point."""
    e, eps = edge_error(k, log2)
    te = np.exp2(-e)
    return e, np.log(2) ** 2 * te * np.exp2(-te) * eps


def predicted_lambda(k: float, log2: FastLog2 = DEFAULT_FASTLOG2) -> float:
    """Div-``k``'s λ from the first layer's bin deviations and the 63 predicted edge shifts
    alone (each bin's part the difference of its two edges' shifts), without enumerating
    Div-``k``'s noise."""
    a = first_layer_deviations(log2)[0]
    b = np.diff(np.concatenate([[0.0], edge_shifts(k, log2)[1], [0.0]]))
    return float(mc.N_BINS * ((a + b) ** 2).sum())


def straddling_edges(k: float, log2: FastLog2 = DEFAULT_FASTLOG2) -> list[int]:
    """The edges where a segment boundary lies between ``t_e/k`` and the point
    ``(t_e/k)·2^−ε`` where the fast log actually crosses ``log2(t_e/k)``: there the error at
    ``t_e/k`` is the wrong segment's, and ``edge_mechanism``'s prediction misses."""
    _, eps = edge_error(k, log2)
    x = (np.exp2(-stats.bin_edges(mc.N_BINS)) / k).astype(np.float32).astype(np.float64)
    cross = x * np.exp2(-eps)

    def segment(v):
        m, e = np.frexp(v)  # v = m·2^e, m in [1/2, 1): the segment of 2m in its binade
        return e * log2.segments + np.floor((2 * m - 1) * log2.segments)
    return np.flatnonzero(segment(x) != segment(cross)).tolist()


@functools.lru_cache(maxsize=32)
def edge_mechanism(k: float, log2: FastLog2 = DEFAULT_FASTLOG2) -> dict:
    """Div-``k`` against an exact second log on the same first layer, exactly on the lattice.

    ``shift``: how much the second log moves P(g < e) at each edge; ``predicted``: that
    shift from the fast log's error at the edge alone, (ln 2)² t_e 2^−t_e ε(t_e/k) (the
    density of t at t_e times the move of the crossing point); λ split as
    λ = λ_first + λ_second + cross, with a = the first layer's bin deviations, b = what the
    second log adds: λ_first = 64 Σa², λ_second = 64 Σb², cross = 128 Σab; λ_predicted from
    the 63 edge errors; the per-bin contributions to λ (``contribution``, and
    ``first_contribution`` for the first layer alone)."""
    a, f_first = first_layer_deviations(log2)
    dev, f = bin_deviations(search.lattice_noise(k, log2))
    b = dev - a
    e, predicted = edge_shifts(k, log2)
    n = mc.N_BINS
    return {"k": k, "name": search.divisor_name(k), "edges": e, "shift": f - f_first,
            "predicted": predicted, "deviation": dev,
            "contribution": n * dev**2, "first_contribution": n * a**2,
            "lam": float(n * (dev**2).sum()), "lam_first": float(n * (a**2).sum()),
            "lam_second": float(n * (b**2).sum()), "cross": float(2 * n * (a * b).sum()),
            "lam_predicted": predicted_lambda(k, log2),
            "shift_corr": float(np.corrcoef(f - f_first, predicted)[0, 1]),
            "binned_tv": float(0.5 * np.abs(dev).sum())}


def lambda_parts_rows(divisors, log2: FastLog2 = DEFAULT_FASTLOG2) -> list[dict]:
    """A table row per divisor: λ and its three parts (×10⁻⁷), and the λ the 63 edge errors
    predict."""
    rows = []
    for k in divisors:
        m = edge_mechanism(float(k), log2)
        rows.append({"divisor": m["name"], "first log (×10⁻⁷)": f"{m['lam_first'] * 1e7:.2f}",
                     "second log (×10⁻⁷)": f"{m['lam_second'] * 1e7:.2f}",
                     "cross (×10⁻⁷)": f"{m['cross'] * 1e7:+.2f}",
                     "λ (×10⁻⁷)": f"{m['lam'] * 1e7:.2f}",
                     "λ from the edges (×10⁻⁷)": f"{m['lam_predicted'] * 1e7:.2f}"})
    return rows


def edge_caption(k: float) -> str:
    """The edge slider's caption: Div-k's λ, its parts and the edges' prediction, flagged
    where the prediction does not apply (an atom on a bin edge) or misses (straddling edges)."""
    m = edge_mechanism(float(k))
    text = (f"{m['name']}: λ = {m['lam']:.3e} (first log {m['lam_first']:.2e}, second log "
            f"{m['lam_second']:.2e}, cross {m['cross']:+.2e}); from the 63 edge errors "
            f"{m['lam_predicted']:.3e} ({m['lam_predicted'] / m['lam'] - 1:+.1%})")
    if atom_on_edge(float(k)):
        return text + ": its plateau atom lies on a bin edge, which the edge errors do not see"
    straddle = straddling_edges(float(k))
    if straddle:
        return text + (f": {len(straddle)} edge(s) across a segment boundary, where the "
                       "error at t_e/k is the wrong segment's")
    return text


def edge_prediction_scope(divisors, log2: FastLog2 = DEFAULT_FASTLOG2) -> dict:
    """How well the 63 edge errors predict λ over ``divisors``, by kind of divisor: the
    largest relative miss where no atom lies on a bin edge and no edge straddles a segment
    boundary (``clean``), where some edge straddles (``straddling``), and the smallest
    exact-over-predicted ratio where the atom lies on an edge (``on_edge``); the divisors of
    each kind."""
    lam = search.lambda_by_divisor(tuple(divisors), log2)
    kinds = {"clean": [], "straddling": [], "on_edge": []}
    for k, exact in zip(divisors, lam, strict=True):
        kind = ("on_edge" if atom_on_edge(k, log2)
                else "straddling" if straddling_edges(k, log2) else "clean")
        kinds[kind].append((float(k), float(exact), predicted_lambda(k, log2)))
    miss = {kind: max((abs(p / e - 1) for _, e, p in rows), default=0.0)
            for kind, rows in kinds.items() if kind != "on_edge"}
    ratio = min((e / p for _, e, p in kinds["on_edge"]), default=float("nan"))
    return {"clean": miss["clean"], "straddling": miss["straddling"], "on_edge": ratio,
            "divisors": {kind: [k for k, _, _ in rows] for kind, rows in kinds.items()}}


def draw_edges(k: float, reference: float = search.BASELINE):
    """Slider frame: the edge shifts and accumulated λ of Div-``k`` beside Div8's."""
    ks = (reference, k) if k != reference else (reference,)
    fig = sp.plot_edge_shifts({search.divisor_name(d): edge_mechanism(float(d)) for d in ks})
    return fig, edge_caption(k)


def edge_control(frames):
    """A divisor from 2 to 20 in steps of 0.5 live; ``frames`` precomputed, Div14 first shown."""
    return float_control("k", 2.0, 20.0, step=0.5, frames=frames, value=14.0, label="divisor k")


def segment_profile(k: float, log2: FastLog2 = DEFAULT_FASTLOG2):
    """Per segment of the second log's input t/k over the whole lattice: its share of the
    lattice points, and the fast log's mean signed error there (outside the plateau)."""
    x = search._first_layer(log2) / np.float32(k)
    err = log2(x).astype(np.float64) - np.log2(x.astype(np.float64))
    seg = (x.view(np.uint32) >> np.uint32(23 - log2.index_bits)) & np.uint32(log2.segments - 1)
    far = np.abs(np.log2(x.astype(np.float64))) > 2 * log2.zero_threshold
    share = np.bincount(seg, minlength=log2.segments) / x.size
    total = np.bincount(seg[far], weights=err[far], minlength=log2.segments)
    return share, total / np.bincount(seg[far], minlength=log2.segments)


def segment_spread(a: float, b: float, log2: FastLog2 = DEFAULT_FASTLOG2) -> dict:
    """How differently Div-``a`` and Div-``b`` spread t over the fit's segments: the largest
    relative difference of a segment's share, the largest difference of its mean error, and
    the range of those mean errors."""
    share_a, err_a = segment_profile(a, log2)
    share_b, err_b = segment_profile(b, log2)
    return {"share": float(np.max(np.abs(share_b / share_a - 1))),
            "error": float(np.max(np.abs(err_b - err_a))),
            "error_range": (float(err_a.min()), float(err_a.max()))}


def power_of_two_differences(a: float, b: float, log2=DEFAULT_FASTLOG2) -> dict:
    """Lattice points where Div``a`` and Div``b`` (``b/a`` a power of two) give different
    noise: all of them (``differ``) and those farther than 2τ (in log2) from both plateaus
    (``far``). The fit's fixed-point sum Y has ``product_bits`` fractional bits and is the same
    for both but for the exponent; float32 holds it exactly while ``|Y| < 2^(24 −
    product_bits)`` (``exact_below``), so the results can differ by more than ``log2(b/a)``
    only where they lie in different binades and one is at least that large (``rounded``
    points); ``far_elsewhere`` counts the far differences outside them and ``differ_rounded``
    the differences inside."""
    shift = np.log2(b / a)
    if not (shift > 0 and float(shift).is_integer()):
        raise ValueError(f"b/a must be a power of two above 1, got a={a}, b={b}")
    t = search._first_layer(log2)
    _, la, ga = second_layer_parts(t, a, log2)
    _, lb, gb = second_layer_parts(t, b, log2)
    differ = ga != gb
    with np.errstate(divide="ignore"):
        lt = np.log2(t.astype(np.float64))
    near = ((np.abs(lt - np.log2(a)) <= 2 * log2.zero_threshold)
            | (np.abs(lt - np.log2(b)) <= 2 * log2.zero_threshold))
    far = differ & ~near
    exact_below = 2.0 ** (np.finfo(np.float32).nmant + 1 - log2.product_bits)
    rounded = ((np.frexp(la)[1] != np.frexp(lb)[1])
               & (np.maximum(np.abs(la), np.abs(lb)) >= exact_below))
    return {"differ": int(np.count_nonzero(differ)), "far": int(np.count_nonzero(far)),
            "exact_below": exact_below, "rounded": int(np.count_nonzero(rounded)),
            "far_elsewhere": int(np.count_nonzero(far & ~rounded)),
            "differ_rounded": int(np.count_nonzero(differ & rounded)),
            "lattice": mc.LATTICE_SIZE}


# --- λ beside the plateau's atom and the KS distance ----------------------------------------

def plateau_atom(k: float, log2: FastLog2 = DEFAULT_FASTLOG2) -> float:
    """The probability that the second log returns exactly 0, so that g = −log2 k exactly:
    the mass of Div-k's plateau atom (exact over the lattice)."""
    t = search._first_layer(log2)
    return float(np.count_nonzero(log2(t / np.float32(k)) == 0) / t.size)


def atom_on_edge(k: float, log2: FastLog2 = DEFAULT_FASTLOG2) -> bool:
    """Whether one of the 63 inner bin edges lies in the g-range the plateau's atom collects,
    ``−log2 k ± τ`` (τ the fast log's ``zero_threshold``): only then does the atom move mass
    across an edge. For an integer k that is k = 1 … 6, where the edge is at ``−log2 k``
    exactly (``64 · 2^−k`` is an integer)."""
    return bool(np.any(np.abs(stats.bin_edges(mc.N_BINS) + np.log2(k)) < log2.zero_threshold))


def atom_rows(divisors, log2: FastLog2 = DEFAULT_FASTLOG2) -> list[dict]:
    """Per divisor, exactly: λ, E[χ²] at 10^9, the plateau atom's mass, whether a bin edge
    runs through the atom, and the KS distance (the one criterion the atom moves)."""
    rows = []
    for k in divisors:
        r = search.divisor_row(float(k), log2, (8.0, 12.0, 16.0, 20.0))
        rows.append({"name": r["name"], "divisor": float(k), "lam": r["lam"],
                     "exact_ks": r["exact_ks"], "atom": plateau_atom(float(k), log2),
                     "on_edge": atom_on_edge(float(k), log2)})
    return rows


def atom_table(rows) -> list[dict]:
    """``atom_rows`` for a page."""
    return [{"divisor": r["name"], "λ (×10⁻⁷)": f"{r['lam'] * 1e7:.2f}",
             "E[χ²] at 10⁹": f"{expected_chi2(r['lam']):,.0f}",
             "plateau atom": f"{r['atom']:.2e}",
             "bin edge in the atom's range": "yes" if r["on_edge"] else "no",
             "KS distance": f"{r['exact_ks']:.2e}"} for r in rows]


# --- the sampled selection ---------------------------------------------------------------

def ranking_rows(rows, fpc: float = 1.0) -> list[dict]:
    """A screening or finals stage (``search.stage_rows``) for a page: each criterion with its
    rank (1 = best), the rank sum the search orders by (ties by the pooled χ²), and the mean
    pooled χ² the exact λ predicts with the seeds' finite-population factor ``fpc``
    (``mc.predicted_chi2``: fpc·63 + Nλ)."""
    ks_rank = _ranks([r["mean_ks"] for r in rows])
    chi_rank = _ranks([r["chi2"] for r in rows])
    return [{"divisor": r["name"], "mean KS (×10⁻⁵)": f"{r['mean_ks'] * 1e5:.2f}",
             "KS rank": str(ks_rank[i]), "pooled χ²": f"{r['chi2']:,.1f}",
             "χ² rank": str(chi_rank[i]), "rank sum": str(ks_rank[i] + chi_rank[i]),
             "E[χ²] from λ": f"{mc.predicted_chi2(r['lam'], r['samples'], fpc=fpc).mean():,.1f}"}
            for i, r in enumerate(rows)]


def _ranks(values) -> list[int]:
    """1-based ranks, smallest first (ties in order, as ``search.stage_rows`` ranks)."""
    order = np.argsort(np.argsort(values, kind="stable"), kind="stable")
    return [int(o) + 1 for o in order]


def finals_verdict(result) -> dict:
    """How the finals chose: the winner, the finalists tied with it on the rank sum (the tie
    broken by the pooled χ²), the leader of each criterion, and who a KS tie-break would
    have picked."""
    finals = result.finals
    top = [r for r in finals if r["rank_sum"] == finals[0]["rank_sum"]]
    return {"winner": finals[0]["name"], "tied": [r["name"] for r in top],
            "ks_first": min(finals, key=lambda r: r["mean_ks"])["name"],
            "chi2_first": min(finals, key=lambda r: r["chi2"])["name"],
            "by_ks_tiebreak": min(top, key=lambda r: r["mean_ks"])["name"],
            "baseline_wins": finals[0]["name"] == search.divisor_name(result.config.baseline)}


def selection_report(result) -> dict:
    """What a sampled search (``search.run_search``) separates. ``ks``: each finalist's mean
    per-seed KS against the null law, beside its exact KS distance and λ; ``chi2``: the
    finals' winner against every other finalist (bands, paired p-value, resolved or not);
    ``dropped``: screened-out candidates
    whose exact λ is below the winner's, with their KS and χ² ranks at screening."""
    cfg = result.config
    fpc = mc.stream_fpc(cfg.samples_per_seed, cfg.rng)
    ks = [{"name": r["name"], "mean_ks": r["mean_ks"], "exact_ks": r["exact_ks"], "lam": r["lam"],
           **separation.ks_against_null(r["mean_ks"], cfg.samples_per_seed, r["seeds"], fpc)}
          for r in result.finals]
    winner = result.finals[0]
    chi = [separation.compare(winner, r, fpc=fpc) for r in result.finals[1:]]
    finalists = {r["name"] for r in result.finals}
    ks_rank = {r["name"]: i + 1 for i, r in
               enumerate(sorted(result.screening, key=lambda r: r["mean_ks"]))}
    chi_rank = {r["name"]: i + 1 for i, r in
                enumerate(sorted(result.screening, key=lambda r: r["chi2"]))}
    dropped = [{"name": r["name"], "lam": r["lam"], "ks_rank": ks_rank[r["name"]],
                "chi2_rank": chi_rank[r["name"]]}
               for r in sorted(result.screening, key=lambda r: r["lam"])
               if r["name"] not in finalists and r["lam"] < winner["lam"]]
    return {"ks": ks, "chi2": chi, "dropped": dropped, "winner": winner["name"],
            "screened": len(result.screening)}


def finalist_slots(config) -> str:
    """How many screened candidates go on to the finals besides the baseline, in words."""
    base = search.divisor_name(config.baseline).capitalize()
    n = config.finalists
    return (f"the best-ranked candidate besides {base}" if n == 1
            else f"the {n} best-ranked candidates besides {base}") + " (always a finalist)"


def chi2_rank_chance(result, name: str) -> dict:
    """Whether candidate ``name``'s χ² rank at screening is chance: the candidates ranked
    ahead of it on the pooled χ² (``ahead``), each with the expected gap of the two pooled
    χ² (``pair_separation``'s ``pooled_mean``, negative where the other's λ is smaller)
    and its spread on shared seeds; the rank is chance (``chance``) where no gap reaches its
    spread, and ``resolved`` names the candidates ahead by at least their spread."""
    cfg = result.config
    fpc = mc.stream_fpc(cfg.samples_per_seed, cfg.rng)
    me = next(r for r in result.screening if r["name"] == name)
    ahead = [r for r in result.screening if r["chi2"] < me["chi2"]]
    pairs = {r["name"]: pair_separation(me["divisor"], r["divisor"], cfg.samples_per_seed,
                                        len(cfg.screen_seeds), fpc, cfg.log2)
             for r in ahead}
    resolved = [n for n, p in pairs.items() if -p["pooled_mean"] >= p["pooled_sd"]]
    return {"ahead": pairs, "resolved": resolved, "chance": not resolved}


def _chi2_cause(name: str, rank: dict) -> str:
    """One sentence on what ``chi2_rank_chance`` found for candidate ``name``."""
    pairs = rank["ahead"]
    if not pairs:
        return ""
    if rank["chance"]:
        gaps = [abs(p["pooled_mean"]) for p in pairs.values()]
        sds = [p["pooled_sd"] for p in pairs.values()]
        spread = (f"{min(sds):.1f}" if round(min(sds), 1) == round(max(sds), 1)
                  else f"{min(sds):.1f} to {max(sds):.1f}")
        return (f" Its χ² rank is unreliable as well (each order right less than 84 % of "
                f"the time): its expected pooled χ² is within "
                f"{max(gaps):.1f} of that of {and_list(pairs)}, ranked ahead of it, against a "
                f"spread of {spread} for the difference of two on shared seeds.")
    many = len(rank["resolved"]) > 1
    return (f" {and_list(rank['resolved'])} rank{'' if many else 's'} ahead of it on χ² as "
            f"{'their' if many else 'its'} smaller λ expects (by more than the spread of the "
            "difference on shared seeds).")


def screening_text(result) -> dict:
    """What the screening dropped and why. ``slots``: how many candidates go on to the
    finals, and how many of those with an exact λ below the baseline's that leaves out
    whatever the ranks; ``dropped``: the candidates with an exact λ below the finals'
    winner's that the screening dropped, with their ranks; ``cause``: for each, what its KS
    rank shows (where its law lies nearer the ideal than the KS null mean of a seed, sampling
    noise; where farther, its plateau atom, which λ does not see) and whether its χ² rank is
    chance (``chi2_rank_chance``); ``edge``: the candidates whose atom a bin edge runs
    through, which the χ² does see."""
    rep = selection_report(result)
    cfg = result.config
    null = (math.sqrt(mc.stream_fpc(cfg.samples_per_seed, cfg.rng))
            * separation.ks_null_mean(cfg.samples_per_seed))
    screen = {r["name"]: r for r in result.screening}
    base = search.divisor_name(cfg.baseline)
    below = [r["name"] for r in result.screening
             if r["name"] != base and r["lam"] < screen[base]["lam"]]
    slots = f"This build sends {finalist_slots(cfg)} to the finals"
    if len(below) > cfg.finalists:
        left = len(below) - cfg.finalists
        slots += (f"; {len(below)} screened candidates have an exact λ below "
                  f"{base.capitalize()}'s, so {left} of them {'is' if left == 1 else 'are'} "
                  "left out whatever the ranks")
    dropped = rep["dropped"]
    if dropped:
        text = ("; ".join(f"{d['name']} (KS rank {d['ks_rank']}, χ² rank {d['chi2_rank']} of "
                          f"{rep['screened']})" for d in dropped)
                + (" was" if len(dropped) == 1 else " were")
                + " dropped at screening although " + ("its" if len(dropped) == 1 else "their")
                + " exact λ is below the winner's")
    else:
        text = "No candidate with an exact λ below the winner's was dropped at screening"
    causes, chance = [], {}
    for d in dropped:
        ks = screen[d["name"]]["exact_ks"]
        if ks < null:
            cause = (f"{d['name']}'s law is {ks:.2e} from the ideal, below the KS null "
                     f"mean of a seed, {null:.2e}: its KS rank is sampling noise, not its atom.")
        else:
            atom = plateau_atom(parse_divisor(d["name"]), cfg.log2)
            cause = (f"{d['name']}'s law is {ks:.2e} from the ideal, above the KS null "
                     f"mean of a seed, {null:.2e}: the KS sees its plateau atom "
                     f"({atom:.1e}), which its λ does not.")
        chance[d["name"]] = chi2_rank_chance(result, d["name"])
        causes.append(cause + _chi2_cause(d["name"], chance[d["name"]]))
    on_edge = [r for r in result.screening if atom_on_edge(r["divisor"], cfg.log2)]
    off = [r["chi2"] for r in result.screening if r not in on_edge]
    seen = ", ".join(f"{r['name']} {r['chi2']:,.0f}" for r in on_edge)
    edge = (f"In this screening a bin edge runs through the atom of "
            f"{and_list(r['name'] for r in on_edge)}, and the pooled χ² sees it ({seen}, against "
            f"at most {max(off):,.0f} for the others)." if on_edge and off else "")
    return {"slots": slots, "dropped": text, "cause": " ".join(causes), "edge": edge,
            "null": null, "below_baseline": below, "chi2_chance": chance,
            "noise": [d["name"] for d in dropped if screen[d["name"]]["exact_ks"] < null],
            "edge_rows": on_edge, "off_max": max(off) if off else float("nan")}


@functools.lru_cache(maxsize=32)
def bin_law(k: float, log2: FastLog2 = DEFAULT_FASTLOG2) -> np.ndarray:
    """Div-``k``'s 64 bin probabilities minus 1/64, exactly over the lattice."""
    return bin_deviations(search.lattice_noise(float(k), log2))[0]


def pair_separation(a: float, b: float, n: int, seeds: int, fpc: float = 1.0,
                    log2: FastLog2 = DEFAULT_FASTLOG2) -> dict:
    """Div-``a`` against Div-``b`` on ``seeds`` shared seeds of ``n`` draws, from their exact
    laws: Δλ, the per-seed χ² difference's mean and standard deviation
    (``separation.chi2_difference``), the paired test's power at ``separation.LEVEL``, and the
    chance that b's pooled χ² over the seeds comes out below a's (``b_below``)."""
    mean, sd = separation.chi2_difference(bin_law(a, log2), bin_law(b, log2), n, fpc)
    return {"dlam": mean / n, "mean": mean, "sd": sd,
            "power": separation.paired_power(mean, sd, seeds),
            "pooled_mean": seeds * mean, "pooled_sd": math.sqrt(seeds) * sd,
            "b_below": float(sps.norm.cdf(-math.sqrt(seeds) * mean / sd))}


def chi2_resolved_text(result) -> str:
    """Which finalists the paired χ² test separates from the winner, at ``separation.LEVEL``
    per comparison (uncorrected) and at Bonferroni's level for the finals' comparisons."""
    chi = selection_report(result)["chi2"]
    if not chi:
        return "There is no other finalist to compare."
    bonferroni = separation.LEVEL / len(chi)

    def which(level):
        out = [c["other"] for c in chi if c["p"] < level]
        if not out:
            return "no other finalist"
        if len(out) == len(chi):
            return "every other finalist"
        rest = [c["other"] for c in chi if c["p"] >= level]
        return f"{and_list(out)}, not from {and_list(rest)}"

    first, strict = which(separation.LEVEL), which(bonferroni)
    text = f"The paired χ² test at {separation.LEVEL:g} separates the winner from {first}."
    if len(chi) == 1:
        return text
    return (text + f" That is {len(chi)} comparisons at {separation.LEVEL:g} each, without "
            f"correction for their number; at Bonferroni's {bonferroni:g} "
            + (f"it separates the winner from {strict}." if strict != first else
               "the verdict is the same."))


def rare_separation_text(own_pairs: dict, paired_p: dict) -> str:
    """The finalists the paired χ² test separated from the winner (``paired_p``: name →
    p-value) although its power against them (``own_pairs``: name → ``pair_separation``) is
    below one half; "" when there are none."""
    drew = [n for n, r in own_pairs.items()
            if r["power"] < 0.5 and paired_p[n] < separation.LEVEL]
    if not drew:
        return ""
    return (" This build drew the rarer case: the paired test separates the winner from "
            + " and from ".join(f"{n} (p = {paired_p[n]:.2g}) although its power against it "
                                f"is only {100 * own_pairs[n]['power']:.0f} %" for n in drew)
            + ".")


def grid_gap_text(grid, best: dict, ranking: list[dict]) -> str:
    """When an integer off the exact search's ``grid`` has a smaller λ than the grid's
    ``best`` row (``ranking``: ``integer_ranking``), the sentence that says so; else ""."""
    grid = set(grid)
    off = [r for r in ranking if r["divisor"] not in grid]
    if not off or off[0]["lam"] >= best["lam"]:
        return ""
    odd = {r["divisor"] for r in ranking if r["divisor"] % 2}
    gap = ("has no odd integer" if {r["divisor"] for r in off} == odd else
           "leaves out " + and_list(r["name"] for r in off))
    return (f" This grid {gap}, and off it lies a smaller λ: over the integers "
            f"{min(r['divisor'] for r in ranking):g} to {max(r['divisor'] for r in ranking):g} "
            f"the smallest is {off[0]['name']}'s (expected χ² at 10⁹ "
            f"{off[0]['expected_chi2']:.0f}, against {best['name']}'s "
            f"{expected_chi2(best['lam']):.0f}), so a finer grid does not pick {best['name']}.")


def order_right(pair: dict) -> float:
    """From ``pair_separation``: the chance that the pooled χ² orders the two divisors as
    their exact λ do."""
    return pair["b_below"] if pair["dlam"] < 0 else 1 - pair["b_below"]


def smallest_lambda_text(result) -> str:
    """What decided the finals for the finalist of smallest exact λ: it won; or it had the
    best pooled χ² and lost on the KS rank; or the pooled χ² did not rank it first either."""
    rows = {r["divisor"]: r for r in ranking_rows(result.finals)}
    s = min(result.finals, key=lambda r: r["lam"])
    r = rows[s["name"]]
    if s["name"] == result.finals[0]["name"]:
        return f"The finalist of smallest exact λ, {s['name']}, wins."
    if r["χ² rank"] == "1":
        return (f"The finalist of smallest exact λ, {s['name']}, has the best pooled χ² but KS "
                f"rank {r['KS rank']} (its plateau atom: "
                f"{plateau_atom(parse_divisor(s['name'])):.1e}): the KS half, not χ² noise, "
                "costs it the win.")
    return (f"The finalist of smallest exact λ, {s['name']}, has χ² rank {r['χ² rank']} and KS "
            f"rank {r['KS rank']}: at this sample size the pooled χ² does not rank it first "
            "either.")


def seed_correlation(result, a: str, b: str) -> float:
    """The correlation over the finals' seeds of two finalists' per-seed KS distances (they
    share their uniforms, so their sampling errors move together)."""
    rows = {r["name"]: r for r in result.finals}
    return float(np.corrcoef(rows[a]["ks_per_seed"], rows[b]["ks_per_seed"])[0, 1])


def core_divide(k: float, log2=DEFAULT_FASTLOG2) -> dict:
    """The modelled core has no divide: ``t/k`` becomes ``t`` times ``1/k`` rounded to
    float32. Lattice points where that changes g, the exact λ and KS distance of both, and
    the plateau atom of both."""
    t = search._first_layer(log2)
    g = second_layer_parts(t, k, log2)[2]
    with np.errstate(divide="ignore", invalid="ignore"):
        x = t * np.float32(1 / np.float32(k))
        g_mul = -(log2(x) + np.float32(np.log2(np.float64(k))))
    divide, multiply = search.exact_row("divide", g), search.exact_row("multiply", g_mul)
    return {"differ": int(np.count_nonzero(g != g_mul)),
            "lam_divide": divide["lam"], "lam_multiply": multiply["lam"],
            "ks_divide": divide["exact_ks"], "ks_multiply": multiply["exact_ks"],
            "atom_divide": plateau_atom(k, log2),
            "atom_multiply": float(np.count_nonzero(log2(x) == 0) / t.size)}


# --- the tail ----------------------------------------------------------------------------

def tail_wins(laws: dict, deltas) -> dict:
    """Per law of ``laws``: the exact chance, at each Δ of ``deltas``, that one of the
    vocabulary's tail tokens, each 2^−Δ below the top token, wins (``tails.tail_token_win``)."""
    return {name: np.array([tails.tail_token_win(law, d) for d in deltas])
            for name, law in laws.items()}


def tail_rows(wins: dict, deltas, shown) -> list[dict]:
    """The rows of ``tail_wins`` (over ``deltas``) at the Δ of ``shown``, beside the ideal."""
    rows = []
    for d in shown:
        i = list(deltas).index(d)
        row = {"Δ": f"{d:g}", "ideal": f"{float(tails.ideal_tail_token_win(d)):.3g}"}
        row.update({name: f"{w[i]:.3g}" for name, w in wins.items()})
        rows.append(row)
    return rows


# --- the fit's knobs ---------------------------------------------------------------------

def integer_ranking(log2=DEFAULT_FASTLOG2, samples: float = N,
                    divisors: tuple = search.INTEGER_DIVISORS) -> list[dict]:
    """Divisors by exact λ, smallest first, with E[χ²] at ``samples``."""
    lam = sp.knob_landscape(log2, tuple(divisors))
    return [{"name": search.divisor_name(divisors[i]), "divisor": divisors[i],
             "lam": float(lam[i]), "expected_chi2": expected_chi2(float(lam[i]), samples)}
            for i in np.argsort(lam, kind="stable")]


def best_divisor(log2: FastLog2, divisors: tuple = KNOB_DIVISORS) -> str:
    """The divisor of smallest exact λ under ``log2``."""
    return integer_ranking(log2, divisors=divisors)[0]["name"]


def knob_study(knob: str, values, divisors: tuple = KNOB_DIVISORS,
               log2: FastLog2 = DEFAULT_FASTLOG2) -> dict:
    """Exact λ of ``divisors`` for each value of one knob of ``log2``: value → λ array."""
    return {v: sp.knob_landscape(log2.replace(**{knob: v}), divisors) for v in values}


TIE = 1e-3
"""Divisors whose λ lie within this relative margin of the smallest tie for it."""


def knob_winners(study: dict, divisors: tuple = KNOB_DIVISORS, tie: float = TIE) -> dict:
    """Per value of a ``knob_study``: the divisors of smallest λ, all those within ``tie``
    (relative) of the smallest, smallest first."""
    out = {}
    for v, lam in study.items():
        lam = np.asarray(lam)
        near = [i for i in np.argsort(lam, kind="stable") if lam[i] <= lam.min() * (1 + tie)]
        out[v] = tuple(search.divisor_name(divisors[i]) for i in near)
    return out


def winners_text(study: dict, divisors: tuple = KNOB_DIVISORS, tie: float = TIE) -> str:
    """Each winner of a ``knob_study`` with the values it wins at, runs of consecutive
    integers joined ("div9 at 5–6 and 8–16 bits"); a tie within ``tie`` said as one
    ("div8 and div16, tied within 0.1 %, at 4 bits")."""
    by = {}
    for v, names in knob_winners(study, divisors, tie).items():
        margin = f"{tie:.1%}".replace("%", " %")
        label = names[0] if len(names) == 1 else f"{and_list(names)}, tied within {margin},"
        by.setdefault(label, []).append(v)
    parts = []
    for name, values in sorted(by.items(), key=lambda kv: -len(kv[1])):
        items, start = [], values[0]
        for a, b in zip(values, values[1:] + [None], strict=True):
            if b != a + 1:
                items += ([f"{start}–{a}"] if a > start + 1
                          else [str(v) for v in range(start, a + 1)])
                start = b
        parts.append(f"{name} at {and_list(items)} bits")
    return "; ".join(parts)


def tie_choice(names, log2: FastLog2, divisors: tuple = KNOB_DIVISORS) -> dict:
    """Divisors ``names`` tied on λ (one ``knob_winners`` entry) under ``log2``: their
    ``atom_rows``, the λ margin between them, and the one whose plateau atom and KS
    distance are both the smallest (None if no one's are)."""
    by_name = {search.divisor_name(k): k for k in divisors}
    rows = atom_rows(tuple(by_name[n] for n in names), log2)
    lam = [r["lam"] for r in rows]
    both = [r for r in rows if all(r["atom"] <= o["atom"] and r["exact_ks"] <= o["exact_ks"]
                                   for o in rows)]
    return {"rows": rows, "margin": max(lam) / min(lam) - 1,
            "choice": both[0]["name"] if both else None}


def knob_knee(study: dict, tol: float = 0.03) -> int:
    """The smallest knob value from which on (over the values of ``study``) no divisor's λ
    varies by more than ``tol`` (relative)."""
    values = sorted(study)
    for i, v in enumerate(values):
        lam = np.array([study[w] for w in values[i:]])
        if np.all(lam.max(axis=0) / lam.min(axis=0) - 1 <= tol):
            return v
    return values[-1]


def knob_figure(knob: str, divisors: tuple = KNOB_DIVISORS):
    """``draw(value)``: the exact E[χ²] at 10^9 samples of every divisor in ``divisors``
    under the emulator with ``knob`` = value; the winner as caption."""
    def draw(**setting):
        value = int(setting[knob])
        cfg = DEFAULT_FASTLOG2.replace(**{knob: value})
        fig = sp.draw_knob_frame(cfg, tuple(divisors), f"{knob} = {value}")
        names = knob_winners({value: sp.knob_landscape(cfg, tuple(divisors))}, divisors)[value]
        tied = f" (tied within {TIE:.1%})".replace("%", " %") if len(names) > 1 else ""
        return fig, f"{knob} = {value}: smallest λ at {and_list(names)}{tied}"
    return draw


def knob_control(knob: str, lo: int, hi: int, frames):
    """An integer knob of the fit from ``lo`` to ``hi`` live; ``frames`` precomputed, the
    calibrated value first shown."""
    return int_control(knob, lo, hi, frames=frames, value=getattr(DEFAULT_FASTLOG2, knob),
                       label=knob)


# --- the sweep ---------------------------------------------------------------------------

def sweep_table(result) -> list[dict]:
    """One row per design of a sweep (``rslab.numerics.sweep``): its knobs, best divisor,
    expected χ² at 10^9 samples, plateau atom and KS distance."""
    names = [n for n, _ in result.config.axes]
    rows = []
    for r in result.best:
        knobs = {n.replace("_", " "): str(r[n]) for n in names}
        if "error" in r:
            rows.append({**knobs, "best divisor": "no usable design", "E[χ²] at 10⁹": "",
                         "plateau atom": "", "KS distance": ""})
            continue
        rows.append({**knobs, "best divisor": r["best"],
                     "E[χ²] at 10⁹": f"{r['expected_chi2']:,.1f}",
                     "plateau atom": f"{r['zero_mass']:.2e}",
                     "KS distance": f"{r['exact_ks']:.2e}"})
    return rows


def sweep_scope_text(config, moved: dict, base: FastLog2 = DEFAULT_FASTLOG2) -> str:
    """Why a sweep whose designs all pick one divisor shows no other: the knobs it varies and
    the divisors it tries, beside the slider settings where the choice moves (``moved``:
    (knob, value) → the divisors of smallest λ there, each setting ``base`` with that one
    knob changed), none of which is one of its designs. "" if one is."""
    designs = [d for _, d in config.designs()]
    if not moved or any(base.replace(**{k: v}) in designs for k, v in moved):
        return ""
    axes = dict(config.axes)
    varied = [f"{k} over {and_list(map(str, v))}" for k, v in axes.items() if len(v) > 1]
    fixed = [f"{k} {v[0]}" for k, v in axes.items() if len(v) == 1]
    tried = and_list(search.divisor_name(k).capitalize() for k in config.divisors)
    where = and_list(f"{k} {v} ({and_list(n.capitalize() for n in names)})"
                 for (k, v), names in moved.items())
    return (f" This sweep is too small to show it move: it varies "
            f"{and_list(varied) or 'no knob'}{' at ' + and_list(fixed) if fixed else ''} and tries "
            f"{tried}, while the sliders above move the choice at {where}, none of them a "
            "design of this sweep.")


def smallest_lambda(result) -> dict:
    """The design and divisor with the smallest λ of the whole sweep."""
    ok = [r for r in result.best if "error" not in r]
    if not ok:
        raise ValueError("the sweep has no usable design")
    return min(ok, key=lambda r: (r["lam"], r["exact_ks"]))


def design_row(result, log2=DEFAULT_FASTLOG2) -> dict:
    """The row of a sweep's ``best`` for the design whose swept knobs are ``log2``'s."""
    names = [n for n, _ in result.config.axes]
    for r in result.best:
        if all(r[n] == getattr(log2, n) for n in names):
            return r
    raise ValueError("the sweep has no design with these knobs")


def paired_ks(result) -> list[dict]:
    """The finals' winner against every other finalist on the per-seed KS distances (they
    share their uniforms): the paired p-value and whether the difference is resolved."""
    winner = result.finals[0]
    out = []
    for r in result.finals[1:]:
        p = separation.paired_p(winner["ks_per_seed"], r["ks_per_seed"])
        out.append({"other": r["name"], "p": p, "resolved": p < separation.LEVEL})
    return out


def sampled_vs_exact_rows(result) -> list[dict]:
    """Each finalist's pooled χ² beside the law its exact λ predicts (with each seed's
    finite-population factor): mean, central 99 % interval and the sample's quantile."""
    fpc = mc.stream_fpc(result.config.samples_per_seed, result.config.rng)
    rows = []
    for r in result.finals:
        law = mc.predicted_chi2(r["lam"], r["samples"], fpc=fpc)
        q = float(law.cdf(r["chi2"]))
        rows.append({"finalist": r["name"], "sampled χ²": f"{r['chi2']:,.1f}",
                     "predicted mean": f"{law.mean():,.1f}",
                     "predicted 99 % interval": f"[{law.ppf(0.005):,.1f}, {law.ppf(0.995):,.1f}]",
                     "quantile": f"{q:.3f}", "inside": 0.005 <= q <= 0.995})
    return rows


def finals_text(result) -> dict:
    """The sentences of the finals' verdict, from ``finals_verdict``, ``selection_report``
    and ``paired_ks``: who won and how (a tie said, with its tie-break), each criterion's
    leader, and whether either criterion separates the winner from the runner-up."""
    v, ks_pairs = finals_verdict(result), paired_ks(result)
    rep = selection_report(result)
    rows = ranking_rows(result.finals)
    rank = {r["divisor"]: r for r in rows}
    w = v["winner"]
    if v["baseline_wins"]:
        won = (f"At this scale the finals are won by the baseline, {w}, itself: no finalist "
               "beats its rank sum.")
    elif len(v["tied"]) > 1:
        ranks = "; ".join(f"{n}: KS rank {rank[n]['KS rank']}, χ² rank {rank[n]['χ² rank']}"
                          for n in v["tied"])
        won = (f"The finals put **{w}** first, but only through the tie-break: "
               f"{' and '.join(v['tied'])} share the smallest rank sum, "
               f"{rank[w]['rank sum']} ({ranks}), and the smaller pooled χ² breaks the tie "
               f"for {w}.")
    else:
        won = f"The finals put **{w}** first on the rank sum alone."
    leaders = (f"KS alone ranks {v['ks_first']} first, χ² alone {v['chi2_first']}"
               + (f"; a KS tie-break would have chosen {v['by_ks_tiebreak']}."
                  if v["by_ks_tiebreak"] != w else "."))
    second = result.finals[1]["name"]
    ks_p = next(c["p"] for c in ks_pairs if c["other"] == second)
    chi_p = next(c["p"] for c in rep["chi2"] if c["other"] == second)
    separated = [n for n, p in (("KS", ks_p), ("χ²", chi_p)) if p < separation.LEVEL]
    pair = (f"Paired over the seeds, {w} against the runner-up {second} gives KS p = "
            f"{ks_p:.2g} and χ² p = {chi_p:.2g}: "
            + (f"only {' and '.join(separated)} resolves the difference at "
               f"{separation.LEVEL:g}." if separated else
               f"neither criterion separates them at {separation.LEVEL:g}."))
    return {"won": won, "leaders": leaders, "pair": pair, "separated": separated,
            "runner_up": second}


OWN_LAW_SIMS = 1000
"""Simulated seeds behind each finalist's own-law KS mean."""


@functools.lru_cache(maxsize=64)
def own_law_ks(k: float, n: int, fpc: float, log2: FastLog2 = DEFAULT_FASTLOG2) -> tuple:
    """Mean and standard deviation of the KS distance that ``n`` draws of Div-``k``'s own law
    show (``separation.sample_ks`` around the exact lattice law)."""
    d = separation.sample_ks(search.sorted_noise(k, log2), n, sims=OWN_LAW_SIMS, fpc=fpc)
    return float(d.mean()), float(d.std())


def own_law(result) -> dict:
    """Per finalist: the mean KS its own law makes a seed of the finals show (``se``: that
    mean's simulation error), and ``z``/``p`` of the finals' mean against it (the mean of the
    seeds taken as normal)."""
    cfg = result.config
    fpc = mc.stream_fpc(cfg.samples_per_seed, cfg.rng)
    out = {}
    for r in result.finals:
        mean, sd = own_law_ks(parse_divisor(r["name"]), cfg.samples_per_seed, fpc, cfg.log2)
        z = (r["mean_ks"] - mean) / (sd / np.sqrt(r["seeds"]))
        out[r["name"]] = {"mean": mean, "se": sd / np.sqrt(OWN_LAW_SIMS), "z": float(z),
                          "p": float(2 * sps.norm.sf(abs(z)))}
    return out


def ks_text(result) -> dict:
    """The KS half of the finals against the null law of unbiased noise: the finalists
    whose laws lie below the null mean (their p-values, and how their per-seed distances
    correlate), those above it, and Div8."""
    rep = selection_report(result)
    base = search.divisor_name(result.config.baseline)
    rows = [r for r in rep["ks"] if r["name"] != base]
    null = rep["ks"][0]["null"]
    below = [r for r in rows if r["exact_ks"] < null]
    above = [r for r in rows if r["exact_ks"] > 1.5 * null]
    text = ""
    if below:
        names = ", ".join(r["name"] for r in below)
        dist = ", ".join(f"{r['exact_ks']:.1e}" for r in below)
        ps = [r["p"] for r in below]
        text = (f"The laws of {names} lie below that null mean (their own KS distances: "
                f"{dist}). " if len(below) > 1 else
                f"The law of {names} lies below that null mean (its own KS distance: {dist}). ")
        own = own_law(result)
        expect = [own[r["name"]]["mean"] for r in below]
        z_own = max(abs(own[r["name"]]["z"]) for r in below)
        if min(ps) >= 0.05:
            text += (f"Its sample mean looks like noise (p = {ps[0]:.2g}). " if len(below) == 1
                     else f"Their sample means look like noise (p from {min(ps):.2g} to "
                     f"{max(ps):.2g}). ")
        else:
            text += (f"None is rejected at {separation.LEVEL:g}, but "
                     + ("each lies" if len(below) > 1 else "it lies")
                     + f" {min(abs(r['z']) for r in below):.1f} to "
                     f"{max(abs(r['z']) for r in below):.1f} standard deviations above it "
                     f"(p from {min(ps):.2g} to {max(ps):.2g}). That is not a fluke: a law "
                     f"that close to the noise floor makes a sample of N show on average "
                     f"{min(expect):.2e} to {max(expect):.2e}, not the null's {null:.2e} "
                     f"(`separation.sample_ks`), and against their own laws the means lie "
                     f"within {z_own:.1f} standard deviations. The sample is beginning to see "
                     "these laws. ")
        if len(below) > 1:
            corr = min(seed_correlation(result, a["name"], b["name"])
                       for i, a in enumerate(below) for b in below[i + 1:])
            text += (f"They are one observation, not {len(below)}: the finalists share their "
                     f"uniforms, and these {len(below)} finalists' per-seed KS distances "
                     f"correlate at {corr:.2f} or more, so the seeds ran high or low for all "
                     "of them together. ")
    smallest = min(r["lam"] for r in rep["ks"])
    for r in above:
        atom = plateau_atom(parse_divisor(r["name"]))
        text += (f"{r['name']}'s law is {r['exact_ks']:.2e} from the ideal, above the null mean, "
                 f"and the sample sees it (p = {r['p']:.2g}): about half its plateau atom "
                 f"({atom:.1e}), which the KS ranks"
                 + (", although its λ is the smallest of the finals. " if r["lam"] == smallest
                    else ". "))
    d8 = rep["ks"][[r["name"] for r in rep["ks"]].index(base)]
    text += (f"Div8's mean lies above the null (p = {d8['p']:.2g}): that is its g = −3 atom."
             if d8["p"] < separation.LEVEL else
             f"Div8's mean is consistent with the null at this N (p = {d8['p']:.2g}): its "
             "g = −3 atom is too light to see with so few samples.")
    return {"text": text, "null": null, "below": below, "above": above, "div8": d8,
            "own": own_law(result)}


def ks_rows(result) -> list[dict]:
    """Each finalist's mean per-seed KS distance beside its law's own distance and the mean a
    seed shows under that law, with its p-values against the null law of unbiased noise and
    against its own law."""
    rep = selection_report(result)
    own = own_law(result)
    return [{"finalist": r["name"], "mean KS (×10⁻⁵)": f"{r['mean_ks'] * 1e5:.2f}",
             "the law's own distance (×10⁻⁵)": f"{r['exact_ks'] * 1e5:.2f}",
             "a seed's mean KS under it (×10⁻⁵, ± simulation error)":
                 f"{own[r['name']]['mean'] * 1e5:.1f} ± {own[r['name']]['se'] * 1e5:.1f}",
             "p against the null": f"{r['p']:.2g}",
             "p against its own law": f"{own[r['name']]['p']:.2g}"} for r in rep["ks"]]


def chi2_rows(result) -> list[dict]:
    """Each finalist's pooled χ² with the 99 % band of the law it estimates and, paired over
    the seeds, its p-value against the winner."""
    rep = selection_report(result)
    winner = result.finals[0]
    band = rep["chi2"][0]["band_winner"] if rep["chi2"] else None
    rows = [{"finalist": winner["name"], "pooled χ²": f"{winner['chi2']:,.1f}",
             "99 % band": f"[{band[0]:,.1f}, {band[1]:,.1f}]" if band else "",
             "paired p against the winner": "(the winner)"}]
    finals = {r["name"]: r for r in result.finals}
    rows += [{"finalist": c["other"], "pooled χ²": f"{finals[c['other']]['chi2']:,.1f}",
              "99 % band": f"[{c['band_other'][0]:,.1f}, {c['band_other'][1]:,.1f}]",
              "paired p against the winner": f"{c['p']:.2g}"} for c in rep["chi2"]]
    return rows
