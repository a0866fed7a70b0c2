"""Where the chip's sampler keeps its data: each core's window, its arguments, the exchange.

**A core's window.** The host hands each core its inputs: the rows it serves, cut to its
slice of the vocabulary, laid out as the one-core sampler's HBM image
(:class:`~rslab.kernels.sampler.layout.SamplerLayout`) for that many requests and that
vocabulary: the logits of its rows (packed BF16), their q, the draft tokens as indices into
its slice (a token outside it reads as 0, with an owner flag of 0 in the arguments), the
Fast path's keys of the *global* requests and positions. The chip's HBM holds every core's
window one after the other, and each core's DMA addresses start at its window
(:func:`rslab.machine.chip.simulate_chip`'s ``windows``): a core reads exactly the bytes of
the task it serves (a tensor-parallel LM head leaves its logits sharded by vocabulary this
way). In parallel mode a core serves *entries*, one row each (:class:`EntryLayout`).

**A core's arguments** (VMEM, written by the host before the launch, :meth:`ChipLayout.args`):
the byte address of its group's rows in the exchange, its lane (×4), the token index of its
slice's first token, its group's barrier name, the exchange address of its rows' final
tokens, and per row an owner flag (and in parallel mode the exchange addresses of the
entry's acceptance flag and token).

**The exchange** (:class:`ExchangeMap`): per group of more than one core, eleven rows of 128
words whose lane k is the group's core k, and whose lanes past the group's cores hold the
neutral value of their merge (−∞ for a max, 0 for a sum: the host's initial words). A row
is written again only once a barrier has followed every core's read of it, so the merges
that follow one another use different rows: ``amax`` (a row max, max-first), two banks
``m``, ``s``, ``l``, ``q`` (a part's max, its sum, the draft token's logit and q(x); the
checks of positions s use bank s mod 2), ``bmax`` (a fixed row's largest block sum) and a
fixed row's five digits in ``DIGIT_ROWS`` (bank 1's and ``dx``: two merges after any check
that used bank 1). Then the final tokens of sequential mode, one word per request; and in
parallel mode per chunk of 128 requests (lane r) the rows ``acc`` (s), ``res`` (s),
``bon``, ``draft`` (s, the host's), and the outputs ``out`` (s = 0 … S) and ``nacc``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rslab.kernels.ops.fixed_point import DIGITS
from rslab.kernels.sampler.layout import SamplerLayout
from rslab.machine.bf16 import LANES, pack_rows
from rslab.randomness import PURPOSES, fast_key

ROW = 4 * LANES
ROWS = ("amax", "m0", "s0", "l0", "q0", "m1", "s1", "l1", "q1", "bmax", "dx")
DIGIT_ROWS = ("s1", "q1", "l1", "m1", "dx")
"""The rows of a fixed row's five digits (least significant first)."""
MAX_ROWS = ("amax", "m0", "l0", "m1", "l1")
"""The rows merged by a max (−∞ in the lanes past a group's cores)."""
NEG_INF = 0xFF800000
ARG_XBASE, ARG_LANE, ARG_VOCAB, ARG_BARRIER, ARG_TOK = 0, 4, 8, 12, 16
ARG_ROWS = 32
"""Byte offsets of the arguments; the per-row words start at ``ARG_ROWS``."""
SELECTION_BARRIER = 0xFFFF
"""The name of the barrier of every core before parallel mode's selection."""


@dataclass(frozen=True)
class ChipLayout(SamplerLayout):
    """A core's :class:`SamplerLayout` (R requests, S drafts, its slice of ``V`` tokens) with
    the rows of the core-level prefix of a split fixed row and ``rows`` rows' arguments."""

    rows: int = 0

    @property
    def vm_core_prefix(self) -> int:
        """The group's prefix rows of a split fixed row (a 0 word before lane 0 each)."""
        return SamplerLayout.vmem_end.fget(self)

    def core_prefix(self, j: int) -> int:
        return self.vm_core_prefix + j * (ROW + 4) + 4

    @property
    def vm_args(self) -> int:
        return self.vm_core_prefix + DIGITS * (ROW + 4)

    def arg_owner(self, i: int) -> int:
        return self.vm_args + ARG_ROWS + 4 * i

    def arg_slot(self, i: int, which: int) -> int:
        """Parallel mode: entry i's exchange address of its flag (0) or token (1); sequential
        mode (0): row i's draft token (its index in the vocabulary)."""
        return self.vm_args + ARG_ROWS + 4 * self.rows + 8 * i + 4 * which

    @property
    def vm_online(self) -> int:
        """An online merge's own max (a word), then its factor (a vector, 512 bytes on)."""
        return -(-(self.vm_args + ARG_ROWS + 12 * self.rows) // ROW) * ROW

    @property
    def vm_product(self) -> int:
        """The rows of :func:`~rslab.kernels.ops.fixed_point.product_vector_lines`."""
        return self.vm_online + 2 * ROW

    @property
    def vmem_end(self) -> int:
        return self.vm_product + 6 * ROW


@dataclass(frozen=True)
class EntryLayout(ChipLayout):
    """Parallel mode: ``R`` entries, each one row (a check, or a bonus row), ``S`` = 1: the
    entry's logits at position 0 (its only row in HBM), its q, its draft token, its keys."""

    def hbm_row(self, r: int, s: int) -> int:
        return self.hbm_logits + r * self.row_bytes

    @property
    def hbm_q(self) -> int:
        return self.R * self.row_bytes

    @property
    def hbm_ids(self) -> int:
        return self.hbm_q + self.R * self.q_row_bytes

    def hbm_q_row(self, r: int, s: int) -> int:
        return self.hbm_q + r * self.q_row_bytes


@dataclass(frozen=True)
class Outputs:
    """Parallel mode's rows of the exchange from byte ``par``: per chunk of 128 requests (lane
    r) ``acc`` (s), ``res`` (s), ``bon``, ``draft`` (s), ``out`` (s = 0 … S) and ``nacc``."""

    par: int
    R: int
    S: int

    @property
    def chunks(self) -> int:
        return -(-self.R // LANES)

    @property
    def size(self) -> int:
        return self.chunks * (4 * self.S + 3) * ROW

    def _row(self, r: int, index: int) -> int:
        return self.par + ((r // LANES) * (4 * self.S + 3) + index) * ROW + 4 * (r % LANES)

    def acc(self, r: int, s: int) -> int:
        return self._row(r, s)

    def res(self, r: int, s: int) -> int:
        return self._row(r, self.S + s)

    def bon(self, r: int) -> int:
        return self._row(r, 2 * self.S)

    def draft(self, r: int, s: int) -> int:
        return self._row(r, 2 * self.S + 1 + s)

    def out(self, r: int, s: int) -> int:
        return self._row(r, 3 * self.S + 1 + s)

    def nacc(self, r: int) -> int:
        return self._row(r, 4 * self.S + 2)


class ExchangeMap:
    """Byte addresses in the exchange of a plan (module docstring) and its initial words."""

    def __init__(self, plan):
        self.plan = plan
        offset, self.group = 0, {}
        for g in plan.groups:
            if g.size > 1:
                self.group[g.index] = offset
                offset += len(ROWS) * ROW
        self.tok = offset
        offset += -(-4 * plan.R // ROW) * ROW
        self.outputs = Outputs(offset, plan.R, plan.S)
        self.size = offset + (self.outputs.size if plan.mode == "parallel" else 0)

    def row(self, g: int, name: str) -> int:
        return self.group[g] + ROWS.index(name) * ROW

    def initial(self, draft_token_ids) -> dict:
        """``{address: words}``: −∞ in the rows merged by a max, the drafts (parallel)."""
        out = {}
        for g in self.group:
            for name in MAX_ROWS:
                out[self.row(g, name)] = np.full(LANES, NEG_INF, np.uint32)
        if self.plan.mode == "parallel":
            ids, o = np.asarray(draft_token_ids), self.outputs
            for c in range(o.chunks):
                for s in range(self.plan.S):
                    lanes = ids[c * LANES:(c + 1) * LANES, s].astype(np.uint32)
                    out[o.draft(c * LANES, s)] = lanes
        return out


def window_image(layout: ChipLayout, rows, lo: int, hi: int, inputs, seed: int) -> tuple:
    """``({address: array} of the window, owner flags)`` of a core serving ``rows`` — the
    requests (sequential: ``(r, 0)``, every position) or the entries (parallel: ``(r, s)``)
    — on tokens ``lo`` … ``hi − 1``."""
    l, q, ids = inputs
    S = q.shape[1]
    x = np.asarray(ids)
    if isinstance(layout, EntryLayout):
        logits = np.stack([l[r, s, lo:hi] for r, s in rows])
        qq = np.stack([q[r, s, lo:hi] if s < S else np.zeros(hi - lo, np.float32)
                       for r, s in rows])
        drafts = np.array([x[r, s] if s < S else lo for r, s in rows])
        keys = np.array([[fast_key(seed, r, s, p) for p in sorted(PURPOSES.values())]
                         for r, s in rows for _ in (0, 1)])
        owner = (lo <= drafts) & (drafts < hi)
        local = np.where(owner, drafts - lo, 0).reshape(-1, 1)
        tables = _tables(local, keys, layout)
        return ({layout.hbm_logits: pack_rows(logits), layout.hbm_q: qq,
                 layout.hbm_ids: tables}, owner.reshape(-1))
    req = [r for r, _ in rows]
    drafts = x[req]
    owner = (lo <= drafts) & (drafts < hi)
    rr, ss = np.meshgrid(req, np.arange(S + 1), indexing="ij")
    keys = np.stack([fast_key(seed, rr.reshape(-1), ss.reshape(-1), p)
                     for p in sorted(PURPOSES.values())], axis=-1)
    image = layout.image(l[req, :, lo:hi], q[req, :, lo:hi],
                         np.where(owner, drafts - lo, 0), keys, seed)
    return image, owner.reshape(-1)


def _tables(ids, keys, layout) -> np.ndarray:
    """The tables' words (ids, keys, the unused Philox seed) as the layout reads them."""
    words = np.concatenate([ids.astype(np.uint32).reshape(-1),
                            keys.astype(np.uint32).reshape(-1), np.zeros(2, np.uint32)])
    if 4 * words.size > layout.table_bytes:
        raise AssertionError("the tables outgrow the layout")
    return words


