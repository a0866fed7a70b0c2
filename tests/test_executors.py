"""Every back end of rslab.executors gives the same results for the same tasks, Dask included
(a LocalCluster on 127.0.0.1)."""

import numpy as np
import pytest

from rslab import executors as ex
from rslab.numerics import montecarlo as mc
from rslab.numerics import search, sweep
from rslab.numerics.gumbel import get_noise

distributed = pytest.importorskip("distributed")


def _square(task, shared):
    return task * task + (shared or 0)


def _fails(task, shared):
    raise ValueError(f"task {task} fails")


@pytest.fixture(scope="module")
def dask_local():
    with ex.DaskExecutor("local", workers=2) as executor:
        yield executor


@pytest.fixture(scope="module")
def backends(dask_local):
    with ex.LocalProcesses(2) as local:
        yield {"serial": ex.Serial(), "processes": local, "dask": dask_local}


def test_map_keeps_task_order_and_reports_every_task(backends):
    for name, executor in backends.items():
        done = []
        assert executor.map(_square, range(7), shared=10, on_done=done.append) == \
            [t * t + 10 for t in range(7)], name
        assert sorted(done) == list(range(7)), name


def test_submit_is_concurrent_futures_style(backends):
    for name, executor in backends.items():
        assert executor.submit(_square, 3, 1).result() == 10, name


def test_errors_of_tasks_reach_the_caller(backends):
    for name, executor in backends.items():
        with pytest.raises(ValueError, match="task [01] fails"):
            executor.map(_fails, [0, 1])
        assert name


def test_monte_carlo_counts_are_identical_on_every_back_end(dask_local):
    pipes = {"div14": get_noise("div14")}
    results = {name: mc.run(pipes, [1, 2], 200_000, progress=False, executor=e)
               for name, e in (("serial", ex.Serial()), ("dask", dask_local))}
    ref = results["serial"]
    for name, res in results.items():
        for cand in pipes:
            assert np.array_equal(res[cand].bin_counts, ref[cand].bin_counts), (name, cand)
            assert np.array_equal(res[cand].ks, ref[cand].ks), (name, cand)


def test_blocks_of_a_stream_add_up_to_the_whole_stream(dask_local):
    whole = mc.lattice_counts(5, 100_000)
    blocks = mc.draw_counts([5], 100_000, block=30_001, chunk=7_000, progress=False,
                            executor=dask_local)[5]
    assert np.array_equal(blocks, whole)


def test_exact_search_is_identical_on_dask(dask_local):
    serial = search.exact_search((14.0,), progress=False, processes=1)
    remote = search.exact_search((14.0,), progress=False, executor=dask_local)
    assert serial == remote


def test_default_workers_are_the_machines_cores(monkeypatch):
    monkeypatch.delenv(ex.WORKERS_ENV, raising=False)
    assert ex.default_workers() >= 1
    assert ex.LocalProcesses().workers == ex.default_workers()
    assert isinstance(ex.make_executor(1), ex.Serial)


def test_the_book_build_gives_each_page_its_share_of_the_cores(monkeypatch):
    monkeypatch.setenv(ex.WORKERS_ENV, "1")
    assert ex.default_workers() == 1 and isinstance(ex.make_executor(), ex.Serial)
    for bad in ("0", "two", "-1"):
        monkeypatch.setenv(ex.WORKERS_ENV, bad)
        with pytest.raises(ValueError, match=ex.WORKERS_ENV):
            ex.default_workers()


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2"])
def test_bad_worker_counts_are_value_errors(bad):
    with pytest.raises(ValueError, match="workers"):
        ex.LocalProcesses(bad)


def test_an_unreachable_scheduler_is_a_value_error():
    with pytest.raises(ValueError, match="cannot reach the scheduler at tcp://127.0.0.1:9"):
        ex.DaskExecutor("tcp://127.0.0.1:9", timeout=2)


def test_the_sweep_on_dask_equals_the_sweep_on_one_process(dask_local):
    config = sweep.sweep_config("quick", axes={"c1_bits": (9,)}, divisors=(8.0, 14.0))
    serial = sweep.run_sweep(config, executor=ex.Serial(), progress=False)
    remote = sweep.run_sweep(config, executor=dask_local, progress=False)
    assert remote.rows == serial.rows and remote.best == serial.best
    assert remote.backend == "dask" and remote.workers == 2
    assert np.isfinite(remote.points_per_second_per_core)


def test_spawned_workers_get_the_same_results(monkeypatch):
    """Where processes cannot fork (Windows), workers are spawned: tasks and shared data
    must travel by pickling, and the counts stay the same."""
    monkeypatch.setattr(ex, "_start_method", lambda: "spawn")
    with ex.LocalProcesses(2) as spawned:
        assert spawned.map(_square, range(4), shared=1) == [1, 2, 5, 10]
        counts = mc.draw_counts([3], 50_000, block=20_000, progress=False, executor=spawned)
    assert np.array_equal(counts[3], mc.lattice_counts(3, 50_000))
