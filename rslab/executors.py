"""Where independent tasks run: in this process, in local worker processes, or on Dask.

An executor has the ``concurrent.futures`` shape (``submit(fn, *args) -> Future``,
``shutdown()``, a context manager) plus one call the heavy work uses:
``map(fn, tasks, shared=..., on_done=...)`` returns ``[fn(task, shared) for task in
tasks]`` in task order, whatever order the tasks finish in, and calls ``on_done(i)``
as task ``i`` completes (progress bars). ``shared`` is read-only data every task
needs (the lattice counts of a Monte Carlo run): it is shipped to each worker once,
not with every task.

Back ends (``make_executor``):

* ``Serial()`` — this process, one task after another;
* ``LocalProcesses(workers)`` — ``workers`` processes of this machine (default:
  ``default_workers()``, the cores this process may use), forked on Linux, spawned elsewhere;
* ``DaskExecutor(address)`` — a ``dask.distributed`` cluster: ``"local"`` starts a
  ``LocalCluster`` on 127.0.0.1, ``"tcp://host:8786"`` connects to a running
  scheduler. Dask is an optional dependency (``pip install rslab[dask]``).

Tasks are pure functions of their arguments, so every back end returns the same
results for the same tasks.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing as mp
import os
import sys

_WORKER_SHARED = {}
WORKERS_ENV = "RSLAB_WORKERS"
"""Workers of a default pool, if set: the book build gives each of the pages it executes at
once its share of the cores (``rslab.bookbuild``)."""


def default_workers() -> int:
    """``RSLAB_WORKERS`` if set, else the cores this process may run on
    (``os.sched_getaffinity`` where it exists)."""
    if os.environ.get(WORKERS_ENV):
        text = os.environ[WORKERS_ENV]
        if not text.isdigit() or int(text) < 1:
            raise ValueError(f"{WORKERS_ENV} must be a positive integer, got {text!r}")
        return int(text)
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def check_workers(workers) -> int:
    """``workers`` as a positive int (``ValueError`` naming the argument otherwise)."""
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be a positive integer, got {workers!r}")
    return workers


class Serial:
    """Runs every task in this process, in order."""

    workers = 1
    name = "serial"

    def submit(self, fn, *args) -> cf.Future:
        future = cf.Future()
        try:
            future.set_result(fn(*args))
        except Exception as exc:  # delivered through the future, as a pool does
            future.set_exception(exc)
        return future

    def map(self, fn, tasks, *, shared=None, on_done=None) -> list:
        out = []
        for i, task in enumerate(tasks):
            out.append(fn(task, shared))
            if on_done is not None:
                on_done(i)
        return out

    def shutdown(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.shutdown()


def _install_shared(shared):
    _WORKER_SHARED["data"] = shared


def _call_with_shared(fn, task):
    return fn(task, _WORKER_SHARED.get("data"))


def _start_method() -> str:
    """Fork on Linux (workers inherit ``shared`` without a copy); spawn elsewhere (Windows has
    no fork, and macOS forks unsafely once threads run)."""
    return "fork" if sys.platform.startswith("linux") else "spawn"


class LocalProcesses(Serial):
    """Runs tasks in ``workers`` processes of this machine (default: ``default_workers()``).

    Each ``map`` starts its own pool whose workers receive ``shared`` once, at start
    (no copy at all where processes fork). ``submit`` uses a pool kept for the purpose.
    """

    name = "processes"

    def __init__(self, workers: int | None = None):
        self.workers = check_workers(default_workers() if workers is None else workers)
        self._pool = None

    def _new_pool(self, n, shared=None):
        return cf.ProcessPoolExecutor(n, mp_context=mp.get_context(_start_method()),
                                      initializer=_install_shared, initargs=(shared,))

    def submit(self, fn, *args) -> cf.Future:
        if self._pool is None:
            self._pool = self._new_pool(self.workers)
        return self._pool.submit(fn, *args)

    def map(self, fn, tasks, *, shared=None, on_done=None) -> list:
        tasks = list(tasks)
        if self.workers == 1 or len(tasks) <= 1:
            return Serial.map(self, fn, tasks, shared=shared, on_done=on_done)
        with self._new_pool(min(self.workers, len(tasks)), shared) as pool:
            futures = {pool.submit(_call_with_shared, fn, t): i for i, t in enumerate(tasks)}
            return _collect(futures, cf.as_completed, on_done, len(tasks))

    def shutdown(self) -> None:
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None


def _collect(futures: dict, as_completed, on_done, n) -> list:
    """Results in task order from ``{future: index}``, calling ``on_done`` as each completes."""
    out = [None] * n
    for future in as_completed(list(futures)):
        i = futures[future]
        out[i] = future.result()
        if on_done is not None:
            on_done(i)
    return out


def _distributed():
    try:
        import distributed
    except ImportError:
        raise ValueError("dask: the Dask back end needs dask.distributed; install it with "
                         "pip install 'rslab[dask]'") from None
    return distributed


class DaskExecutor(Serial):
    """Runs tasks on a ``dask.distributed`` cluster.

    ``address="local"`` starts a ``LocalCluster`` on 127.0.0.1 with ``workers``
    single-threaded worker processes (default: ``default_workers()``), closed again
    by ``shutdown``; any other address (``tcp://host:8786``) connects to a running
    scheduler. ``shared`` is scattered to every worker once per ``map``.
    """

    name = "dask"

    def __init__(self, address: str = "local", workers: int | None = None, *,
                 timeout: float = 20):
        distributed = _distributed()
        if not isinstance(address, str) or not address:
            raise ValueError(f"dask: expected 'local' or a scheduler address such as "
                             f"tcp://host:8786, got {address!r}")
        self.cluster = None
        if address == "local":
            n = check_workers(default_workers() if workers is None else workers)
            self.cluster = distributed.LocalCluster(
                n_workers=n, threads_per_worker=1, processes=True, host="127.0.0.1",
                dashboard_address=None)
            address = self.cluster.scheduler_address
        try:
            self.client = distributed.Client(address, timeout=timeout)
        except (OSError, TimeoutError) as exc:
            self.shutdown()
            raise ValueError(f"dask: cannot reach the scheduler at {address}: {exc}") from None
        self.address = address
        self.workers = max(1, len(self.client.scheduler_info()["workers"]))

    def submit(self, fn, *args):
        return self.client.submit(fn, *args, pure=False)

    def map(self, fn, tasks, *, shared=None, on_done=None) -> list:
        tasks = list(tasks)
        data = self.client.scatter([shared], broadcast=True)[0] if shared is not None else None
        futures = {self.client.submit(fn, t, data, pure=False): i for i, t in enumerate(tasks)}
        try:
            return _collect(futures, _distributed().as_completed, on_done, len(tasks))
        finally:
            for future in futures:
                future.release()

    def shutdown(self) -> None:
        client = getattr(self, "client", None)
        if client is not None:
            client.close()
            self.client = None
        if self.cluster is not None:
            self.cluster.close()
            self.cluster = None


def make_executor(processes: int | None = None, dask: str | None = None):
    """The executor for a command line: Dask at ``dask`` if given, else ``processes``
    local processes (default: the machine's cores; 1 = this process)."""
    if dask is not None:
        return DaskExecutor(dask, processes)
    n = default_workers() if processes is None else check_workers(processes)
    return Serial() if n == 1 else LocalProcesses(n)
