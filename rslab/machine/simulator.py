"""``simulate(program, config, vmem, hbm, trace) -> Run``: functional and timing simulation.

Timing is the issue model of DESIGN §5. Bundles issue in order; a bundle issues
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

The issue cycle is the max over these, and the stall cycles (issue cycle minus
one plus the previous issue cycle) are charged to the binding constraint (the
first listed above on a tie). Stalls are computed, not ticked, so simulation
time grows with the ops executed, not with cycles. ``halt`` (or running off the
end) takes no slot: the run ends at the cycle ``halt`` would issue or, if later,
when everything in flight has completed (``Run.drain`` is that wait). So
``cycles == bundles + stall cycles + drain``.

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

import numpy as np

from rslab.machine.asm import Program
from rslab.machine.config import MachineConfig
from rslab.machine.isa import BRANCH_OPS, SPECS
from rslab.machine.memory import build_memory, conflict_degree
from rslab.machine.units import (
    MASK32,
    Context,
    OpFault,
    compile_ldst,
    compile_scalar,
    compile_valu,
    compile_xlu,
)

CAUSES = ("raw", "branch", "bank-conflict", "sfu-hold", "fifo-full", "sfu-wait", "dma-wait")
RAW, BRANCH, BANK, HOLD, FULL, WAIT, DMA = range(len(CAUSES))
DEFAULT_MAX_BUNDLES = 20_000_000
_B, _LOOP, _END, _HALT = range(4)


class MachineError(RuntimeError):
    """A runtime error of the simulated machine, with ``pc``, ``cycle`` and the op ``text``."""

    def __init__(self, message: str, pc=None, cycle=None, op: str = ""):
        self.message, self.pc, self.cycle, self.op = message, pc, cycle, op
        where = f"pc {pc}" + (f", cycle {cycle}" if cycle is not None else "")
        super().__init__(f"{message} [{where}: {op!r}]")


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
        from rslab.machine.trace import summary

        return summary(self)


# ---------------------------------------------------------------------------------------------
# Pre-decoding: every entry becomes a tuple the hot loop unpacks; every op a bound closure.


def _reg_reads(op):
    spec = SPECS[op.name]
    out = []
    for kind, operand in zip(spec.sig, op.operands, strict=True):
        if operand is None:
            continue
        k = kind.rstrip("?")
        if k in ("va", "sa") or (k in ("sai", "vai") and operand[0] != "imm"):
            out.append((operand[0], operand[1]))
        elif k == "mem":
            out.append(("s", operand[1]))
    return out


def _reg_write(op):
    spec = SPECS[op.name]
    if spec.sig and spec.sig[0] in ("vd", "sd"):
        return op.operands[0]
    return None


class _Compiler:
    def __init__(self, program, config, ctx, n_scratch):
        self.program, self.config, self.ctx = program, config, ctx
        self.nv, self.ns = config.vregs, config.sregs
        self.voff = self.nv + n_scratch
        self.n_scratch = n_scratch
        self.sfu_fns = {"vexp2": config.exp2_fn, "vexp2.p": config.exp2_precise_fn,
                        "vlog2": config.log2_fn, "vlog2.p": config.log2_precise_fn,
                        "vrcp": config.rcp_fn}

    def uid(self, reg):
        return reg[1] if reg[0] == "v" else self.voff + reg[1]

    def fail(self, message, pc, op):
        raise MachineError(message, pc, None, op.text if op is not None else "")

    def check_regs(self, pc, op):
        for operand in op.operands:
            if operand is None or operand[0] not in ("v", "s", "mem"):
                continue
            kind, index = ("s", operand[1]) if operand[0] == "mem" else operand
            limit = self.nv if kind == "v" else self.ns
            if index >= limit:
                what = "vector" if kind == "v" else "scalar"
                self.fail(f"unknown register {kind}{index}: the machine has {limit} {what} "
                          "registers", pc, op)

    def bundle(self, pc, entry):
        cfg, ctx = self.config, self.ctx
        ops = entry.ops
        use = {}
        for op in ops:
            self.check_regs(pc, op)
            slot = SPECS[op.name].slot
            if slot:
                use[slot] = use.get(slot, 0) + 1
        for slot, n in use.items():
            if n > cfg.slots[slot]:
                raise MachineError(f"bundle needs {n} {slot} slots, the machine has "
                                   f"{cfg.slots[slot]}", pc, None, entry.text)
        reads = [_reg_reads(op) for op in ops]
        writes = [_reg_write(op) for op in ops]
        # A destination read by another op of the same bundle is written to a scratch
        # register and copied back after the bundle, so every op sees the old value.
        redirect = {}
        scratch = {"v": self.nv, "s": self.ns}
        post = []
        for i, w in enumerate(writes):
            if w is None or not any(w in r for j, r in enumerate(reads) if j != i):
                continue
            tmp = scratch[w[0]]
            scratch[w[0]] += 1
            redirect[i] = (w[0], tmp)
            post.append(self._copy_back(w[0], tmp, w[1]))
        srcs = sorted({self.uid(r) for rs in reads for r in rs})
        wr, execs, pushes, pops, dmas = [], [], [], [], []
        ldk, stk = [], []
        branch = None
        dmawait = None
        lat = cfg.latency
        static = []
        for i, op in enumerate(ops):
            spec = SPECS[op.name]
            dest = redirect.get(i, writes[i])
            d = dest[1] if dest is not None else None
            ready = lat[spec.lat] if spec.lat else None
            name = op.name
            if spec.slot == "valu" and name != "vpop":
                execs.append(compile_valu(name, d, op.operands[1:], ctx))
            elif name == "vpop":
                pops.append(ctx.F[d])
            elif spec.slot == "sfu":
                pushes.append((self.sfu_fns[name], ctx.F[op.operands[0][1]]))
            elif spec.slot == "xlu":
                execs.append(compile_xlu(name, d, op.operands[1][1], ctx))
            elif spec.slot in ("ld", "st") or name in ("sld", "sst"):
                stride = None
                if name in ("vld.s", "vst.s"):
                    stride = op.operands[2][1]
                reg = d if d is not None else op.operands[0][1]
                execs.append(compile_ldst(name, reg, op.operands[1], stride, ctx, op.text))
                if spec.slot in ("ld", "st"):
                    k = conflict_degree(stride or 1, cfg.lanes, cfg.vmem_banks)
                    if spec.slot == "ld":
                        ldk.append(k)
                        ready += k - 1
                    else:
                        stk.append(k)
            elif name in BRANCH_OPS:
                reg = self.uid(op.operands[0]) if name != "jmp" else -1
                kind = {"jmp": 0, "bz": 1, "bnz": 2}[name]
                branch = (kind, op.operands[0][1] if reg >= 0 else -1, op.operands[-1][2])
            elif name == "dma":
                tag = op.operands[3][1] if op.operands[3] is not None else 0
                if not 0 <= tag < cfg.dma_tags:
                    self.fail(f"dma tag {tag} out of range 0..{cfg.dma_tags - 1}", pc, op)
                dmas.append((op.operands[0][1], op.operands[1][1], op.operands[2][1], tag,
                             op.text))
            elif name == "dmawait":
                tag = op.operands[0][1] if op.operands[0] is not None else -1
                if not -1 <= tag < cfg.dma_tags:
                    self.fail(f"dma tag {tag} out of range 0..{cfg.dma_tags - 1}", pc, op)
                dmawait = tag
            elif spec.slot == "scalar":
                execs.append(compile_scalar(name, d, op.operands[1:], ctx))
            else:
                raise AssertionError(name)
            if writes[i] is not None:
                wr.append((self.uid(writes[i]), ready))
            static.append((op.text, spec.slot, ready, name,
                           tuple(f"{r[0]}{r[1]}" for r in reads[i]),
                           f"{writes[i][0]}{writes[i][1]}" if writes[i] is not None else None))
        compiled = (_B, tuple(srcs), tuple(wr), tuple(ldk), tuple(stk), len(pushes),
                    tuple(pushes), tuple(pops), dmawait, tuple(dmas), branch, tuple(execs),
                    tuple(post))
        return compiled, static, use

    def _copy_back(self, kind, tmp, real):
        if kind == "v":
            src, dst = self.ctx.R[tmp], self.ctx.R[real]
            return lambda: np.copyto(dst, src)
        S = self.ctx.S

        def run():
            S[real] = S[tmp]
        return run

    def compile(self):
        depth = 0
        compiled, static, uses = [], [], []
        seen = {}  # bundle text -> compiled form: kernels repeat their loop bodies
        for pc, e in enumerate(self.program.entries):
            if e.kind == "bundle":
                if e.text not in seen:
                    seen[e.text] = self.bundle(pc, e)
                c, s, u = seen[e.text]
            elif e.kind == "loop":
                depth += 1
                cnt = e.count
                if cnt[0] == "s":
                    if cnt[1] >= self.ns:
                        self.fail(f"unknown register s{cnt[1]}: the machine has {self.ns} "
                                  "scalar registers", pc, None)
                    c = (_LOOP, self.voff + cnt[1], cnt[1], e.end)
                else:
                    c = (_LOOP, -1, cnt[1], e.end)
                s, u = [], {}
            elif e.kind == "endloop":
                depth -= 1
                c, s, u = (_END,), [], {}
            else:
                c, s, u = (_HALT,), [], {}
            compiled.append(c)
            static.append(s)
            uses.append(u)
        return compiled, static, uses


# ---------------------------------------------------------------------------------------------


def _resolve_sfu(fifo, lanes):
    """Compute the results of the leading run of not-yet-computed FIFO entries in one call."""
    fn = fifo[0][1]
    group = []
    for ent in fifo:
        if ent[3] is not None or ent[1] is not fn:
            break
        group.append(ent)
    out = np.asarray(fn(np.concatenate([g[2] for g in group])), dtype=np.float32)
    for i, g in enumerate(group):
        g[3] = out[i * lanes:(i + 1) * lanes]


def _scalar_word(value, name):
    if isinstance(value, (float, np.floating)):
        return int(np.float32(value).view(np.uint32))
    if isinstance(value, (int, np.integer)) and -(2**31) <= value < 2**32:
        return int(value) & MASK32
    raise ValueError(f"{name}: scalar values must be 32-bit integers or floats, got {value!r}")


def simulate(program: Program, config: MachineConfig | None = None, vmem=None, hbm=None,
             trace: bool = False, *, sregs=None, vregs=None,
             max_bundles: int = DEFAULT_MAX_BUNDLES) -> Run:
    """Run ``program`` and return a ``Run``.

    ``vmem``/``hbm``: ``None``, an array placed at byte 0, or ``{byte_address: array}``
    (any dtype; raw bytes are copied). HBM is just large enough for its data.
    ``sregs``/``vregs``: optional initial registers ``{index: value}`` (scalars: int or
    float; vectors: 128 four-byte elements). ``trace=True`` records the trace.
    ``max_bundles`` stops runaway programs with a ``MachineError``.
    """
    if not isinstance(program, Program):
        raise ValueError(f"program must be a Program (from assemble), got {type(program).__name__}")
    config = MachineConfig() if config is None else config
    if not isinstance(config, MachineConfig):
        raise ValueError(f"config must be a MachineConfig, got {type(config).__name__}")
    if not isinstance(max_bundles, int) or max_bundles < 1:
        raise ValueError(f"max_bundles must be a positive integer, got {max_bundles!r}")
    n_scratch = sum(config.slots.values()) + 2
    L = config.lanes
    R = np.zeros((config.vregs + n_scratch, L), dtype=np.uint32)
    S = [0] * (config.sregs + n_scratch)
    for i, value in (vregs or {}).items():
        if not 0 <= i < config.vregs:
            raise ValueError(f"vregs: register v{i} does not exist")
        words = np.ascontiguousarray(np.asarray(value)).reshape(-1)
        if words.dtype.itemsize != 4 or words.size != L:
            raise ValueError(f"vregs[{i}] must hold {L} four-byte elements")
        R[i] = words.view(np.uint32)
    for i, value in (sregs or {}).items():
        if not 0 <= i < config.sregs:
            raise ValueError(f"sregs: register s{i} does not exist")
        S[i] = _scalar_word(value, f"sregs[{i}]")
    M = build_memory(vmem, config.vmem_bytes, "vmem")
    H = build_memory(hbm, None, "hbm")
    ctx = Context(R, S, M, H)
    compiled, static, uses = _Compiler(program, config, ctx, n_scratch).compile()
    counts = [0] * (len(compiled) + 1)
    records = [] if trace else None
    dma_events = [] if trace else None
    with np.errstate(all="ignore"):
        state = _execute(program, config, ctx, compiled, counts, records, dma_events,
                         max_bundles, n_scratch)
    ops = sum(c * len(s) for c, s in zip(counts, static, strict=False))
    slot_use = dict.fromkeys(config.slots, 0)
    for c, u in zip(counts, uses, strict=False):
        for slot, n in u.items():
            slot_use[slot] += c * n
    run = Run(program=program, config=config, cycles=state["cycles"],
              stalls=dict(zip(CAUSES, state["stalls"], strict=True)), ops=ops,
              bundles=state["bundles"], slot_use=slot_use, drain=state["drain"],
              fifo_left=state["fifo_left"], vmem=M, hbm=H, counts=counts,
              _R=R, _S=S, trace=None)
    if trace:
        from rslab.machine.trace import Trace

        run.trace = Trace(run, records, static, dma_events, state["halt_cycle"])
    return run


def _execute(program, config, ctx, compiled, counts, records, dma_events, max_bundles,
             n_scratch):
    S, M, H = ctx.S, ctx.M, ctx.H
    L = config.lanes
    n_entries = len(compiled)
    ready = [0] * (config.vregs + config.sregs + 2 * n_scratch)
    stalls = [0] * len(CAUSES)
    lat_pop = config.latency["pop"]
    lat_sfu = config.latency["sfu"]
    hold = config.sfu_hold
    depth = config.fifo_depth
    penalty = config.branch_penalty
    loop_depth = config.loop_depth
    dma_lat, dma_bw = config.dma_latency, config.dma_bytes_per_cycle
    vmem_bytes, hbm_bytes = M.size * 4, H.size * 4
    fifo, credits = deque(), deque()
    stack = []
    dma_tag = [0] * config.dma_tags
    dma_all = dma_free = 0
    ld_ports = [0] * config.slots["ld"]  # cycle each port is free again, ascending
    st_ports = [0] * config.slots["st"]
    sfu_free = 0
    pc = base = floor = t = 0
    fcause = -1
    nb = 0
    tracing = records is not None
    entries = program.entries
    try:
        while True:
            e = compiled[pc] if pc < n_entries else (_HALT,)
            kind = e[0]
            if kind == _B:
                (_, srcs, wr, ldk, stk, npush, pushes, pops, dmaw, dmas, br, execs,
                 post) = e
                t = floor
                cause = fcause
                for r in srcs:
                    x = ready[r]
                    if x > t:
                        t = x
                        cause = RAW
                if ldk and ld_ports[len(ldk) - 1] > t:
                    t = ld_ports[len(ldk) - 1]
                    cause = BANK
                if stk and st_ports[len(stk) - 1] > t:
                    t = st_ports[len(stk) - 1]
                    cause = BANK
                if npush:
                    if sfu_free > t:
                        t = sfu_free
                        cause = HOLD
                    while credits and credits[0] <= t:
                        credits.popleft()
                    need = len(fifo) + len(credits) + npush - depth
                    if need > 0:
                        if need > len(credits):
                            raise MachineError(
                                f"SFU FIFO overflow: push into a full FIFO (depth {depth}) that "
                                "no earlier pop frees; the in-order core would deadlock",
                                pc, t, entries[pc].text)
                        x = credits[need - 1]
                        if x > t:
                            t = x
                            cause = FULL
                if pops:
                    npop = len(pops)
                    if len(fifo) < npop:
                        raise MachineError(
                            "vpop on an empty SFU FIFO with nothing in flight (deadlock)",
                            pc, t, entries[pc].text)
                    x = fifo[npop - 1][0]
                    if x > t:
                        t = x
                        cause = WAIT
                if dmaw is not None:
                    x = dma_all if dmaw < 0 else dma_tag[dmaw]
                    if x > t:
                        t = x
                        cause = DMA
                if t > base:
                    stalls[cause] += t - base
                taken = False
                if br is not None:
                    bkind = br[0]
                    taken = bkind == 0 or (S[br[1]] == 0) == (bkind == 1)
                for row in pops:
                    ent = fifo.popleft()
                    if ent[3] is None:
                        fifo.appendleft(ent)
                        _resolve_sfu(fifo, L)
                        fifo.popleft()
                    np.copyto(row, ent[3])
                    credits.append(t + lat_pop)
                for fn, src in pushes:
                    fifo.append([t + lat_sfu, fn, src.copy(), None])
                for f in execs:
                    f()
                for f in post:
                    f()
                for r, lat in wr:
                    ready[r] = t + lat
                if ldk:
                    ld_ports[:len(ldk)] = [t + k for k in ldk]
                    ld_ports.sort()
                if stk:
                    st_ports[:len(stk)] = [t + k for k in stk]
                    st_ports.sort()
                if npush:
                    sfu_free = t + 1 + hold
                if dmas:
                    for sd, ss, sl, tag, text in dmas:
                        d, s, n = S[sd], S[ss], S[sl]
                        if d & 3 or s & 3 or n & 3:
                            raise OpFault(f"dma addresses and length must be multiples of 4 "
                                          f"(dst {d}, src {s}, len {n})", text)
                        if d + n > vmem_bytes or s + n > hbm_bytes:
                            raise OpFault(f"dma of {n} bytes HBM[{s}] → VMEM[{d}] out of bounds "
                                          f"(VMEM {vmem_bytes} B, HBM {hbm_bytes} B)", text)
                        M[d >> 2:(d + n) >> 2] = H[s >> 2:(s + n) >> 2]
                        start = max(t, dma_free)
                        dur = -(-n // dma_bw)
                        dma_free = start + dur
                        done = start + dma_lat + dur
                        if done > dma_tag[tag]:
                            dma_tag[tag] = done
                        if done > dma_all:
                            dma_all = done
                        if tracing:
                            dma_events.append((pc, t, start, done, n, tag))
                counts[pc] += 1
                nb += 1
                if tracing:
                    records.append((t, pc, t - base, cause if t > base else -1,
                                    tuple(s[2] for s in stack)))
                if nb >= max_bundles:
                    raise MachineError(f"bundle limit {max_bundles} reached (endless loop?)",
                                       pc, t, entries[pc].text)
                base = floor = t + 1
                fcause = -1
                if taken:
                    floor = t + 1 + penalty
                    fcause = BRANCH
                    pc = br[2]
                else:
                    pc += 1
            elif kind == _LOOP:
                _, creg, value, end = e
                if creg >= 0:
                    n = S[value]
                    if ready[creg] > floor:
                        floor = ready[creg]
                        fcause = RAW
                else:
                    n = value
                if n == 0:
                    pc = end + 1
                else:
                    if len(stack) >= loop_depth:
                        raise MachineError(f"hardware loops nested deeper than loop_depth = "
                                           f"{loop_depth}", pc, floor, entries[pc].text)
                    stack.append([pc + 1, n, 0])
                    pc += 1
            elif kind == _END:
                top = stack[-1]
                top[2] += 1
                if top[2] < top[1]:
                    pc = top[0]
                else:
                    stack.pop()
                    pc += 1
            else:
                t = floor
                if t > base:
                    stalls[fcause] += t - base
                counts[min(pc, n_entries)] += 1
                if tracing:
                    records.append((t, min(pc, n_entries), t - base,
                                    fcause if t > base else -1, tuple(s[2] for s in stack)))
                break
    except OpFault as fault:
        raise MachineError(fault.message, pc, t, fault.text) from None
    end = max([t, dma_all, *ld_ports, *st_ports, max(ready)] + [ent[0] for ent in fifo])
    return {"cycles": end, "stalls": stalls, "bundles": nb, "drain": end - t,
            "fifo_left": len(fifo), "halt_cycle": t}
