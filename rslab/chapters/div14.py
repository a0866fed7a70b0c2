"""Chapter 6, *Div14 search*: why powers of two differ, what the sampled selection can and
cannot separate, the integer divisors ranked exactly, and how the exact λ landscape moves
with one knob of the emulator."""

import numpy as np

from rslab.numerics import montecarlo as mc
from rslab.numerics import search, separation
from rslab.numerics.fastlog import DEFAULT_FASTLOG2
from rslab.numerics.gumbel import second_layer_parts
from rslab.viz import search_plots as sp
from rslab.viz.controls import float_control, int_control


def best_divisor(c1_bits: int, divisors: tuple) -> str:
    """The divisor of smallest exact λ when the fit's linear coefficient has ``c1_bits``."""
    lam = sp.knob_landscape(DEFAULT_FASTLOG2.replace(c1_bits=int(c1_bits)), tuple(divisors))
    return search.divisor_name(divisors[int(np.argmin(lam))])


def knob_figure(divisors: tuple):
    """``draw(c1_bits)``: the exact E[χ²] at 10^9 samples of every divisor in ``divisors``
    under the emulator with ``c1_bits``; the winner as caption."""
    def draw(c1_bits: int):
        cfg = DEFAULT_FASTLOG2.replace(c1_bits=int(c1_bits))
        fig = sp.draw_knob_frame(cfg, tuple(divisors), f"c1_bits = {c1_bits}")
        return fig, f"c1_bits = {c1_bits}: smallest λ at {best_divisor(c1_bits, divisors)}"
    return draw


def c1_control(frames):
    """``c1_bits`` from 4 to 16 live; ``frames`` precomputed, the calibrated value first shown."""
    return int_control("c1_bits", 4, 16, frames=frames, value=DEFAULT_FASTLOG2.c1_bits,
                       label="c1_bits")


def divisor_control(frames):
    """A divisor from 2 to 20 in steps of 0.5 live; ``frames`` precomputed, Div14 first shown."""
    return float_control("k", 2.0, 20.0, step=0.5, frames=frames, value=14.0, label="divisor k")


def sweep_table(result) -> list[dict]:
    """One row per design of a sweep (``rslab.numerics.sweep``): its knobs, best divisor,
    expected χ² at 10^9 samples, exact KS and zero mass."""
    names = [n for n, _ in result.config.axes]
    rows = []
    for r in result.best:
        knobs = {n: str(r[n]) for n in names}
        if "error" in r:
            rows.append({**knobs, "best divisor": "no usable design", "E[χ²] at 10⁹": "",
                         "exact KS": "", "zero mass": ""})
            continue
        rows.append({**knobs, "best divisor": r["best"],
                     "E[χ²] at 10⁹": f"{r['expected_chi2']:.1f}",
                     "exact KS": f"{r['exact_ks']:.2e}", "zero mass": f"{r['zero_mass']:.2e}"})
    return rows


def most_trusted(result) -> dict:
    """The design and divisor with the smallest λ of the whole sweep."""
    ok = [r for r in result.best if "error" not in r]
    if not ok:
        raise ValueError("the sweep has no usable design")
    return min(ok, key=lambda r: (r["lam"], r["exact_ks"]))


def power_of_two_differences(a: float, b: float, log2=DEFAULT_FASTLOG2) -> dict:
    """Lattice points where Div``a`` and Div``b`` (``b/a`` a power of two) give different
    noise: all of them, those farther than 2τ (in log2) from both plateaus, and among those
    the ones where the fast log's own results differ by more than the exponent
    (``fl(t/a) − fl(t/b) ≠ log2(b/a)``: its one rounding to float32 happens in the binade of
    the result, which the exponent changes)."""
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
    by_rounding = far & (la.astype(np.float64) - lb.astype(np.float64) != shift)
    return {"differ": int(np.count_nonzero(differ)), "far": int(np.count_nonzero(far)),
            "far_by_log_rounding": int(np.count_nonzero(by_rounding)),
            "lattice": mc.LATTICE_SIZE}


def integer_ranking(log2=DEFAULT_FASTLOG2, samples: float = 1e9,
                    divisors: tuple = search.INTEGER_DIVISORS) -> list[dict]:
    """The integer divisors (2–16) by exact λ, smallest first, with E[χ²] at ``samples``."""
    lam = sp.knob_landscape(log2, divisors)
    return [{"name": search.divisor_name(divisors[i]), "divisor": divisors[i],
             "lam": float(lam[i]), "expected_chi2": 63 + samples * float(lam[i])}
            for i in np.argsort(lam, kind="stable")]


def core_divide(k: float, log2=DEFAULT_FASTLOG2) -> dict:
    """The modelled core has no divide: ``t/k`` becomes ``t · fl(1/k)``. Lattice points where
    that changes g, and the exact λ of both."""
    t = search._first_layer(log2)
    g = second_layer_parts(t, k, log2)[2]
    with np.errstate(divide="ignore", invalid="ignore"):
        g_mul = -(log2(t * np.float32(1 / np.float32(k))) + np.float32(np.log2(np.float64(k))))
    return {"differ": int(np.count_nonzero(g != g_mul)),
            "lam_divide": search.exact_row("divide", g)["lam"],
            "lam_multiply": search.exact_row("multiply", g_mul)["lam"]}


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


def design_row(result, log2=DEFAULT_FASTLOG2) -> dict:
    """The row of a sweep's ``best`` for the design whose swept knobs are ``log2``'s."""
    names = [n for n, _ in result.config.axes]
    for r in result.best:
        if all(r[n] == getattr(log2, n) for n in names):
            return r
    raise ValueError("the sweep has no design with these knobs")
