"""The dataflow chapter's results over the SFU-latency slider, and its tables.

The page checks its sentences at every latency it computes (all of the slider at book
scale); these tests check the same results at the latencies where they change, cheaply,
and ``test_the_latency_story_holds_over_the_whole_slider`` (heavy) at every one."""

import pytest

from rslab.chapters import dataflow as ch
from rslab.kernels.studies import dataflow_table as dt
from rslab.kernels.studies.sumexp import emit_sumexp
from rslab.machine import MachineConfig

CONFIG = MachineConfig()


def check_latency_story(records: dict, config=CONFIG) -> None:
    """The chapter's SFU-latency sentences on ``ch.latency_records``'s ``records``."""
    knee = {v: ch.fifo_knee(v, config) for v in ("a'", "b")}
    grid = sorted(records)
    first = records[grid[0]]["measured"]
    for L in grid:
        got, rec = records[L]["measured"], records[L]
        assert got["a"] - got["a'"] == 2, L
        assert got["a'"] <= got["b"], L
        for v in ("a'", "b"):
            assert (got[v] == first[v]) == (L < knee[v]), (L, v)
            assert 0 <= got[v] - rec["bound"][v] <= 1, (L, v)
        assert got == rec["scheduled"], L
        assert rec["pushes"] == 2 + 1 / rec["block"], L
        if L < knee["a'"]:
            assert got["c"] > got["a'"], L


# Tens of seconds (every latency up to the knees scheduled); the page's claims hold the story.
@pytest.mark.heavy
def test_the_fifo_knees_are_where_the_two_pass_dataflows_slow_down():
    assert ch.fifo_knee("a'", CONFIG) == 32 and ch.fifo_knee("b", CONFIG) == 40
    check_latency_story(ch.latency_records([1, 31, 32, 39, 40], CONFIG))


def test_only_the_two_pass_dataflows_have_a_fifo_knee():
    with pytest.raises(ValueError, match="variant"):
        ch.fifo_knee("c", CONFIG)


def test_the_online_block_first_shrinks_at_the_b_knee_and_wins_there():
    """(c) keeps a block of eight at latencies 13 and 32 and takes four at 40, where it is
    the fastest; at the default latency it is behind (a′)."""
    records = ch.latency_records([13, 32, 40], CONFIG)
    assert [records[L]["block"] for L in (13, 32, 40)] == [8, 8, 4]
    assert dt.winner(records[40]["measured"]) == "c"
    assert records[13]["measured"]["c"] > records[13]["measured"]["a'"]
    # the bound (the FIFO's need averaged over the II) does not force the shorter block ...
    eight = emit_sumexp("c", dt.ROW_VOCAB, CONFIG).passes[0]
    assert eight.per_iteration == 8
    assert ch.block_bound(eight, CONFIG, 40) < records[40]["measured"]["c"]
    assert ch.block_bound(eight, CONFIG, 13) == max(dt.pass_bounds(eight, CONFIG).values())
    # ... the FIFO's 16 entries do: the eight-vector block schedules at II 58 with them, and
    # with 64 (nothing else changed) the study takes it at II 51, its bound rounded up
    assert ch.online_pass(CONFIG, 40, block=8).ii == 58
    deep = ch.online_pass(CONFIG, 40, fifo_depth=ch.DEEP_FIFO)
    assert (deep.per_iteration, deep.ii) == (8, 51)
    assert deep.cycles_per_vector < records[40]["measured"]["c"]
    # the bounds table's (c) is its lowest over the blocks: the eight-vector block's, 0.4375
    # below what (c) runs at there, though the four-vector block it runs is 0.125 above its own
    lowest = ch.latency_bounds(CONFIG, [40])[40]["bound"]["c"]
    assert lowest == ch.block_bound(eight, CONFIG, 40) < records[40]["bound"]["c"]
    assert records[40]["measured"]["c"] - lowest == 0.4375
    assert records[40]["measured"]["c"] - records[40]["bound"]["c"] == 0.125


def test_the_default_latency_is_one_where_the_online_block_runs_above_its_bound_rounded_up():
    """At latencies 1 and 9 the eight-vector block runs at II 51, its bound rounded up (6.375
    cycles per packed vector); at the default, 13, at II 52 (6.5)."""
    records = ch.latency_records([1, 9, CONFIG.latency["sfu"]], CONFIG)
    assert [(r["block"], r["block_ii"]) for r in records.values()] == [(8, 51), (8, 51), (8, 52)]
    assert [r["measured"]["c"] for r in records.values()] == [6.375, 6.375, 6.5]


def test_the_online_blocks_ii_jitter_is_the_fifos_at_long_latencies_the_registers_at_short():
    """At latency 13 the eight-vector block's II is 52 with 16 FIFO entries or 64, and 51, the
    bound rounded up, with 128 vector registers: its II-51 schedule keeps a stage more in
    flight and needs more registers than the core's 64. At 41 it is 52 with 64 or 128
    registers and 51 with 64 FIFO entries."""
    def ii(L, **machine):
        return ch.online_pass(CONFIG, L, block=8, **machine).ii

    at = {L: (ii(L), ii(L, fifo_depth=ch.DEEP_FIFO), ii(L, vregs=ch.WIDE_VREGS))
          for L in (13, 41)}
    assert at == {13: (52, 52, 51), 41: (52, 51, 52)}
    tight, wide = (ch.online_pass(CONFIG, 13, block=8, vregs=r) for r in (None, ch.WIDE_VREGS))
    assert wide.expansion.vector_registers > CONFIG.vregs >= tight.expansion.vector_registers


def test_the_registers_cost_the_online_block_a_cycle_by_its_placement_not_its_depth():
    """At latency 13 the II-51 schedule found with 128 registers keeps 6 stages in flight and
    needs 73; at 14 the core's own II-51 schedule keeps 6 too and needs 55. Below (a′)'s knee
    the block runs at II 51 at 27 latencies and at 52 at four: 8, 10, 13 and 18, each with a
    neighbour whose II-51 schedule is as deep as the one found there and fits."""
    eight = {L: ch.online_pass(CONFIG, L, block=8) for L in range(1, ch.fifo_knee("a'", CONFIG))}
    wide = {L: ch.online_pass(CONFIG, L, block=8, vregs=ch.WIDE_VREGS) for L in (8, 10, 13, 18)}
    at = {L: (p.ii, p.stage_count, p.expansion.vector_registers) for L, p in wide.items()}
    assert at[13] == (51, 6, 73)
    nxt = eight[14]
    assert (nxt.ii, nxt.stage_count, nxt.expansion.vector_registers) == (51, 6, 55)
    above = [L for L, p in eight.items() if p.ii > 51]
    assert above == [8, 10, 13, 18] and all(eight[L].ii == 52 for L in above)
    assert len(eight) - len(above) == 27
    for L, (ii, stages, regs) in at.items():
        assert ii == 51 and regs > CONFIG.vregs
        assert any(eight[M].ii == 51 and eight[M].stage_count >= stages
                   and eight[M].expansion.vector_registers <= CONFIG.vregs for M in (L - 1, L + 1))


def test_with_one_valu_slot_the_conflict_costs_nothing():
    """On one VALU slot the relayout saves nothing: (a) ties (a′), both ahead of (b), (c)."""
    got = dt.sweep("valu", [1], CONFIG)[1]
    assert got["a"] == got["a'"] < min(got["b"], got["c"])
    assert ch.winner_text(got) == "(a) and (a′), tied"


def test_the_page_words_latencies_and_winners():
    assert ch.latencies_text([40]) == "latency 40"
    assert ch.latencies_text([40, 36, 38, 39]) == "latencies 36 and 38–40"
    assert ch.latencies_text([1, 2]) == "latencies 1–2"
    assert ch.winner_text({"a'": 7.0, "c": 6.75}) == "(c)"
    assert ch.winner_text({"a'": 6.75, "b": 7.0, "c": 6.75}) == "(a′) and (c), tied"


@pytest.mark.heavy
def test_the_latency_story_holds_over_the_whole_slider():
    lo, hi = ch.SWEEP_RANGES["sfu_latency"]
    records = ch.latency_records(range(lo, hi + 1), CONFIG)
    check_latency_story(records)
    # past (a′)'s knee (32) (a′) stays ahead of (c) or level with it up to 37; (c) is ahead
    # from 38 to 41, the last latency the book's page computes
    ahead = [L for L in range(32, 42) if records[L]["measured"]["c"] < records[L]["measured"]["a'"]]
    assert ahead == list(range(38, 42))


def test_the_tables_have_human_headers():
    rows = dt.dataflow_table(CONFIG, 256 * 16, variants=("a", "b"))
    need = ch.resource_needs(CONFIG, 256 * 16)
    for table in (ch.cycles_table(rows), ch.checks_table(rows), ch.needs_table(need)):
        header = table.splitlines()[0]
        assert "_" not in header and "c/vec" not in header, header
    assert ch.binding_text("max+land(helper): st; sum: valu=sfu") == \
        "max + landing (helper's layout): store port; sum: VALU = SFU"


def test_the_latency_grid_covers_the_slider():
    lo, hi = ch.SWEEP_RANGES["sfu_latency"]
    book = ch.latency_grid(CONFIG, "book")
    assert book == list(range(lo, 42))
    quick = ch.latency_grid(CONFIG, "quick")
    assert quick == [lo, CONFIG.latency["sfu"], 32, 40, 41]
    assert set(quick) <= set(book)
    assert ch.grid_text(quick).startswith("the latencies 1, 13, 32, 40 and 41")
    assert ch.grid_text(book).startswith("every latency from 1 to 41")
    assert f"up to {hi}" in ch.grid_text(book)


def test_the_bound_past_the_measured_latencies_needs_no_schedule():
    """``latency_bounds`` scales the FIFO's need from the default latency: it is the bound of
    the kernels scheduled at each latency, for the two-pass dataflows and a block of (c)."""
    got = ch.latency_bounds(CONFIG, (5, 60, 100))
    for L in (5, 60, 100):
        cfg = dt.config_with("sfu_latency", L, CONFIG)
        for v in ("a'", "b"):
            passes = emit_sumexp(v, dt.ROW_VOCAB, cfg).passes
            assert got[L]["bound"][v] == pytest.approx(
                sum(max(dt.pass_bounds(p, cfg).values()) for p in passes)), (L, v)
        block = emit_sumexp("c", dt.ROW_VOCAB, cfg, unroll=(2,)).passes[0]
        here = emit_sumexp("c", dt.ROW_VOCAB, CONFIG, unroll=(2,)).passes[0]
        assert ch.needs_at(here, CONFIG, L) == pytest.approx(dt.pass_bounds(block, cfg)), L


def test_from_latency_47_the_fifo_binds_the_online_pass_whatever_its_block():
    lo, hi = ch.SWEEP_RANGES["sfu_latency"]
    bounds = ch.latency_bounds(CONFIG, range(lo, hi + 1))
    assert [L for L in bounds if bounds[L]["c_fifo_every_block"]] == list(range(47, hi + 1))
    for L, rec in bounds.items():
        for v in ("a'", "b"):
            assert (rec["binds"][v] == "fifo") == (L >= ch.fifo_knee(v, CONFIG)), (L, v)
        assert rec["bound"]["a"] == pytest.approx(rec["bound"]["a'"] + 2), L
        if L > 41:
            assert rec["bound"]["c"] < min(rec["bound"][v] for v in ("a", "a'", "b")), L
    assert bounds[hi]["bound"]["c"] == pytest.approx(17 * (hi + 1) / 128)
    table = ch.bounds_table(bounds, [13, 100], {13})
    assert "| 100 | 14.62 | 14.62 | 13.41 |" in table and "no (bound only)" in table


def test_the_tables_name_the_dataflows_as_the_prose_does():
    rows = dt.dataflow_table(CONFIG, 256 * 16, variants=("a'", "a (conflict-unaware schedule)"))
    table = ch.cycles_table(rows)
    assert "| (a′) |" in table and "(a), conflict-unaware schedule" in table
    assert "a'" not in table and "(a (conflict" not in table
    # the conflict-unaware row's bound and binding are the ones its scheduler was given, and
    # say so; the other rows' do not
    assert table.count("(as scheduled, conflict ignored)") == 2
    assert "6.00 (as scheduled, conflict ignored)" in table
    assert "VALU = SFU (as scheduled, conflict ignored) |" in table


def test_the_sweeps_ticks_stay_apart():
    """Adjacent latencies 40 and 41 on an axis from 1 would print as "4041"."""
    from rslab.viz.dataflow_plots import spaced_ticks

    assert spaced_ticks([1, 13, 32, 40, 41]) == [1, 13, 32, 40]
    assert spaced_ticks([1, 2, 3, 4, 5, 6]) == [1, 2, 3, 4, 5, 6]


def test_a_sweep_curve_joins_only_neighbouring_values():
    from rslab.viz.dataflow_plots import consecutive_runs

    assert consecutive_runs([1, 13, 32, 40, 41]) == [[1], [13], [32], [40, 41]]
    assert consecutive_runs([1, 2, 3]) == [[1, 2, 3]]


def test_a_schedule_found_a_latency_higher_runs_right_at_its_ii():
    got = ch.borrowed_pass(CONFIG, CONFIG.latency["sfu"] + 1, CONFIG.latency["sfu"], 8)
    assert got["right"] and got["cycles_per_vector"] == got["ii"] / 8
