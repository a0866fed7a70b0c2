"""The sampler on the cores of a chip: split rows, both modes, the reference's tokens."""

import numpy as np
import pytest

from rslab.fixtures import all_accept_inputs, first_reject_inputs, sampled_inputs
from rslab.kernels.sampler.chip_plan import plan_rows
from rslab.kernels.sampler.run import run_sampler
from rslab.machine.config import ChipConfig
from rslab.numerics.fastlog import fast_exp2
from rslab.numerics.split_sum import SplitSum, even_split, split_softmax
from rslab.reference import rejection_sample

CASES = [  # cores not a power of two; V not a multiple of C × 256; idle cores (V < C × 256)
    (3, 1792, "sequential", "max-first"), (5, 2304, "sequential", "online"),
    (7, 1280, "parallel", "max-first"), (4, 512, "parallel", "online"),
    (6, 4864, "sequential", "max-first"), (12, 2304, "parallel", "online"),
    (2, 33_280, "sequential", "max-first"),  # a whole request a core, 65 blocks of 512 a row
    (32, 33_280, "sequential", "max-first")]  # a row split over 16 cores, as on 32 at the note's


@pytest.mark.parametrize("cores,V,mode,merge", CASES)
def test_the_chip_draws_the_reference_tokens(cores, V, mode, merge):
    inputs = sampled_inputs(R=2, S=3, V=V, seed=cores + V)
    run = run_sampler(inputs, cores=cores, mode=mode, merge=merge, seed=7, figures=False)
    assert run.tokens_match, (run.tokens, run.reference_tokens)
    assert run.floats_differing == 0  # m, s, p(x) and u bit for bit, in the stated order
    assert run.chip_run.hbm_bytes().max() <= run.chip_run.config.hbm_bytes_per_cycle


@pytest.mark.parametrize("cores", [2, 3, 8])
def test_the_split_bonus_draw_is_the_one_core_draw(cores):
    for seed in range(3):
        inputs = all_accept_inputs(R=2, S=2, V=2304, seed=seed)
        one = run_sampler(inputs, method="fixed", seed=seed, figures=False, compare=False)
        chip = run_sampler(inputs, cores=cores, seed=seed, figures=False, compare=False)
        assert (one.tokens[:, 2] >= 0).all()  # every request drew its bonus token
        assert np.array_equal(chip.tokens, one.tokens)


def test_first_reject_and_all_accept_on_split_rows_have_the_chips_bound():
    for inputs in (first_reject_inputs(R=2, S=3, V=4864, seed=1),
                   all_accept_inputs(R=2, S=3, V=4864, seed=1)):
        run = run_sampler(inputs, cores=6, seed=3, chip=ChipConfig(hbm_bytes_per_cycle=256))
        assert run.tokens_match and run.plan.cores_per_row == 3
        per_cycle = run.chip_run.hbm_bytes()  # contended: 6 engines of 128 B ask for more
        assert per_cycle.max() == 256 and run.stalls["hbm"] > 0
        b = run.chip_bound
        assert b["bound_cycles"] == max(b["hbm_cycles"], b["dma_cycles"], b["sfu_cycles"],
                                        b["valu_cycles"]) + b["exchange_cycles"]
        assert b["exchange_cycles"] > 0
        assert 1 <= b["ratio"] == round(run.cycles / b["bound_cycles"], 3)
        assert run.floors and run.phases["residual"] + run.phases["bonus"] > 0


def test_one_core_is_the_one_core_program():
    inputs = first_reject_inputs(R=2, S=2, V=1280, seed=2)
    default = run_sampler(inputs, seed=1)
    same = run_sampler(inputs, seed=1, cores=1, mode="sequential")
    assert same.cycles == default.cycles and np.array_equal(same.tokens, default.tokens)
    assert not hasattr(default, "chip_bound")


def test_the_planner_splits_rows_or_gives_cores_rows():
    p = plan_rows(2, 4, 154_880, 32)
    assert [g.size for g in p.groups] == [16, 16] and p.split(1, 0).parts == 16
    assert p.split(0, 0).bounds[1] == 19 * 512 and p.split(0, 0).vocab == 154_880
    p = plan_rows(64, 4, 154_880, 32)
    assert [len(g.rows) for g in p.groups] == [2] * 32 and p.cores_per_row == 1
    p = plan_rows(2, 4, 154_880, 32, "parallel")
    assert len(p.groups) == 10 and {g.size for g in p.groups} == {3, 4}
    p = plan_rows(1, 1, 512, 8)  # one unit of 512 tokens: seven cores idle
    assert p.active == (0,)


def test_bad_arguments_name_themselves():
    inputs = sampled_inputs(R=1, S=1, V=512, seed=0)
    for kwargs, word in (({"cores": 0}, "cores"), ({"cores": 65}, "cores"),
                         ({"cores": 2, "method": "gumbel"}, "method"),
                         ({"cores": 2, "path": "exact"}, "path"),
                         ({"cores": 2, "mode": "both"}, "mode"),
                         ({"cores": 2, "merge": "sideways"}, "merge")):
        with pytest.raises(ValueError, match=word):
            run_sampler(inputs, **kwargs)
    with pytest.raises(ValueError, match="exchange"):
        run_sampler(sampled_inputs(R=2, S=1, V=2048, seed=0), cores=4,
                    chip=ChipConfig(cores=4, exchange_bytes=512))


def test_the_reference_states_a_split_and_the_one_core_order():
    inputs = all_accept_inputs(R=2, S=3, V=1792, seed=4)
    run = run_sampler(inputs, method="fixed", figures=False)
    l = inputs[0][:, :3].reshape(-1, 1792)
    _, s, _, _ = split_softmax(l, fast_exp2, SplitSum((0, 1792)))
    assert np.array_equal(s[:, 0].view(np.uint32), run.outputs["sum"].reshape(-1).view(np.uint32))
    ref = rejection_sample(*inputs, path="fast", method="fixed", split=SplitSum((0, 1792)))
    assert np.array_equal(ref.tokens, run.tokens)
    with pytest.raises(ValueError, match="split"):
        rejection_sample(*inputs, path="fast", method="fixed", split=even_split(2048, 2))
    with pytest.raises(ValueError, match="split"):
        rejection_sample(*inputs, path="fast", method="fixed", split="halves")


def test_the_chips_bound_counts_each_cores_dma_engine():
    """First-step reject at R = 2, V = VOCAB: the bytes bind on every core count, over the
    active cores' engines (C × 128 B/cycle) until they outrun the HBM at 9 cores; on one
    core the bound is the one-core task bound with the chip's draw."""
    from rslab.fixtures import VOCAB
    from rslab.kernels.sampler.chip_bound import chip_bound
    from rslab.kernels.sampler.chip_program import CHIP_DRAW
    from rslab.kernels.sampler.floor import machine_task_bound
    from rslab.kernels.sampler.layout import SamplerLayout
    first = np.zeros(2, int)
    b = {C: chip_bound(plan_rows(2, 4, VOCAB, C), ChipConfig().with_(cores=C), first)
         for C in (1, 2, 4, 8, 9, 16, 32)}
    one = machine_task_bound(ChipConfig().core, SamplerLayout(2, 4, VOCAB), first,
                             draw=CHIP_DRAW)
    assert b[1]["dma_cycles"] == one["dma_cycles"] == 14722 and one["binding"] == "dma"
    assert b[1]["binding"] == "dma" and b[1]["valu_cycles"] == 10890
    assert [b[C]["dma_cycles"] for C in (2, 4, 8)] == [7461, 3831, 2016]
    assert all(b[C]["binding"] == "dma" for C in (1, 2, 4, 8))
    assert all(b[C]["binding"] == "hbm" for C in (9, 16, 32))
    assert b[8]["bound_cycles"] == 2016 + b[8]["exchange_cycles"]


@pytest.mark.parametrize("name", ["first-reject", "all-accept"])
def test_either_fetch_ahead_guess_draws_the_reference_tokens(name):
    from rslab.kernels.sampler.chip_run import run_chip_sampler
    inputs = (first_reject_inputs if name == "first-reject" else all_accept_inputs)(
        R=2, S=4, V=4096, seed=3)
    runs = {g: run_chip_sampler(inputs, cores=4, guess=g, figures=False, trace=False)
            for g in ("reject", "accept")}
    assert all(r.tokens_match and r.floats_differing == 0 for r in runs.values())
    assert runs["accept"].plan.guess == "accept" and "next row" in runs["accept"].plan.describe()
    assert runs["accept"].cycles != runs["reject"].cycles  # a different program
    with pytest.raises(ValueError, match="guess"):
        run_chip_sampler(inputs, cores=4, guess="maybe")


@pytest.mark.heavy
def test_each_fetch_ahead_guess_wins_at_its_own_test_point():
    """At the note's V: betting on acceptance speeds all-accept on 4 cores (split rows) and
    slows the first-step reject on 32, the chapter's "Many cores" figures."""
    from rslab.fixtures import VOCAB
    from rslab.kernels.sampler.chip_curves import curve_point
    c = {(n, C, g): curve_point(n, 2, C, "sequential", VOCAB, guess=g)["cycles"]
         for n, C in (("all-accept", 4), ("first-reject", 32)) for g in ("reject", "accept")}
    assert c[("all-accept", 4, "accept")] < 0.8 * c[("all-accept", 4, "reject")]
    assert c[("first-reject", 32, "accept")] > 1.1 * c[("first-reject", 32, "reject")]
    # the default's 32-core point: within 1.5x of the chip's bound
    at32 = curve_point("first-reject", 2, 32, "sequential", VOCAB)
    assert at32["ratio"] <= 1.5
