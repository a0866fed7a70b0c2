"""Host side of the sampler on a chip: plan, windows, programs, one chip run, read back, compare.

:func:`run_chip_sampler` plans the rows onto the cores (:func:`~rslab.kernels.sampler.
chip_plan.plan_rows`), builds every core's window and arguments
(:mod:`rslab.kernels.sampler.chip_layout`) and its program (cores of the same shape share
one: :func:`~rslab.kernels.sampler.chip_program.chip_kernel`), simulates the chip once
(:func:`rslab.machine.chip.simulate_chip`), reads the tokens back (sequential: a group's
first core's VMEM, and a split row's final token from the exchange; parallel: the
selection's rows of the exchange), and runs the reference on the same inputs and seed with
each row's split stated (``rejection_sample(..., split=plan.split)``), so that the tokens
must agree token for token. The result is a :class:`~rslab.kernels.sampler.run.SamplerRun`
with the chip's bound beside the floors (:mod:`rslab.kernels.sampler.chip_bound`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from rslab.kernels.sampler.chip_bound import chip_bound
from rslab.kernels.sampler.chip_layout import (
    ARG_BARRIER,
    ARG_LANE,
    ARG_TOK,
    ARG_VOCAB,
    ARG_XBASE,
    ROW,
    ChipLayout,
    EntryLayout,
    ExchangeMap,
    window_image,
)
from rslab.kernels.sampler.chip_plan import plan_rows
from rslab.kernels.sampler.chip_program import CHIP_DRAW, chip_kernel
from rslab.kernels.sampler.floor import phase_floors
from rslab.kernels.sampler.layout import step_budget
from rslab.kernels.sampler.run import SamplerRun, assembled, compare_floats, phase_cycles
from rslab.machine.chip import simulate_chip
from rslab.machine.collector import collector_paused
from rslab.machine.config import ChipConfig
from rslab.machine.memory import build_memory
from rslab.reference import DIAGNOSTICS, rejection_sample


@dataclass
class ChipSamplerRun(SamplerRun):
    """A :class:`SamplerRun` on a chip: ``plan`` (the rows onto the cores), ``chip_run``
    (the :class:`~rslab.machine.chip.ChipRun`), ``chip_bound`` (the chip's bound: its
    ``bound_cycles``, ``binding``, each term and ``ratio``), ``critical_core`` (the core
    that ended last, whose phases and floors ``phases`` and ``floors`` are)."""

    plan: object = None
    chip_run: object = None
    chip_bound: dict = field(default_factory=dict)
    critical_core: int = 0


def _core_setups(plan, xmap, inputs, seed):
    """Per active core: (kernel, window image, VMEM, layout), and the groups' leaders."""
    S = plan.S
    n_active = len(plan.active)
    out = {}
    for g in plan.groups:
        for k, c in enumerate(g.cores):
            lo, hi = g.split.bounds[k], g.split.bounds[k + 1]
            args = {ARG_LANE: 4 * k, ARG_VOCAB: lo, ARG_BARRIER: g.index + 1}
            if g.size > 1:
                args[ARG_XBASE] = xmap.group[g.index]
            if plan.mode == "sequential":
                req = g.requests
                layout = ChipLayout(len(req), S, hi - lo, rows=len(req) * S)
                image, owner = window_image(layout, g.rows, lo, hi, inputs, seed)
                args[ARG_TOK] = xmap.tok + 4 * req[0]
                words = {layout.vm_args + off: v for off, v in args.items()}
                words |= {layout.arg_owner(i): int(o) for i, o in enumerate(owner)}
                words |= {layout.arg_slot(i, 0): int(x) for i, x in
                          enumerate(np.asarray(inputs[2])[list(req)].reshape(-1))}
                kernel = chip_kernel(layout, g.size, plan.merge, guess=plan.guess)
            else:
                layout = EntryLayout(len(g.rows), 1, hi - lo, rows=len(g.rows))
                image, owner = window_image(layout, g.rows, lo, hi, inputs, seed)
                words = {layout.vm_args + off: v for off, v in args.items()}
                words |= {layout.arg_owner(i): int(o) for i, o in enumerate(owner)}
                o = xmap.outputs
                for j, (r, s) in enumerate(g.rows):
                    if s < S:
                        words[layout.arg_slot(j, 0)] = o.acc(r, s)
                    words[layout.arg_slot(j, 1)] = o.res(r, s) if s < S else o.bon(r)
                entries = tuple(s == S for _, s in g.rows)
                kernel = chip_kernel(layout, g.size, plan.merge, entries,
                                     o if c == plan.active[0] else None, n_active)
            out[c] = (kernel, image, _args_vmem(layout, words), layout)
    return out


def _args_vmem(layout: ChipLayout, words: dict) -> dict:
    """The arguments as one array at ``layout.vm_args``."""
    n = (max(words) - layout.vm_args) // 4 + 1
    arr = np.zeros(n, np.uint32)
    for address, value in words.items():
        arr[(address - layout.vm_args) // 4] = np.uint32(int(value) & 0xFFFFFFFF)
    return {layout.vm_args: arr}


def _place(setups, cores: int):
    """The chip's HBM (every window, one after the other) and each core's window; the
    setups keep no image after (the HBM holds the only copy while the chip runs)."""
    hbm, windows, base = {}, [(0, 0)] * cores, 0
    for c in sorted(setups):
        kernel, image, vmem, layout = setups[c]
        setups[c] = (kernel, None, vmem, layout)
        end = max(a + np.asarray(x).nbytes for a, x in image.items())
        for address, array in image.items():
            hbm[base + address] = array
        windows[c] = (base, -(-end // 4) * 4)
        base += -(-end // ROW) * ROW
    return hbm, windows


def _outputs(plan, xmap, setups, chip_run) -> dict:
    """tokens, num_accepted and the diagnostics of every request, from the chip's run."""
    R, S = plan.R, plan.S
    out = {"tokens": np.full((R, S + 1), -1, np.int32), "num_accepted": np.zeros(R, np.int32),
           **{k: np.full((R, S), np.nan, np.float32) for k in DIAGNOSTICS[:-1]},
           "score": np.full(R, np.nan, np.float32)}
    for g in plan.groups:
        leader = g.cores[0]
        run, layout = chip_run.runs[leader], setups[leader][3]
        local = layout.read_outputs(run)
        if plan.mode == "parallel":
            for j, (r, s) in enumerate(g.rows):
                if s < S:
                    for name in DIAGNOSTICS[:-1]:
                        out[name][r, s] = local[name][j, 0]
            continue
        req = np.array(g.requests)
        out["tokens"][req] = local["tokens"]
        out["num_accepted"][req] = local["num_accepted"]
        for name in DIAGNOSTICS[:-1]:
            out[name][req] = local[name]
        if g.size > 1:
            finals = chip_run.read_exchange(xmap.tok + 4 * req[0], len(req), np.int32)
            out["tokens"][req, local["num_accepted"]] = finals
    if plan.mode == "parallel":
        o = xmap.outputs
        for r in range(R):
            out["tokens"][r] = [chip_run.read_exchange(o.out(r, s), 1, np.int32)[0]
                                for s in range(S + 1)]
            out["num_accepted"][r] = chip_run.read_exchange(o.nacc(r), 1, np.int32)[0]
    return out


def _check(inputs, cores, mode, merge, chip, guess="reject"):
    l, q, ids = inputs
    if np.ndim(l) != 3:
        raise ValueError(f"inputs: the target logits must be [R, S+1, V], got shape "
                         f"{np.shape(l)}")
    R, S1, V = np.shape(l)
    if chip is not None and not isinstance(chip, ChipConfig):
        raise ValueError(f"chip must be a ChipConfig, got {type(chip).__name__}")
    chip = ChipConfig(cores=cores) if chip is None else chip.with_(cores=cores)
    return plan_rows(R, S1 - 1, V, cores, mode, merge, guess), chip


@collector_paused()
def run_chip_sampler(inputs, *, cores: int, mode: str = "sequential", merge: str = "max-first",
                     seed: int = 0, chip: ChipConfig | None = None, compare: bool = True,
                     figures: bool = True, trace: bool = True,
                     guess: str = "reject") -> ChipSamplerRun:
    """Simulate the sampler on ``cores`` cores of ``chip`` (default: the default chip) in
    ``mode``, the checks' sums merged ``merge``, drawing with ``("fixed", "u96")``; compare
    with the reference stating each row's split. ``figures=False`` leaves out the floors of
    the critical core (tokens, cycles, phases and the chip's bound only); ``trace=False``
    the cores' traces too, and so the phases (a point of a curve: less memory, less time).
    ``guess``: what a split row's check fetches ahead (:data:`~rslab.kernels.sampler.
    chip_plan.GUESSES`)."""
    plan, chip = _check(inputs, cores, mode, merge, chip, guess)
    l, q, ids = inputs
    ref = rejection_sample(l, q, ids, path="fast", seed=seed, diagnostics=compare,
                           method=CHIP_DRAW[0], noise=CHIP_DRAW[1], split=plan.split)
    xmap = ExchangeMap(plan)
    if xmap.size > chip.exchange_bytes:
        raise ValueError(f"cores: this plan ({plan.describe()}) needs {xmap.size} bytes of "
                         f"exchange, the chip has {chip.exchange_bytes}")
    setups = _core_setups(plan, xmap, inputs, seed)
    hbm, windows = _place(setups, chip.cores)
    hbm = build_memory(hbm, None, "hbm")  # the windows' arrays are free before the run
    programs = [assembled(setups[c][0].text) if c in setups else None
                for c in range(chip.cores)]
    vmem = [setups[c][2] if c in setups else None for c in range(chip.cores)]
    R, S1, V = np.shape(l)
    chip_run = simulate_chip(programs, chip, hbm=hbm, vmem=vmem, trace=trace or figures,
                             windows=windows, exchange=xmap.initial(ids),
                             max_steps=step_budget(R * S1, V))
    outputs = _outputs(plan, xmap, setups, chip_run)
    critical = max(setups, key=lambda c: (chip_run.runs[c].cycles, -c))
    crit_run = chip_run.runs[critical]
    phases = phase_cycles(crit_run) if crit_run.trace is not None else {}
    run = ChipSamplerRun(setups[critical][0], chip_run.cycles, chip_run.stalls, phases,
                         outputs, ref.tokens.astype(np.int32), ref.num_accepted.astype(np.int32),
                         compare_floats(outputs, ref.diagnostics) if compare else {},
                         bundles=sum(r.bundles for r in chip_run.runs if r is not None),
                         plan=plan, chip_run=chip_run, critical_core=critical)
    bound = chip_bound(plan, chip, ref.num_accepted)
    bound["ratio"] = round(chip_run.cycles / bound["bound_cycles"], 3)
    run.chip_bound = bound
    if figures:
        run.floors = phase_floors(crit_run, setups[critical][0], phases)
    return run
