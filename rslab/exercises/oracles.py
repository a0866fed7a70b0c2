"""The oracles: each exercise's answer computed by the package's own layers on any variant.

Every function takes the exercise's parameters (keywords) and returns the answer: an
integer, a float, or a truth value (yes/no). They simulate, schedule or enumerate; none
returns a number written here. Costs: most take well under a second; the lattice
enumerations (``div8_*``, ``div14_*``, ``divisor_ks``) a few seconds.
"""

from __future__ import annotations

import functools

import numpy as np


def _config(**changes):
    from rslab.machine.overrides import apply_overrides

    return apply_overrides([(k, str(v)) for k, v in changes.items()])


def _cycles(text: str, config, vmem=None) -> int:
    from rslab.machine import assemble, simulate

    return simulate(assemble(text), config, vmem=vmem).cycles


# ------------------------------------------------------------------ the machine chapter
def chains_to_fill_valu(valu_latency: int, valu_slots: int) -> int:
    """The fewest independent chains of ``vadd.f32`` (interleaved round-robin, ``valu_slots``
    ops a bundle) at which the VALU issues ``valu_slots`` ops every cycle in the steady state
    (measured: the cycles a round of one op per chain adds)."""
    config = _config(valu_latency=valu_latency, valu_slots=valu_slots)

    def program(chains: int, rounds: int) -> str:
        ops = [f"vadd.f32 v{c}, v{c}, v63" for _ in range(rounds) for c in range(chains)]
        return "\n".join(" ; ".join(ops[i:i + valu_slots])
                         for i in range(0, len(ops), valu_slots)) + "\nhalt\n"

    for chains in range(1, 62):
        if chains % valu_slots:
            continue
        per_round = (_cycles(program(chains, 12), config)
                     - _cycles(program(chains, 4), config)) / 8
        if per_round * valu_slots <= chains:
            return chains
    raise ValueError("no chain count up to 61 fills the VALU")


def results_in_flight(sfu_latency: int, sfu_hold: int) -> int:
    """SFU results in flight when ``exp2`` pushes issue at full rate: the pushes issued
    before the first result is ready (measured on a burst of pushes)."""
    from rslab.machine import assemble, simulate

    config = _config(sfu_latency=sfu_latency, sfu_hold=sfu_hold)
    pushes = config.fifo_depth
    text = "vexp2 v1\n" * pushes + "vpop v2\n" * pushes + "halt\n"
    run = simulate(assemble(text), config, trace=True)
    pushes = [op for op in run.trace.ops if op.slot == "sfu"]
    first_ready = min(op.ready for op in pushes)
    return sum(1 for op in pushes if op.issue < first_ready)


def strides_with_conflict(vmem_banks: int, degree: int, max_stride: int) -> int:
    """How many strides 1 … ``max_stride`` (words) make ``vld.s`` conflict exactly
    ``degree``-way on a VMEM of ``vmem_banks`` banks (measured: the cycles a load adds)."""
    from rslab.machine.examples import strided_loads

    config = _config(vmem_banks=vmem_banks)
    count = 0
    for stride in range(1, max_stride + 1):
        held = (_cycles(strided_loads(stride, 12), config)
                - _cycles(strided_loads(stride, 4), config)) / 8
        count += held == degree
    return count


def branch_loop_cost(branch_penalty: int, vectors: int = 16) -> int:
    """Cycles an iteration of the machine chapter's naive sum-exp costs more when its
    hardware loop is replaced by a counter: ``ssub`` in the body's second bundle (the first
    one's scalar slot advances the pointer) and ``bnz`` in a bundle of its own at the end (the
    steady state of two trip counts)."""
    from rslab.machine.examples import sumexp_inputs, sumexp_naive

    config = _config(branch_penalty=branch_penalty)

    def both(n: int) -> tuple[int, int]:
        words, m, _ = sumexp_inputs(n)
        lines = sumexp_naive(n).text().splitlines()
        start = next(i for i, line in enumerate(lines) if line.startswith("loop "))
        end = lines.index("endloop")
        body = lines[start + 1:end]
        counted = (lines[:start] + [f"sli s7, {n}", "top:", body[0],
                                    body[1] + " ; ssub s7, s7, 1"]
                   + body[2:] + ["bnz s7, top"] + lines[end + 1:])
        m_bits = int(np.float32(m).view(np.uint32))
        setup = f"sli s2, {m_bits}\n"
        hw = _cycles(setup + "\n".join(lines) + "\n", config, {0: words})
        branch = _cycles(setup + "\n".join(counted) + "\n", config, {0: words})
        return hw, branch

    (h1, b1), (h2, b2) = both(vectors), both(2 * vectors)
    return round(((b2 - b1) - (h2 - h1)) / vectors)


# ------------------------------------------------------------------ dataflow
def third_slot_speeds_up_a1(sfu_hold: int) -> bool:
    """Whether a third VALU slot alone makes dataflow (a′) faster (measured cycles per
    packed vector, each machine with the unrolls its kernel picks)."""
    from rslab.kernels.studies.dataflow_table import ROW_VOCAB, measured_per_vector
    from rslab.kernels.studies.sumexp import emit_sumexp

    def per_vector(config) -> float:
        unroll = tuple(p.per_iteration for p in emit_sumexp("a'", ROW_VOCAB, config).passes)
        return measured_per_vector("a'", config, unroll)

    base = _config(sfu_hold=sfu_hold)
    return per_vector(base.with_(slots={"valu": 3})) < per_vector(base)


def rowmax_unroll(valu_latency: int) -> int:
    """Packed vectors per iteration the row-max pass picks on a machine with this VALU
    latency (:func:`rslab.kernels.studies.rowmax.emit_rowmax`, 64 packed vectors)."""
    from rslab.kernels.studies.rowmax import emit_rowmax

    return emit_rowmax(64 * 256, _config(valu_latency=valu_latency)).passes[0].per_iteration


# ------------------------------------------------------------------ software pipelining
def _sumexp_loop(config, workers: int = 4):
    from rslab.kernels.studies.sumexp_loop import sumexp_loop
    from rslab.schedule import SlotModel

    return sumexp_loop(16, model=SlotModel.from_config(config), workers=workers)


def sumexp_ii(sfu_hold: int) -> int:
    """The II the modulo scheduler finds for the chapter's sum-exp loop at this hold-issue."""
    return _sumexp_loop(_config(sfu_hold=sfu_hold)).ii


def sumexp_stages(sfu_latency: int) -> int:
    """The stages of the chapter's sum-exp schedule at this SFU latency."""
    return _sumexp_loop(_config(sfu_latency=sfu_latency)).stage_count


def workers_for_resmii(valu_latency: int) -> int:
    """The fewest workers (1, 2 or 4) whose RecMII is at most the ResMII of the chapter's
    sum-exp loop at this VALU latency (0: none)."""
    from rslab.kernels.studies.sumexp_loop import sumexp_body
    from rslab.schedule import SlotModel, analyse

    model = SlotModel.from_config(_config(valu_latency=valu_latency))
    for workers in (1, 2, 4):
        bounds = analyse(sumexp_body(workers=workers), model)
        if bounds.rec_mii <= bounds.res_mii:
            return workers
    return 0


def residual_row_ii(valu_slots: int) -> int:
    """The II of the residual Gumbel row's loop (the study's, one packed vector an iteration)
    with this many VALU slots."""
    from rslab.kernels.studies.draw_loops import draw_loop
    from rslab.schedule import SlotModel

    model = SlotModel.from_config(_config(valu_slots=valu_slots))
    return draw_loop("residual", "gumbel", "div8", 8, model).ii


# ------------------------------------------------------------------ the algorithm
def expected_emitted(alpha: float, drafts: int) -> float:
    """Expected tokens a request emits when every draft is accepted with probability
    ``alpha``: the accepted drafts k (geometric, at most S) plus one."""
    k = np.arange(drafts + 1)
    p = np.where(k < drafts, alpha ** k * (1 - alpha), alpha ** drafts)
    return float(np.sum(p * (k + 1)))


def philox_words_differing(seed_a: int, seed_b: int) -> int:
    """How many of the two Philox key words differ between two seeds."""
    from rslab.randomness import philox_key

    return int(np.count_nonzero(philox_key(seed_a) != philox_key(seed_b)))


# ------------------------------------------------------------------ the noise (lattice)
@functools.lru_cache(maxsize=2)
def _lattice_noise(name: str, tau_scale: float = 1.0) -> np.ndarray:
    from rslab.numerics.fastlog import DEFAULT_FASTLOG2 as FL
    from rslab.numerics.gumbel import get_noise
    from rslab.numerics.rng import all_uniforms

    log2 = FL if tau_scale == 1.0 else FL.replace(zero_threshold=FL.zero_threshold * tau_scale)
    return get_noise(name, log2=log2)(all_uniforms())


def zeros_per_2_20(tau_scale: float) -> float:
    """Exact count of g = 0 per 2^20 draws of the scaled pipeline with the fast log's
    threshold τ scaled by ``tau_scale`` (every lattice uniform)."""
    return float(2**20 * np.mean(_lattice_noise("scaled", tau_scale) == 0))


def divisor_atom(divisor: int) -> float:
    """The mass of the Div-k atom: the fraction of lattice draws whose second layer
    ``fl(t/k)`` falls on the fast log's zero plateau."""
    from rslab.numerics.fastlog import DEFAULT_FASTLOG2 as FL
    from rslab.numerics.gumbel import get_noise
    from rslab.numerics.rng import all_uniforms

    trace = get_noise(f"div({divisor})", log2=FL).trace(all_uniforms())
    return float(np.mean(trace["l2"] == 0))


def divisors_differ(a: int, b: int) -> int:
    """Lattice points whose second layer differs between Div-a and Div-b."""
    from rslab.numerics.fastlog import DEFAULT_FASTLOG2 as FL
    from rslab.numerics.gumbel import lattice_first_layer, second_layer

    t = lattice_first_layer(FL, True)
    return int(np.count_nonzero(second_layer(t, float(a), FL) != second_layer(t, float(b), FL)))


def samples_to_reject(divisor: int, power: float, alpha: float) -> float:
    """Samples a 64-bin χ² test at level ``alpha`` needs to reject Div-k with chance
    ``power`` (its exact λ over the lattice)."""
    from rslab.numerics.search import exact_row
    from rslab.viz.search_plots import samples_for_power

    lam = exact_row(f"div({divisor})", _lattice_noise(f"div({divisor})"))["lam"]
    return samples_for_power(lam, power=power, alpha=alpha)


def divisor_ks(divisor: int) -> float:
    """The exact KS distance of Div-k's noise over the lattice."""
    from rslab.numerics.search import exact_row

    return float(exact_row(f"div({divisor})", _lattice_noise(f"div({divisor})"))["exact_ks"])


def peaked_tail_probability(tail: float) -> float:
    """The probability the Fast Gumbel-max draw (Div8) gives to the tail tokens of
    ``targets.peaked(tail)`` together, from the exact token law."""
    from rslab.numerics import targets
    from rslab.numerics.token_law import token_law

    law = token_law(targets.peaked(tail), "gumbel", "div8")
    return float(tail * (1 + law.run_rel[1]))


# ------------------------------------------------------------------ the many-cores chapter
def chip_bytes_term(cores: int, hbm_bytes_per_cycle: int) -> int:
    """The bytes term of the chip's bound (the larger of its ``dma`` and ``hbm`` terms) at
    the first-step reject, R = 2, S = 4, V = VOCAB, on a chip of ``cores`` cores whose HBM
    moves ``hbm_bytes_per_cycle``."""
    from rslab.fixtures import VOCAB
    from rslab.kernels.sampler.chip_bound import chip_bound
    from rslab.kernels.sampler.chip_plan import plan_rows
    from rslab.machine.config import ChipConfig

    chip = ChipConfig(cores=cores, hbm_bytes_per_cycle=hbm_bytes_per_cycle)
    b = chip_bound(plan_rows(2, 4, VOCAB, cores), chip, np.zeros(2, int))
    return max(b["dma_cycles"], b["hbm_cycles"])
