"""Chapter "Many cores": the chip, a row split over its cores, the merges, the two modes, the
curves against the chip's bound, and a live chip run.

What a page calls: :func:`peers` (what the sampler's peers reported in 2026),
:func:`chip_rows` and :func:`sources` (the chip and where its numbers come from),
:func:`merge_algebra` (what merges exactly on one row, and what does not) and
:func:`merge_rows`, :func:`change_rates`, :func:`rate_rows` and
:func:`mean_ratio_interval` (how often the float32 merge changes an outcome),
:func:`curves`, :func:`scaling`, :func:`scaling_rows`, :func:`mode_rows`,
:func:`traffic_rows` (the bytes each run reads), :func:`bound_curve` (the bound at every
core count, no run) and :func:`targets` (the grid against the chip's bound and
:data:`TARGETS`), :func:`upper_text` (a bound printed rounded up), ``curve_figure`` and
``live_figure`` (``draw`` functions for ``live_figure``) with their controls, and
:func:`merge_argmax` (the exercise's merge, as a reference).
"""

from __future__ import annotations

import numpy as np

from rslab import memo
from rslab.chapters.prose import point_label, significant, unit_names
from rslab.executors import make_executor
from rslab.fixtures import VOCAB, first_reject_inputs, sampled_inputs
from rslab.kernels.sampler import chip_curves
from rslab.kernels.sampler.chip_curves import POINTS, S, curve_points, scaling_end
from rslab.kernels.sampler.chip_run import run_chip_sampler
from rslab.kernels.sampler.run import phase_dma_waits, run_sampler
from rslab.machine.config import WORMHOLE, ChipConfig
from rslab.numerics import fixed_invcdf as fx
from rslab.numerics.fastlog import fast_exp2
from rslab.numerics.invcdf import tree_sum
from rslab.numerics.split_effect import merge_orders, order_changes
from rslab.numerics.split_sum import SplitSum, even_split, split_softmax
from rslab.scale import by_scale
from rslab.viz import chip_plots as cp
from rslab.viz.controls import choice_control, int_control

PEERS = (
    ("vLLM (GPU, Triton top-p)", "one program per row, serially sweeping the full vocabulary, "
     "performs poorly below ~40 rows; replaced by a split-row pipeline for batches ≤ 64",
     "vllm-project/vllm#54502, #54651 (Aug–Sep 2026)"),
    ("vllm.cpp (ROCm)", "a split-phase Gumbel argmax over 128 blocks instead of one block on 1 "
     "of 96 compute units: the sampling kernel 1,665 µs → ~50 µs",
     "mudler/vllm.cpp#3010 (Sep 2026)"),
    ("imp (GPU)", "a two-phase multi-block sampler (block max and Σexp, merged with an online "
     "rescale): 737 µs → 83 µs, \"distribution-identical … not bit-identical\"",
     "kekzl/imp#745 (Jun 2026)"),
    ("Tenstorrent tt-metal", "on-device sampling cuts the vocabulary into power-of-two chunks "
     "that fit its top-k operation's 64 K limit (V = 151,936 → four); padding measured as "
     "pure overhead",
     "tenstorrent/tt-metal#53167 (Aug 2026)"),
)
"""(who, what they reported, where) from ``shared/reference/many-cores.md``: their figures,
labelled as theirs, never measured here."""


def peers() -> list[dict]:
    """The peers' reports as table rows."""
    return [{"who": w, "what they reported": what, "where": where} for w, what, where in PEERS]


SOURCES = (
    ("HBM bandwidth (B/cycle)", "hbm_bytes_per_cycle",
     "a core's NoC link carries one 256-bit flit, 32 B, per cycle (32 GB/s at the 1 GHz AI "
     "clock); twelve GDDR6 channels (the Wormhole's memory is GDDR6; the model calls it HBM) "
     "give 288 GB/s, 288 B per cycle: 288 / 32 = 9 links' worth. The same ratio on this "
     "core's DMA engine of 128 B/cycle: 9 × 128 = 1,152. Assumed: a core moves data over one "
     "NoC (a Wormhole core has two; counting both, the ratio is 4.5)",
     "NoC/README.md and DRAMTile/README.md, Performance"),
    ("router-to-router hop (cycles)", "hop_latency", "router to neighbouring router: 9 cycles",
     "NoC/README.md, Performance"),
    ("core-to-router trip (cycles)", "endpoint_latency",
     "core (NIU) to its router: ~5 cycles; router to core (NIU): ~5 cycles (~5 each way; the "
     "model takes 5 each way)", "NoC/README.md, Performance"),
    ("exchange region (KiB)", "exchange_bytes", "a Tensix core has 1464 KiB of L1; the "
     "exchange takes 256 KiB of every core's local memory", "TensixTile/README.md"),
)
"""(setting, its ChipConfig field, the public figure and how the setting follows from it,
where it is) of the chip's defaults (:class:`ChipConfig`)."""


def chip_rows(chip: ChipConfig | None = None) -> list[tuple[str, str, str]]:
    """(resource, value, note) rows of the chip (default: the default chip)."""
    return (chip or ChipConfig()).table()


def sources() -> list[dict]:
    """The chip's defaults beside the public figures they come from."""
    chip = ChipConfig()
    scale = {"exchange_bytes": 1024}
    return [{"setting": s, "value": getattr(chip, f) // scale.get(f, 1), "field": f,
             "public figure": figure, "source": WORMHOLE + where}
            for s, f, figure, where in SOURCES]


def merge_algebra(vocab: int = VOCAB, cores: int = 16, rows: int = 8, seed: int = 0) -> dict:
    """``rows`` sampled rows of ``vocab`` tokens split over ``cores``: how many merge the row
    max and argmax (from the cores' own) exactly, how many merge the float32 sum s to the
    one-core order's value (max-first, online) and how many float32 steps apart at most, and
    how many merge the fixed-point draw's integer total exactly: each core sums its own
    slice's blocks in float32, the cores merge the largest block sum (its exponent E scales
    every block, :func:`rslab.numerics.fixed_invcdf.quantise`), each core quantises its
    blocks at that E and sums them exactly, and the cores' totals add up; beside it, how many
    rows would come out right if each core quantised at its own slice's exponent (no merge)."""
    logits = sampled_inputs(rows, 1, vocab, seed=seed)[0][:, 0]
    one, split = SplitSum((0, vocab)), even_split(vocab, cores)
    online = even_split(vocab, cores, merge="online")
    b = split.bounds
    out = {"cores": split.parts, "rows": rows, "max_equal": 0, "argmax_equal": 0,
           "integer_total_equal": 0, "integer_total_own_exponent": 0,
           "sum_equal": {"max-first": 0, "online": 0},
           "sum_ulps_max": {"max-first": 0, "online": 0}}
    for l in logits:
        parts = [l[lo:hi] for lo, hi in zip(b, b[1:], strict=False)]
        maxima = [p.max() for p in parts]
        k = int(np.argmax(maxima))
        out["max_equal"] += bool(max(maxima) == l.max())
        out["argmax_equal"] += b[k] + int(np.argmax(parts[k])) == int(np.argmax(l))
        s1 = split_softmax(l[None], fast_exp2, one)[1][0, 0]
        for name, order in (("max-first", split), ("online", online)):
            s2 = split_softmax(l[None], fast_exp2, order)[1][0, 0]
            out["sum_equal"][name] += bool(s2 == s1)
            ulps = abs(int(s2.view(np.int32)) - int(s1.view(np.int32)))
            out["sum_ulps_max"][name] = max(out["sum_ulps_max"][name], ulps)
        e = split_softmax(l[None], fast_exp2, one)[3][0]
        whole = fx.total(fx.quantise(tree_sum(fx.blocks(e))))
        sums = [tree_sum(fx.blocks(e[lo:hi])) for lo, hi in zip(b, b[1:], strict=False)]
        top = max(fx.max_exponent(x) for x in sums if x.max() > 0)  # the merged largest sum
        out["integer_total_equal"] += sum(fx.total(fx.quantise(x, exponent=top))
                                          for x in sums) == whole
        out["integer_total_own_exponent"] += sum(fx.total(fx.quantise(x)) for x in sums
                                                 if x.max() > 0) == whole
    return out


def merge_rows(a: dict) -> list[dict]:
    """:func:`merge_algebra`'s counts as table rows with human headers."""
    n = a["rows"]
    return [{"what is merged": "the row max",
             "rows equal to one core's": f"{a['max_equal']} of {n}",
             "how": "max of the cores' maxima"},
            {"what is merged": "the argmax", "rows equal to one core's":
             f"{a['argmax_equal']} of {n}", "how": "the lowest index among the largest"},
            {"what is merged": "the fixed-point draw's integer total",
             "rows equal to one core's": f"{a['integer_total_equal']} of {n}",
             "how": "the largest block sum merged first (its exponent scales every core's "
                    "blocks), then the sum of the cores' exact totals"},
            {"what is merged": "the same, each core at its own exponent (no first merge)",
             "rows equal to one core's": f"{a['integer_total_own_exponent']} of {n}",
             "how": "sum of totals at different scales"},
            {"what is merged": "the float32 sum s, max first", "rows equal to one core's":
             f"{a['sum_equal']['max-first']} of {n}",
             "how": f"sum of the cores' sums (at most {a['sum_ulps_max']['max-first']} "
                    "float32 steps off)"},
            {"what is merged": "the float32 sum s, online", "rows equal to one core's":
             f"{a['sum_equal']['online']} of {n}",
             "how": f"rescaled (max, Σ) pairs (at most {a['sum_ulps_max']['online']} "
                    "float32 steps off)"}]


ORDER_NAMES = {"numpy": "NumPy's order (one core, pairwise)", "split16": "16 cores, max first",
               "split16-online": "16 cores, online", "split64": "64 cores, max first"}


def rate_rows(rates) -> list[dict]:
    """:func:`change_rates` as table rows with human headers."""
    return [{"order of the sum": ORDER_NAMES[r["order"]],
             "positions changed": f"{r['positions_changed']} of {r['positions']}",
             "mean probability of a different outcome": f"{r['mean']:.1e}",
             "largest at one position": f"{r['max']:.1e}",
             "of which a flipped decision": f"{r['decision_mean']:.1e}"} for r in rates]


def change_rates(vocab: int = VOCAB, positions: int | None = None, seed: int = 0) -> list[dict]:
    """Per order of the float32 sum (NumPy's, split over 16 and 64 cores), the exact
    probability that it changes a position's outcome against one core's, over sampled
    positions (``positions`` default: 16 at quick scale, 32 at book)."""
    positions = by_scale(16, 32, 128) if positions is None else positions
    inputs = sampled_inputs(-(-positions // 2), 2, vocab, seed=seed)
    rates = order_changes(inputs, merge_orders(vocab), SplitSum((0, vocab)), fast_exp2,
                          positions)
    return [{"order": name, **r} for name, r in rates.items()]


def mean_ratio_interval(a, b, draws: int = 10_000, seed: int = 0,
                        level: float = 0.95) -> tuple[float, float]:
    """The ``level`` percentile-bootstrap interval of mean(a) / mean(b) over paired positions
    (``draws`` resamples, the same positions for both; a draw whose mean(b) is 0 counts as
    infinite)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    if a.shape != b.shape or a.ndim != 1 or a.size == 0:
        raise ValueError(f"a, b: two equal non-empty 1-D sequences, got {a.shape}, {b.shape}")
    pick = np.random.default_rng(seed).integers(0, a.size, size=(draws, a.size))
    num, den = a[pick].mean(axis=1), b[pick].mean(axis=1)
    ratio = np.divide(num, den, out=np.full(draws, np.inf), where=den > 0)
    lo, hi = np.quantile(ratio, [(1 - level) / 2, (1 + level) / 2], method="inverted_cdf")
    return float(lo), float(hi)


READER_GRID = {"requests": (2,), "cores": (1, 8, 32, 64)}
"""The grid at the reader's scale: the note's first-step reject and all-accept at R = 2 (a
minute in Lab)."""
BOOK_GRID = {"requests": (1, 2), "cores": (1, 2, 4, 8, 16, 32, 64)}
"""The page's grid at the book's scale (the bench computes
:data:`rslab.kernels.sampler.chip_curves.GRIDS`, R up to 64)."""


def page_grid() -> dict:
    """The page's grid at the current scale: :data:`READER_GRID` at quick, :data:`BOOK_GRID`
    at book, the bench's at full (empty: :func:`curves` then takes the bench's)."""
    return by_scale(READER_GRID, BOOK_GRID, {})


def grid_runs() -> int:
    """The chip runs of the page's grid: both test points, both modes, every R and C."""
    g = page_grid()
    if not g:
        g = dict(zip(("requests", "cores"), chip_curves.grid(), strict=True))
    return 2 * 2 * len(g["requests"]) * len(g["cores"])


def curves(vocab: int = VOCAB, **grid) -> list[dict]:
    """The grid's points (:func:`rslab.kernels.sampler.chip_curves.curve_points`, computed
    on this machine's cores, each once per book build; :func:`page_grid` unless ``grid``
    says otherwise)."""
    grid = page_grid() | grid
    with make_executor() as executor:
        return curve_points(vocab, executor=executor, **grid)


@memo.cached
def one_core_baseline(vocab: int = VOCAB, R: int = 2, seed: int = 0) -> dict:
    """The book's one-core program with the chip's draw (``run_sampler(method="fixed",
    noise="u96")``) at the first-step reject: its cycles, the cycles its core waited for the
    DMA, and whether its tokens are the reference's — the baseline of the chip's speedups."""
    run = run_sampler(first_reject_inputs(R=R, S=S, V=vocab, seed=seed), method="fixed",
                      noise="u96", seed=seed, compare=False, figures=False)
    return {"cycles": int(run.cycles), "dma_wait": int(run.stalls["dma-wait"]),
            "tokens_match_reference": bool(run.tokens_match)}


@memo.cached
def critical_waits(name: str, R: int, cores: int, mode: str = "sequential",
                   vocab: int = VOCAB, seed: int = 0) -> dict:
    """One chip run of a curve point, traced: its cycles, the waits (for the DMA, the HBM
    and barriers), the cycles per phase and the DMA waits per phase (``dma_by_phase``) of the
    core that ended last (``core``), and per
    active core the cycles from the end of its last barrier wait to its end
    (``after_barriers``: the work after the last merge)."""
    run = run_chip_sampler(POINTS[name](R=R, S=S, V=vocab, seed=seed), cores=cores, mode=mode,
                           seed=seed, compare=False, figures=False, trace=True)
    last = run.chip_run.runs[run.critical_core]
    st = last.stalls
    return {"cycles": int(run.cycles), "dma_wait": int(st["dma-wait"]), "hbm": int(st["hbm"]),
            "barrier": int(st["barrier"]), "plan": run.plan.describe(),
            "phases": {k: int(v) for k, v in run.phases.items()},
            "dma_by_phase": {k: int(v) for k, v in phase_dma_waits(last).items()},
            "core": int(run.critical_core), "after_barriers": _after_barriers(run)}


def _after_barriers(run) -> dict[int, int]:
    """Per active core of a traced chip run: its cycles after its last barrier wait."""
    out = {}
    for c, segs in core_segments(run).items():
        ends = [end for _, end, what in segs if what == "barrier"]
        if ends:
            out[c] = int(segs[-1][1] - ends[-1])
    return out


def tail_estimate(point: dict, chip: ChipConfig | None = None) -> int:
    """A tighter estimate than the chip's bound for a first-step reject with split rows in
    sequential mode: the bytes term (the larger of ``dma`` and ``hbm``), then only the
    residual's two merges (its largest block sum, its totals) over the row's group; the
    check's merges overlap the q row's transfer, as the program lets them. An estimate of
    what a dependence-respecting schedule needs, not a proven bound."""
    if point["name"] != "first-reject" or point["mode"] != "sequential":
        raise ValueError(f"point: a sequential first-step reject, got {point['name']!r}, "
                         f"{point['mode']!r}")
    chip = chip or ChipConfig()
    merges = 2 * chip.barrier_latency(point["cores_per_row"]) if point["cores_per_row"] > 1 else 0
    return max(point["dma_cycles"], point["hbm_cycles"]) + merges


def mode_bytes(name: str, R: int = 2, vocab: int = VOCAB) -> dict:
    """Per mode, the bytes the task of a test point (``first-reject`` or ``all-accept``, S =
    4) brings from the HBM (:func:`~rslab.kernels.sampler.chip_bound.plan_bytes`)."""
    from rslab.kernels.sampler.chip_bound import plan_bytes
    from rslab.kernels.sampler.chip_plan import MODES, plan_rows
    accepted = np.full(R, S if name == "all-accept" else 0)
    return {m: plan_bytes(plan_rows(R, S, vocab, 1, m), accepted) for m in MODES}


def bound_curve(name: str = "first-reject", R: int = 2, mode: str = "sequential",
                vocab: int = VOCAB, cores=range(1, 65)) -> dict[int, int]:
    """The chip's bound (its cycles) of a test point at every core count in ``cores``:
    computed from the plan alone, no run (:func:`~rslab.kernels.sampler.chip_bound.chip_bound`,
    the default chip)."""
    from rslab.kernels.sampler.chip_bound import chip_bound
    from rslab.kernels.sampler.chip_plan import plan_rows
    accepted = np.full(R, S if name == "all-accept" else 0)
    return {c: chip_bound(plan_rows(R, S, vocab, c, mode), ChipConfig(cores=c),
                          accepted)["bound_cycles"] for c in cores}


def scaling(points) -> list[dict]:
    """Per curve, where strong scaling ends and what binds there."""
    return scaling_end(points)


def scaling_rows(ends) -> list[dict]:
    """:func:`scaling`'s curves as table rows with human headers."""
    return [{"test point": point_label(e["name"]), "mode": e["mode"], "R": e["R"],
             "fastest measured at (cores)": e["best_cores"],
             "cycles there": f"{e['best_cycles']:,}",
             "speed-up over the same mode on 1 core": f"{e['speedup']:.1f}×",
             "within a tenth of the fastest from (cores)": e["ends_at"],
             "what binds there": unit_names(e["binding_there"])} for e in ends]


def mode_rows(points, name: str = "first-reject", R: int = 2) -> list[dict]:
    """Per mode and core count of one test point: cycles, the chip's bound and its terms."""
    pts = sorted((p for p in points if p["name"] == name and p["R"] == R),
                 key=lambda p: (p["mode"], p["cores"]))
    return [{"mode": p["mode"], "cores": p["cores"], "cycles": f"{p['cycles']:,}",
             "chip's bound": f"{p['bound_cycles']:,}", "binds": unit_names(p["binding"]),
             "of it, the exchange": f"{p['exchange_cycles']:,}",
             "cycles / bound": f"{p['ratio']:.2f}"} for p in pts]


def traffic_rows(points, name: str = "all-accept", R: int = 2) -> list[dict]:
    """Per core count and mode of one test point: the bytes the HBM delivered, the most one
    core brought, the cycle the HBM sends its last byte (it arrives a DMA latency later), the
    cycles after it and the run's."""
    pts = sorted((p for p in points if p["name"] == name and p["R"] == R),
                 key=lambda p: (p["cores"], p["mode"]))
    return [{"cores": p["cores"], "mode": p["mode"],
             "bytes from the HBM": f"{p['hbm_bytes']:,}",
             "most bytes one core brings": f"{p['core_bytes_max']:,}",
             "HBM sends its last byte (cycle)": f"{p['last_byte']:,}",
             "cycles after it": f"{p['cycles'] - p['last_byte']:,}",
             "cycles": f"{p['cycles']:,}"} for p in pts]


def merge_argmax(row, cores: int) -> int:
    """The argmax of ``row`` from its slices over ``cores`` (:func:`even_split`'s bounds):
    each slice's max and first argmax, then the largest, ties to the lowest slice."""
    b = even_split(row.size, cores).bounds
    best = None
    for lo, hi in zip(b, b[1:], strict=False):
        k = lo + int(np.argmax(row[lo:hi]))
        if best is None or row[k] > row[best]:
            best = k
    return best


TARGETS = tuple((n, R, C, t) for n, R, C, _, t in chip_curves.TARGETS.values())
"""The chip program's design targets (:data:`rslab.kernels.sampler.chip_curves.TARGETS`, in
sequential mode): (test point, R, cores, the most cycles / the chip's bound). The first is
latency (the note's first-step reject), the second throughput (all-accept at R = 64, which
only the bench's grid computes)."""


def targets(points) -> list[dict]:
    """The points of :data:`TARGETS` among ``points``, each against its target."""
    by = {(p["name"], p["R"], p["cores"]): p for p in points if p["mode"] == "sequential"}
    return [{"point": f"{n}, R = {R}, {C} cores", "cycles": by[(n, R, C)]["cycles"],
             "bound": by[(n, R, C)]["bound_cycles"], "ratio": by[(n, R, C)]["ratio"],
             "target": t, "met": by[(n, R, C)]["ratio"] <= t}
            for n, R, C, t in TARGETS if (n, R, C) in by]


def upper_text(x: float) -> str:
    """``x`` rounded up to one significant digit, as ``"4e-05"``: an upper bound that prints
    no less than ``x`` (``f"{x:.0e}"`` can round down)."""
    digit, exponent = significant(x, 1, rounding="up")
    return f"{digit}e{exponent:+03d}"


# ----------------------------------------------------------------- live figures

def curve_figure(points, name: str = "first-reject", mode: str = "sequential"):
    """``draw(cores)``: the curves of one test point and mode with ``cores`` marked."""
    def draw(cores: int):
        fig = cp.cycles_vs_cores(points, name, mode, highlight=cores)
        here = sorted((p for p in points if p["name"] == name and p["mode"] == mode
                       and p["cores"] == cores), key=lambda p: p["R"])
        caption = f"{cores} cores: " + ", ".join(
            f"R = {p['R']} {p['cycles']:,} cycles ({p['ratio']:.2f}× the bound)" for p in here)
        return fig, caption
    return draw


def core_segments(run) -> dict:
    """Per active core of a chip run: (start, end, phase) of every stretch of its program,
    the waits for the HBM and for barriers as their own stretches."""
    out = {}
    for c, core_run in enumerate(run.chip_run.runs):
        if core_run is None:
            continue
        labels = sorted((pc, name.split("_", 1)[1]) for name, pc in
                        core_run.program.labels.items() if name.startswith("ph"))
        starts = np.array([pc for pc, _ in labels] or [0])
        segs, prev = [], 0
        for rec in core_run.trace.bundles:
            i = int(np.searchsorted(starts, rec.pc, side="right")) - 1
            phase = labels[i][1] if i >= 0 and labels else "setup"
            what = rec.cause if rec.cause in ("hbm", "dma-wait", "barrier") else phase
            if segs and segs[-1][2] == what and segs[-1][1] == prev:
                segs[-1] = (segs[-1][0], rec.cycle, what)
            elif rec.cycle > prev:
                segs.append((prev, rec.cycle, what))
            prev = rec.cycle
        out[c] = segs
    return out


def live_run(cores: int, requests: int = 2, mode: str = "sequential",
             hbm_bytes_per_cycle: int = 1152, vocab: int = VOCAB):
    """One chip run at first-step reject (the tokens checked against the reference)."""
    inputs = first_reject_inputs(R=requests, S=S, V=vocab, seed=0)
    chip = ChipConfig(hbm_bytes_per_cycle=hbm_bytes_per_cycle)
    return run_chip_sampler(inputs, cores=cores, mode=mode, chip=chip, compare=False,
                            figures=False)


def live_figure(vocab: int = VOCAB):
    """``draw(cores, requests, mode, hbm)``: a first-step reject re-simulated on that chip; a
    row per core of its phases and waits, the HBM's bytes per cycle, and its cycles against
    the chip's bound."""
    def draw(cores: int, requests: int, mode: str, hbm: int):
        run = live_run(cores, requests, mode, hbm, vocab)
        b = run.chip_bound
        fig = cp.chip_timeline(core_segments(run), run.chip_run.hbm_bytes(), hbm,
                               title=f"first-step reject, R = {requests}, {cores} cores, "
                                     f"{mode}:\n{run.plan.describe()}")
        caption = (f"{run.cycles:,} cycles; the chip's bound {b['bound_cycles']:,} "
                   f"({b['binding']} {b[b['binding'] + '_cycles']:,} + exchange "
                   f"{b['exchange_cycles']:,}): {b['ratio']:.2f}×; tokens "
                   f"{'equal' if run.tokens_match else 'NOT equal'} to the reference's")
        return fig, caption
    return draw


def cores_control(frames=(1, 8, 32, 64)):
    """The cores, 1 to 64; ``frames`` precomputed, 32 first shown."""
    return int_control("cores", 1, 64, frames=frames, value=32, label="cores")


def requests_control(frames=(2, 8)):
    """The requests, 1 to 64; ``frames`` precomputed (2: the note's first-step reject)."""
    return int_control("requests", 1, 64, frames=frames, value=2, label="requests R")


def mode_control():
    """Sequential (the note's) or parallel (vLLM's) mode."""
    return choice_control("mode", ("sequential", "parallel"), label="mode")


def hbm_control(frames=(576, 1152)):
    """The HBM's bytes per cycle: ``frames`` precomputed, 1,152 (the default) first shown."""
    return int_control("hbm", 128, 4608, step=128, frames=frames, value=1152,
                       label="HBM B/cycle", fmt=lambda v: f"{v:,}")
