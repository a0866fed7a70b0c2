"""The pipelined loops through the trace: listing, compaction, trace vs differencing."""

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from rslab.kernels.studies import pipeline_trace as pt  # noqa: E402
from rslab.kernels.studies.sumexp_loop import packed_row, sumexp_numpy, sumexp_program  # noqa: E402
from rslab.machine import MachineConfig, assemble, simulate  # noqa: E402
from rslab.machine.bf16 import round_to_bf16  # noqa: E402
from rslab.viz import schedule_plots as sp  # noqa: E402


def test_listing_shows_the_kernel_in_full_and_abbreviates_the_rest():
    text, loop = sumexp_program(24, 0.0)
    out = pt.listing(text, head=2, tail=2)
    lines = out.splitlines()
    lo = next(i for i, ln in enumerate(lines) if ln.split()[1:2] == ["loop"])
    hi = next(i for i, ln in enumerate(lines) if ln.split()[1:] == ["endloop"])
    assert hi - lo - 1 == loop.schedule.ii * loop.expansion.unroll
    assert out.count("left out") == 2
    assert f"repeated {loop.expansion.kernel_passes} times" in out
    with pytest.raises(ValueError, match="no kernel loop"):
        pt.listing("vli v0, 0\nhalt\n")


def test_listing_numbers_are_the_pcs_the_trace_gives():
    text, _ = sumexp_program(24, 0.0)
    program = assemble(text)
    run = simulate(program, MachineConfig(), trace=True)
    texts = {}
    for op in run.trace.ops:
        texts.setdefault(op.pc, set()).add(op.text)
    out = pt.listing(text)
    numbered = [ln.split(None, 1) for ln in out.splitlines() if ln[:4].strip().isdigit()]
    for pc, line in numbered:
        first = line.split("#")[0].split(";")[0].strip()
        if first.split()[0] in ("loop", "endloop", "halt"):  # directives: no op in the trace
            assert program.entries[int(pc)].kind == first.split()[0]
        else:
            assert first in texts[int(pc)], (pc, line)
    counts = [int(ln.split(": ")[1].split()[0]) for ln in out.splitlines()
              if ln.startswith(("# prologue", "# kernel", "# epilogue"))]
    assert sum(counts) == program.n_bundles
    assert numbered[-1] == [str(len(program.entries) - 1), "halt"]


def test_compact_drops_nops_and_keeps_the_result():
    row = round_to_bf16(np.random.default_rng(1).normal(size=2600).astype(np.float32) * 3)
    m = float(row.max())
    text, _ = sumexp_program(-(-row.size // 256), m, max_stages=1)
    small = pt.compact(text)
    assert "nop" in text.split() and "nop" not in small.split()
    assert len(small.splitlines()) < len(text.splitlines())
    runs = [simulate(assemble(t), MachineConfig(), vmem=packed_row(row)) for t in (text, small)]
    assert runs[0].sreg_f32(3) == runs[1].sreg_f32(3) == sumexp_numpy(row, m)
    assert runs[0].stall_cycles < runs[1].stall_cycles


def test_trace_and_differencing_agree():
    rows = {r["loop"]: r for r in pt.cross_check(
        ("sumexp", "sumexp-hold0", "sumexp-serial", "sumexp-serial-compact"))}
    assert all(r["agree"] for r in rows.values())
    pipelined = rows["sumexp"]
    assert pipelined["trace cycles/iter"] == pipelined["planned II"]
    assert pipelined["trace stalls/iter"] == 0
    assert rows["sumexp-hold0"]["trace stalls/iter"] > 0
    assert rows["sumexp-hold0"]["trace cycles/iter"] > rows["sumexp-hold0"]["planned II"]
    serial, compact = rows["sumexp-serial"], rows["sumexp-serial-compact"]
    assert serial["stages"] == 1 and serial["trace stalls/iter"] == 0
    assert compact["trace cycles/iter"] == serial["trace cycles/iter"]
    assert compact["trace stalls/iter"] > 0


def test_pass_window_and_bad_input():
    t = pt.traced("sumexp")
    first, count, start, stop = t.pass_window(1)
    assert stop - start == t.ii
    ops = t.trace.ops[first:first + count]
    assert all(start <= op.issue < stop for op in ops)
    assert sum(op.text.startswith("vexp2") for op in ops) == 4
    with pytest.raises(ValueError, match="k must be"):
        t.pass_window(99)
    with pytest.raises(ValueError, match="kind"):
        pt.traced("nope")
    with pytest.raises(ValueError, match="passes"):
        pt.traced("sumexp", passes=2)


def test_plots_draw_their_panels():
    loops = {"a": pt.traced("sumexp"), "b": pt.traced("sumexp-serial-compact")}
    fig = sp.plot_steady_gantts(loops, cycles=30)
    assert len(fig.axes) == 2
    assert all(ax.get_xlim()[1] - ax.get_xlim()[0] == 30 for ax in fig.axes)
    pts = [{"ii": 10, "measured_ii": 10.0, "res_mii": 10, "rec_mii": 3, "stalls_per_iter": 0.0,
            "vector_registers": 12, "stages": 4}]
    assert len(sp.plot_design_points([4], pts, xlabel="w", title="t").axes) == 3
    with pytest.raises(ValueError, match="length"):
        sp.plot_design_points([1, 2], pts, xlabel="w", title="t")
    matplotlib.pyplot.close("all")
