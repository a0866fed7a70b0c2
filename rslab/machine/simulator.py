"""``simulate(program, config, vmem, hbm, trace) -> Run``: functional and timing simulation.

Timing is the issue model of the machine chapter. Bundles issue in order; a bundle issues
at the earliest cycle at which every constraint holds, and the constraints are
named:

- in order: one cycle after the previous bundle (no stall);
- ``branch``: after a taken branch, ``branch_penalty`` more cycles;
- ``raw``: every source register is ready (scoreboard of ready cycles);
- ``bank-conflict``: enough ld (st) ports are free; an access with a k-way bank conflict
  holds its port k cycles (the other ports of the unit stay free);
- ``sfu-hold``: a push waits ``sfu_hold`` cycles after the previous push;
- ``fifo-full``: a push needs a free FIFO entry; a pop frees its entry ``latency['pop']``
  cycles after it issues (a push to a full FIFO that no earlier pop will free is an error:
  the in-order core would deadlock);
- ``sfu-wait``: a pop waits for the FIFO head's result;
- ``dma-wait``: ``dmawait`` waits for the DMAs of its tag.

The issue cycle is the max over these, and the stall cycles (issue cycle minus one plus
the previous issue cycle) are charged to the binding constraint (the first listed above
on a tie; :mod:`rslab.machine.stalls` gives each cause's meaning). Stalls are computed,
not ticked, so simulation time grows with the ops executed, not with cycles. ``halt``
(or running off the end) takes no slot: the run ends at the cycle ``halt`` would issue
or, if later, when everything in flight has completed (``Run.drain`` is that wait). So
``cycles == bundles + stall cycles + drain``.

A core of a chip (:mod:`rslab.machine.chip`) runs the same issue loop as a generator that
pauses before a ``dmawait`` or a ``bar`` (a ``Sync`` step) for the chip to resolve, and may
decode its bundles when first issued (a ``Lazy`` step) once another core has decoded the
same program whole.

Functional semantics: every op executes at issue on 128-lane NumPy rows; ops of
one bundle read the registers as they were before the bundle. Results become
*visible* to the timing model at ready = issue + latency, and the scoreboard
makes every reader wait for that, so executing at issue is exact for in-order
code. Two simplifications follow from it: a later write to a register wins even
if an earlier, slower write to the same register is still in flight (no WAW
hazard is modelled), and a store is visible to every later load (no
store-to-load delay); ``dma`` copies at issue, so a program must ``dmawait``
before it relies on the data for timing to be right. SFU results are computed
in batches when first popped (the functions are elementwise, so batching
changes no bit).
"""

from collections import deque
from types import FunctionType
from typing import NamedTuple

import numpy as np

from rslab.machine.asm import Program
from rslab.machine.collector import collector_paused
from rslab.machine.config import MachineConfig
from rslab.machine.decode import Decoder, Halt, LoopEntry
from rslab.machine.errors import MachineError
from rslab.machine.guard import Guard
from rslab.machine.issue import bind
from rslab.machine.memory import build_memory
from rslab.machine.stalls import BRANCH, CAUSES, RAW
from rslab.machine.trace import Trace, summary
from rslab.machine.units import MASK32, Context, OpFault

_RING_DEPTHS = 8
"""The SFU operand ring holds this many FIFO depths of rows (more than one, so a row is not
reused before its entry is popped; more, so a batch seldom wraps around)."""

DEFAULT_MAX_STEPS = 2_000_000
"""Steps (bundles issued plus ``loop``/``endloop`` directives executed) before ``simulate`` stops
a run with a ``MachineError``: a few seconds for ``a: jmp a``, three times the sampler's largest
program (see the machine chapter)."""

MAX_STEPS_LIMIT = 100_000_000
"""The most steps a run may be given: about two minutes of this simulator, fifty times the
default (a larger limit would let an endless loop look like a hang)."""


class Run:
    """The result of ``simulate``.

    ``cycles`` (total, including the drain after ``halt``), ``stalls`` (cause →
    cycles, every cause present), ``ops`` (ops issued), ``bundles`` (bundles
    issued, halt excluded), ``slot_use`` (slot class → ops issued), ``drain``
    (cycles ``halt`` waited for work in flight), ``fifo_left`` (SFU results never
    popped), ``trace`` (a ``Trace`` when simulated with ``trace=True``, else None).
    """

    def __init__(self, **kw):
        self.__dict__.update(kw)

    @property
    def ipc(self) -> float:
        """Ops per cycle."""
        return self.ops / self.cycles if self.cycles else 0.0

    @property
    def stall_cycles(self) -> int:
        """Total stall cycles over all causes."""
        return sum(self.stalls.values())

    def vreg(self, i: int, dtype=np.float32) -> np.ndarray:
        """A copy of vector register ``i`` viewed as ``dtype`` (float32 or uint32)."""
        self._check_reg(i, self.config.vregs, "v")
        return self._R[i].view(dtype).copy()

    def sreg(self, i: int) -> int:
        """Scalar register ``i`` as an unsigned 32-bit integer."""
        self._check_reg(i, self.config.sregs, "s")
        return self._S[i]

    def sreg_f32(self, i: int) -> float:
        """Scalar register ``i`` read as a float32 bit pattern."""
        return float(np.uint32(self.sreg(i)).view(np.float32))

    def sreg_i32(self, i: int) -> int:
        """Scalar register ``i`` as a signed 32-bit integer."""
        x = self.sreg(i)
        return x - (1 << 32) if x & 0x80000000 else x

    def read_vmem(self, address: int, count: int, dtype=np.uint32) -> np.ndarray:
        """``count`` elements of ``dtype`` from VMEM at byte ``address`` (a copy)."""
        dtype = np.dtype(dtype)
        nbytes = count * dtype.itemsize
        raw = self.vmem.view(np.uint8)
        if address < 0 or count < 0 or address + nbytes > raw.size:
            raise ValueError(f"address/count: [{address}, {address + nbytes}) is outside VMEM")
        return raw[address:address + nbytes].view(dtype).copy()

    @staticmethod
    def _check_reg(i, n, kind):
        if not isinstance(i, (int, np.integer)) or not 0 <= i < n:
            raise ValueError(f"register {kind}{i} does not exist (0..{n - 1})")

    def summary(self) -> dict:
        """Cycles, ops, IPC, stalls by cause and slot utilisation (see ``trace.summary``)."""
        return summary(self)


def _scalar_word(value, name):
    if isinstance(value, (float, np.floating)):
        return int(np.float32(value).view(np.uint32))
    if isinstance(value, (int, np.integer)) and -(2**31) <= value < 2**32:
        return int(value) & MASK32
    raise ValueError(f"{name}: scalar values must be 32-bit integers or floats, got {value!r}")




def _register_items(values, name, count):
    """The ``{index: value}`` items of ``sregs``/``vregs``, each index a register of the machine."""
    if values is None:
        return []
    if not isinstance(values, dict):
        raise ValueError(f"{name} must be a dict {{index: value}}, got {type(values).__name__}")
    for i in values:
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)) or not 0 <= i < count:
            raise ValueError(f"{name}: register {name[0]}{i} does not exist (0..{count - 1})")
    return list(values.items())


def _initial_registers(config, n_scratch, vregs, sregs):
    """The vector rows (uint32) and scalar list, with the given initial values."""
    L = config.lanes
    R = np.zeros((config.vregs + n_scratch, L), dtype=np.uint32)
    S = [0] * (config.sregs + n_scratch)
    for i, value in _register_items(vregs, "vregs", config.vregs):
        words = np.ascontiguousarray(np.asarray(value)).reshape(-1)
        if words.dtype.kind not in "uif" or words.dtype.itemsize != 4 or words.size != L:
            raise ValueError(f"vregs[{i}] must hold {L} four-byte numbers")
        R[i] = words.view(np.uint32)
    for i, value in _register_items(sregs, "sregs", config.sregs):
        S[i] = _scalar_word(value, f"sregs[{i}]")
    return R, S


def simulate(program: Program, config: MachineConfig | None = None, vmem=None, hbm=None,
             trace: bool = False, *, sregs=None, vregs=None,
             max_steps: int = DEFAULT_MAX_STEPS, guard=None) -> Run:
    """Run ``program`` and return a ``Run``.

    ``vmem``/``hbm``: ``None``, an array placed at byte 0, or ``{byte_address: array}``
    (any dtype; raw bytes are copied). HBM is just large enough for its data.
    ``sregs``/``vregs``: optional initial registers ``{index: value}`` (scalars: int or
    float; vectors: 128 four-byte elements). ``trace=True`` records the trace.
    ``max_steps`` (bundles issued plus loop directives executed) stops runaway programs with a
    ``MachineError``; every run ends or raises within it. ``guard`` (a
    :class:`~rslab.machine.guard.Guard`) stops a load or store outside its regions.
    """
    if not isinstance(program, Program):
        raise ValueError(f"program must be a Program (from assemble), got {type(program).__name__}")
    config = MachineConfig() if config is None else config
    if not isinstance(config, MachineConfig):
        raise ValueError(f"config must be a MachineConfig, got {type(config).__name__}")
    if (isinstance(max_steps, bool) or not isinstance(max_steps, int)
            or not 1 <= max_steps <= MAX_STEPS_LIMIT):
        raise ValueError(f"max_steps must be an integer in [1, {MAX_STEPS_LIMIT:,}], "
                         f"got {max_steps!r}")
    if guard is not None and not isinstance(guard, Guard):
        raise ValueError(f"guard must be a Guard, got {type(guard).__name__}")
    with collector_paused():
        return _run(program, config, vmem, hbm, trace, sregs, vregs, max_steps, guard)


def _run(program, config, vmem, hbm, trace, sregs, vregs, max_steps, guard) -> Run:
    """``simulate`` once its arguments are checked. The decoded program and the core are
    garbage when it returns and, holding no cycle once the run is over, are freed at once:
    the paused collector finds only the ``Run`` to scan."""
    core = new_core(_Core, program, config, vmem, build_memory(hbm, None, "hbm"), trace,
                    sregs, vregs, guard=guard)
    with np.errstate(all="ignore"):
        core.execute(max_steps)
    return finished_run(core)


def new_core(kind, program, config, vmem, hbm_words, trace, sregs, vregs, lazy=False,
             **context):
    """A core of class ``kind`` (``_Core`` or a chip's) with ``program`` decoded on its
    registers (``lazy``: each bundle when first issued; ``context``: the memory ``guard``,
    the chip's ``core`` index and ``exchange``), its VMEM built from ``vmem`` and reading the
    HBM words ``hbm_words``."""
    n_scratch = sum(config.slots.values()) + 2
    R, S = _initial_registers(config, n_scratch, vregs, sregs)
    M = build_memory(vmem, config.vmem_bytes, "vmem")
    ctx = Context(R, S, M, hbm_words, **context)
    decoder = Decoder(program, config, ctx, n_scratch)
    core = kind(program, config, ctx, decoder.decode(lazy), n_scratch, trace)
    core.decoder = decoder
    return core


def finished_run(core) -> Run:
    """The ``Run`` of a core whose execution has ended (``core.t``: the halt cycle)."""
    config, decoded, counts = core.config, core.decoded, core.counts
    issues = decoded.issues(counts).tolist()
    ops = sum(c * len(s) for c, s in zip(issues, decoded.infos, strict=True))
    slot_use = dict.fromkeys(config.slots, 0)
    for c, u in zip(issues, decoded.uses, strict=True):
        for slot, n in u.items():
            slot_use[slot] += c * n
    end = core.end_cycle()
    ctx = core.ctx
    run = Run(program=core.program, config=config, cycles=end,
              stalls=dict(zip(core.causes, core.stalls, strict=True)), ops=ops,
              bundles=core.bundles, slot_use=slot_use, drain=end - core.t,
              fifo_left=len(core.fifo), vmem=ctx.M, hbm=ctx.H, counts=counts,
              _R=ctx.R, _S=ctx.S, trace=None)
    if core.records is not None:
        run.trace = Trace(run, core.records, decoded.per_pc(decoded.infos, []),
                          core.dma_events, core.t)
    return run


class Lazy(NamedTuple):
    """The step of a distinct bundle not yet decoded (``index``): decoded when first issued."""

    index: int


class Sync(NamedTuple):
    """A step of a core of the chip that the chip resolves before the core issues it: a
    ``dmawait`` (the chip commits the core's transfers to the shared HBM) or a ``bar``
    (the chip sets the release); ``fn`` is the bundle's issue function."""

    fn: FunctionType
    barrier: tuple | None
    """``bar``'s (register id of the name, scalar register of the name, count), or None."""
    dmawait: int | None = None
    """``dmawait``'s tag (−1: every DMA), or None."""


class _Core:
    """The issue loop: bundles in order, each at the max over its named constraints.

    State: the scoreboard (``ready`` cycle per register id), the load and store
    ports (the cycle each is free again, ascending), the SFU (the cycle the hold
    ends; the FIFO: each entry's ready cycle in ``fifo``, its operand row and function
    in a ring indexed by push count, ``results`` computed and not yet popped; the
    ``credits``: cycles at which popped entries free their slot), the DMA engine and tags, and
    the hardware-loop stack. ``steps`` holds, per pc, the bundle's issue function
    (:mod:`rslab.machine.issue`: its constraints, each named by its stall cause, its effects
    and scoreboard writes) or the directive.
    """

    shared = False
    """A core of a chip (its ``dmawait`` waits for the shared HBM too)."""
    causes = CAUSES
    """The stall causes this core charges."""

    def __init__(self, program, config, ctx, decoded, n_scratch, tracing):
        self.program, self.config, self.ctx, self.decoded = program, config, ctx, decoded
        self.ready = [0] * (config.vregs + config.sregs + 2 * n_scratch)
        self.stalls = [0] * len(self.causes)
        self.ld_ports = [0] * config.slots["ld"]
        self.st_ports = [0] * config.slots["st"]
        self.sfu_free = 0
        self.fifo, self.credits, self.results = deque(), deque(), deque()
        self.ring = np.empty((_RING_DEPTHS * config.fifo_depth, config.lanes), np.float32)
        self.ring_rows, self.ring_fns = list(self.ring), [None] * len(self.ring)
        self.pushed = self.resolved = 0
        self.lanes, self.sfu_hold, self.fifo_depth = (config.lanes, config.sfu_hold,
                                                      config.fifo_depth)
        self.lat_pop, self.lat_sfu = config.latency["pop"], config.latency["sfu"]
        self.dma_tag = [0] * config.dma_tags
        self.dma_all = self.dma_free = 0
        self.stack = []
        self.iters = ()  # iteration of each active loop, outermost first
        self.records = [] if tracing else None
        self.dma_events = [] if tracing else None
        self.t = self.bundles = self.directives = 0
        # per pc, the issue function of its bundle or its directive; running off the end halts
        self.steps = [*decoded.steps([Lazy(i) if b is None else self.step(b)
                                      for i, b in enumerate(decoded.bundles)]), Halt()]
        self.counts = [0] * len(self.steps)

    def step(self, b):
        """The step of compiled bundle ``b``: its issue function."""
        return bind(b, self)

    def materialise(self, i: int):
        """The step of distinct bundle ``i`` of a lazily decoded program, decoded and bound
        when first issued (once for every pc that holds it)."""
        steps = self.__dict__.setdefault("lazy_steps", {})
        if i not in steps:
            steps[i] = self.step(self.decoder.decode_class(self.decoded, i))
        return steps[i]

    def error(self, message: str, pc: int, cycle, text: str | None = None) -> MachineError:
        """A ``MachineError`` naming the source line, pc and op text of entry ``pc``."""
        entry = self.program.entries[pc] if pc < len(self.program.entries) else None
        return MachineError(message, pc, cycle, entry.text if text is None and entry else
                            text or "", entry.line if entry else None)

    # -------------------------------------------------------------- the SFU, for issue functions
    def fifo_space(self, n: int, t: int, pc: int) -> int:
        """fifo-full: the cycle from which ``n`` pushes find free FIFO entries (pops free
        theirs after the pop latency)."""
        credits, depth = self.credits, self.fifo_depth
        while credits and credits[0] <= t:
            credits.popleft()
        need = len(self.fifo) + len(credits) + n - depth
        if need <= 0:
            return 0
        if need > len(credits):
            raise self.error(f"SFU FIFO overflow: push into a full FIFO (depth {depth}) that "
                             "no earlier pop frees; the in-order core would deadlock", pc, t)
        return credits[need - 1]

    def empty_fifo(self, pc: int, t: int) -> MachineError:
        """The error of a pop that no result in flight can satisfy."""
        return self.error("vpop on an empty SFU FIFO with nothing in flight (deadlock)", pc, t)

    def resolve(self):
        """The results of the leading run of FIFO entries with one function, in one call (the
        functions are elementwise, so batching changes no bit); called by a pop that finds
        no result computed."""
        fns, size, k = self.ring_fns, len(self.ring_fns), self.resolved
        fn, n = fns[k % size], 1
        while n < len(self.fifo) and fns[(k + n) % size] is fn:
            n += 1
        ring, i = self.ring, k % size
        src = ring[i:i + n] if i + n <= size else np.concatenate(
            (ring[i:], ring[:i + n - size]))
        out = np.asarray(fn(src.reshape(-1)), dtype=np.float32).reshape(n, self.lanes)
        self.results.extend(out)
        self.resolved = k + n

    def copy_dmas(self, dmas: tuple, base: int = 0, size: int | None = None):
        """Copy each DMA's bytes HBM[base + src] → VMEM[dst] now (``size``: the bytes of HBM
        the core may read, from ``base``); yields each one's (bytes, tag)."""
        S, M, H = self.ctx.S, self.ctx.M, self.ctx.H
        size = 4 * H.size if size is None else size
        for sd, ss, sl, tag, text in dmas:
            d, s, n = S[sd], S[ss], S[sl]
            if d & 3 or s & 3 or n & 3:
                raise OpFault(f"dma addresses and length must be multiples of 4 "
                              f"(dst {d}, src {s}, len {n})", text)
            if d + n > M.size * 4 or s + n > size:
                raise OpFault(f"dma of {n} bytes HBM[{s}] → VMEM[{d}] out of bounds "
                              f"(VMEM {M.size * 4} B, HBM {size} B)", text)
            M[d >> 2:(d + n) >> 2] = H[(base + s) >> 2:(base + s + n) >> 2]
            yield n, tag

    def start_dmas(self, dmas: tuple, t: int, pc: int):
        """Copy each DMA's bytes now; the engine serialises them and the tag records done."""
        cfg = self.config
        for n, tag in self.copy_dmas(dmas):
            start = max(t, self.dma_free)
            dur = -(-n // cfg.dma_bytes_per_cycle)
            self.dma_free = start + dur
            done = start + cfg.dma_latency + dur
            self.dma_tag[tag] = max(self.dma_tag[tag], done)
            self.dma_all = max(self.dma_all, done)
            if self.dma_events is not None:
                self.dma_events.append((pc, t, start, done, n, tag))

    # -------------------------------------------------------------- the loop
    def execute(self, max_steps: int):
        """Run from pc 0 to ``halt`` (or the end); ``self.t`` ends as the halt cycle."""
        for _ in self.execution(max_steps):
            raise AssertionError("a lone core has no step for a chip to resolve")

    def execution(self, max_steps: int):
        """The run from pc 0 to ``halt`` as a generator: it yields each ``Sync`` step before
        issuing it (``sync_pc``, ``sync_floor``: its pc and the cycle the in-order and branch
        constraints allow), for the chip to resolve; a lone core's program has none.

        One bundle's issue: its function (:mod:`rslab.machine.issue`) returns the cycle at
        which every constraint holds, given ``floor`` (in order, and the branch penalty
        after a taken branch), the binding cause and the taken branch's target, having run
        the ops and effects and written the scoreboard; here the stall is charged to that
        cause, then come the trace record, the step budget and the next pc.
        """
        self.max_steps = max_steps
        program, stalls, counts, records = self.steps, self.stalls, self.counts, self.records
        penalty, function = self.config.branch_penalty, FunctionType
        pc = base = floor = t = steps = 0
        fcause = -1
        try:
            while True:
                issue = program[pc]
                if type(issue) is not function:
                    if type(issue) is Lazy:
                        issue = program[pc] = self.materialise(issue.index)
                    if type(issue) is function:
                        pass
                    elif type(issue) is Sync:
                        self.sync_pc, self.sync_floor = pc, floor
                        yield issue
                        issue = issue.fn
                    else:
                        self.t = t
                        pc, floor, fcause, steps = self._directive(issue, pc, floor, fcause,
                                                                   base, steps)
                        if pc < 0:
                            return
                        continue
                t, cause, jump = issue(pc, floor, fcause)
                if t > base:
                    stalls[cause] += t - base
                else:
                    cause = -1
                counts[pc] += 1
                if records is not None:
                    records += t, pc, t - base, cause, self.iters
                steps += 1
                if steps >= max_steps:
                    self._out_of_steps(pc, t)
                base = t + 1
                if jump < 0:
                    pc, floor, fcause = pc + 1, base, -1
                else:
                    pc, floor, fcause = jump, base + penalty, BRANCH
        except OpFault as fault:
            raise self.error(fault.message, pc, fault.cycle, fault.text) from None
        finally:
            self.bundles = steps - self.directives
            self.steps = None  # the issue functions refer to the core: no cycle is left

    def _directive(self, e, pc, floor, fcause, base, steps):
        """A ``loop``, ``endloop`` or ``halt`` entry; returns (next pc, floor, cause, steps),
        the pc −1 after ``halt``."""
        if type(e) is Halt:
            self._halt(min(pc, len(self.program.entries)), floor, base, fcause)
            return -1, floor, fcause, steps
        steps += 1
        self.directives += 1
        if steps >= self.max_steps:
            self._out_of_steps(pc, floor if type(e) is LoopEntry else self.t)
        if type(e) is LoopEntry:
            return (*self._enter_loop(e, pc, floor, fcause), steps)
        return self._end_loop(pc), floor, fcause, steps

    def _enter_loop(self, e: LoopEntry, pc, floor, fcause):
        """``loop``: read the count (waiting for its register), skip or push the loop."""
        n = e.count
        if e.count_id >= 0:
            n = self.ctx.S[e.count]
            if self.ready[e.count_id] > floor:
                floor, fcause = self.ready[e.count_id], RAW
        if n == 0:
            return e.end + 1, floor, fcause
        if len(self.stack) >= self.config.loop_depth:
            raise self.error(f"hardware loops nested deeper than loop_depth = "
                             f"{self.config.loop_depth}", pc, floor)
        self.stack.append([pc + 1, n, 0])
        self.iters += (0,)
        return pc + 1, floor, fcause

    def _end_loop(self, pc):
        """``endloop``: the next iteration, or leave the loop."""
        top = self.stack[-1]
        top[2] += 1
        if top[2] < top[1]:
            self.iters = (*self.iters[:-1], top[2])
            return top[0]
        self.stack.pop()
        self.iters = self.iters[:-1]
        return pc + 1

    def _out_of_steps(self, pc, cycle):
        raise self.error(f"step limit reached: {self.max_steps:,} steps (bundles and loop "
                         "directives) without reaching halt (an endless loop? raise the limit: "
                         "--max-steps N on the command line, max_steps=N in Python)", pc, cycle)

    def _halt(self, pc, floor, base, fcause):
        """``halt`` takes no slot; it issues when the in-order constraints allow."""
        self.t, self.halt_pc = floor, pc
        if floor > base:
            self.stalls[fcause] += floor - base
        self.counts[pc] += 1
        if self.records is not None:
            self.records += floor, pc, floor - base, fcause if floor > base else -1, self.iters

    def end_cycle(self) -> int:
        """The run's last cycle: halt, or later when everything in flight has completed."""
        return max(self.t, self.dma_all, *self.ld_ports, *self.st_ports, *self.ready, *self.fifo)

