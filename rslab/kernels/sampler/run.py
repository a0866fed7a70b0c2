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

import functools
import re
from dataclasses import dataclass, field, replace

import numpy as np
from tqdm import tqdm

from rslab.kernels.sampler.draws import sampler_draw
from rslab.kernels.sampler.floor import phase_floors, task_bound
from rslab.kernels.sampler.layout import SamplerLayout, step_budget
from rslab.kernels.sampler.plans import OPTIMISED, KernelPlan, optimisation_steps
from rslab.kernels.sampler.program import PHASES, BuiltKernel, build_kernel
from rslab.machine.asm import assemble
from rslab.machine.collector import collector_paused
from rslab.machine.config import MachineConfig
from rslab.machine.simulator import simulate
from rslab.reference import DIAGNOSTICS, path_math, rejection_sample
from rslab.schedule import SlotModel

PHASE_KEYS = ("max", "sumexp", "accept", "residual", "bonus", "dma_wait", "setup")
_PHASE_LABEL = re.compile(r"^ph\d+_(\w+)$")


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
    floors: dict = field(default_factory=dict)  # phase -> achieved, bound_cycles, binding, ratio
    task: dict = field(default_factory=dict)  # the task's bound (floor.task_bound)

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


@functools.lru_cache(maxsize=64)
def assembled(text: str):
    """``assemble(text)``, once per program text in a process (a ``Program`` is immutable)."""
    return assemble(text)


def phase_cycles(run) -> dict:
    """Cycles per phase: the trace's cycles by ``ph<n>_<phase>`` label, DMA waits apart."""
    cycles = run.trace.cycles_by_label(_PHASE_LABEL, default="setup",
                                       separate={"dma-wait": "dma_wait"})
    return {k: cycles.get(k, 0) for k in PHASE_KEYS}


def phase_dma_waits(run) -> dict:
    """DMA-wait cycles per phase (the ``ph<n>_<phase>`` region of the bundle that waited),
    the phases that waited only."""
    whole = run.trace.cycles_by_label(_PHASE_LABEL, default="setup")
    rest = run.trace.cycles_by_label(_PHASE_LABEL, default="setup",
                                     separate={"dma-wait": "dma_wait"})
    return {k: v - rest.get(k, 0) for k, v in whole.items() if v != rest.get(k, 0)}


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


def compare_floats(kernel_out: dict, ref: dict) -> dict:
    """Per quantity: values compared, values not bit-identical, largest |difference|."""
    checks = {}
    for name in DIAGNOSTICS:
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


def _chip_arguments(path, plan, kernel, method, noise, cores) -> None:
    """``ValueError`` naming the argument that a run on a chip does not take."""
    if isinstance(cores, bool) or not isinstance(cores, int) or not 1 <= cores <= 64:
        raise ValueError(f"cores must be an integer in [1, 64], got {cores!r}")
    if path != "fast":
        raise ValueError(f"path: the chip's sampler runs the Fast path, got {path!r}")
    if plan != OPTIMISED:
        raise ValueError("plan: the chip's cores run the optimised plan")
    if kernel is not None:
        raise ValueError("kernel: the chip builds its cores' programs itself")
    if method not in (None, "fixed") or noise not in (None, "u96"):
        raise ValueError(f"method: the chip's rows draw with ('fixed', 'u96'), whose merge "
                         f"over cores is exact; got {(method, noise)!r}")


@collector_paused()
def run_sampler(inputs, path: str = "fast", plan: KernelPlan = OPTIMISED, *, seed: int = 0,
                config: MachineConfig | None = None, kernel: BuiltKernel | None = None,
                compare: bool = True, method: str | None = None,
                noise: str | None = None, figures: bool = True, cores: int = 1,
                mode: str = "sequential", merge: str = "max-first",
                chip=None) -> SamplerRun:
    """Simulate the sampler compiled as ``plan`` on ``inputs`` (target logits, draft
    probabilities, draft ids) and compare with ``rejection_sample`` on the same seed,
    both drawing with ``method`` and ``noise`` (:mod:`rslab.kernels.sampler.draws`;
    ``method=None``: ``gumbel`` on one core).

    ``config`` is the machine; the loops are scheduled for the same machine
    (``SlotModel.from_config(config)``) unless a prebuilt ``kernel`` is given (its draw
    must be ``method`` and ``noise``). ``figures=False`` leaves out the loops' figures,
    the floors and the task's bound (cycles, phases and tokens only: a live figure's
    update).

    ``cores`` > 1, ``mode="parallel"``, a ``merge`` or a ``chip``
    (:class:`~rslab.machine.config.ChipConfig`, whose cores are ``config`` when it is
    None) run the sampler on the cores of a chip
    (:func:`rslab.kernels.sampler.chip_run.run_chip_sampler`: the rows planned onto the
    cores in ``mode``, ``sequential`` or ``parallel``, split rows' sums merged ``merge``,
    ``max-first`` or ``online``, the draw ``("fixed", "u96")``); the result then has the
    chip's bound beside the floors (``chip_bound``). ``cores=1, mode="sequential"`` is the
    one-core program above.
    """
    if cores != 1 or mode != "sequential" or merge != "max-first" or chip is not None:
        from rslab.kernels.sampler.chip_run import run_chip_sampler
        from rslab.machine.config import ChipConfig

        _chip_arguments(path, plan, kernel, method, noise, cores)
        if chip is None and config is not None:
            chip = ChipConfig(cores=cores, core=config)
        return run_chip_sampler(inputs, cores=cores, mode=mode, merge=merge, seed=seed,
                                chip=chip, compare=compare, figures=figures)
    method = "gumbel" if method is None else method
    l, q, ids = inputs
    if np.ndim(l) != 3:
        raise ValueError(f"inputs: the target logits must be [R, S+1, V], got shape "
                         f"{np.shape(l)}")
    if path == "exact" and noise is not None:
        path_math("exact", noise)  # the reference's own check of the noise's name
    R, S1, V = np.asarray(l).shape
    layout = SamplerLayout(R, S1 - 1, V)
    draw = sampler_draw(path, method, noise)
    if kernel is None:
        model = SlotModel.from_config(config) if config is not None else None
        kernel = build_kernel(layout, path, plan, model, method=draw[0], noise=draw[1])
    elif kernel.layout != layout or kernel.path != path or kernel.draw != draw:
        raise ValueError("kernel: built for another layout, path or draw")
    ref = rejection_sample(l, q, ids, path=path, seed=seed, diagnostics=compare,
                           **({"method": draw[0], "noise": draw[1]} if path == "fast" else {}))
    program = assembled(kernel.text)
    run = simulate(program, config, hbm=layout.hbm_image(l, q, ids, seed), trace=True,
                   max_steps=step_budget(R * S1, V))
    outputs = layout.read_outputs(run)
    checks = {}
    if compare:
        checks = compare_floats(outputs, ref.diagnostics)
    phases = phase_cycles(run)
    out = SamplerRun(kernel, run.cycles, dict(run.stalls), phases, outputs,
                     ref.tokens.astype(np.int32), ref.num_accepted.astype(np.int32), checks,
                     bundles=run.bundles)
    if figures:
        out.loops = _loop_figures(run, kernel)
        out.floors = phase_floors(run, kernel, phases)
        out.task = task_bound(run, layout, ref.num_accepted, path=path, draw=draw)
    return out


def run_steps(inputs, path: str = "fast", *, seed: int = 0, progress: bool = True,
              known=()) -> list[dict]:
    """Cycles, cycles per phase and tokens of every step on ``inputs``; ``known``: runs of
    some of the plans on the same inputs, path and seed, not simulated again."""
    rows = []
    steps = optimisation_steps()
    have = {(replace(run.kernel.plan, name=""), run.kernel.path): run for run in known}
    first = None
    for label, plan in tqdm(steps, desc="optimisation steps", disable=not progress,
                            leave=False):
        run = have.get((replace(plan, name=""), path))
        if run is None:
            run = run_sampler(inputs, path, plan, seed=seed)
        first = first or run.cycles
        rows.append({"step": label, "cycles": int(run.cycles),
                     "speedup": first / run.cycles,
                     "phases": {k: int(v) for k, v in run.phases.items()},
                     "tokens_match_reference": bool(run.tokens_match)})
    return rows


__all__ = ["PHASES", "PHASE_KEYS", "SamplerRun", "run_sampler", "phase_cycles", "compare_floats",
           "run_steps"]
