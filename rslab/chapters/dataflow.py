"""The *Dataflow choice* chapter: its tables, the SFU-latency story over the whole slider, and
the machine sweeps, extended live one value at a time."""

from rslab.chapters.prose import UNIT_NAMES, unit_names
from rslab.kernels.studies import dataflow_table as dt
from rslab.kernels.studies.kernel import UNROLLS, scalar_f32
from rslab.kernels.studies.sumexp import VARIANTS, emit_sumexp, reference_sumexp, sum_tolerance
from rslab.scale import by_scale
from rslab.viz import dataflow_plots as dp
from rslab.viz.controls import int_control
from rslab.viz.tables import markdown_table

SWEEP_RANGES = {"valu": (1, 6), "st": (1, 4), "sfu_latency": (1, 100)}
"""The live range of each swept machine parameter."""

PASSES = {"max+land(helper)": "max + landing (helper's layout)",
          "max+land(lanes)": "max + landing (changed layout)", "max": "max", "sum": "sum",
          "online": "online"}
"""Each pass's name as the tables print it."""
TWO_PASS = ("a", "a'", "b")
"""The dataflows with a max pass before their sum pass."""
DEEP_FIFO = 64
"""A FIFO of four times the default's entries, to show what the default's limit on the
results in flight costs (c)'s schedule."""
WIDE_VREGS = 128
"""A register file of twice the default's vector registers, to show what the default's
registers cost (c)'s schedule."""


def latency_grid(config, scale: str | None = None) -> list[int]:
    """The SFU latencies the page computes: at book scale every latency from the slider's
    shortest to the one after the last two-pass knee (``fifo_knee``); in Lab the shortest,
    the default, each knee and the latency after them. Past that one point of (c) takes
    from tens of seconds to minutes to schedule (its eight-vector block's search), so the
    slider computes the longer latencies only when the reader moves it there."""
    lo, _ = SWEEP_RANGES["sfu_latency"]
    knees = {fifo_knee(v, config) for v in ("a'", "b")}
    last = max(knees) + 1
    if by_scale(quick=True, book=False, full=False, scale=scale):
        return sorted({lo, config.latency["sfu"], last} | knees)
    return list(range(lo, last + 1))


def grid_text(grid: list[int]) -> str:
    """How the page says which latencies it computed."""
    lo, hi = SWEEP_RANGES["sfu_latency"]
    beyond = f"; the slider computes each latency up to {hi} when it is moved there"
    if grid == list(range(grid[0], grid[-1] + 1)):
        return (f"every latency from {grid[0]} to {grid[-1]} (the latency after the two "
                f"knees described below{beyond})")
    return (f"the latencies {', '.join(map(str, grid[:-1]))} and {grid[-1]} (the shortest, "
            f"the default, the two knees described below and the latency after them; the "
            f"book's build computes every latency from {lo} to {grid[-1]}{beyond})")


def latencies_text(latencies: list[int]) -> str:
    """Latencies as runs, with their noun: "latency 40", "latencies 36, 38–40 and 42"."""
    runs = []
    for latency in sorted(latencies):
        if runs and latency == runs[-1][1] + 1:
            runs[-1][1] = latency
        else:
            runs.append([latency, latency])
    parts = [f"{a}" if a == b else f"{a}–{b}" for a, b in runs]
    if len(latencies) == 1:
        return f"latency {parts[0]}"
    return "latencies " + (parts[0] if len(parts) == 1
                           else ", ".join(parts[:-1]) + " and " + parts[-1])


def winner_text(per_variant: dict) -> str:
    """``dt.winner`` in words: "(c)", or "(a′) and (c), tied"."""
    names = [dp.name(v) for v in dt.winner(per_variant).split("=")]
    if len(names) == 1:
        return names[0]
    return ", ".join(names[:-1]) + " and " + names[-1] + ", tied"


def latency_records(grid, config, vocab: int = dt.ROW_VOCAB) -> dict:
    """Per SFU latency of ``grid``: each dataflow's measured, scheduled and bound cycles per
    packed vector, and (c)'s block and pushes per packed vector; one kernel per dataflow
    and latency."""
    out = {}
    for latency in grid:
        cfg = dt.config_with("sfu_latency", latency, config)
        rec = {"measured": {}, "scheduled": {}, "bound": {}}
        for v in VARIANTS:
            kernel = emit_sumexp(v, vocab, cfg)
            unroll = tuple(p.per_iteration for p in kernel.passes)
            rec["measured"][v] = dt.measured_per_vector(v, cfg, unroll)
            rec["scheduled"][v] = sum(p.cycles_per_vector for p in kernel.passes)
            rec["bound"][v] = sum(max(dt.pass_bounds(p, cfg).values()) for p in kernel.passes)
            if v == "c":
                rec["block"] = unroll[0]
                rec["pushes"] = len(kernel.passes[0].schedule.graph.fifo_pairs) / unroll[0]
                rec["block_ii"] = kernel.passes[0].ii
        out[latency] = rec
    return out


def online_pass(config, latency: int, *, fifo_depth: int | None = None,
                vregs: int | None = None, block: int | None = None,
                vocab: int = dt.ROW_VOCAB):
    """(c)'s online pass at SFU latency ``latency`` on ``config``, or on it with
    ``fifo_depth`` FIFO entries and ``vregs`` vector registers; its block is ``block`` packed
    vectors, or the study's."""
    cfg = dt.config_with("sfu_latency", latency, config)
    if fifo_depth is not None:
        cfg = cfg.with_(fifo_depth=fifo_depth)
    if vregs is not None:
        cfg = cfg.with_(vregs=vregs)
    return emit_sumexp("c", vocab, cfg, unroll=None if block is None else (block,)).passes[0]


def borrowed_pass(config, found_at: int, run_at: int, block: int) -> dict:
    """(c)'s ``block``-vector schedule found at SFU latency ``found_at``, run on ``config`` at
    latency ``run_at``: its II, its measured cycles per packed vector, and whether every run's
    max and sum are right. A schedule for a longer latency stays valid at a shorter one: each
    pop still comes at least the latency after its push, in the same order, and each FIFO
    entry and register is held over the same cycles."""
    runs = dt.slope_runs("c", dt.config_with("sfu_latency", run_at, config), (block,),
                         scheduled_on=dt.config_with("sfu_latency", found_at, config))
    right = True
    for _, kernel, row, run in runs:
        m, s = reference_sumexp(row, config)
        right &= bool(scalar_f32(run, "s3") == m and abs(float(scalar_f32(run, "s4")) - s)
                      <= sum_tolerance("c", kernel.vocab) * s)
    return {"ii": runs[0][1].passes[0].ii, "right": right,
            "cycles_per_vector": dt.per_vector(runs)}


def needs_at(p, config, latency: int) -> dict:
    """``dt.pass_bounds`` of pass ``p`` (scheduled on ``config``) at SFU latency ``latency``:
    its ops do not change with the latency, its FIFO need does, in proportion to the cycles
    each result holds an entry (latency + pop)."""
    b = dt.pass_bounds(p, config)
    if "fifo" in b:
        held = config.latency["sfu"] + config.latency["pop"]
        b["fifo"] *= (latency + config.latency["pop"]) / held
    return b


def block_bound(p, config, latency: int) -> float:
    """The resource bound, in cycles per packed vector, of pass ``p`` at SFU latency
    ``latency`` (``needs_at``)."""
    return max(needs_at(p, config, latency).values())


def latency_bounds(config, latencies, vocab: int = dt.ROW_VOCAB) -> dict:
    """Per SFU latency, without scheduling at it: each dataflow's resource bound in cycles
    per packed vector (summed over its passes; (c)'s is its lowest over the blocks the study
    tries), what binds its sum or online pass, and whether the FIFO binds (c) whatever its
    block. From the passes scheduled at ``config``'s latency (``needs_at``)."""
    kernels = {v: emit_sumexp(v, vocab, config).passes for v in ("a", *TWO_PASS[1:])}
    blocks = [emit_sumexp("c", vocab, config, unroll=(u,)).passes[0] for u in UNROLLS]
    out = {}
    for latency in latencies:
        rec = {"bound": {}, "binds": {}}
        for v, passes in kernels.items():
            rec["bound"][v] = sum(block_bound(p, config, latency) for p in passes)
            rec["binds"][v] = dt.binding_of(needs_at(passes[-1], config, latency))
        needs = [needs_at(p, config, latency) for p in blocks]
        best = min(range(len(blocks)), key=lambda i: max(needs[i].values()))
        rec["bound"]["c"] = max(needs[best].values())
        rec["binds"]["c"] = dt.binding_of(needs[best])
        rec["block"] = blocks[best].per_iteration
        rec["c_fifo_every_block"] = all(dt.binding_of(n) == "fifo" for n in needs)
        out[latency] = rec
    return out


def bounds_table(bounds: dict, latencies, computed) -> str:
    """``latency_bounds`` at ``latencies``: the bound of (a′), (b) and (c), what binds, and
    whether the page scheduled and measured that latency (``computed``)."""
    records = []
    for latency in latencies:
        rec = bounds[latency]
        records.append({
            "SFU latency (cycles)": str(latency),
            **{f"{dp.name(v)} bound": f"{rec['bound'][v]:.2f}" for v in ("a'", "b", "c")},
            "(a′), (b) sum pass bound by": " / ".join(
                _units(rec["binds"][v]) for v in ("a'", "b")),
            "(c) bound by": _units(rec["binds"]["c"]),
            "Measured on this page": "yes" if latency in computed else "no (bound only)"})
    return markdown_table(records, fmt=lambda _, v: str(v))


def fifo_knee(variant: str, config, vocab: int = dt.ROW_VOCAB) -> int:
    """The smallest SFU latency at which the SFU FIFO's need of ``variant``'s sum pass exceeds
    the need of its other resources (which the latency does not change)."""
    if variant not in TWO_PASS:
        raise ValueError(f"variant must be one of {TWO_PASS}, got {variant!r}")
    b = dt.pass_bounds(emit_sumexp(variant, vocab, config).passes[1], config)
    other = max(v for k, v in b.items() if k != "fifo")
    per_cycle_held = b["fifo"] / (config.latency["sfu"] + config.latency["pop"])
    return int(other / per_cycle_held - config.latency["pop"]) + 1


def _units(resources: str) -> str:
    """``dt.pass_bounds``' binding (``"st=valu"``) in the page's words."""
    return unit_names(resources.replace("=", " = "))


def binding_text(binding: str) -> str:
    """``dt.dataflow_row``'s binding ("max+land(helper): st; sum: valu=sfu") in words."""
    parts = []
    for item in binding.split("; "):
        name, resources = item.split(": ")
        parts.append(f"{PASSES[name]}: " + _units(resources))
    return "; ".join(parts)


def cycles_table(rows) -> str:
    """The measured table: bound, schedule and simulation per packed vector, and the row."""
    def as_scheduled(r) -> str:
        return " (as scheduled, conflict ignored)" if dp.conflict_ignored(r.variant) else ""

    records = [{"dataflow": dp.name(r.variant), "bound": f"{r.bound:.2f}" + as_scheduled(r),
                "scheduled": f"{r.scheduled:.2f}", "measured": f"{r.measured:.2f}",
                "row": f"{r.cycles:,}", "binds": binding_text(r.binding) + as_scheduled(r)}
               for r in rows]
    heads = {"dataflow": "Dataflow", "bound": "Bound (cycles per vector)",
             "scheduled": "Schedule (cycles per vector)",
             "measured": "Measured (cycles per vector)",
             "row": f"Whole row of {rows[0].vocab:,} (cycles)", "binds": "What binds, per pass"}
    return _table(records, heads)


def checks_table(rows) -> str:
    """The same rows' footprint, stalls and check against NumPy."""
    records = [{"dataflow": dp.name(r.variant), "vmem": f"{r.vmem_bytes / 1024:,.0f}",
                "regs": str(r.vector_registers),
                "stalls": ", ".join(f"{k} {v:,}" for k, v in r.stalls.items()) or "none",
                "max": "yes" if r.max_exact else "NO",
                "sum": f"{r.sum_rel_error:.1e} ({r.sum_tolerance:.1e})"} for r in rows]
    heads = {"dataflow": "Dataflow", "vmem": "VMEM used (KiB)",
             "regs": "Vector registers (constants not counted)",
             "stalls": "Stall cycles on the row", "max": "Max exact",
             "sum": "Sum's relative error (tolerance)"}
    return _table(records, heads)


def _table(records: list[dict], heads: dict) -> str:
    return markdown_table([{heads[k]: v for k, v in r.items()} for r in records],
                          fmt=lambda _, v: str(v))


def resource_needs(config, vocab: int = dt.ROW_VOCAB) -> dict:
    """{(dataflow, pass name): {resource: cycles per packed vector}} on ``config``."""
    need = {}
    for v in VARIANTS:
        for p in emit_sumexp(v, vocab, config).passes:
            need[(v, p.name)] = dt.pass_bounds(p, config)
    return need


def needs_table(need: dict) -> str:
    """``resource_needs`` as a table, one row per pass, the binding need in bold."""
    cols = [r for r in UNIT_NAMES if any(r in b for b in need.values())]
    records = []
    for (v, name), b in need.items():
        top = max(b.values())
        cells = {"Dataflow": dp.name(v), "Pass": PASSES[name]}
        for r in cols:
            text = f"{b[r]:.2f}" if r in b else "–"
            cells[UNIT_NAMES[r].capitalize() if r == "recurrence" else UNIT_NAMES[r]] = \
                f"**{text}**" if r in b and abs(b[r] - top) < 1e-9 else text
        records.append(cells)
    return markdown_table(records, fmt=lambda _, v: str(v))


def sweep_figure(param: str, data: dict, config, vocab: int = dt.ROW_VOCAB):
    """A ``draw(**{param: value})`` for a live figure over ``dt.sweep(param, ...)``'s
    ``data``: a value not yet in ``data`` is scheduled and simulated (all four dataflows)
    and added to it, so the right-hand curve grows with what the reader tried."""
    if param not in SWEEP_RANGES:
        raise ValueError(f"param must be one of {sorted(SWEEP_RANGES)}, got {param!r}")

    def draw(**values):
        value = values[param]
        if value not in data:
            data.update(dt.sweep(param, [value], config, vocab=vocab))
        ordered = {v: data[v] for v in sorted(data)}
        fig = dp.draw_sweep(ordered, value, xlabel=dt.SWEEPS[param])
        here = ordered[value]
        return fig, (f"{dt.SWEEPS[param]} = {value}: fastest {winner_text(here)} at "
                     f"{min(here.values()):g} cycles per packed vector")

    return draw


def sweep_control(param: str, frames, value, label: str):
    """The live control of one sweep: its ``SWEEP_RANGES`` range, ``frames`` precomputed."""
    lo, hi = SWEEP_RANGES[param]
    return int_control(param, lo, hi, frames=frames, value=value, label=label)
