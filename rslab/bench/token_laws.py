"""Benchmark ``token_laws``: every draw's worst target over the adversarial families, timed.

For each draw of the Fast path's sampler (the fixed-point inverse CDF among them) the
law on every row of :func:`rslab.numerics.adversary.family_rows` at V = 154,880
(the argmax draws on rows of many distinct weights as certified brackets), and per
draw the row of the largest χ² with the interval its brackets allow: the bound's
sample size (no test of any kind gains an advantage of 0.1 below it,
:mod:`rslab.numerics.divergence_bound`), the samples χ² tests over tokens, vectors
of 128 and 4,096 equal bins need where their approximation holds, the samples the
appearance test needs (:mod:`rslab.numerics.appearance`), and the seconds. Beside them
the weights' own error (the SFU's exp2 on BF16 logit rows) and the cause of the float32 inverse
CDF's vector-level bias on the three book targets. Target: at most 180 s in all.
"""

from __future__ import annotations

import math
import time

from rslab.bench.registry import benchmark
from rslab.executors import make_executor
from rslab.numerics import adversary, targets
from rslab.numerics.methods import sampler_draws

TARGET_SECONDS = 180
DRAWS = sampler_draws()
KEYS = ("draw", "rows", "target", "chi2", "chi2_lo", "chi2_hi", "rel_half_width",
        "max_rel_half_width", "kl", "tv",
        "bound_samples", "bound_samples_chi2", "bound_samples_tv", "bound_samples_kl",
        "detect_tokens", "detect_vectors", "detect_bins", "detect_lanes", "detect_appear",
        "seconds")


def token_law_figures(vocab: int = targets.VOCAB, progress: bool = False) -> dict:
    start = time.perf_counter()
    worst = adversary.search(DRAWS, vocab, executor=make_executor(), progress=progress)
    cause = {name: adversary.block_choice_cause(targets.target(name, vocab).row())
             for name in targets.TARGETS}
    seconds = time.perf_counter() - start
    return {"token_laws": {"vocab": vocab, "rows": max(r["rows"] for r in worst),
                           "seconds": round(seconds, 1), "target_seconds": TARGET_SECONDS,
                           "meets_target": seconds <= TARGET_SECONDS,
                           "worst": [{k: r[k] for k in KEYS} for r in worst],
                           "weights_error": adversary.weights_error(vocab),
                           "wide48_vector_cause": cause}}


def _samples(x: float) -> str:
    """A sample size for the table: ``—`` where a χ² test's approximation does not hold."""
    return "—" if math.isnan(x) else f"{x:.3g}"


def _row_text(r: dict) -> str:
    interval = f"[{r['chi2_lo']:.4g}, {r['chi2_hi']:.4g}]"
    return (f"  {r['draw']:<16}{r['target']:<32}{r['chi2']:>10.4g}{interval:>24}"
            f"{r['rel_half_width']:>9.1e}{r['bound_samples']:>10.3g}"
            + "".join(f"{_samples(r[k]):>10}" for k in ("detect_tokens", "detect_vectors",
                                                         "detect_bins", "detect_appear"))
            + f"{r['seconds']:>7.1f}")


def token_law_text(out: dict) -> str:
    t = out["token_laws"]
    lines = [f"Worst target per draw over {t['rows']} rows at V = {t['vocab']:,} (samples: below "
             "'bound' no test gains 0.1; then what a χ² test over tokens, vectors or bins needs "
             "('—' where its approximation does not hold) and what the appearance test needs; "
             "the χ² interval its law's bounds allow and 'rel' their largest half-width "
             "relative to a token's probability or target, whichever is larger):",
             f"  {'draw':<16}{'worst target':<32}{'χ²':>10}{'χ² interval':>24}{'rel':>9}"
             f"{'bound':>10}{'tokens':>10}{'vectors':>10}{'bins':>10}{'appear':>10}{'s':>7}"]
    lines += [_row_text(r) for r in t["worst"]]
    lines.append("The weights' own error (SFU exp2 against the exact softmax): " + ", ".join(
        f"{e['row']} χ² {e['chi2']:.3g}" for e in t["weights_error"]))
    lines.append("invcdf-wide48 vector-level χ²: as drawn / 24-bit block choice over exact sums "
                 "/ float32 sums with an exact uniform: " + "; ".join(
                     f"{k} {c['draw']:.4g} / {c['lattice_only']:.4g} / {c['sums_only']:.3g}"
                     for k, c in t["wide48_vector_cause"].items()))
    lines.append(f"{len(t['worst'])} draws in {t['seconds']} s (target ≤ {t['target_seconds']} s: "
                 f"{'met' if t['meets_target'] else 'missed'}).")
    return "\n".join(lines)


@benchmark("token_laws", text=token_law_text)
def token_law_benchmark(args) -> dict:
    return token_law_figures(args.vocab, progress=not args.json)
