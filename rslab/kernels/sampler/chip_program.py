"""The sampler on the cores of a chip: the program of one core of a group.

A group of K cores serves rows (:mod:`rslab.kernels.sampler.chip_plan`); each core runs the
one-core sampler's program (:mod:`rslab.kernels.sampler.program`, its loops, its DMAs ahead,
its fixed-point inverse-CDF rows, the draw ``("fixed", "u96")``) on its window
(:mod:`rslab.kernels.sampler.chip_layout`), and where a row is split (K > 1) the cores merge
what they computed through the exchange, one barrier per merge:

* **the row max** merges exactly (a max in any order); ``max-first`` merges it before the
  sum-exp pass, so that every core's ``e`` is the one-core program's;
* **the sum s** of the check merges with the draft token's logit and q(x) (only the core
  whose slice holds x has them; the others send −∞ and 0) in one round: after it every core
  holds m, s, l_x and q(x) and takes the same acceptance decision. ``online`` merges the
  local maxima with the sums in that one round instead (one barrier fewer):
  ``s = Σ exp2((m_k − m)·LOG2E)·s_k``; each core keeps its own max and ``exp2((m_k −
  m)·LOG2E)·(1/s)`` for its residual weights (:mod:`rslab.numerics.split_sum` states both);
* **a fixed-point row** (:class:`SplitFixedRow`) merges its largest block sum (every core
  quantises against the row's), then each core's exact integer total: the five digits of
  every core form a vector whose exclusive scan over the lanes is every core's offset and
  whose total is Q; every core computes ``X₁ = ⌊U₁·Q/2^96⌋`` and the core whose range
  holds it draws the block (its groups' prefixes plus its offset) and the lane, and writes
  the token (plus its slice's first token index) into the exchange. Only integers cross the
  cores, so the token is the one-core program's for every input.

**Sequential mode**: the one-core program's order (positions in order, out at the first
rejection, the bonus row after S acceptances); the group's cores take the same branches.
On a chip the HBM binds, so what a core fetches ahead is a guess that costs bandwidth when
it is wrong. A split row's check (few requests: latency) guesses a rejection by default
(``guess="reject"``): it fetches its whole q row ahead, before the next position's row, and a
residual waits for no transfer the check could have overlapped (an acceptance has fetched a
q row it does not use). With ``guess="accept"`` it fetches the next position's row ahead
instead, and a residual waits for its q row. A core serving whole requests (many requests:
throughput) always guesses an acceptance: it fetches the next row ahead, as the one-core
program does, but no q before a rejection needs it.
**Parallel mode** (:meth:`ChipBuilder.build_parallel`): a core's *entries* one after the
other — a check (row max, sum-exp, p(x), the acceptance flag) and its residual drawn
whatever the flag, or a bonus row — with the next entry's logits and the q row fetched
ahead; each entry's flag and token go to the exchange; then every core meets at one
barrier and core 0 selects, for every request at once (one lane each), the first rejection:
the tokens and the count of accepted drafts.
"""

from __future__ import annotations

from functools import lru_cache

from rslab.kernels.loops.pack import pack_lines
from rslab.kernels.ops.fixed_point import (
    DIGITS,
    LIMBS,
    carry_lines,
    exponent_lines,
    greater_lines,
    limb_lines,
    product_vector_lines,
    quantise_lines,
    scans_lines,
)
from rslab.kernels.ops.fixed_tail import (
    BLOCK,
    Q_DIGITS,
    U_DIGITS,
    VECTORS,
    WORDS,
    X_DIGITS,
    Rows,
    groups_prefix_lines,
    lane_lines,
    offset_scan_lines,
    row_max_lines,
)
from rslab.kernels.ops.invcdf import TOKEN, last_sums_lines
from rslab.kernels.sampler.chip_layout import (
    ARG_BARRIER,
    ARG_LANE,
    ARG_TOK,
    ARG_VOCAB,
    ARG_XBASE,
    DIGIT_ROWS,
    NEG_INF,
    ROW,
    ROWS,
    SELECTION_BARRIER,
    ChipLayout,
)
from rslab.kernels.sampler.fixed_row import FixedRow
from rslab.kernels.sampler.invcdf_row import BLOCK_SUMS
from rslab.kernels.sampler.layout import PACKED_BYTES
from rslab.kernels.sampler.plans import OPTIMISED
from rslab.kernels.sampler.program import Q_TAGS, BuiltKernel, _Builder
from rslab.kernels.sampler.registers import (
    GLUE,
    REGS,
    S_ACC,
    S_M,
    S_SUM,
    S_T,
    S_X,
    V_LOG2E,
    V_M,
    V_RINV,
)
from rslab.machine.asm import f32_bits
from rslab.machine.bf16 import LANES
from rslab.numerics.split_sum import FLT_LOWEST
from rslab.randomness import BONUS, RESIDUAL
from rslab.schedule import SlotModel

CHIP_DRAW = ("fixed", "u96")
"""The draw of the chip's rows: the one whose merge is exact."""


class _CoreRows:
    """The rows of the group level of a split fixed row: the row's words, the core-prefix rows
    (:meth:`ChipLayout.core_prefix`) and the scan rows."""

    def __init__(self, rows: Rows, layout: ChipLayout):
        self.words, self.scans, self._layout = rows.words, rows.scans, layout

    def prefix(self, j: int) -> int:
        return self._layout.core_prefix(j)


class SplitFixedRow(FixedRow):
    """A fixed-point inverse-CDF row split over the K cores of a group (module docstring);
    its ``X = ⌊U·Q/2^96⌋`` with the partial products on the VALU
    (:func:`~rslab.kernels.ops.fixed_point.product_vector_lines`: the tail after the
    cores' last merge is the row's latency)."""

    def _level_x(self, words, rows, last_lane: int, X, v, first_word: int) -> list:
        lines = [f"sld {Q_DIGITS[j]}, [s0 + {rows.prefix(j) + 4 * last_lane}]"
                 for j in range(DIGITS)]
        lines += [f"sld {w}, [s0 + {rows.words + 4 * (first_word + i)}]"
                  for i, w in enumerate(words)]
        vecs = tuple(v[r] for r in ("L0", "L1", "L2", "L3", "mx", "x", "lo", "hi", "tmp", "l",
                                    "w", "q"))  # free at both levels: consumed by then
        cols = (*Q_DIGITS, *words, *U_DIGITS[:3])
        lines += product_vector_lines(words, Q_DIGITS, X_DIGITS, U_DIGITS, cols, U_DIGITS[3],
                                      vecs, v["m16"], self.b.L.vm_product)
        for j in range(DIGITS):
            lines += [f"vbcast {X[j]}, {X_DIGITS[j]}", f"vcvt.u2f {X[j]}, {X[j]}"]
        return lines

    def finish(self, slot: int, buf: int):
        """The split tail: ``S_T[0]`` = the row's largest block sum; if it is > 0, the core
        whose range holds X₁ writes the token."""
        b, p, L = self.b, self.b.p, self.b.L
        layout = L.invcdf_layout(buf)
        tag = f"_{len(p.lines)}"
        empty, other = f"fixed_empty{tag}", f"fixed_other{tag}"
        v = VECTORS | {"zero": REGS["zero"], "m": REGS["max"], "r": REGS["rinv"],
                       "log2e": REGS["log2e"]}
        rows = Rows(L.vm_fixed)
        core = _CoreRows(rows, L)
        lines = last_sums_lines(layout, BLOCK_SUMS) + row_max_lines(layout, v)
        lines += [f"viota {v['iota']}", f"vrand {v['word']}, {v['iota']}, s3",
                  f"vst {v['word']}, [s0 + {rows.words}]"]  # the row's words, before the wait
        lines += b.publish([("s24", "bmax")], "s11", "s12")
        lines += [b.gather("bmax", v["a"], "s11"), f"vred.max s24, {v['a']}"]
        p.lines += pack_lines(lines) + [f"smov {S_T[0]}, s24", f"bz s24, {empty}"]
        p.lines += pack_lines(self._local_total(layout, rows, v, tag))
        p.lines += pack_lines(b.publish(list(zip(Q_DIGITS, DIGIT_ROWS, strict=True)),
                                        "s11", "s12"))
        p.lines += pack_lines(self._core_level(layout, core, v)) + [f"bnz s12, {other}"]
        p.lines += pack_lines(self._owner_block(layout, rows, core, v))
        p.lines += pack_lines(lane_lines(self.kind, layout, rows, v, tag, self._level_x))
        p.lines += b.token_lines(self.r, slot) + [f"{other}:", f"{empty}:"]

    def _local_total(self, layout, rows, v, tag) -> list:
        """E of the row's largest block sum (in s24), this core's groups (or, one group, its
        blocks) quantised and their exact prefix stored; its total Q_c into ``Q_DIGITS``."""
        L0_3 = [v[f"L{j}"] for j in range(LIMBS)]
        D, N = ([v[f"{c}{j}"] for j in range(DIGITS)] for c in "DN")
        lines = exponent_lines("s24", "s11", v["p1"], v["p2"], ("s12", "s13", "s14"),
                               f"b{tag}")
        if layout.groups == 1:  # one group: its blocks' prefix now, off the owner's path
            lines += [f"vld {v['a']}, [s0 + {layout.sums}]"]
            lines += quantise_lines(v["a"], v["p1"], v["p2"], v["qhi"], v["qlo"], v["c2p32"])
            lines += limb_lines(v["qhi"], v["qlo"], L0_3, v["m16"])
            lines += scans_lines(L0_3, N[:LIMBS], D[:LIMBS], rows.scans)
            lines += [f"vcvt.f2u {N[j]}, {N[j]}" for j in range(LIMBS)]
            lines += carry_lines(N[:LIMBS], D, v["m16"], v["carry"])
            lines += [f"vst {D[j]}, [s0 + {rows.prefix(j)}]" for j in range(DIGITS)]
            return lines + [f"sld {Q_DIGITS[j]}, [s0 + {rows.prefix(j) + 4 * (LANES - 1)}]"
                            for j in range(DIGITS)]
        lines += groups_prefix_lines(layout, rows, v)
        last = 4 * (layout.groups - 1)
        return lines + [f"sld {Q_DIGITS[j]}, [s0 + {rows.prefix(j) + last}]"
                        for j in range(DIGITS)]

    def _core_level(self, layout, core, v) -> list:
        """The cores' totals (lane k: core k's, five digit rows of the exchange, base in s11)
        scanned into every core's inclusive prefix, X₁ from the total (the last core's
        lane), the core k* whose prefix first exceeds it; s12 = 0 on that core."""
        D, X, N = ([v[f"{c}{j}"] for j in range(DIGITS)] for c in "DXN")
        ins = [v[f"L{j}"] for j in range(LIMBS)] + [v["mx"]]
        K = self.b.K
        lines = [self.b.gather(row, reg, "s11") for row, reg in zip(DIGIT_ROWS, ins, strict=True)]
        lines += [f"vcvt.u2f {r}, {r}" for r in ins]  # digits already below 2^16
        lines += scans_lines(ins, N, X, core.scans, (K - 1).bit_length())  # the first K lanes
        lines += [f"vcvt.f2u {r}, {r}" for r in N]
        lines += carry_lines(N, D, v["m16"], v["carry"])
        lines += [f"vst {D[j]}, [s0 + {core.prefix(j)}]" for j in range(DIGITS)]
        lines += [f"vcvt.u2f {r}, {r}" for r in D]
        lines += self._level_x(WORDS, core, K - 1, X, v, 0)
        lines += greater_lines(D, X, v["gt"], v["eq"], v["t"]) + [f"vred.argmax s11, {v['gt']}"]
        return lines + [f"sld s12, [s0 + {self.b.L.vm_args + ARG_LANE}]", "sshr s12, s12, 2",
                        "ssub s12, s12, s11"]

    def _owner_block(self, layout, rows, core, v) -> list:
        """On the core k* (in s11): its offset P (the prefix before it); its groups' (one
        group: its blocks') prefix plus P past X₁ gives the group (and then the block J) or,
        one group, the block J."""
        D, X, N = ([v[f"{c}{j}"] for j in range(DIGITS)] for c in "DXN")
        lines = ["sshl s12, s11, 2"]
        lines += [f"sld {Q_DIGITS[j]}, [s12 + {core.prefix(j) - 4}]" for j in range(DIGITS)]
        for j in range(DIGITS):
            lines += [f"vld {N[j]}, [s0 + {rows.prefix(j)}]", f"vbcast {v['t']}, {Q_DIGITS[j]}",
                      f"vadd.u32 {N[j]}, {N[j]}, {v['t']}"]
        lines += carry_lines(N, D, v["m16"], v["carry"])
        if layout.groups == 1:
            lines += [f"vcvt.u2f {r}, {r}" for r in D]
            lines += greater_lines(D, X, v["gt"], v["eq"], v["t"])
            return lines + [f"vred.argmax {BLOCK}, {v['gt']}"]
        lines += [f"vst {D[j]}, [s0 + {rows.prefix(j)}]" for j in range(DIGITS)]
        lines += [f"sst {Q_DIGITS[j]}, [s0 + {rows.prefix(j) - 4}]" for j in range(DIGITS)]
        lines += [f"vcvt.u2f {r}, {r}" for r in D]
        lines += greater_lines(D, X, v["gt"], v["eq"], v["t"]) + [f"vred.argmax s11, {v['gt']}"]
        lines += ["sshl s12, s11, 2"]
        lines += [f"sld {Q_DIGITS[j]}, [s12 + {rows.prefix(j) - 4}]" for j in range(DIGITS)]
        return lines + self._blocks_of_group(layout, rows, v)

    def _blocks_of_group(self, layout, rows, v) -> list:
        """Block J past X₁ in the group in s11, whose offset is in ``Q_DIGITS``."""
        L0_3 = [v[f"L{j}"] for j in range(LIMBS)]
        D, X = ([v[f"{c}{j}"] for j in range(DIGITS)] for c in "DX")
        lines = ["sshl s13, s11, 9", f"vld {v['a']}, [s13 + {layout.sums}]"]
        lines += quantise_lines(v["a"], v["p1"], v["p2"], v["qhi"], v["qlo"], v["c2p32"])
        lines += limb_lines(v["qhi"], v["qlo"], L0_3, v["m16"])
        lines += offset_scan_lines(L0_3, rows, v)
        lines += greater_lines(D, X, v["gt"], v["eq"], v["t"]) + [f"vred.argmax s12, {v['gt']}"]
        return lines + [f"sshl {BLOCK}, s11, 7", f"sadd {BLOCK}, {BLOCK}, s12"]


class ChipBuilder(_Builder):
    """The program of one core of a group of ``group_size`` cores (module docstring):
    ``layout`` its window's, ``merge`` the check's merge, ``entries`` (parallel mode) the
    kinds of its entries (True: a bonus row), ``selector``: the core that selects,
    ``active`` the cores that meet before the selection, ``guess`` what a split row's check
    fetches ahead (:data:`~rslab.kernels.sampler.chip_plan.GUESSES`)."""

    def __init__(self, layout: ChipLayout, group_size: int, merge: str, model: SlotModel,
                 *, entries=None, selector: bool = False, active: int = 1,
                 guess: str = "reject"):
        super().__init__(layout, "fast", OPTIMISED, model, CHIP_DRAW)
        self.K, self.merge, self.entries = group_size, merge, entries
        self.selector, self.active = selector, active
        self.online = merge == "online" and group_size > 1
        self.in_check = False
        self.row_index = 0
        if group_size > 1:
            self.row_class = SplitFixedRow
            self.q_after_row, self.chunks = False, [(0, layout.n_packed)]
        self.q_ahead = group_size > 1 and guess == "reject"

    # ------------------------------------------------------- the exchange
    def publish(self, values, base: str, addr: str) -> list:
        """Each (register, row) of ``values`` written to this core's lane of its group's row,
        then the group's barrier; ``base`` keeps the group's exchange address."""
        L = self.L
        lines = [f"sld {base}, [s0 + {L.vm_args + ARG_XBASE}]",
                 f"sld {addr}, [s0 + {L.vm_args + ARG_LANE}]", f"sadd {addr}, {addr}, {base}"]
        lines += [f"sxst {reg}, [{addr} + {ROWS.index(row) * ROW}]" for reg, row in values]
        return lines + [f"sld {addr}, [s0 + {L.vm_args + ARG_BARRIER}]", f"bar {addr}, {self.K}"]

    @staticmethod
    def gather(row: str, vreg: str, base: str) -> str:
        """The load of the group's row ``row`` (lane k: core k's value)."""
        return f"xld {vreg}, [{base} + {ROWS.index(row) * ROW}]"

    # ------------------------------------------------------- the check
    @property
    def bank(self) -> int:
        """The exchange's bank of the current check: its position's parity (online); bank 0
        (max-first, whose checks alternate with the row max's merge)."""
        return self.row_index % self.L.S % 2 if self.online and self.entries is None else 0

    def position(self, r, s):
        self.row_index, self.in_check = r * self.L.S + s, True
        super().position(r, s)
        self.in_check = False

    def row_max(self, buf, chunks):
        """The row max, merged over the group (an online check keeps its own, clamped)."""
        super().row_max(buf, chunks)
        if self.K == 1:
            return
        if self.online and self.in_check:
            self.p.steps(f"vli {GLUE[0]}, {f32_bits(FLT_LOWEST)}",
                         f"vmax.f32 {V_M}, {V_M}, {GLUE[0]}", f"vred.max {S_M}, {V_M}")
            return
        t0, t1 = S_T[7], S_T[8]
        self.p.lines += pack_lines(self.publish([(S_M, "amax")], t0, t1)
                                   + [self.gather("amax", GLUE[0], t0),
                                      f"vred.max {S_M}, {GLUE[0]}", f"vbcast {V_M}, {S_M}"])

    def normaliser(self):
        if self.K == 1:
            super().normaliser()

    def draft_logit(self, buf) -> str:
        """The draft token's logit; split, the merge of s, l_x and q(x) (and online the
        maxima), then 1/s pushed."""
        a = super().draft_logit(buf)
        if self.K == 1:
            return a
        L, own, mask, t = self.L, S_T[1], S_T[2], S_T[3]
        qx, t0, t1 = S_T[4], S_T[7], S_T[8]
        lines = [f"sld {own}, [s0 + {L.arg_owner(self.row_index)}]", f"ssub {mask}, s0, {own}",
                 f"sand {a}, {a}, {mask}", f"sxor {t}, {mask}, 0xffffffff",
                 f"sand {t}, {t}, {NEG_INF}", f"sor {a}, {a}, {t}", "dmawait 4",
                 f"sld {qx}, [s0 + {L.vm_qx}]", f"sand {qx}, {qx}, {mask}"]
        bank = self.bank
        values = [(S_SUM, f"s{bank}"), (a, f"l{bank}"), (qx, f"q{bank}")]
        values += [(S_M, f"m{bank}")] if self.online else []
        lines += self.publish(values, t0, t1)
        lines += [self.gather(f"l{bank}", GLUE[10], t0), f"vred.max {a}, {GLUE[10]}",
                  self.gather(f"q{bank}", GLUE[10], t0), f"vred.max {qx}, {GLUE[10]}"]
        lines += self._online_merge(t0, bank) if self.online else [
            self.gather(f"s{bank}", GLUE[10], t0), f"vred.add {S_SUM}, {GLUE[10]}"]
        self.p.lines += pack_lines(lines)
        super().normaliser()
        if self.entries is None and self.q_ahead:
            r, s = divmod(self.row_index, self.L.S)
            self.fetch_row(r, s + 1)
        return a

    def _online_merge(self, base: str, bank: int) -> list:
        """m = max m_k, s = Σ exp2((m_k − m)·LOG2E)·s_k; this core's factor kept for its
        residual (:meth:`residual_entry`), its own max stored; V_M and S_M the row's max."""
        L = self.L
        m, ms, ss, f = GLUE[10], GLUE[11], GLUE[12], GLUE[13]
        return [f"sst {S_M}, [s0 + {L.vm_online}]", self.gather(f"m{bank}", ms, base),
                f"vred.max {S_M}, {ms}", f"vbcast {m}, {S_M}",
                f"vsub.f32 {f}, {ms}, {m}", f"vmul.f32 {f}, {f}, {V_LOG2E}", f"vexp2 {f}",
                f"vpop {f}", self.gather(f"s{bank}", ss, base), f"vmul.f32 {f}, {f}, {ss}",
                f"vred.add {S_SUM}, {f}",
                f"vsub.f32 {f}, {V_M}, {m}", f"vmul.f32 {f}, {f}, {V_LOG2E}", f"vexp2 {f}",
                f"vpop {f}", f"vst {f}, [s0 + {L.vm_online + PACKED_BYTES}]",
                f"vmov {V_M}, {m}"]

    def fetch_position(self, r, s):
        """Wait for the row, gather q(x); then a split row guessing a rejection fetches its
        whole q row (and its next row only after its merges, :meth:`draft_logit`: every
        core's q is then asked for first), any other core its next row and no q."""
        L, p = self.L, self.p
        p.phase("accept")
        p.bundle(f"dmawait {self.row_tag(r, s)}")
        p.steps(f"sld {S_X}, [s0 + {L.vm_id(r, s)}]", f"sshl {S_T[0]}, {S_X}, 2",
                f"sadd {S_T[0]}, {S_T[0]}, {L.hbm_q_row(r, s)}", f"sli {S_T[1]}, {L.vm_qx}",
                f"sli {S_T[2]}, 4", f"dma {S_T[1]}, {S_T[0]}, {S_T[2]}, 4")
        if self.q_ahead:
            self.fetch_q_chunk(r, s, 0)
        else:
            self.fetch_row(r, s + 1)

    def residual_entry(self, r, s):
        """The q row's first chunk when no check fetched it ahead; online, the row's own max
        back in V_M and 1/s times its factor in V_RINV."""
        if not self.q_ahead and self.entries is None:
            self.fetch_q_chunk(r, s, 0)
        if not self.online:
            return
        L = self.L
        self.p.steps(f"sld {S_T[0]}, [s0 + {L.vm_online}]", f"vbcast {V_M}, {S_T[0]}",
                     f"vld {GLUE[0]}, [s0 + {L.vm_online + PACKED_BYTES}]",
                     f"vmul.f32 {V_RINV}, {V_RINV}, {GLUE[0]}")

    def draft_q(self):
        if self.K == 1:
            super().draft_q()

    def accept_test(self, r, s):
        """As one core's, the accepted draft token stored as the host gave it (a core of a
        split row holds it as an index into its slice)."""
        if self.K == 1:
            super().accept_test(r, s)
            return
        L = self.L
        self.acceptance(r, s)
        self.p.steps(f"bz {S_ACC}, rej_{r}_{s}",
                     f"sld {S_T[0]}, [s0 + {L.arg_slot(self.row_index, 0)}]",
                     f"sst {S_T[0]}, [s0 + {L.vm_tokens + 4 * (r * (L.S + 1) + s)}]")

    def token_lines(self, r: int, slot: int) -> list:
        """A final row's token: parallel mode, into the entry's exchange word; a split row of
        sequential mode, plus its slice's first token, into the request's; else as one core."""
        L = self.L
        if self.entries is None and self.K == 1:
            return super().token_lines(r, slot)
        lines = [f"sld s13, [s0 + {L.vm_args + ARG_VOCAB}]", f"sadd {TOKEN}, {TOKEN}, s13"]
        if self.entries is not None:
            return lines + [f"sld s13, [s0 + {L.arg_slot(r, 1)}]", f"sxst {TOKEN}, [s13 + 0]"]
        return lines + [f"sld s13, [s0 + {L.vm_args + ARG_TOK}]", f"sxst {TOKEN}, [s13 + {4 * r}]"]

    # ------------------------------------------------------- parallel mode
    def build_parallel(self) -> BuiltKernel:
        """A core's entries, then the barrier before the selection (and, on the selector,
        the selection)."""
        L, p = self.L, self.p
        p.phase("setup")
        p.bundle("sli s0, 0")
        self.dma(L.vm_tables, L.hbm_ids, L.table_bytes, 0, wait=True)
        self.constants()
        self.pads()
        self.fetch_entry(0)
        for j, bonus in enumerate(self.entries):
            if bonus:
                self.bonus_entry(j)
            else:
                self.check_entry(j)
        p.phase("setup")
        p.steps(f"sli {S_T[0]}, {SELECTION_BARRIER}")
        p.bundle(f"bar {S_T[0]}, {self.active}")
        if self.selector:
            p.lines += pack_lines(selection_lines(self.selector))
        p.lines.append("halt")
        return BuiltKernel(p.text, L, self.path, self.plan, self.loops, p.instances, self.draw)

    def fetch_entry(self, j: int):
        L = self.L
        self.dma(L.vm_buffers[j % 2], L.hbm_row(j, 0), L.row_bytes, 1 + j % 2)

    def _start_entry(self, j: int, phase: str) -> int:
        """Wait for entry j's row, start the next entry's; the row's buffer."""
        self.p.phase(phase)
        self.p.bundle(f"dmawait {1 + j % 2}")
        if j + 1 < len(self.entries):
            self.fetch_entry(j + 1)
        return self.L.vm_buffers[j % 2]

    def check_entry(self, j: int):
        """Entry j's check, its flag to the exchange, its residual drawn whatever the flag."""
        L, p = self.L, self.p
        p.phase("accept")
        p.bundle(f"dmawait {1 + j % 2}")
        self.dma(L.vm_q, L.hbm_q_row(j, 0), L.q_row_bytes, Q_TAGS[0])
        if j + 1 < len(self.entries):
            self.fetch_entry(j + 1)
        buf = L.vm_buffers[j % 2]
        p.steps(f"sld {S_X}, [s0 + {L.vm_id(j, 0)}]", f"sshl {S_T[0]}, {S_X}, 2",
                f"sadd {S_T[0]}, {S_T[0]}, {L.hbm_q_row(j, 0)}", f"sli {S_T[1]}, {L.vm_qx}",
                f"sli {S_T[2]}, 4", f"dma {S_T[1]}, {S_T[0]}, {S_T[2]}, 4")
        self.row_index, self.in_check = j, True
        self.row_max(buf, [(0, L.n_packed, None)])
        self.sum_exp(buf)
        p.phase("accept")
        self.probability_of_draft(buf)
        self.in_check = False
        self.acceptance(j, 0)
        p.steps(f"sltu {S_T[0]}, s0, {S_ACC}", f"ssub {S_T[0]}, s0, {S_T[0]}",
                f"sld {S_T[1]}, [s0 + {L.arg_slot(j, 0)}]", f"sxst {S_T[0]}, [{S_T[1]} + 0]")
        p.phase("residual")
        self.residual_entry(j, 0)
        p.bundle(f"dmawait {Q_TAGS[0]}")
        row = self.final_row("residual", j, 0)
        row.setup(RESIDUAL)
        self.residual_bases(row, buf, 0)
        row.loop(L.n_packed, "loop_residual")
        row.finish(0, buf)
        self.empty_residual_fallback(row, buf)

    def bonus_entry(self, j: int):
        """Entry j, a bonus row: its merged row max, its pass and its token."""
        buf = self._start_entry(j, "bonus")
        self.row_max(buf, [(0, self.L.n_packed, None)])
        self.p.phase("bonus")
        row = self.final_row("bonus", j, 0)
        row.setup(BONUS)
        self.p.bundle(*[f"sli {base}, {start}" for base, start in row.bases(buf).items()])
        row.loop(self.L.n_packed, "loop_bonus")
        row.finish(0, buf)


def selection_lines(o) -> list:
    """Core 0's selection after the barrier, per chunk of 128 requests (lane r): the first
    rejection's tokens (the drafts before it, its residual token, −1 after; the bonus token
    if none) and the count of accepted drafts, into the exchange's output rows."""
    alive, nacc, one, m1 = "v0", "v1", "v2", "v3"
    f, x, t, tok, a = "v4", "v5", "v6", "v7", "v8"
    lines = []
    S = o.S
    for c in range(o.chunks):
        r = c * LANES
        lines += [f"vli {alive}, 0xffffffff", f"vli {nacc}, 0", f"vli {one}, 1",
                  f"vli {m1}, 0xffffffff"]
        for s in range(S):
            lines += [f"xld {f}, [s0 + {o.acc(r, s)}]", f"xld {x}, [s0 + {o.draft(r, s)}]",
                      f"xld {t}, [s0 + {o.res(r, s)}]", f"vsel {tok}, {f}, {x}, {t}",
                      f"vsel {tok}, {alive}, {tok}, {m1}", f"xst {tok}, [s0 + {o.out(r, s)}]",
                      f"vand {a}, {alive}, {f}", f"vand {a}, {a}, {one}",
                      f"vadd.u32 {nacc}, {nacc}, {a}", f"vand {alive}, {alive}, {f}"]
        lines += [f"xld {t}, [s0 + {o.bon(r)}]", f"vsel {tok}, {alive}, {t}, {m1}",
                  f"xst {tok}, [s0 + {o.out(r, S)}]", f"xst {nacc}, [s0 + {o.nacc(r)}]"]
    return lines


@lru_cache(maxsize=64)
def chip_kernel(layout: ChipLayout, group_size: int, merge: str, entries=None, selector=None,
                active: int = 1, guess: str = "reject") -> BuiltKernel:
    """The program of a core (cached: cores of the same shape share it; ``selector``: the
    selecting core's :class:`~rslab.kernels.sampler.chip_layout.Outputs`, else None)."""
    model = SlotModel()
    b = ChipBuilder(layout, group_size, merge, model, entries=entries, selector=selector,
                    active=active, guess=guess)
    return b.build() if entries is None else b.build_parallel()


__all__ = ["CHIP_DRAW", "ChipBuilder", "SplitFixedRow", "chip_kernel", "selection_lines"]
