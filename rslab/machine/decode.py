"""Pre-decoding: every program entry becomes a record the simulator's issue loop reads by name.

A bundle becomes a :class:`CompiledBundle`: the register ids it reads and
writes (with each write's latency), the bank-conflict degree of each load and
store, its SFU pushes and pops, its DMA work, its branch, and the closures that
execute its ops (:mod:`rslab.machine.units`, one small interpreter per unit); the
simulator binds each to an issue function (:mod:`rslab.machine.issue`).
Each op also gets an :class:`OpInfo` for the trace. Bundles with the same text
share one decoded form (kernels repeat their loop bodies).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import NamedTuple

import numpy as np

from rslab.machine.errors import MachineError
from rslab.machine.isa import BRANCH_OPS, CHIP_OPS, SPECS
from rslab.machine.memory import port_cycles
from rslab.machine.units import (
    compile_exchange,
    compile_ldst,
    compile_scalar,
    compile_valu,
    compile_xlu,
)


@dataclass(frozen=True, slots=True)
class CompiledBundle:
    """One bundle as the issue loop needs it: everything that does not change between its
    executions, derived once from the bundle's text and the machine (slots: the loop reads
    its fields at every issue, and slot reads are Python's fastest)."""

    srcs: tuple
    """Register ids (vector i → i, scalar i → ``scalar_base + i``) the bundle reads."""
    writes: tuple
    """(register id, latency) of every register the bundle writes."""
    run: tuple
    """Closures executing the ops in bundle order, then those copying scratch destinations
    back (a register read and written in one bundle), in order."""
    loads: tuple
    """Bank-conflict degree k of each load (it holds its port k cycles)."""
    stores: tuple
    """Bank-conflict degree k of each store."""
    pushes: tuple
    """(SFU function, source row) of each push."""
    pops: tuple
    """Destination row of each pop."""
    dmawait: int | None
    """The DMA tag waited for (−1: every DMA), or None."""
    dmas: tuple
    """(dst sreg, src sreg, length sreg, tag, op text) of each ``dma``."""
    branch: tuple | None
    """(kind 0 jmp / 1 bz / 2 bnz, tested sreg, target pc), or None."""
    barrier: tuple | None = None
    """``bar``: (register id of the name, scalar register of the name, count), or None."""


def gather(values: list, index: np.ndarray) -> list:
    """``[values[i] for i in index]``, at NumPy's speed (programs have ~10^5 entries)."""
    table = np.empty(len(values), dtype=object)
    for i, v in enumerate(values):
        table[i] = v
    return table[index].tolist()


class Decoded(NamedTuple):
    """A program decoded for one machine and register file."""

    bundles: list
    """Per distinct bundle: its ``CompiledBundle``."""
    directives: dict
    """pc → its ``LoopEntry``, ``EndLoop`` or ``Halt``."""
    infos: list
    """Per distinct bundle: the ``OpInfo`` of each of its ops."""
    uses: list
    """Per distinct bundle: its ops per slot class."""
    index: np.ndarray
    """Per pc: the index of its bundle among the distinct ones (−1: a directive)."""

    def per_pc(self, per_bundle: list, directive) -> list:
        """``per_bundle`` values (one per distinct bundle) by pc, ``directive`` at
        directives."""
        return gather([*per_bundle, directive], self.index)

    def steps(self, per_bundle: list) -> list:
        """Per pc: the value of ``per_bundle`` (one per distinct bundle) for its bundle, or its
        directive."""
        out = self.per_pc(per_bundle, None)
        for pc, d in self.directives.items():
            out[pc] = d
        return out

    def issues(self, counts: list) -> np.ndarray:
        """Issues of each distinct bundle (int64), from ``counts``, the issues per pc."""
        at = self.index >= 0
        per_pc = np.array(counts[:len(self.index)], dtype=np.int64)
        return np.bincount(self.index[at], weights=per_pc[at],
                           minlength=len(self.infos)).astype(np.int64)


class LoopEntry(NamedTuple):
    """A ``loop`` directive: count from scalar register ``count_reg`` (id ``count_id``, −1 for an
    immediate ``count``), body ending at pc ``end``."""

    count_id: int
    count: int
    end: int


class EndLoop(NamedTuple):
    """An ``endloop`` directive."""


class Halt(NamedTuple):
    """``halt`` (also what running off the end of the program means)."""


class OpInfo(NamedTuple):
    """What the trace knows of one op: text, slot class, result latency, mnemonic, registers."""

    text: str
    slot: str | None
    ready: int | None
    name: str
    reads: tuple
    write: str | None


def reg_reads(op) -> list:
    """The (kind, index) registers an op reads."""
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


def reg_write(op):
    """The (kind, index) register an op writes, or None."""
    spec = SPECS[op.name]
    if spec.sig and spec.sig[0] in ("vd", "sd"):
        return op.operands[0]
    return None


class Decoder:
    """Decodes the entries of one program for one machine and one register file ``ctx``."""

    def __init__(self, program, config, ctx, n_scratch: int):
        self.program, self.config, self.ctx = program, config, ctx
        self.nv, self.ns = config.vregs, config.sregs
        self.scalar_base = self.nv + n_scratch
        self.sfu_fns = {"vexp2": config.exp2_fn, "vexp2.p": config.exp2_precise_fn,
                        "vlog2": config.log2_fn, "vlog2.p": config.log2_precise_fn,
                        "vrcp": config.rcp_fn}

    def uid(self, reg) -> int:
        """The register id of a (kind, index) register."""
        return reg[1] if reg[0] == "v" else self.scalar_base + reg[1]

    def fail(self, message, pc, text=""):
        raise MachineError(message, pc, None, text, self.program.entries[pc].line)

    def check_regs(self, pc, op):
        """Every register an op names exists on this machine."""
        for operand in op.operands:
            if operand is None or operand[0] not in ("v", "s", "mem"):
                continue
            kind, index = ("s", operand[1]) if operand[0] == "mem" else operand
            limit = self.nv if kind == "v" else self.ns
            if index >= limit:
                what = "vector" if kind == "v" else "scalar"
                self.fail(f"unknown register {kind}{index}: the machine has {limit} {what} "
                          "registers", pc, op.text)

    def slot_use(self, pc, entry) -> dict:
        """Ops per slot class of a bundle, checked against the slot table."""
        use = {}
        for op in entry.ops:
            self.check_regs(pc, op)
            slot = SPECS[op.name].slot
            if slot:
                use[slot] = use.get(slot, 0) + 1
        for slot, n in use.items():
            if n > self.config.slots[slot]:
                self.fail(f"bundle needs {n} {slot} slots, the machine has "
                          f"{self.config.slots[slot]}", pc, entry.text)
        return use

    def redirects(self, reads, writes) -> tuple[dict, list]:
        """Destinations also read by another op of the bundle go to scratch registers and are
        copied back after the bundle, so every op sees the old value."""
        redirect, post = {}, []
        scratch = {"v": self.nv, "s": self.ns}
        for i, w in enumerate(writes):
            if w is None or not any(w in r for j, r in enumerate(reads) if j != i):
                continue
            tmp = scratch[w[0]]
            scratch[w[0]] += 1
            redirect[i] = (w[0], tmp)
            post.append(self._copy_back(w[0], tmp, w[1]))
        return redirect, post

    def _copy_back(self, kind, tmp, real):
        if kind == "v":
            return partial(self.ctx.R[real].__setitem__, Ellipsis, self.ctx.R[tmp])
        S = self.ctx.S

        def run():
            S[real] = S[tmp]
        return run

    def bundle(self, pc, entry) -> tuple[CompiledBundle, list, dict]:
        """(compiled bundle, per-op ``OpInfo``, slot use) of one bundle entry."""
        use = self.slot_use(pc, entry)
        reads = [reg_reads(op) for op in entry.ops]
        writes = [reg_write(op) for op in entry.ops]
        redirect, post = self.redirects(reads, writes)
        parts = {"writes": [], "loads": [], "stores": [], "pushes": [], "pops": [], "dmas": [],
                 "execs": [], "dmawait": None, "branch": None, "barrier": None}
        info = []
        for i, op in enumerate(entry.ops):
            dest = redirect.get(i, writes[i])
            ready = self.op(pc, op, dest[1] if dest is not None else None, parts)
            if writes[i] is not None:
                parts["writes"].append((self.uid(writes[i]), ready))
            info.append(OpInfo(op.text, SPECS[op.name].slot, ready, op.name,
                               tuple(f"{r[0]}{r[1]}" for r in reads[i]),
                               f"{writes[i][0]}{writes[i][1]}" if writes[i] is not None
                               else None))
        srcs = tuple(sorted({self.uid(r) for rs in reads for r in rs}))
        loads, stores = tuple(parts["loads"]), tuple(parts["stores"])
        compiled = CompiledBundle(
            srcs, tuple(parts["writes"]), tuple(parts["execs"]) + tuple(post), loads, stores,
            tuple(parts["pushes"]), tuple(parts["pops"]), parts["dmawait"],
            tuple(parts["dmas"]), parts["branch"], parts["barrier"])
        return compiled, info, use

    def op(self, pc, op, d, parts) -> int | None:
        """Decode one op into ``parts``; returns its result latency (None: no result)."""
        spec, name, ctx, cfg = SPECS[op.name], op.name, self.ctx, self.config
        ready = cfg.latency[spec.lat] if spec.lat else None
        if name in CHIP_OPS:
            self.chip_op(pc, op, d, parts)
        elif spec.slot == "valu" and name != "vpop":
            parts["execs"].append(compile_valu(name, d, op.operands[1:], ctx))
        elif name == "vpop":
            parts["pops"].append(ctx.F[d])
        elif spec.slot == "sfu":
            parts["pushes"].append((self.sfu_fns[name], ctx.F[op.operands[0][1]]))
        elif spec.slot == "xlu":
            parts["execs"].append(compile_xlu(name, d, op.operands[1][1], ctx))
        elif spec.slot in ("ld", "st") or name in ("sld", "sst"):
            stride = op.operands[2][1] if name in ("vld.s", "vst.s") else None
            reg = d if d is not None else op.operands[0][1]
            parts["execs"].append(compile_ldst(name, reg, op.operands[1], stride, ctx, op.text))
            if spec.slot in ("ld", "st"):
                k = port_cycles(stride, cfg.lanes, cfg.vmem_banks)
                parts["loads" if spec.slot == "ld" else "stores"].append(k)
                if spec.slot == "ld":
                    ready += k - 1
        elif name in BRANCH_OPS:
            kind = {"jmp": 0, "bz": 1, "bnz": 2}[name]
            parts["branch"] = (kind, op.operands[0][1] if name != "jmp" else -1,
                               op.operands[-1][2])
        elif name == "dma":
            tag = op.operands[3][1] if op.operands[3] is not None else 0
            self.check_tag(tag, 0, pc, op)
            parts["dmas"].append((op.operands[0][1], op.operands[1][1], op.operands[2][1], tag,
                                  op.text))
        elif name == "dmawait":
            tag = op.operands[0][1] if op.operands[0] is not None else -1
            self.check_tag(tag, -1, pc, op)
            parts["dmawait"] = tag
        elif spec.slot == "scalar":
            parts["execs"].append(compile_scalar(name, d, op.operands[1:], ctx))
        else:
            raise AssertionError(name)
        return ready

    def chip_op(self, pc, op, d, parts):
        """Decode an op of the chip (:data:`rslab.machine.isa.CHIP_OPS`) into ``parts``."""
        if self.ctx.exchange is None:
            self.fail(f"{op.name} needs a chip (its exchange and barriers): simulate the "
                      "program on the cores of a chip (simulate_chip, rslab sim --cores N)",
                      pc, op.text)
        if op.name == "bar":
            reg, count = op.operands[0][1], op.operands[1][1]
            parts["barrier"] = (self.uid(op.operands[0]), reg, count)
            return
        reg = d if d is not None else op.operands[0][1]
        parts["execs"].append(compile_exchange(op.name, reg, op.operands[1], self.ctx, op.text))
        if op.name != "sxst":
            parts["loads" if op.name == "xld" else "stores"].append(1)

    def check_tag(self, tag, lowest, pc, op):
        """A DMA tag names one of the machine's tags (``lowest`` −1: ``dmawait`` of all)."""
        if not lowest <= tag < self.config.dma_tags:
            self.fail(f"dma tag {tag} out of range 0..{self.config.dma_tags - 1}", pc, op.text)

    def decode(self, lazy: bool = False) -> Decoded:
        """The program decoded: each distinct bundle text once, at its first pc, and the
        directives at theirs, in pc order (so the first error in the program is the one
        raised). ``lazy``: the bundles are left undecoded (None, no ops, no slots) for
        :meth:`decode_class` to decode when first issued (the program was checked by an
        eager decode on a core before)."""
        entries = self.program.entries
        index, firsts, directives = self.program.bundle_classes
        compiled, infos, uses = [None] * len(firsts), [[]] * len(firsts), [{}] * len(firsts)
        placed = {}
        for pc in sorted(firsts + directives):
            e = entries[pc]
            if e.kind == "bundle":
                if not lazy:
                    i = index[pc]
                    compiled[i], infos[i], uses[i] = self.bundle(pc, e)
            elif e.kind == "loop":
                placed[pc] = self.loop(pc, e)
            else:
                placed[pc] = EndLoop() if e.kind == "endloop" else Halt()
        return Decoded(compiled, placed, infos, uses, index)

    def decode_class(self, decoded: Decoded, i: int):
        """Decode the distinct bundle ``i`` of a lazily ``decoded`` program in place; its
        ``CompiledBundle``."""
        pc = self.program.bundle_classes[1][i]
        decoded.bundles[i], decoded.infos[i], decoded.uses[i] = self.bundle(
            pc, self.program.entries[pc])
        return decoded.bundles[i]

    def loop(self, pc, e) -> LoopEntry:
        kind, value = e.count
        if kind != "s":
            return LoopEntry(-1, value, e.end)
        if value >= self.ns:
            self.fail(f"unknown register s{value}: the machine has {self.ns} scalar registers",
                      pc, e.text)
        return LoopEntry(self.scalar_base + value, value, e.end)
