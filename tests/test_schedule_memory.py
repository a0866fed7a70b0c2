"""Memory dependences of a loop body (``rslab.schedule.memory``): the iteration distances at
which a store and another access meet, by the strong SIV test on one base, within the trip
count, with the store's latency before a load and one cycle otherwise."""

import pytest

from rslab.schedule import Addr, Op, SlotModel
from rslab.schedule.memory import Memory, check_addresses, memory_edges

MODEL = SlotModel().replace(latency={"st": 5})


def edges(ops, n=100, bases=None):
    return sorted(memory_edges(ops, MODEL, Memory(n, 512, 2**22, bases or {})))


def load(off, stride=512, base="s1"):
    return Op("vld", "x", (), Addr(base, off, stride))


def store(off, stride=512, base="s1", name="st"):
    return Op("vst", None, ("x",), Addr(base, off, stride), name=name)


def test_a_store_read_three_iterations_later():
    assert edges([load(0), store(1536)]) == [(1, 0, 5, 3, "memory flow")]
    assert edges([load(0), store(1536)], n=3) == []  # iteration 3 is not run
    assert edges([load(0), store(1536)], n=4) == [(1, 0, 5, 3, "memory flow")]


def test_a_load_then_a_store_to_its_bytes():
    """Same iteration: in body order; a half-overlapping load of the next iteration too."""
    assert edges([load(0), store(0)]) == [(0, 1, 1, 0, "memory anti")]
    assert edges([load(256), store(0)]) == [(0, 1, 1, 0, "memory anti")]  # and d = 1
    assert edges([load(-256), store(0)]) == [(0, 1, 1, 0, "memory anti"),
                                            (1, 0, 5, 1, "memory flow")]
    assert edges([store(0), load(0)]) == [(0, 1, 5, 0, "memory flow")]


def test_two_stores_to_one_address_every_iteration():
    ops = [store(0, 0, name="a"), store(0, 0, name="b")]
    assert edges(ops) == [(0, 1, 1, 0, "memory output"), (1, 0, 1, 1, "memory output")]
    assert edges(ops, n=1) == [(0, 1, 1, 0, "memory output")]


def test_loads_alone_and_bytes_apart_do_not_depend():
    assert edges([load(0), load(0)]) == []
    assert edges([load(0), store(512 * 100)]) == []
    assert edges([load(0), Op("sst", None, ("s5",), Addr("s1", 508, 512))]) == \
        [(0, 1, 1, 0, "memory anti")]
    assert edges([load(0), Op("sst", None, ("s5",), Addr("s1", 512, 512))]) == \
        [(1, 0, 5, 1, "memory flow")]


def test_known_bases_compare_as_one():
    bases = {"s1": 4096, "s2": 4096 + 1024}
    assert edges([load(0), store(0, base="s2")], bases=bases) == [(1, 0, 5, 2, "memory flow")]
    # different strides: apart over the whole trip, or ordered at every distance
    assert edges([load(0, 1024), store(0, 512, "s2")], n=3, bases={"s1": 0, "s2": 8192}) == []
    assert edges([load(0, 1024), store(0, 512, "s2")], bases=bases) == [
        (0, 1, 1, 0, "memory anti"), (1, 0, 5, 1, "memory flow")]


def test_a_strided_access_counts_its_whole_span():
    strided = Op("vst.s", None, ("x", "2"), Addr("s1", 0, 0))
    assert edges([load(1016, 0), strided]) == [(0, 1, 1, 0, "memory anti"),
                                               (1, 0, 5, 1, "memory flow")]
    assert edges([load(1020, 0), strided]) == []


def test_a_base_of_unknown_value_is_ordered_at_every_distance():
    """A store through s2, whose value the scheduler does not know, may meet the load through
    s1 anywhere: in the body's order within an iteration, the store before the next
    iteration's load."""
    assert edges([load(0), store(0, base="s2")], bases={"s1": 0}) == [
        (0, 1, 1, 0, "memory anti"), (1, 0, 5, 1, "memory flow")]
    assert edges([load(0), store(0, base="s2")], n=1) == [(0, 1, 1, 0, "memory anti")]


def test_accesses_through_known_bases_stay_aligned_and_inside_vmem():
    memory = Memory(100, 512, 2**22, {"s1": 0})
    check_addresses([load(0), store(512 * 99 + 2**20, 512, "s2")], memory)  # s2 unknown
    with pytest.raises(ValueError, match=r"body\[0\]: in iteration 99 this load touches bytes "
                       r"\[4,194,304, 4,194,816\), outside VMEM \[0, 4,194,304\)"):
        check_addresses([load(2**22 - 99 * 512)], memory)
    with pytest.raises(ValueError, match="in iteration 1 this store is at byte 6, not a"):
        check_addresses([store(0, 6)], memory)
    check_addresses([store(0, 6)], Memory(1, 512, 2**22, {"s1": 0}))  # one iteration: byte 0
    check_addresses([load(-512)], Memory(0, 512, 2**22, {"s1": 0}))  # no iteration at all
