"""Who waited for whom in a traced run: each op's producers, and the op each stall waited for.

One pass over the trace's ops in issue order keeps the last writer of every
register, the SFU pushes still in the FIFO, the last push, pop, load, store,
branch and DMA. From them:

* **dependencies**: for every op, the op that wrote each register it reads (``raw``
  edges) and, for a ``vpop``, the push whose result it takes (``fifo`` edges);
* **waited for**: for every stalled bundle, the op its stall cause points at — the
  producer of the latest-ready source (``raw``), the push at the FIFO head
  (``sfu-wait``), the pop that frees an entry (``fifo-full``), the previous push
  (``sfu-hold``), the load or store holding the port (``bank-conflict``), the taken
  branch (``branch``) or the DMA of the tag (``dma-wait``, and on a core of a chip
  ``hbm``); a core of a chip waiting at a barrier (``barrier``) waited for other cores, not
  for an op of its own.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from rslab.machine.isa import BRANCH_OPS, POP_OPS


@dataclass(frozen=True)
class Links:
    """``deps[i]``: (producer index, register or ``"fifo"``) of op i; ``waited[b]``: the op
    index bundle b's stall waited for (stalled bundles only). Indices into ``Trace.ops``."""

    deps: list
    waited: dict


def _is(op, names) -> bool:
    return op.text.split(None, 1)[0] in names


class _State:
    """The last writer of each register and the FIFO, as the pass reaches each bundle."""

    def __init__(self, pop_latency: int):
        self.writer, self.fifo, self.last = {}, deque(), {}
        self.pops, self.pop_latency = [], pop_latency

    def waited_for(self, cause, ops, idx, cycle):
        if cause == "raw":
            producers = [self.writer[r] for i in idx for r in ops[i].reads if r in self.writer]
            return max(producers, key=lambda p: (ops[p].ready, p), default=None)
        if cause == "sfu-wait":
            return self.fifo[0] if self.fifo else None
        if cause == "fifo-full":
            freeing = [p for p in self.pops if ops[p].issue + self.pop_latency == cycle]
            return freeing[-1] if freeing else (self.pops[-1] if self.pops else None)
        if cause == "bank-conflict":
            kind = "st" if any(ops[i].slot == "st" for i in idx) else "ld"
            return self.last.get(kind)
        if cause == "barrier":
            return None
        return self.last.get({"sfu-hold": "sfu", "branch": "branch", "dma-wait": "dma",
                              "hbm": "dma"}[cause])

    def issue(self, ops, idx, deps):
        for i in idx:
            op = ops[i]
            deps[i] = [(self.writer[r], r) for r in op.reads if r in self.writer]
            if _is(op, POP_OPS) and self.fifo:
                deps[i].append((self.fifo.popleft(), "fifo"))
                self.pops.append(i)
        for i in idx:
            op = ops[i]
            if op.write is not None:
                self.writer[op.write] = i
            if op.slot == "sfu":
                self.fifo.append(i)
            for kind in ("ld", "st", "sfu"):
                if op.slot == kind:
                    self.last[kind] = i
            if _is(op, BRANCH_OPS):
                self.last["branch"] = i
            if _is(op, ("dma",)):
                self.last["dma"] = i


def links(trace) -> Links:
    """The dependencies and stall targets of a ``Trace`` (see the module docstring)."""
    ops = trace.ops
    by_bundle = {}
    for i, op in enumerate(ops):
        by_bundle.setdefault(op.bundle, []).append(i)
    state = _State(trace.run.config.latency["pop"])
    deps, waited = [[] for _ in ops], {}
    for b, rec in enumerate(trace.bundles):
        idx = by_bundle.get(b, [])
        if rec.cause is not None:
            target = state.waited_for(rec.cause, ops, idx, rec.cycle)
            if target is not None:
                waited[b] = target
        state.issue(ops, idx, deps)
    return Links(deps, waited)
