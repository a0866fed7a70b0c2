"""Chapter 5, *Div8 diagnosis*: exact counts over the lattice, the chapter's tables, and the
plateau width and divisor live.

Every count here is exact over the 2^24-point lattice of uniforms (every ``stride``-th
point, still exact for that sub-lattice), expressed per 2^20 draws as in the note.
"""

import ast
import functools
import inspect

import numpy as np
from scipy.optimize import brentq
from scipy.stats import chi2, kstwo, kstwobign, ncx2

from rslab import note
from rslab.numerics import fastlog
from rslab.numerics.fastlog import DEFAULT_FASTLOG2, FastLog2
from rslab.numerics.gumbel import get_noise
from rslab.numerics.rng import all_uniforms
from rslab.numerics.separation import KS_NULL_MEAN, sample_ks
from rslab.numerics.stats import N_BINS, validate_sample
from rslab.viz import numerics_plots as npl
from rslab.viz.controls import float_control

STRIDE = 4
"""Every 4th of the 2^24 lattice uniforms: exact counts at a quarter of the cost."""
TAU_RANGE = (0.1, 4.0)
"""The τ slider's range, as multiples of the calibrated threshold."""
TAU_SCALES = (TAU_RANGE[0], 0.25, 0.5, 1.0, 1.5, 2.0, 3.0, TAU_RANGE[1])
"""The thresholds (× the calibrated τ) of the plateau figure's reference curve: the slider's
whole range."""
KS_ALPHA = 0.01
"""The level at which the chapter's KS test rejects."""


@functools.lru_cache(maxsize=64)
def zeros_per_2_20(cfg: FastLog2, stride: int = STRIDE) -> float:
    """Exact count of ``g = 0`` per 2^20 draws of the scaled pipeline under log ``cfg``."""
    u = all_uniforms()[::stride]
    return note.SAMPLES * float(np.mean(get_noise("scaled", log2=cfg)(u) == 0))


def plateau_hits(log2: FastLog2, k: float, stride: int = 1) -> tuple[float, float, float]:
    """For divisor ``k`` (1 = scaled, no divisor): exact fractions of lattice draws with
    ``fl(t/k) = 0`` and with ``g = 0``, and the ideal-law plateau probability."""
    name = "scaled" if k == 1 else f"div({k})"
    tr = get_noise(name, log2=log2).trace(all_uniforms()[::stride])
    a, b = log2.plateau()
    ideal = 2.0 ** (-k * a) - 2.0 ** (-k * b) if not np.isnan(a) else 0.0
    return float(np.mean(tr["l2"] == 0)), float(np.mean(tr["g"] == 0)), ideal


def divisor_error_profile(k: float, log2: FastLog2 = DEFAULT_FASTLOG2,
                          stride: int = STRIDE) -> dict:
    """For divisor ``k`` (1 = scaled): the worst same-input error ``|g − g_precise|`` per bin
    of the second-layer input ``t``, the plateau of ``fl(t/k)``, and the exact counts of
    ``g = 0`` and of plateau hits per 2^20 draws."""
    name = "scaled" if k == 1 else f"div({k})"
    u = all_uniforms()[::stride]
    tr = get_noise(name, log2=log2).trace(u)
    err = np.abs(tr["g"].astype(np.float64) - _precise(stride))
    t = tr["t"].astype(np.float64)
    edges = np.geomspace(1e-3, 25, 200)
    idx = np.clip(np.searchsorted(edges, t) - 1, 0, edges.size - 2)
    worst = np.zeros(edges.size - 1)
    np.maximum.at(worst, idx, err)
    a, b = log2.plateau()
    return {"k": k, "t": np.sqrt(edges[1:] * edges[:-1]), "worst": worst,
            "plateau": (k * a, k * b), "zeros": note.SAMPLES * float(np.mean(tr["g"] == 0)),
            "hits": note.SAMPLES * float(np.mean(tr["l2"] == 0))}


@functools.lru_cache(maxsize=4)
def _precise(stride: int) -> np.ndarray:
    """The precise noise on the sub-lattice (float64), computed once."""
    return get_noise("precise")(all_uniforms()[::stride]).astype(np.float64)


def divisor_caption(k: float, profile: dict) -> str:
    """The live divisor figure's caption: its exact counts."""
    return (f"k = {k:g}: {profile['zeros']:,.1f} zeros (g = 0) and {profile['hits']:,.1f} "
            "plateau hits per 2^20 draws")


def plateau_figure(scale: float):
    """Live frame: the log with its zero threshold τ scaled by ``scale``; the exact count of
    zeros of the scaled pipeline as caption."""
    base = DEFAULT_FASTLOG2
    cfg = base.replace(zero_threshold=base.zero_threshold * scale)
    taus, curve = plateau_curve()
    here = zeros_per_2_20(cfg)
    return (npl.plot_plateau_frame(cfg, taus, curve, here, *plateau_limits()),
            f"τ = {cfg.zero_threshold:.5f}: {here:,.1f} zeros per 2^20 draws (scaled)")


def plateau_curve(log2: FastLog2 = DEFAULT_FASTLOG2) -> tuple[list, list]:
    """The plateau figure's reference curve: each threshold of ``TAU_SCALES`` (× the calibrated
    τ) and the scaled pipeline's exact zeros per 2^20 draws there."""
    taus = [log2.zero_threshold * s for s in TAU_SCALES]
    return taus, [zeros_per_2_20(log2.replace(zero_threshold=t)) for t in taus]


def plateau_limits() -> tuple[tuple, tuple]:
    """The plateau figure's fixed τ and zero-count axes: the reference curve over the slider's
    whole range (the count grows with τ, so every position lies inside)."""
    taus, curve = plateau_curve()
    return (0.0, 1.05 * taus[-1]), (0.0, 1.08 * max(curve))


K_MAX = 32.0
"""The divisor slider's largest value."""
PROFILE_LIMITS = ((1e-3, 1.25 * K_MAX), (1e-6, 20.0))
"""The divisor figure's t and error axes: every divisor of the slider, its plateau and its
worst error (up to ≈ 7, at the smallest t) inside them."""


def divisor_figure(k: float):
    """Live frame: the same-input error of divisor ``k`` against the precise pipeline; the
    exact zero and plateau-hit counts as caption."""
    d = divisor_error_profile(k)
    return npl.plot_divisor_profile(d, *PROFILE_LIMITS), divisor_caption(k, d)


def plateau_control():
    """τ as a multiple of the calibrated threshold: 0.1 to 4 live."""
    return float_control("scale", *TAU_RANGE, step=0.05, frames=TAU_SCALES, value=1.0,
                         label="τ × calibrated")


def divisor_control():
    """The divisor k: 1 to 32 in steps of 0.5 live; powers of two precomputed."""
    return float_control("k", 1.0, K_MAX, step=0.5, frames=(1, 2, 4, 8, 16, 32), value=8,
                         label="divisor k")


FINE_ACCUMULATOR = 30
"""The product and square widths (bits) of the control log in ``tail_reach``."""


def tail_reach(top: int = 4096, log2: FastLog2 = DEFAULT_FASTLOG2) -> dict:
    """How far the scaled pipeline's upper tail reaches on the lattice and why: its largest g
    against the lattice's own (the precise pipeline's); how many distinct values the ``top``
    largest lattice uniforms give at each step (``top`` when no mass is merged); the first
    log's output step there against the step of ``log2(u·c)`` per lattice point; the
    smallest t against the ideal one; and the same for a control log whose products and
    squares keep ``FINE_ACCUMULATOR`` bits (``fine``)."""
    u = all_uniforms()[-top:]
    tr = get_noise("scaled", log2=log2).trace(u)
    g_precise = get_noise("precise")(u)
    uc = tr["uc"].astype(np.float64)
    fine_log = log2.replace(product_bits=FINE_ACCUMULATOR, square_bits=FINE_ACCUMULATOR)
    fine = get_noise("scaled", log2=fine_log).trace(u)
    return {"top": top, "g_max": float(tr["g"].max()), "g_max_lattice": float(g_precise.max()),
            "distinct": int(np.unique(tr["g"]).size),
            "distinct_lattice": int(np.unique(g_precise).size),
            "distinct_products": int(np.unique(tr["uc"]).size),
            "distinct_first_log": int(np.unique(tr["l1"]).size),
            "first_log_step": float(np.median(np.diff(np.unique(tr["l1"]).astype(np.float64)))),
            "accumulator_lsb": 2.0**-log2.product_bits,
            "log_step": float(np.median(np.diff(np.log2(uc)))),
            "t_min": float(tr["t"].min()),
            "t_min_ideal": float((-np.log2(u.astype(np.float64))).min()),
            "fine": {"bits": FINE_ACCUMULATOR, "error_bound": fine_log.error_bound(),
                     "bound": log2.error_bound(), "g_max": float(fine["g"].max()),
                     "distinct": int(np.unique(fine["g"]).size)}}


def largest_log_error(lo: float = 0.5, hi: float = 2.0, log2: FastLog2 = DEFAULT_FASTLOG2) -> dict:
    """The largest absolute error of ``log2`` over every float32 in ``[lo, hi)``, where it is,
    whether it lies in the band ``|log2 x| < 2τ`` that ``error_bound()`` leaves out, and the
    largest error outside that band (``outside``); the band's float32 count, how many of them
    give 0 (the plateau), and the largest relative error of the others (``band_rel_max``)."""
    bits = np.arange(np.float32(lo).view(np.uint32), np.float32(hi).view(np.uint32),
                     dtype=np.uint32)
    x = bits.view(np.float32)
    err = np.abs(log2(x).astype(np.float64) - np.log2(x.astype(np.float64)))
    i = int(np.argmax(err))
    bound = log2.error_bound()
    exact = np.log2(x.astype(np.float64))
    excluded = np.abs(exact) < 2 * log2.zero_threshold
    zero = log2(x) == 0
    rest = excluded & ~zero & (exact != 0)
    return {"error": float(err[i]), "x": float(x[i]), "bound": bound,
            "ratio": float(err[i]) / bound, "excluded": 2 * log2.zero_threshold,
            "in_excluded": bool(excluded[i]), "outside": float(err[~excluded].max()),
            "band_points": int(excluded.sum()), "band_zeros": int((excluded & zero).sum()),
            "band_rel_max": float((err[rest] / np.abs(exact[rest])).max())}


def atom_mass_estimate(k: float, log2: FastLog2 = DEFAULT_FASTLOG2) -> float:
    """The Div-k atom's mass from the ideal law of t: density ``ln 2 · 2^-k`` at ``t = k``
    times the plateau's width in t, ``k · 2τ ln 2``."""
    return float(np.log(2) ** 2 * 2.0**-k * k * 2 * log2.zero_threshold)


def plateau_g_range(k: float, log2: FastLog2 = DEFAULT_FASTLOG2) -> tuple[float, float]:
    """The range of g that divisor ``k``'s plateau draws (1 = scaled: ``t`` in ``[a, b]``;
    else ``t`` in ``[k·a, k·b]``) would give without the plateau, ``−log2 t``."""
    a, b = log2.plateau()
    return float(-np.log2(k * b)), float(-np.log2(k * a))


def clamp_t_lambda(log2: FastLog2 = DEFAULT_FASTLOG2) -> dict:
    """Exact λ of the scaled pipeline and of the same pipeline with its plateau clamped
    (``g = −fl(max(t, b⁺))`` for t in the plateau ``[a, b]``)."""
    from rslab.numerics.search import exact_row

    tr = get_noise("scaled", log2=log2).trace(all_uniforms())
    a, b = log2.plateau()
    t = tr["t"]
    above = np.nextafter(np.float32(b), np.float32(np.inf))
    clamped = np.where((t >= np.float32(a)) & (t <= np.float32(b)), above, t)
    with np.errstate(divide="ignore", invalid="ignore"):
        g_clamp = -log2(clamped)
    return {"scaled": exact_row("scaled", tr["g"])["lam"],
            "clamp": exact_row("clamp", g_clamp)["lam"]}


@functools.cache
def knob_docs() -> dict:
    """Each ``FastLog2`` field's docstring, first sentence, read from its source."""
    tree = ast.parse(inspect.getsource(fastlog.FastLog2))
    body = tree.body[0].body
    docs = {}
    for node, nxt in zip(body, body[1:], strict=False):
        if isinstance(node, ast.AnnAssign) and isinstance(nxt, ast.Expr) \
                and isinstance(nxt.value, ast.Constant):
            docs[node.target.id] = nxt.value.value.split(". ")[0].rstrip(".").replace("``", "`")
    return docs


def knob_rows(log2: FastLog2 = DEFAULT_FASTLOG2) -> list[dict]:
    """The fast log's configuration for a page: each knob, its value and what it sets."""
    docs = knob_docs()
    return [{"knob": f"`{name}`", "value": _value(getattr(log2, name)),
             "what it sets": docs.get(name, "")} for name in log2.__dataclass_fields__]


def _value(v) -> str:
    return f"{v:.6g}" if isinstance(v, float) else repr(v)


def calibration_rows(calib) -> list[dict]:
    """The calibration's candidates (``calibration.calibrate``) for a page."""
    return [{"c0 width (bits)": str(r["c0_bits"]), "c1 width (bits)": str(r["c1_bits"]),
             "threshold τ": f"{r['zero_threshold']:.5f}",
             "Div8's E[χ²] at 10⁹": f"{r['expected_chi2']:,.1f}",
             "error bound": f"{r['error_bound']:.2e}"} for r in calib.rows]


def token_picks(logits, rows: int, seed: int, low: int) -> dict:
    """Over ``rows`` rows with the same ``logits`` (float32): the tokens the naive fast-log
    pipeline and the precise one pick, and how often the naive one picks a masked token when
    the first half of the vocabulary is masked out."""
    from rslab.numerics.gumbel import sample_uniforms

    v = logits.size
    log2e = np.float32(1 / np.log(2))
    naive, precise = get_noise("naive"), get_noise("precise")
    masked = logits.copy()
    masked[: v // 2] = -np.inf
    picks = {"naive fast log": [], "precise": []}
    masked_picks = 0
    for r in range(rows):
        u = sample_uniforms(v, seed=seed, start=r * v)
        g = naive(u)
        picks["naive fast log"].append(int(np.argmax(logits * log2e + g)))
        picks["precise"].append(int(np.argmax(logits * log2e + precise(u))))
        with np.errstate(invalid="ignore"):
            masked_picks += int(np.argmax(masked * log2e + g) < v // 2)
    picks = {k: np.array(p) for k, p in picks.items()}
    return {"picks": picks, "masked_share": masked_picks / rows,
            "low_share": {k: float(np.mean(p < low)) for k, p in picks.items()}}


def hypothesis_rows(t_all, ex_scaled, log2: FastLog2 = DEFAULT_FASTLOG2) -> tuple[list, dict]:
    """The two hypotheses for the zeros, each with the note's prediction and the model's
    (exact over the lattice ``t_all`` of the scaled pipeline, and the estimate each
    hypothesis makes), per 2^20 draws; and the figures behind them."""
    from rslab.numerics.calibration import plateau_prediction

    n = note.SAMPLES
    on_one = int(np.sum(t_all == np.float32(1)))
    near = np.unique(t_all[(t_all > 0.999) & (t_all < 1.001)])
    step = float(np.median(np.diff(near)))
    figures = {"h1_exact": n * on_one / t_all.size, "on_one": on_one, "t_step": step,
               "h1_estimate": n * np.log(2) * 2.0**-1 * step,   # density of t at 1 × its step
               "h2_estimate": plateau_prediction(log2),
               "h2_exact": ex_scaled.expected_count("zeros", n)}
    rows = [{"hypothesis": "(1) the first log lands t exactly on 1",
             "the note's prediction": f"≈{note.FIRST_LOG_PREDICTION:g}",
             "the model, exact": f"{figures['h1_exact']:.3g} ({on_one} lattice u give t = 1)",
             "the model's estimate": f"{figures['h1_estimate']:.2f} (density of t at 1 × the "
                                     "step of t)"},
            {"hypothesis": "(2) the second log's plateau",
             "the note's prediction": f"≈{note.PLATEAU_PREDICTION:,}",
             "the model, exact": f"{figures['h2_exact']:,.1f}",
             "the model's estimate": f"{figures['h2_estimate']:,.1f} (ideal law of t on "
                                     "[a, b])"}]
    return rows, figures


def trace_rows(trace: dict, i: int) -> list[dict]:
    """One draw's values at every step of a pipeline's ``trace``."""
    steps = {"u": "u", "uc": "u·c", "l1": "first log fl(u·c)", "t": "t", "tk": "t/k",
             "l2": "second log", "g": "g"}
    same = {"tk": "t", "uc": "u"}  # a pipeline without the divisor or the scale skips the step
    return [{"step": steps.get(k, k), "value": f"{float(v[i]) + 0.0:.10f}"}
            for k, v in trace.items() if not (k in same and np.array_equal(v, trace[same[k]]))]


def ks_noise_floor(n: int) -> float:
    """The mean KS distance of ``n`` draws from the ideal law itself: 0.8687/√n."""
    return KS_NULL_MEAN / np.sqrt(n)


def ks_critical(n: int, alpha: float = KS_ALPHA) -> float:
    """The KS distance above which a test at level ``alpha`` rejects, large-n form
    ``c_α/√n`` (``c_0.01`` ≈ 1.63, the Kolmogorov law's 99 % point)."""
    return float(kstwobign.isf(alpha)) / np.sqrt(n)


def ks_power(ex, n: int, alpha: float = KS_ALPHA, sims: int = 200) -> float:
    """The share of ``sims`` simulated samples of ``n`` draws of the exact law ``ex`` whose KS
    test rejects at level ``alpha`` (``separation.sample_ks`` against ``scipy``'s ``kstwo``)."""
    return float(np.mean(sample_ks(ex.sorted_g, n, sims=sims) > kstwo.isf(alpha, n)))


def chi2_power(lam: float, n: float, alpha: float = KS_ALPHA) -> float:
    """The probability that the 64-bin χ² of ``n`` draws rejects at level ``alpha`` a law of
    noncentrality ``lam`` per draw (noncentral χ² with 63 degrees of freedom and ``n·lam``)."""
    dof = N_BINS - 1
    return float(ncx2.sf(chi2.isf(alpha, dof), dof, n * lam))


def chi2_n_for_power(lam: float, power: float, alpha: float = KS_ALPHA) -> float:
    """The number of draws at which the 64-bin χ² at level ``alpha`` rejects a law of
    noncentrality ``lam`` with probability ``power`` (``alpha < power < 1``)."""
    if not (alpha < power < 1) or lam <= 0:
        raise ValueError(f"power must lie in ({alpha}, 1) and lam be > 0, got {power}, {lam}")
    hi = 1.0 / lam
    while chi2_power(lam, hi, alpha) < power:
        hi *= 2
    return float(brentq(lambda n: chi2_power(lam, n, alpha) - power, 0.0, hi, xtol=1e-6 * hi))


def top_first_log_error(name: str = "div8", q: float = 0.999,
                        log2: FastLog2 = DEFAULT_FASTLOG2) -> dict:
    """For the lattice uniforms in the top ``1 − q`` (where t is tiny): the range of the first
    log's input ``u·c`` and the largest absolute error of ``fl(u·c)`` there."""
    u = all_uniforms()
    top = u[u >= np.quantile(u, q)]
    uc = get_noise(name, log2=log2).trace(top)["uc"]
    err = np.abs(log2(uc).astype(np.float64) - np.log2(uc.astype(np.float64)))
    return {"uc_min": float(uc.min()), "uc_max": float(uc.max()), "max_error": float(err.max()),
            "max_abs_log": float(np.abs(np.log2(uc.astype(np.float64))).max())}


def zeros_check(summary: dict) -> dict:
    """How much the scaled pipeline's exact zero count tells beyond the fitted plateau
    prediction (``calibration.default_summary``): their ratio (the lattice law of t against
    the ideal on the plateau), and how far the note's count lies from either, in Poisson
    standard deviations."""
    exact, pred = float(summary["exact_zeros"]), float(summary["plateau_prediction"])
    seen = float(summary["note_zeros"])
    return {"ratio": exact / pred, "note_sigma_exact": (seen - exact) / np.sqrt(exact),
            "note_sigma_pred": (seen - pred) / np.sqrt(pred)}


def sample_ks_mean(ex, n: int) -> float:
    """The mean KS distance that ``n`` draws of the exact law ``ex`` (an ``ExactStats``) show
    against the ideal law (``separation.sample_ks``)."""
    return float(sample_ks(ex.sorted_g, n).mean())


def validation_rows(u, exact: dict, n: int) -> tuple[list, list]:
    """Two tables for the pipelines of ``exact`` (name → ``ExactStats``): a Monte Carlo run on
    the uniforms ``u`` (its KS and χ² with their p-values), and the exact laws (the law's own
    KS distance beside the mean KS a sample of ``n`` shows, the expected χ² at ``n``)."""
    ref = get_noise("precise")(u)
    mc_rows, exact_rows = [], []
    for name, ex in exact.items():
        mc = validate_sample(get_noise(name)(u), ref)
        mc_rows.append({"pipeline": name, "zeros": f"{mc['zeros']:,}",
                        "KS distance (p)": f"{mc['ks']:.2e} ({mc['ks_p']:.2g})",
                        "χ² (p)": f"{mc['chi2']:.1f} ({mc['chi2_p']:.2g})",
                        "P99.9 of the error": f"{mc['P99.9']:.2e}"})
        law = ex.chi2_law(n)
        exact_rows.append({"pipeline": name,
                           "zeros expected": f"{ex.expected_count('zeros', n):,.1f}",
                           "KS distance of the law": f"{ex.ks:.2e}",
                           "a sample's mean KS": f"{sample_ks_mean(ex, n):.2e}",
                           "E[χ²]": f"{ex.expected_chi2(n):.1f}",
                           "p at the median χ²": f"{chi2.sf(law.median(), 63):.2g}"})
    return mc_rows, exact_rows


def per_binade_rows(bits=(6, 8, 10, 16), log2: FastLog2 = DEFAULT_FASTLOG2) -> list[dict]:
    """The textbook SFU (a fixed output LSB per binade, no absolute threshold) with each
    output width of ``bits``: its plateau, the zeros of the scaled and Div8 pipelines per
    2^20 draws, whether the two agree bit for bit over the lattice, how many values of t
    give the scaled pipeline's g = 0 and the heavier of their grid neighbours per 2^20."""
    u = all_uniforms()
    rows = []
    for b in bits:
        cfg = log2.replace(output_fraction_bits=b, zero_threshold=0.0)
        tr = get_noise("scaled", log2=cfg).trace(u)
        g_8 = get_noise("div8", log2=cfg)(u)
        lo, hi = cfg.plateau()
        zero_t = np.unique(tr["t"][tr["g"] == 0])
        rows.append({"output LSB": f"2^-{b}", "plateau width": f"{hi - lo:.3g}",
                     "zeros per 2^20, scaled": note.SAMPLES * float(np.mean(tr["g"] == 0)),
                     "zeros per 2^20, Div8": note.SAMPLES * float(np.mean(g_8 == 0)),
                     "Div8 = scaled": bool(np.array_equal(tr["g"], g_8)),
                     "values of t giving 0": len(zero_t),
                     "neighbour atom per 2^20": _neighbour_atom(tr["t"], zero_t)})
    return rows


def _neighbour_atom(t: np.ndarray, zero_t: np.ndarray) -> float | None:
    """The heavier of the two grid values of ``t`` beside the single value ``zero_t``, per
    2^20 draws (None when no value, or several, give 0)."""
    if len(zero_t) != 1:
        return None
    near = t[np.abs(t - zero_t[0]) < 0.01]
    vals, counts = np.unique(near, return_counts=True)
    i = int(np.searchsorted(vals, zero_t[0]))
    side = [counts[j] for j in (i - 1, i + 1) if 0 <= j < len(vals)]
    return note.SAMPLES * max(side) / t.size


def div_k_atom(k: float, log2: FastLog2 = DEFAULT_FASTLOG2) -> dict:
    """Div-``k`` exactly over the lattice: the share of draws whose second log returns 0 (the
    atom at g = −log2 k), the atom's value, and the estimate from the ideal law of t."""
    g = get_noise(f"div({float(k)!r})", log2=log2)(all_uniforms())
    value = np.float32(-np.log2(np.float64(k)))
    share = float(np.mean(g == value))
    return {"share": share, "value": float(value), "estimate": atom_mass_estimate(k, log2)}


def large_errors_from_the_top(name: str = "div8", q: float = 0.999) -> float:
    """The share of the lattice points whose same-input error ``|g − g_precise|`` exceeds its
    ``q`` quantile that have ``u`` in the top ``1 − q`` of the lattice (where t is tiny)."""
    u = all_uniforms()
    err = np.abs(get_noise(name)(u).astype(np.float64) - _precise(1))
    big = err > np.quantile(err, q)
    return float(np.mean(u[big] >= np.quantile(u, q)))
