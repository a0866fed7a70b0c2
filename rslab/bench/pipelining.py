"""Benchmark ``pipelining``: the pipelining chapter's loops on their own."""

from rslab import note
from rslab.bench.registry import benchmark
from rslab.kernels.studies.steady import (
    residual_figures,
    sumexp_figures,
)


@benchmark("pipelining")
def bench_pipelining(args) -> dict:
    """The pipelining chapter's loops on their own: sum-exp on a vocab row (dataflow (b))
    and the residual-Gumbel loop. The full sampler's loops are the ``kernels`` benchmark's
    ``loops``."""
    vocab = getattr(args, "vocab", 154880)
    s = sumexp_figures(vocab=vocab)
    r = residual_figures()
    b = residual_figures(kind="bonus")
    keys = ("ii", "res_mii", "rec_mii", "stalls_per_iter")
    return {"pipelining": {"loops": {"sumexp": {k: s[k] for k in keys},
                                     "residual_gumbel": {k: r[k] for k in keys}},
                           "sumexp_cycles": s["loop_cycles"],
                           "sumexp_predicted": s["predicted_cycles"],
                           "sumexp_error_pct": round(s["error_pct"], 3),
                           "sumexp_measured_ii": s["measured_ii"],
                           "sumexp_exact": s["exact_vs_numpy"],
                           "residual_measured_ii": r["measured_ii"],
                           "residual_ii_over_res_mii": r["ii"] / r["res_mii"],
                           "bonus_ii": b["ii"], "bonus_res_mii": b["res_mii"],
                           "bonus_stalls_per_iter": b["stalls_per_iter"],
                           "note_sumexp_ii": note.SUMEXP_II,
                           "note_residual_body": note.RESIDUAL_BODY,
                           "note_residual_stalls_per_pass": note.RESIDUAL_STALLS}}

