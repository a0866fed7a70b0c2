"""What every kernel lab shares: the VMEM layout, the inputs of a variant, the contract's text.

**Layout** (byte addresses, the same for every lab and variant; each region sized for the
largest vocabulary, :data:`~rslab.labs.variants.V_MAX`): the packed BF16 logits row at
``ROW``, the draft probabilities q (float32) at ``Q``, the stored e (float32) at ``E``,
the block sums at ``SUMS`` (after 16 bytes a pipelined pass may store into), a scratch
area every lab may read and write at ``SCRATCH``. A region's extent for a variant is its
bytes per token times the padded row (P packed vectors, a multiple of 8).

**Padding past V**: the row is packed as :mod:`rslab.machine.bf16` packs it (lane l of
packed vector b holds tokens 256b + l and 256b + 128 + l) and padded to P packed vectors
with BF16 −inf; q and e are padded with 0. So the tokens past V are masked by the host:
a logit of −inf weighs exp2(−inf) = 0, scores −inf and never wins a max. A kernel must
cover every packed vector that holds a token below V (⌈V/256⌉ of them) and may read up to
the padded end, not beyond.

**Live-in registers** at the start (the rest are 0): ``s1`` ROW, ``s2`` Q, ``s3`` the row's
key (the Fast path's hardware-RNG key for this row's purpose), ``s6`` SUMS, ``s7`` E,
``s8`` the row max m and ``s9`` r = 1/s (float32 bits), ``s10`` V. HBM is empty.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from rslab.kernels.loops.emit import emit_loop
from rslab.kernels.studies.draw_table import row_inputs, row_weights
from rslab.labs.variants import PAD_TOKENS, V_MAX, Variant
from rslab.machine.asm import f32_bits
from rslab.machine.bf16 import BLOCK, pack_rows, round_to_bf16
from rslab.machine.guard import Guard
from rslab.randomness import fast_key
from rslab.schedule import SlotModel

P_MAX = -(-V_MAX // PAD_TOKENS) * PAD_TOKENS // BLOCK
"""Packed vectors of the longest padded row."""
ROW = 0
Q = ROW + 512 * P_MAX
E = Q + 1024 * P_MAX
SUMS_START = E + 1024 * P_MAX
"""The block-sum region: 16 bytes a software-pipelined pass may store into, then the sums."""
SUMS = SUMS_START + 16
SCRATCH = 2 * 1024 * 1024
SCRATCH_BYTES = 1024 * 1024
TAIL_HEAVY = 8.0
"""Added to the logits of a V that is not a multiple of 256 in its last, partial packed
vector (the tail), whose last token is then set 1 above the row's maximum: the tail is
raised, and the row's largest logit is its last token."""
REQUEST, POSITION = 1, 0
"""The row's place in the batch, for its key."""
LIVE_INS = {"s1": ("row", ROW), "s2": ("q", Q), "s6": ("sums", SUMS), "s7": ("e", E)}
COUNT = "s11"
"""The scalar register the starting kernels count their iterations in."""


@dataclass(frozen=True)
class Region:
    """A VMEM region of the contract: ``name``, ``address``, ``bytes_per_token`` of the padded
    row, the live-in ``register`` holding its address, and what it holds."""

    name: str
    address: int
    bytes_per_token: Fraction
    register: str
    holds: str
    lead: int = 0
    """Bytes before ``address`` that belong to the region (a pipelined store's first)."""

    def extent(self, variant: Variant) -> tuple[int, int, str]:
        end = self.address + int(self.bytes_per_token * variant.packed * BLOCK)
        return self.address - self.lead, end, self.name


LOGITS = Region("the row", ROW, Fraction(2), "s1",
                "the logits, packed BF16 (512 bytes per 256 tokens), −inf past V")
QROW = Region("q", Q, Fraction(4), "s2", "the draft probabilities, float32, 0 past V")
EROW = Region("e", E, Fraction(4), "s7",
              "e = exp2((l − m)·LOG2E) of every token, float32 as the sum-exp pass "
              "stored it (token order), 0 past V")
SUMROW = Region("the block sums", SUMS, Fraction(4, 128), "s6",
                "block j's float32 sum of weights (tokens 128j … 128j + 127) at SUMS + 4j",
                lead=16)
SCRATCH_REGION = (SCRATCH, SCRATCH + SCRATCH_BYTES, "scratch")


@dataclass
class Inputs:
    """A variant's inputs: the VMEM image, the live-in scalars and the row's data."""

    vmem: dict
    sregs: dict
    data: dict = field(default_factory=dict)


def row_case(variant: Variant, purpose: int) -> dict:
    """The row of ``variant``: BF16 logits, q, and what the reference derives from them
    (:func:`rslab.kernels.studies.draw_table.row_weights`), the row's key; a V that is not a
    multiple of 256 gets its last, partial packed vector raised and its largest logit at its
    last token (:data:`TAIL_HEAVY`)."""
    base = row_inputs(variant.vocab, variant.seed)
    logits = base["logits"].copy()
    if variant.tail_heavy:
        logits[variant.vocab // BLOCK * BLOCK:] += np.float32(TAIL_HEAVY)
        logits = max_at(logits, -1)
    data = row_weights(logits, base["q"])
    data["key"] = int(fast_key(variant.seed, REQUEST, POSITION, purpose)[0])
    data["seed"] = variant.seed
    return data


def max_at(logits, token: int) -> np.ndarray:
    """A copy of ``logits`` whose ``token`` is the row's largest: 1 above its maximum, in
    BF16."""
    out = np.array(logits, dtype=np.float32)
    out[token] = round_to_bf16(out.max() + np.float32(1))
    return out


def padded(values, variant: Variant, fill: float) -> np.ndarray:
    """``values`` (float32) padded with ``fill`` to the variant's padded row."""
    out = np.full(variant.packed * BLOCK, fill, dtype=np.float32)
    values = np.asarray(values, dtype=np.float32).reshape(-1)
    out[:values.size] = values
    return out


def inputs_of(variant: Variant, data: dict) -> Inputs:
    """Every region's image and the live-in registers for the row ``data``."""
    vmem = {ROW: pack_rows(padded(data["logits"], variant, -np.inf)),
            Q: padded(data["q"], variant, 0.0), E: padded(data["bonus"], variant, 0.0)}
    sregs = {1: ROW, 2: Q, 3: data["key"], 6: SUMS, 7: E, 8: int(f32_bits(data["m"]), 0),
             9: int(f32_bits(data["r"]), 0), 10: variant.vocab}
    return Inputs(vmem, sregs, data)


def runtime_loop(body, count_lines: list, carried: dict, pool: list) -> list:
    """A ``naive`` loop of ``body`` (one op per bundle, :mod:`rslab.kernels.loops.emit`) whose
    trip count is computed at run time into :data:`COUNT` by ``count_lines``."""
    loop = emit_loop(body, 1, "naive", carried=carried, pool=pool, model=SlotModel())
    lines = loop.text.rstrip("\n").split("\n")
    if lines[0] != "loop 1" or lines[-1] != "endloop" or any(
            line.startswith("loop") for line in lines[1:]):
        raise AssertionError("a naive loop is one hardware loop")
    return count_lines + [f"loop {COUNT}"] + lines[1:]


def count_lines(packed_per_iteration: int) -> list:
    """``COUNT`` = the iterations of a loop over the padded row, from V in ``s10``:
    P = ⌈V/2048⌉·8 packed vectors, over ``packed_per_iteration`` of them."""
    shift = 3 - int(np.log2(packed_per_iteration))
    if 2 ** int(np.log2(packed_per_iteration)) != packed_per_iteration or shift < 0:
        raise ValueError("packed_per_iteration must be 1, 2, 4 or 8")
    return [f"sadd {COUNT}, s10, {PAD_TOKENS - 1}", f"sshr {COUNT}, {COUNT}, 11",
            f"sshl {COUNT}, {COUNT}, {shift}"]


class Lab:
    """A kernel lab: its contract, inputs, reference check, book and starting kernels, bound.

    A lab module defines a subclass with ``name``, ``title``, ``chapter``, ``task``,
    ``inputs`` (the readable :class:`Region` s), ``outputs`` (writable regions), ``results``
    (output registers and what they hold), ``purpose`` (the key's), ``per_packed`` (ops
    every correct kernel issues per packed vector, by slot class: the task's bound),
    ``comparison`` (how outputs are compared), and the methods :meth:`check`,
    :meth:`book_kernel` and :meth:`starting_kernel`.
    """

    name = title = chapter = task = comparison = ""
    inputs: tuple = ()
    outputs: tuple = ()
    results: dict = {}
    live: tuple = ("s10",)
    purpose = 0
    per_packed: dict = {}
    bound_note = ""

    def case(self, variant: Variant) -> Inputs:
        return inputs_of(variant, row_case(variant, self.purpose))

    def probes(self, variant: Variant, case: Inputs) -> tuple:
        """More inputs a kernel must be right on (checked, not timed): none, unless an
        answer rests on a few tokens of the row."""
        return ()

    def guard(self, variant: Variant) -> Guard:
        writable = tuple(r.extent(variant) for r in self.outputs) + (SCRATCH_REGION,)
        return Guard(readable=tuple(r.extent(variant) for r in self.inputs),
                     writable=writable)

    def bound(self, variant: Variant) -> tuple[int, str]:
        """(cycles, binding unit): the task's bound, ``per_packed`` ops on each packed vector
        that holds tokens below V, over the machine's slots (an SFU push books its unit
        1 + hold cycles)."""
        cfg = variant.config
        per = {}
        for unit, ops in self.per_packed.items():
            busy = ops * (1 + cfg.sfu_hold) if unit == "sfu" else ops
            per[unit] = -(-busy * variant.covered // cfg.slots[unit])
        unit = max(per, key=per.get)
        return per[unit], unit

    def check(self, run, case: Inputs, variant: Variant) -> str | None:
        """None when the run's outputs are right, else what is wrong (one line)."""
        raise NotImplementedError

    def book_kernel(self, variant: Variant, case: Inputs) -> str:
        """The book's kernel built for ``variant`` (its V, its machine, its inputs)."""
        raise NotImplementedError

    def starting_kernel(self) -> str:
        """The first translation: correct for every variant, one op per bundle."""
        raise NotImplementedError

    # ------------------------------------------------------------------ the contract's text
    def live_in_text(self) -> list[str]:
        regs = {r.register: f"{r.name} at byte {r.address:,}" for r in self.inputs + self.outputs}
        names = {"s3": "the row's key (its hardware-RNG words: vrand with counter = token)",
                 "s8": "the row max m (float32 bits)", "s9": "r = 1/s (float32 bits)",
                 "s10": "V, the vocabulary (an integer)"}
        regs |= {r: names[r] for r in self.live}
        return [f"  {r:<4} {what}" for r, what in sorted(regs.items(), key=lambda x: int(x[0][1:]))]

    def spec(self, ladder, variants, hidden: bool) -> str:
        """The contract ``rslab grade NAME --spec`` prints."""
        bound_unit = ", ".join(f"{n} {u}" for u, n in self.per_packed.items())
        rows = [f"{self.name}: {self.title} ({self.chapter})", "", self.task, "",
                "Inputs (VMEM byte addresses; the same for every variant):"]
        rows += [f"  [{r.address:,} …)  {r.name}: {r.holds}" for r in self.inputs]
        rows += ["Live-in registers at the start (all others are 0):"] + self.live_in_text()
        rows += ["Outputs:"] + [f"  {reg}: {what}" for reg, what in self.results.items()]
        rows += [f"  [{r.address - r.lead:,} …)  {r.name}: {r.holds}" for r in self.outputs]
        rows += ["", "Padding past V: the row is padded to P = ⌈V/2048⌉·8 packed vectors (a "
                 "multiple of 8): logits past V are BF16 −inf, q and e are 0. The host masks "
                 "the tokens past V this way (weight exp2(−inf) = 0, score −inf); your "
                 "kernel must cover the ⌈V/256⌉ packed vectors that hold tokens below V and "
                 "may read up to the padded end, not beyond.",
                 "", f"Compared with the reference: {self.comparison}",
                 "", "Memory: loads only from the input regions (up to the padded end), the "
                 "output regions and the scratch area "
                 f"[{SCRATCH:,}, {SCRATCH + SCRATCH_BYTES:,}); stores only to the output "
                 "regions and the scratch area. Anything else stops the run (one line naming "
                 "your line). No dma (HBM is empty).",
                 "", "Submit a whole program (assembly, rslab sim's syntax; halt at the end), "
                 "or a loop body in rslab pipeline's format (a file with '=' outside "
                 "comments). A body is scheduled for each variant's machine and run for the "
                 "padded row: the grader sets its trip count to P·256 / (tokens per "
                 "iteration), the tokens per iteration read off the stride of its memory "
                 "operands on the contract's registers (s1 the row: 2 bytes a token; s2 q, "
                 "s7 e: 4; s6 sums: 4 bytes per 128 tokens); set your bases in before: lines "
                 "or use the live-ins; the after: lines leave the outputs. A whole program "
                 "runs unchanged on every variant: it reads V from s10.",
                 "", f"Starting kernel (rslab grade {self.name} --starting-kernel): the first "
                 "translation, correct on every variant, one op per bundle; it passes with a "
                 "low score.",
                 f"Task bound: {bound_unit} per packed vector that holds tokens (⌈V/256⌉ of them), "
                 f"over the machine's slots (an "
                 f"SFU push holds its unit 1 + hold cycles). {self.bound_note}",
                 "", "Ladder: " + ladder.text(), "",
                 "Variants: your kernel is graded on variants you do not have: other seeds, "
                 "other V (not only multiples of 256; for such a V the row's last, partial "
                 "packed vector is raised and the row's largest logit is its last token) "
                 "and "
                 "machines with other latencies and "
                 "slots (a body is rescheduled for them; a whole program runs unchanged: a "
                 "variant never has fewer slots of a kind, a shallower SFU FIFO, fewer "
                 "registers or loop levels than the book's machine, so a program that runs "
                 "there runs on every variant). The book's kernel, built for each variant, "
                 "sets the "
                 "ladder there. A step limit of 20 times the starting kernel's bundles (plus "
                 "10,000) stops a kernel that does not halt.",
                 "The variants " + ("of the instructor's file (hidden)" if hidden else
                                    "graded here (public):")]
        if not hidden:
            rows += [f"  {v.describe()}" for v in variants]
        rows += ["", "The starting kernel:", ""] + [
            f"  {line}" for line in self.starting_kernel().rstrip("\n").splitlines()]
        return "\n".join(rows) + "\n"
