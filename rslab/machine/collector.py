"""Python's cyclic garbage collector paused around work that allocates many acyclic objects."""

import gc
from contextlib import contextmanager


@contextmanager
def collector_paused():
    """The cyclic collector paused, if it runs. Assembling a program or running one allocates
    tens of thousands of objects that form no cycles (ops, entries, issue functions, trace
    records); as they cross the collector's thresholds it scans them again and again, now and
    then with every object of the process (a tenth of a second on the sampler). Paused, it
    catches up once, after the work."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
