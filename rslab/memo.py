"""Deterministic results computed once per book build: a cache on disk keyed by the inputs.

``@cached`` wraps a function whose result depends on its arguments only (numbers, strings,
tuples, frozen dataclasses such as ``FastLog2``: their ``repr`` is the key, with the
arguments bound to the function's parameters, so ``f(1024, "fast")`` and
``f(vocab=1024, path="fast")`` are one entry; an argument whose ``repr`` shows an object's
address is no key, and such a call is computed, not cached). The cache
lives in the folder named by the environment variable ``RSLAB_MEMO_DIR``; the book build
(``rslab.bookbuild``) empties that folder when it starts and hands it to every page's
kernel, so a result one page computed is read, not recomputed, by the next, and every
number is still computed in this build. Without ``RSLAB_MEMO_DIR`` nothing is cached
(tests and the command line compute everything). Entries are pickles written atomically
(a temporary file renamed), so processes running side by side share the folder safely:
a reader sees a whole entry or none, and two pages that compute the same entry at once
write the same bits.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import os
import pickle
import re
import tempfile
from pathlib import Path

ENV = "RSLAB_MEMO_DIR"
ADDRESS = re.compile(r" at 0x[0-9a-f]+>")
"""How a default ``repr`` shows an object's identity (no key across processes)."""


def folder() -> Path | None:
    """The cache folder of this build, or None when results are not cached."""
    path = os.environ.get(ENV)
    return Path(path) if path else None


def key(fn, args, kwargs) -> str | None:
    """The entry name of ``fn(*args, **kwargs)``: a hash of its qualified name and the
    ``repr`` of its arguments bound to its parameters (defaults filled in); None if that
    ``repr`` holds an object's address."""
    bound = inspect.signature(fn).bind(*args, **kwargs)
    bound.apply_defaults()
    text = repr((fn.__module__, fn.__qualname__, list(bound.arguments.items())))
    if ADDRESS.search(text):
        return None
    return f"{fn.__qualname__}-{hashlib.sha256(text.encode()).hexdigest()[:32]}.pkl"


def cached(fn):
    """``fn`` with its results kept in this build's cache folder (if there is one)."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        where = folder()
        name = key(fn, args, kwargs) if where is not None else None
        if name is None:
            return fn(*args, **kwargs)
        path = where / name
        try:
            with path.open("rb") as fh:
                return pickle.load(fh)
        except (FileNotFoundError, EOFError, pickle.UnpicklingError):
            pass
        result = fn(*args, **kwargs)
        where.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=where, suffix=".tmp")
        with os.fdopen(fd, "wb") as fh:
            pickle.dump(result, fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
        return result

    wrapper.uncached = fn
    return wrapper
