"""Chapter 7, *Results*: per-loop figures of the two kernels, and the vocabulary sweep live."""

from rslab.kernels.sampler.plans import OPTIMISED
from rslab.kernels.sampler.scenarios import run_scenarios
from rslab.viz import results_plots as rp
from rslab.viz.controls import int_control

LOOPS = (("row max", "loop_rowmax", "rowmax_u"), ("sum-exp", "loop_sumexp", "sumexp_u"),
         ("bonus Gumbel-argmax", "loop_bonus", "final_u"))
"""(name, program label, unroll field of the plan) of each loop the chapter compares."""


def per_vector(run, label: str, unroll: int) -> float:
    """Cycles per packed vector of loop ``label``: its II (or measured cycles per iteration
    when it is not modulo scheduled) over the vectors one iteration handles."""
    fig = run.loops[label]
    return fig["ii"] / unroll if fig["ii"] else fig["cycles_per_iter"] / unroll


def loop_items(baseline, optimised, plan=OPTIMISED) -> list[dict]:
    """Per loop: the baseline's and the optimised plan's cycles per packed vector."""
    return [{"loop": name, "baseline_per_vector": per_vector(baseline, label, 1),
             "optimised_per_vector": per_vector(optimised, label, getattr(plan, field))}
            for name, label, field in LOOPS]


def vocab_caption(vocab: int, rows) -> str:
    """The two test points' speedups at one vocabulary size."""
    by = {r["name"]: r for r in rows}
    return f"V = {vocab:,}: " + ", ".join(
        f"{n} {by[n]['speedup']:.2f}× ({by[n]['baseline_cycles']:,} → "
        f"{by[n]['optimized_cycles']:,} cycles)" for n in ("all-accept", "first-reject"))


def vocab_figure(sweep: dict, path: str = "fast"):
    """``draw(vocab)`` for the speedup-against-V figure: a vocabulary not in ``sweep`` runs
    both kernels (baseline and optimised, both test points) and joins the curve."""
    def draw(vocab: int):
        if vocab not in sweep:
            sweep[vocab] = run_scenarios(vocab, path, progress=False)["scenarios"]
        return rp.speedup_vs_vocab(sweep, highlight=vocab), vocab_caption(vocab, sweep[vocab])
    return draw


LIVE_VOCAB = 16_384
"""The largest vocabulary the live slider offers: four simulations there take seconds (the
note's 154,880 takes about a minute; the page shows it from the build)."""


def vocab_control(vocabs):
    """The vocabulary from 256 to ``LIVE_VOCAB`` in steps of 256; the ``vocabs`` of the sweep
    in that range are the precomputed frames, the largest of them shown first."""
    frames = sorted(v for v in vocabs if v <= LIVE_VOCAB)
    return int_control("vocab", 256, LIVE_VOCAB, step=256, frames=frames, value=frames[-1],
                       label="vocab V", fmt=lambda v: f"{v:,}")
