"""Host side of the full sampler: build the HBM image, simulate, read back, compare, attribute.

``run_sampler(inputs, path, plan, seed)`` runs one program on one input set and
returns a :class:`SamplerRun` with the tokens, the reference's tokens on the
same inputs and seed, the float32 diagnostics compared bit for bit with the
reference's float32 semantics, and the cycles per phase (from the trace:
every issued bundle's cycles — its stall plus its issue cycle — are charged to
the phase whose ``ph<n>_<phase>`` label precedes its pc, except stalls waiting
for a DMA, which are charged to ``dma_wait``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from rslab.kernels.sampler.layout import SamplerLayout
from rslab.kernels.sampler.program import OPTIMISED, PHASES, BuiltKernel, KernelPlan, build_kernel
from rslab.machine.asm import assemble
from rslab.machine.config import MachineConfig
from rslab.machine.simulator import CAUSES, simulate
from rslab.randomness import ACCEPT, BONUS, RESIDUAL
from rslab.reference import (
    LOG2E,
    gumbel_noise,
    path_math,
    random_uniforms,
    rejection_sample,
    residual_weights,
    sample_scores,
    target_probs,
)
from rslab.schedule import SlotModel

PHASE_KEYS = ("max", "sumexp", "accept", "residual", "bonus", "dma_wait", "setup")
_PHASE_LABEL = re.compile(r"^ph(\d+)_(\w+)$")
_DMA = CAUSES.index("dma-wait")


@dataclass
class SamplerRun:
    """One simulated sampler run and its comparison with the reference."""

    kernel: BuiltKernel
    cycles: int
    stalls: dict
    phases: dict
    outputs: dict
    reference_tokens: np.ndarray
    reference_num_accepted: np.ndarray
    float_checks: dict = field(default_factory=dict)
    loops: dict = field(default_factory=dict)
    bundles: int = 0

    @property
    def tokens(self) -> np.ndarray:
        return self.outputs["tokens"]

    @property
    def tokens_match(self) -> bool:
        return bool(np.array_equal(self.outputs["tokens"], self.reference_tokens)
                    and np.array_equal(self.outputs["num_accepted"],
                                       self.reference_num_accepted))

    @property
    def floats_differing(self) -> int:
        return int(sum(c["differ"] for c in self.float_checks.values()))

    @property
    def floats_compared(self) -> int:
        return int(sum(c["compared"] for c in self.float_checks.values()))

    @property
    def largest_float_difference(self) -> float:
        return float(max([c["max_abs_diff"] for c in self.float_checks.values()] or [0.0]))


def phase_table(program) -> list:
    """(start pc, phase) of every phase label, sorted by pc."""
    out = []
    for name, pc in program.labels.items():
        m = _PHASE_LABEL.match(name)
        if m:
            out.append((pc, int(m.group(1)), m.group(2)))
    return [(pc, phase) for pc, _, phase in sorted(out)]


def phase_cycles(run) -> dict:
    """Cycles per phase from the trace records (see the module docstring)."""
    table = phase_table(run.program)
    starts = np.array([pc for pc, _ in table])
    names = [ph for _, ph in table]
    totals = dict.fromkeys(PHASE_KEYS, 0)
    prev = 0
    last = "setup"
    for t, pc, stall, cause, _ in run.trace._records:
        i = int(np.searchsorted(starts, pc, side="right")) - 1
        last = names[i] if i >= 0 else "setup"
        gap = t - prev
        if cause == _DMA:
            totals["dma_wait"] += stall
            gap -= stall
        totals[last] += gap
        prev = t
    totals[last] += run.cycles - prev
    return totals


def _loop_figures(run, kernel) -> dict:
    out = {}
    for label, code in kernel.loops.items():
        fig = code.figures()
        try:
            st = run.trace.steady_state(label, warmup=1)
            unroll = max(1, code.body_bundles // code.ii) if code.ii else 1
            fig["cycles_per_iter"] = st["cycles_per_iter"] / unroll
            fig["stalls_per_iter"] = st["stalls_per_iter"] / unroll
        except ValueError:
            fig["cycles_per_iter"] = None
            fig["stalls_per_iter"] = None
        out[label] = fig
    return out


def reference_floats(inputs, path: str, seed: int, num_accepted, noise: str = "div8") -> dict:
    """The reference's float32 values at the points the kernel reports: per checked position
    m, s, p(x), u; per request the winning score of its residual or bonus row."""
    l, q, ids = inputs
    R, S1, V = l.shape
    S = S1 - 1
    math = path_math(path, noise)
    out = {k: np.full((R, S), np.nan, dtype=np.float32) for k in ("m", "sum", "px", "u")}
    score = np.full(R, np.nan, dtype=np.float32)
    vocab = np.arange(V)
    for r in range(R):
        for s in range(min(S, int(num_accepted[r]) + 1)):
            row = l[r, s]
            m = row.max()
            z = (row - m) * LOG2E
            e = math.exp2(z)
            e[z == -np.inf] = 0
            out["m"][r, s] = m
            out["sum"][r, s] = e.sum(dtype=np.float32)
            out["px"][r, s] = target_probs(row[None], math)[0, ids[r, s]]
            out["u"][r, s] = random_uniforms(path, seed, [r], s, ACCEPT, [0])[0, 0]
        n = int(num_accepted[r])
        with np.errstate(divide="ignore", invalid="ignore"):
            if n < S:
                p = target_probs(l[r, n][None], math)
                w = residual_weights(p, q[r, n][None])
                g = gumbel_noise(math, seed, [r], n, RESIDUAL, vocab)
                sc = sample_scores(math.log2(w), g)
            else:
                g = gumbel_noise(math, seed, [r], S, BONUS, vocab)
                sc = sample_scores(l[r, S][None] * LOG2E, g)
        score[r] = sc.max()
    out["score"] = score
    return out


def compare_floats(kernel_out: dict, ref: dict) -> dict:
    """Per quantity: values compared, values not bit-identical, largest |difference|."""
    checks = {}
    for name in ("m", "sum", "px", "u", "score"):
        a = np.asarray(kernel_out[name], dtype=np.float32).reshape(-1)
        b = np.asarray(ref[name], dtype=np.float32).reshape(-1)
        mask = ~np.isnan(b)
        a, b = a[mask], b[mask]
        differ = a.view(np.uint32) != b.view(np.uint32)
        with np.errstate(invalid="ignore"):
            diff = np.abs(a.astype(np.float64) - b.astype(np.float64))
        diff = diff[differ & np.isfinite(diff)]
        checks[name] = {"compared": int(mask.sum()), "differ": int(differ.sum()),
                        "max_abs_diff": float(diff.max()) if diff.size else 0.0}
    return checks


def run_sampler(inputs, path: str = "fast", plan: KernelPlan = OPTIMISED, *, seed: int = 0,
                config: MachineConfig | None = None, kernel: BuiltKernel | None = None,
                compare: bool = True) -> SamplerRun:
    """Simulate the sampler compiled as ``plan`` on ``inputs`` (target logits, draft
    probabilities, draft ids) and compare with ``rejection_sample`` on the same seed.

    ``config`` is the machine; the loops are scheduled for the same machine
    (``SlotModel.from_config(config)``) unless a prebuilt ``kernel`` is given.
    """
    l, q, ids = inputs
    R, S1, V = np.asarray(l).shape
    layout = SamplerLayout(R, S1 - 1, V)
    if kernel is None:
        model = SlotModel.from_config(config) if config is not None else None
        kernel = build_kernel(layout, path, plan, model)
    elif kernel.layout != layout or kernel.path != path:
        raise ValueError("kernel: built for another layout or path")
    ref = rejection_sample(l, q, ids, path=path, seed=seed)
    program = assemble(kernel.text)
    run = simulate(program, config, hbm=layout.hbm_image(l, q, ids, seed), trace=True)
    outputs = layout.read_outputs(run)
    checks = {}
    if compare:
        checks = compare_floats(outputs, reference_floats(inputs, path, seed, ref.num_accepted))
    return SamplerRun(kernel, run.cycles, dict(run.stalls), phase_cycles(run), outputs,
                      ref.tokens.astype(np.int32), ref.num_accepted.astype(np.int32), checks,
                      _loop_figures(run, kernel), run.bundles)


__all__ = ["PHASES", "PHASE_KEYS", "SamplerRun", "run_sampler", "phase_cycles", "phase_table",
           "reference_floats", "compare_floats"]
