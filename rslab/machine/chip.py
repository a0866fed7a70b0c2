"""``simulate_chip(programs, chip, hbm, ...) -> ChipRun``: the cores of a chip, one order of events.

Every core is the machine chapter's (:mod:`rslab.machine.simulator`: its issue model, its
VMEM, its DMA engine, unchanged); the chip adds what the cores share
(:class:`rslab.machine.config.ChipConfig`):

* **the HBM** (:mod:`rslab.machine.hbm`): a core's DMA engine still serialises its own
  transfers at ``dma_bytes_per_cycle``, but every byte crosses the one HBM of
  ``hbm_bytes_per_cycle``, which serves the transfers in the order they start (cycle, then
  core), each on what the older ones leave. A ``dmawait`` waits first for what its core's
  engine alone would need (``dma-wait``), then for the rest (``hbm``: the HBM served other
  cores first). Each core reads HBM through its *window* (``windows``: the first byte and
  the size of the part of HBM its DMA addresses start from; by default all of it), as a
  host hands each core the base of its buffers.
* **the barrier**: ``bar sA, N`` (alone in its bundle) waits until N cores have arrived at
  the barrier named by the value of ``sA``; it releases them all
  :meth:`~rslab.machine.config.ChipConfig.barrier_latency` (N) cycles after the last arrival
  (``barrier``). A barrier instance is over once it has released; the next arrivals under
  the same name open a new one.
* **the exchange** (:mod:`rslab.machine.exchange`): the words the cores write with ``sxst``
  and ``xst`` and read with ``xld``, and the check that a read sees only what a barrier has
  published.

**The order of events.** A core runs on its own until a step that depends on the others:
a ``dmawait`` or a ``bar``. Until then its DMAs are *requests*. The chip commits requests
to the HBM in the order they start (cycle, then core), and a request starting at cycle s
only once no core can still issue one that starts earlier: every other core's *horizon*,
no earlier than its engine is free and than its next bundle may issue, is past s (or at s,
for a higher core or a core that waits). A core waiting at a barrier cannot issue before the
release, which comes after the next arrival of a core that runs or waits for the HBM, so no
earlier than the earliest next bundle of those (a core waiting for the HBM issues none
before its first request is done); a halted core has none. The chip resumes the runnable core with
the lowest horizon (then the lowest index), so horizons advance and commits follow. The
result depends on the programs only, not on the order the simulator resumes cores in: the
HBM's service is fixed by the start order, a barrier's release by its arrivals, and a
race-free program's reads by its barriers.

**Errors.** A core's runtime error is a ``MachineError`` naming the core; a barrier whose
count differs from the one its first arrival gave, or that names more cores than run, or
that can never release (a core it waits for has halted or waits at another barrier) is a
``MachineError`` naming the cores and their lines, raised as soon as no core can run:
never a hang. Every core's steps are bounded by ``max_steps``, as on one core.
"""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass, field

import numpy as np

from rslab.machine.asm import Program
from rslab.machine.collector import collector_paused
from rslab.machine.config import ChipConfig
from rslab.machine.errors import MachineError
from rslab.machine.exchange import Exchange
from rslab.machine.hbm import SharedHBM
from rslab.machine.issue import bind
from rslab.machine.memory import build_memory
from rslab.machine.simulator import (
    DEFAULT_MAX_STEPS,
    MAX_STEPS_LIMIT,
    Run,
    Sync,
    _Core,
    finished_run,
    new_core,
)
from rslab.machine.stalls import CHIP_CAUSES

RUN, DMA, BAR, DONE = range(4)
"""A core's state: runnable, waiting for its transfers' commit, at a barrier, halted."""
NEVER = float("inf")


class ChipCore(_Core):
    """A core of the chip: its DMAs are requests the chip commits to the shared HBM, and its
    ``dmawait`` and ``bar`` steps are ``Sync`` steps the chip resolves."""

    shared = True
    causes = CHIP_CAUSES

    def __init__(self, program, config, ctx, decoded, n_scratch, tracing):
        self.dma_alone = [0] * config.dma_tags
        self.dma_alone_all = self.alone_free = self.release = 0
        self.pending = deque()  # requests: (issue cycle, bytes, tag, pc)
        self.needed = 0  # the pending requests the waiting dmawait needs committed
        self.window = (0, 4 * ctx.H.size)
        self.sync_pc = self.sync_floor = 0
        super().__init__(program, config, ctx, decoded, n_scratch, tracing)

    def step(self, b):
        """The issue function of bundle ``b``, as a ``Sync`` step if it waits for the chip."""
        fn = bind(b, self)
        if b.dmawait is None and b.barrier is None:
            return fn
        return Sync(fn, b.barrier, b.dmawait)

    def start_dmas(self, dmas: tuple, t: int, pc: int):
        """Copy each DMA's bytes through the window now; the core's engine alone sets
        ``dma_alone`` (when the transfers would land without the other cores), and the request
        waits for the chip to commit it to the HBM."""
        cfg = self.config
        for n, tag in self.copy_dmas(dmas, *self.window):
            start = max(t, self.alone_free)
            dur = -(-n // cfg.dma_bytes_per_cycle)
            self.alone_free = start + dur
            done = start + cfg.dma_latency + dur
            self.dma_alone[tag] = max(self.dma_alone[tag], done)
            self.dma_alone_all = max(self.dma_alone_all, done)
            self.pending.append((t, n, tag, pc))


@dataclass
class ChipRun:
    """The result of ``simulate_chip``: ``runs`` (a ``Run`` per core, None for an idle core),
    ``cycles`` (the last core's end), ``transfers`` (one dict per DMA: ``core``, ``pc``,
    ``issue``, ``start``, ``end`` — the cycle after its last byte left the HBM —, ``done``,
    ``bytes``, ``tag``, ``delivery``: its ``(first, end, bytes per cycle)`` runs),
    ``barriers`` (one dict per released instance: ``name``, ``count``, ``arrivals``
    [(core, cycle, pc)], ``release``), the final ``exchange`` words and the ``config``."""

    config: ChipConfig
    runs: list
    transfers: list
    barriers: list
    exchange: np.ndarray
    windows: list = field(default_factory=list)

    @property
    def cycles(self) -> int:
        return max((r.cycles for r in self.runs if r is not None), default=0)

    @property
    def stalls(self) -> dict:
        """Stall cycles by cause, summed over the cores."""
        out = dict.fromkeys(CHIP_CAUSES, 0)
        for r in self.runs:
            for cause, n in (r.stalls.items() if r is not None else ()):
                out[cause] += n
        return out

    def hbm_bytes(self) -> np.ndarray:
        """Bytes the HBM delivered in each cycle (from every transfer's delivery)."""
        end = max((t["end"] for t in self.transfers), default=0)
        diff = np.zeros(end + 1, np.int64)
        for t in self.transfers:
            for first, stop, rate in t["delivery"]:
                diff[first] += rate
                diff[stop] -= rate
        return np.cumsum(diff)[:end]

    def read_exchange(self, address: int, count: int, dtype=np.uint32) -> np.ndarray:
        """``count`` elements of ``dtype`` from the exchange at byte ``address`` (a copy)."""
        dtype = np.dtype(dtype)
        raw = self.exchange.view(np.uint8)
        if address < 0 or count < 0 or address + count * dtype.itemsize > raw.size:
            raise ValueError(f"address/count: outside the exchange ({raw.size} bytes)")
        return raw[address:address + count * dtype.itemsize].view(dtype).copy()

    def summary(self) -> dict:
        """Cycles, the stalls by cause, per core its cycles and stalls, the HBM's bytes and its
        busiest cycle, and the barriers."""
        per_byte = self.hbm_bytes()
        return {"cycles": self.cycles, "cores": self.config.cores,
                "active_cores": sum(r is not None for r in self.runs),
                "stalls": self.stalls,
                "per_core": [None if r is None else {"cycles": r.cycles, "ops": r.ops,
                                                     "stalls": dict(r.stalls)}
                             for r in self.runs],
                "hbm": {"bytes": int(per_byte.sum()), "transfers": len(self.transfers),
                        "peak_bytes_per_cycle": int(per_byte.max()) if per_byte.size else 0,
                        "bandwidth": self.config.hbm_bytes_per_cycle},
                "barriers": len(self.barriers)}

    def to_chrome(self, flows=None) -> dict:
        """Chrome trace JSON for Perfetto: a process per core (its slot and stall tracks,
        :mod:`rslab.machine.perfetto`), the HBM's bytes per cycle as a counter track and the
        barriers as slices (needs ``trace=True``)."""
        from rslab.machine.perfetto import chip_trace

        return chip_trace(self, flows)

    def write_chrome(self, path, flows=None) -> None:
        """Write ``to_chrome(flows)`` as JSON to ``path``."""
        with open(path, "w") as fh:
            json.dump(self.to_chrome(flows), fh)


def _windows(windows, cores: int, hbm_bytes: int) -> list:
    if windows is None:
        return [(0, hbm_bytes)] * cores
    if len(windows) != cores:
        raise ValueError(f"windows must give one (base, size) per core ({cores}), "
                         f"got {len(windows)}")
    out = []
    for c, w in enumerate(windows):
        base, size = w
        if base < 0 or size < 0 or base % 4 or size % 4 or base + size > hbm_bytes:
            raise ValueError(f"windows[{c}] = {w!r}: a window is (base, size), multiples of 4 "
                             f"inside the HBM's {hbm_bytes} bytes")
        out.append((int(base), int(size)))
    return out


def simulate_chip(programs, chip: ChipConfig | None = None, hbm=None, vmem=None,
                  trace: bool = False, *, windows=None, exchange=None,
                  max_steps: int = DEFAULT_MAX_STEPS) -> ChipRun:
    """Run ``programs`` (one ``Program`` per core of ``chip``, None for an idle core) and
    return a ``ChipRun``. ``hbm``: the chip's HBM (an array placed at byte 0 or
    ``{byte_address: array}``; a flat uint32 array is taken as it is, not copied: the cores
    only read HBM); ``vmem``: None or one initial VMEM per core (as
    ``simulate``'s); ``windows``: per core, the ``(base, size)`` in bytes of HBM its DMA
    addresses start from (default: all of it); ``exchange``: the exchange's initial words
    (the host's, as ``hbm``); ``max_steps``: per core, as ``simulate``'s."""
    chip = ChipConfig() if chip is None else chip
    if not isinstance(chip, ChipConfig):
        raise ValueError(f"chip must be a ChipConfig, got {type(chip).__name__}")
    programs = list(programs)
    if len(programs) != chip.cores:
        raise ValueError(f"programs must give one program (or None) per core ({chip.cores}), "
                         f"got {len(programs)}")
    for c, p in enumerate(programs):
        if p is not None and not isinstance(p, Program):
            raise ValueError(f"programs[{c}] must be a Program (from assemble) or None")
    if all(p is None for p in programs):
        raise ValueError("programs: every core is idle")
    vmem = [None] * chip.cores if vmem is None else list(vmem)
    if len(vmem) != chip.cores:
        raise ValueError(f"vmem must give one initial VMEM (or None) per core ({chip.cores})")
    if (isinstance(max_steps, bool) or not isinstance(max_steps, int)
            or not 1 <= max_steps <= MAX_STEPS_LIMIT):
        raise ValueError(f"max_steps must be an integer in [1, {MAX_STEPS_LIMIT:,}], "
                         f"got {max_steps!r}")
    with collector_paused():
        flat = isinstance(hbm, np.ndarray) and hbm.dtype == np.uint32 and hbm.ndim == 1
        hbm_words = hbm if flat else build_memory(hbm, None, "hbm")
        wins = _windows(windows, chip.cores, 4 * hbm_words.size)
        shared = Exchange(chip.exchange_bytes, chip.cores)
        shared.words[:] = build_memory(exchange, chip.exchange_bytes, "exchange")
        cores, checked = [], set()
        for c, program in enumerate(programs):
            core = None
            if program is not None:  # a program is decoded whole once, checking every bundle
                core = new_core(ChipCore, program, chip.core, vmem[c], hbm_words, trace, None,
                                None, lazy=id(program) in checked, core=c, exchange=shared)
                core.window = wins[c]
                checked.add(id(program))
            cores.append(core)
        sched = _Chip(chip, cores, shared)
        with np.errstate(all="ignore"):
            sched.run(max_steps)
        runs = [None if core is None else finished_run(core) for core in cores]
        return ChipRun(chip, runs, sched.transfers, sched.barriers, shared.words, wins)


def _where(core, pc) -> str:
    """``line L`` (or ``pc P``) of a core's program, for an error message."""
    entries = core.program.entries
    return f"line {entries[pc].line}" if pc < len(entries) else f"pc {pc} (the end)"


class _Chip:
    """The order of events of :func:`simulate_chip` (module docstring)."""

    def __init__(self, config: ChipConfig, cores: list, exchange: Exchange):
        self.config, self.cores, self.exchange = config, cores, exchange
        self.active = [c for c, core in enumerate(cores) if core is not None]
        self.state = dict.fromkeys(self.active, RUN)
        self.hbm = SharedHBM(config.hbm_bytes_per_cycle)
        self.open: dict = {}  # barrier name -> {"count", "arrivals": [(core, cycle, pc)]}
        self.barriers: list = []
        self.transfers: list = []

    # ------------------------------------------------------------------ the loop
    def run(self, max_steps: int) -> None:
        gens = {c: self.cores[c].execution(max_steps) for c in self.active}
        try:
            while True:
                runnable = [c for c in self.active if self.state[c] == RUN]
                if runnable:
                    c = min(runnable, key=lambda k: (self.cores[k].sync_floor, k))
                    self._resume(c, gens[c])
                    self._commit()
                elif all(self.state[c] == DONE for c in self.active):
                    break
                elif not self._commit():
                    raise self._deadlock()
            self._commit(final=True)
        finally:
            for gen in gens.values():
                gen.close()

    def _resume(self, c: int, gen) -> None:
        core = self.cores[c]
        try:
            sync = next(gen)
        except StopIteration:
            self.state[c] = DONE
            return
        except MachineError as exc:
            raise MachineError(f"core {c}: {exc.message}", exc.pc, exc.cycle, exc.op,
                               exc.line) from None
        if sync.barrier is not None:
            self._arrive(c, sync.barrier)
            return
        tags = [tag for _, _, tag, _ in core.pending]
        waited = [i for i, tag in enumerate(tags) if sync.dmawait in (-1, tag)]
        core.needed = waited[-1] + 1 if waited else 0  # the engine serves them in order
        self.state[c] = DMA if core.needed else RUN

    # ------------------------------------------------------------------ the HBM
    def _horizons(self) -> dict:
        """Per core, the earliest cycle a request it has not yet made could start: no
        earlier than its engine is free (after the requests it has made) nor than its next
        bundle; at a barrier, no earlier than the release, which follows the next arrival of
        a core that runs or waits for the HBM, so than the earliest next bundle of those (a
        core whose ``dmawait`` waits for a request issues none before that request, and so
        its first, is done); halted, never."""
        out, nexts = {}, []
        for c in self.active:
            core = self.cores[c]
            if self.state[c] == DONE:
                out[c] = NEVER
                continue
            engine = (max(core.pending[0][0], core.dma_free) if core.pending
                      else core.dma_free)
            out[c] = max(core.sync_floor, engine)
            if self.state[c] == RUN:
                nexts.append(core.sync_floor)
            elif self.state[c] == DMA:
                nexts.append(max(core.sync_floor, engine + core.config.dma_latency))
        low = min(nexts, default=NEVER)
        for c in self.active:
            if self.state[c] == BAR:
                out[c] = max(out[c], low)
        return out

    def _commit(self, final: bool = False) -> bool:
        """Commit every request that may be (all, ``final``); unblock the cores whose
        requests are all committed. Whether anything changed."""
        changed = False
        while True:
            heads = [(max(self.cores[c].pending[0][0], self.cores[c].dma_free), c)
                     for c in self.active if self.cores[c].pending]
            if not heads:
                break
            start, a = min(heads)
            if not final:
                h = self._horizons()
                if any(h[x] < start or (h[x] == start and x < a and self.state[x] == RUN)
                       for x in self.active if x != a):
                    break
            self._serve(a, start)
            changed = True
        for c in self.active:
            if self.state[c] == DMA and not self.cores[c].needed:
                self.state[c] = RUN
                changed = True
        return changed

    def _serve(self, c: int, start: int) -> None:
        core = self.cores[c]
        t, n, tag, pc = core.pending.popleft()
        core.needed = max(0, core.needed - 1)
        end, delivery = self.hbm.serve(start, n, core.config.dma_bytes_per_cycle)
        core.dma_free = end
        done = end + core.config.dma_latency
        core.dma_tag[tag] = max(core.dma_tag[tag], done)
        core.dma_all = max(core.dma_all, done)
        if core.dma_events is not None:
            core.dma_events.append((pc, t, start, done, n, tag))
        self.transfers.append({"core": c, "pc": pc, "issue": t, "start": start, "end": end,
                               "done": done, "bytes": n, "tag": tag, "delivery": delivery})

    # ------------------------------------------------------------------ the barrier
    def _error(self, c: int, message: str) -> MachineError:
        core = self.cores[c]
        entry = core.program.entries[core.sync_pc]
        return MachineError(message, core.sync_pc, core.sync_floor, entry.text, entry.line)

    def _arrive(self, c: int, barrier: tuple) -> None:
        uid, reg, count = barrier
        core = self.cores[c]
        name = core.ctx.S[reg]
        arrival = max(core.sync_floor, core.ready[uid])
        here = f"core {c} ({_where(core, core.sync_pc)})"
        if not 1 <= count <= len(self.active):
            raise self._error(c, f"{here}: bar waits for {count} cores at barrier {name}; "
                                 f"{len(self.active)} cores run on this chip")
        inst = self.open.setdefault(name, {"count": count, "arrivals": []})
        if inst["count"] != count:
            k, _, pc = inst["arrivals"][0]
            raise self._error(c, f"{here}: bar waits for {count} cores at barrier {name}, but "
                                 f"core {k} ({_where(self.cores[k], pc)}) arrived there "
                                 f"waiting for {inst['count']}")
        inst["arrivals"].append((c, arrival, core.sync_pc))
        self.state[c] = BAR
        if len(inst["arrivals"]) < count:
            return
        release = max(t for _, t, _ in inst["arrivals"]) + self.config.barrier_latency(count)
        instance = len(self.barriers)
        for k, _, _ in inst["arrivals"]:
            self.cores[k].release = release
            self.state[k] = RUN
            self.exchange.pass_barrier(k, instance)
        self.barriers.append({"name": name, "count": count, "arrivals": inst["arrivals"],
                              "release": release})
        del self.open[name]

    def _deadlock(self) -> MachineError:
        """The error of a chip on which no core can run: barriers that can never release."""
        if not self.open:
            raise AssertionError("no core can run, yet none waits at a barrier")
        halted = [c for c in self.active if self.state[c] == DONE]
        parts = []
        for name, inst in self.open.items():
            waiting = ", ".join(f"core {k} ({_where(self.cores[k], pc)})"
                                for k, _, pc in inst["arrivals"])
            missing = inst["count"] - len(inst["arrivals"])
            parts.append(f"barrier {name} waits for {inst['count']} cores and {missing} more "
                         f"can never arrive; waiting: {waiting}")
        if halted:
            parts.append("halted: " + ", ".join(
                f"core {k} ({_where(self.cores[k], self.cores[k].halt_pc)})" for k in halted))
        first = next(iter(self.open.values()))["arrivals"][0][0]
        return self._error(first, "deadlock: " + "; ".join(parts))


__all__ = ["ChipCore", "ChipRun", "Run", "simulate_chip"]
