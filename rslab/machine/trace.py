"""Traces of a simulation and their summaries.

``Trace`` holds one record per issued bundle: cycle, pc, stall cycles before
issue and their cause, and the iteration index of every active hardware loop.
Per-op issue and ready cycles, FIFO occupancy and live registers are derived
from those records and the pre-decoded program. ``to_chrome`` exports Chrome
trace JSON that explains itself in Perfetto (:mod:`rslab.machine.perfetto`).
"""

import json
import re
from dataclasses import dataclass

import numpy as np

from rslab.machine.perfetto import DEFAULT_FLOW_WINDOW, chrome_trace

RECORD_FIELDS = 5
"""Values of one issue record in the simulator's flat list: cycle, pc, stall, cause, iters."""


@dataclass(frozen=True)
class BundleRecord:
    """One issued bundle: issue ``cycle``, ``pc``, ``stall`` cycles before it and their
    ``cause`` (None if it did not stall), ``iters`` (iteration of each active loop, outermost
    first) and the op texts."""

    cycle: int
    pc: int
    stall: int
    cause: str | None
    iters: tuple
    ops: tuple


@dataclass(frozen=True)
class OpRecord:
    """One issued op: its bundle's index in ``Trace.bundles``, text, slot class, ``issue``
    and ``ready`` cycles (ready: the result is usable; for SFU pushes, at the FIFO head);
    ``source``: the loop-body op it runs (label, source iteration, stage) when the program
    says so (:attr:`rslab.machine.asm.Entry.sources`, its iteration counted on by the passes of
    the enclosing hardware loop), else None."""

    bundle: int
    pc: int
    text: str
    slot: str | None
    issue: int
    ready: int
    iters: tuple
    reads: tuple
    write: str | None
    source: tuple | None = None


class Trace:
    """Records of one ``simulate(..., trace=True)`` run; see the module docstring."""

    def __init__(self, run, records, static, dma_events, halt_cycle):
        self.run = run
        self.causes = tuple(run.stalls)
        """The stall causes of the run, in the simulator's order (its records' indices)."""
        self._flat = records
        self._records = None
        self._static = static
        self._dma = {(pc, t): done for pc, t, _start, done, _n, _tag in dma_events}
        self.dma_events = dma_events
        self.halt_cycle = halt_cycle
        self._bundles = None
        self._ops = None

    @property
    def issue_records(self) -> list:
        """The raw records, one per issued bundle: (cycle, pc, stall, cause index, iters)."""
        if self._records is None:
            self._records = list(self._rows())
        return self._records

    def _rows(self):
        """The records as tuples, from the flat list the simulator fills (``RECORD_FIELDS``
        values a bundle: no object a record while it runs)."""
        return zip(*[iter(self._flat)] * RECORD_FIELDS, strict=True)

    @property
    def op_infos(self) -> list:
        """Per pc, the ``OpInfo`` of each op of the bundle (:mod:`rslab.machine.decode`)."""
        return self._static

    @property
    def bundles(self) -> list[BundleRecord]:
        """One ``BundleRecord`` per issued bundle, in issue order (halt included)."""
        if self._bundles is None:
            out = []
            for t, pc, stall, cause, iters in self._rows():
                ops = tuple(s[0] for s in self._static[pc]) if pc < len(self._static) else ()
                if pc >= len(self._static) or self.run.program.entries[pc].kind == "halt":
                    ops = ("halt",)
                out.append(BundleRecord(t, pc, stall, self.causes[cause] if cause >= 0 else None,
                                        iters, ops))
            self._bundles = out
        return self._bundles

    @property
    def ops(self) -> list[OpRecord]:
        """One ``OpRecord`` per issued op, in issue order."""
        if self._ops is None:
            out = []
            entries = self.run.program.entries
            inner = self._innermost_loops()
            for i, (t, pc, _stall, _cause, iters) in enumerate(self._rows()):
                if pc >= len(self._static):
                    continue
                per = entries[inner[pc]].per_pass if inner[pc] >= 0 and iters else 0
                for (text, slot, ready, name, reads, write), source in zip(
                        self._static[pc], entries[pc].sources, strict=True):
                    if name == "dma":
                        done = self._dma.get((pc, t), t + 1)
                    else:
                        done = t + (ready if ready is not None else 1)
                    if source is not None and per:
                        source = (source[0], source[1] + iters[-1] * per, source[2])
                    out.append(OpRecord(i, pc, text, slot, t, done, iters, reads, write,
                                        source))
            self._ops = out
        return self._ops

    def _innermost_loops(self) -> list:
        """Per pc, the pc of the innermost hardware loop around it (−1: none)."""
        out, stack = [], []
        for pc, e in enumerate(self.run.program.entries):
            if e.kind == "endloop":
                stack.pop()
            out.append(stack[-1] if stack else -1)
            if e.kind == "loop":
                stack.append(pc)
        return out

    def cycles_by_label(self, pattern, *, default: str = "", separate=None) -> dict:
        """Cycles of the run charged to the regions of the program that labels name.

        A region starts at every label matching ``pattern`` (a regex whose first group
        is the region's name) and runs to the next such label; code before the first
        is ``default``. Each issued bundle's cycles since the previous issue (its stall
        and its own issue cycle) go to the region of its pc, and the drain after halt to
        the region of halt; stall cycles of a cause in ``separate`` (cause → name) go to
        that name instead. Returns name → cycles; the values sum to ``run.cycles``.
        """
        regex = re.compile(pattern)
        marks = sorted(((pc, m.group(1)) for name, pc in self.run.program.labels.items()
                        if (m := regex.match(name))), key=lambda x: x[0])
        starts = np.array([pc for pc, _ in marks], dtype=np.int64)
        at = np.searchsorted(starts, np.arange(len(self.run.program.entries) + 1),
                             side="right") - 1
        region_of = [marks[i][1] if i >= 0 else default for i in at.tolist()]
        separate = {self.causes.index(c): name for c, name in (separate or {}).items()}
        totals: dict = {}
        prev, region = 0, default
        for t, pc, stall, cause, _ in self._rows():
            region = region_of[min(pc, len(region_of) - 1)]
            gap = t - prev
            if cause in separate:
                totals[separate[cause]] = totals.get(separate[cause], 0) + stall
                gap -= stall
            totals[region] = totals.get(region, 0) + gap
            prev = t
        totals[region] = totals.get(region, 0) + self.run.cycles - prev
        return totals

    def fifo_occupancy(self) -> tuple[np.ndarray, np.ndarray]:
        """(cycles, entries): SFU FIFO entries occupied at each cycle (push → pop frees it)."""
        n = self.run.cycles + 1
        diff = np.zeros(n + 1, dtype=np.int64)
        lat_pop = self.run.config.latency["pop"]
        for op in self.ops:
            if op.slot == "sfu":
                diff[op.issue] += 1
            elif op.text.split()[0] == "vpop":
                diff[min(op.issue + lat_pop, n)] -= 1
        return np.arange(n), np.cumsum(diff)[:n]

    def live_registers(self, kind: str = "v") -> tuple[np.ndarray, np.ndarray]:
        """(cycles, count): registers of ``kind`` ('v' or 's') holding a value still to be read.

        A value is live from the issue of its write to the issue of its last read.
        """
        if kind not in ("v", "s"):
            raise ValueError(f"kind must be 'v' or 's', got {kind!r}")
        n = self.run.cycles + 1
        diff = np.zeros(n + 1, dtype=np.int64)
        defined = {}

        def close(reg):
            start, last = defined.pop(reg)
            if last is not None:
                diff[start] += 1
                diff[min(last, n)] -= 1

        for op in self.ops:
            for r in op.reads:
                if r[0] == kind and r in defined:
                    defined[r] = (defined[r][0], op.issue)
            if op.write and op.write[0] == kind:
                if op.write in defined:
                    close(op.write)
                defined[op.write] = (op.issue, None)
        for reg in list(defined):
            close(reg)
        return np.arange(n), np.cumsum(diff)[:n]

    def loop_iterations(self, loop) -> list[dict]:
        """Per iteration of a hardware loop: start cycle, bundles, stall cycles by cause.

        ``loop`` is a label on the ``loop`` line, the pc of the ``loop`` directive, or an
        index into ``program.loops()`` given as ``("index", i)``. Iterations of every
        instance of the loop are listed in order.
        """
        pc0, end, level = _find_loop(self.run.program, loop)
        its = []
        current = None
        for t, pc, stall, cause, iters in self._rows():
            if not pc0 < pc < end:
                current = None
                continue
            key = iters[:level + 1]
            if current is None or key != current["key"]:
                current = {"key": key, "start": t - stall, "bundles": 0,
                           "stalls": dict.fromkeys(self.causes, 0)}
                its.append(current)
            current["bundles"] += 1
            if cause >= 0:
                current["stalls"][self.causes[cause]] += stall
        return its

    def loop_bundles(self, loop) -> list[list[int]]:
        """Per iteration of a hardware loop (as :meth:`loop_iterations`), the indices into
        :attr:`bundles` of the bundles it issued."""
        pc0, end, level = _find_loop(self.run.program, loop)
        out, key = [], None
        for b, (_t, pc, _stall, _cause, iters) in enumerate(self._rows()):
            if not pc0 < pc < end:
                key = None
                continue
            if key is None or iters[:level + 1] != key:
                key = iters[:level + 1]
                out.append([])
            out[-1].append(b)
        return out

    def steady_state(self, loop, warmup: int = 2) -> dict:
        """Cycles and stalls per iteration of ``loop`` after ``warmup`` iterations.

        Cycles per iteration are measured start to start, so the last iteration (no
        successor) is not counted.
        """
        if not isinstance(warmup, int) or warmup < 0:
            raise ValueError(f"warmup must be a non-negative integer, got {warmup!r}")
        its = self.loop_iterations(loop)
        starts = [it["start"] for it in its]
        chosen = range(warmup, len(its) - 1)
        if not chosen:
            raise ValueError(f"loop ran {len(its)} iterations; need more than warmup + 1 = "
                             f"{warmup + 1}")
        cycles = np.array([starts[i + 1] - starts[i] for i in chosen], dtype=float)
        stalls = {c: float(np.mean([its[i]["stalls"][c] for i in chosen])) for c in self.causes}
        return {"iterations": len(its), "measured": len(chosen),
                "cycles_per_iter": float(cycles.mean()), "min": float(cycles.min()),
                "max": float(cycles.max()), "stalls_per_iter": float(sum(stalls.values())),
                "stalls_by_cause": stalls}

    def slot_rows(self) -> list[tuple[str, int, int, str]]:
        """(slot instance, start, duration, op text) for a per-slot Gantt chart.

        Loads and stores occupy their port for the conflict degree k; SFU pushes occupy
        the SFU for 1 + hold cycles.
        """
        cfg = self.run.config
        rows = []
        per_bundle = {}
        for op in self.ops:
            if op.slot is None:
                continue
            k = per_bundle.setdefault((op.bundle, op.slot), 0)
            per_bundle[(op.bundle, op.slot)] = k + 1
            dur = 1
            if op.slot == "sfu":
                dur = 1 + cfg.sfu_hold
            elif op.slot == "ld":
                dur = op.ready - op.issue - cfg.latency["ld"] + 1
            rows.append((f"{op.slot}{k}" if cfg.slots[op.slot] > 1 else op.slot, op.issue, dur,
                         op.text))
        return rows

    def to_chrome(self, flows=DEFAULT_FLOW_WINDOW, window=None) -> dict:
        """Chrome trace JSON for Perfetto (:mod:`rslab.machine.perfetto`): a track per slot
        instance and one for stalls, ``args`` on every slice, dependency arrows for the ops
        issued in cycles ``flows = (start, end)``; only the cycles ``window`` if given."""
        return chrome_trace(self, flows, window)

    def write_chrome(self, path, flows=DEFAULT_FLOW_WINDOW, window=None) -> None:
        """Write ``to_chrome(flows, window)`` as JSON to ``path``."""
        with open(path, "w") as fh:
            json.dump(self.to_chrome(flows, window), fh)


def _find_loop(program, loop):
    loops = program.loops()
    if isinstance(loop, tuple) and len(loop) == 2 and loop[0] == "index":
        if not 0 <= loop[1] < len(loops):
            raise ValueError(f"loop index {loop[1]} out of range: the program has "
                             f"{len(loops)} loops")
        pc = loops[loop[1]]
    elif isinstance(loop, str):
        if loop not in program.labels:
            raise ValueError(f"loop: no label {loop!r}")
        pc = program.labels[loop]
    elif isinstance(loop, int):
        pc = loop
    else:
        raise ValueError(f"loop must be a label, a pc or ('index', i), got {loop!r}")
    if pc not in loops:
        raise ValueError(f"loop: pc {pc} is not a loop directive")
    level = sum(1 for p in loops if p < pc and program.entries[p].end > pc)
    return pc, program.entries[pc].end, level


def summary(run) -> dict:
    """Cycles, bundles, ops, IPC, stalls by cause (and total), slot utilisation.

    Utilisation of a slot class = ops issued / (cycles × slots of that class); for the SFU
    the hold cycles count as busy.
    """
    cfg = run.config
    util = {}
    for slot, n in cfg.slots.items():
        busy = run.slot_use[slot] * (1 + cfg.sfu_hold if slot == "sfu" else 1)
        util[slot] = busy / (run.cycles * n) if run.cycles else 0.0
    return {"cycles": run.cycles, "bundles": run.bundles, "ops": run.ops,
            "ipc": run.ops / run.cycles if run.cycles else 0.0,
            "stall_cycles": sum(run.stalls.values()), "stalls": dict(run.stalls),
            "drain": run.drain, "utilisation": util}
