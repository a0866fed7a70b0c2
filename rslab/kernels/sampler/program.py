"""The full Sequential-mode rejection sampler as one machine program per test point.

Per request r, positions s = 0..S−1 in order (the semantics of :mod:`rslab.reference`):

1. **max**: the row max m of the target logits row (r, s) (packed BF16 in VMEM);
2. **sum-exp**: s = Σ exp2((l − m)·LOG2E), then 1/s on the SFU;
3. **accept**: p(x) of the draft token x (its logit is read with scalar loads),
   the uniform u (Fast: ``vrand``; Exact: Philox4x32-10 on the VALU), q(x)
   (a 4-byte DMA gather from HBM), ``accept = q(x) > 0 and u·q(x) < p(x)``; a
   branch leaves the request at the first rejection;
4. at a rejection, **residual**: Gumbel-argmax of log2 max(p − q, 0) + g over
   the row; after S acceptances, **bonus**: Gumbel-argmax of l·LOG2E + g over
   row S. Tokens (then −1) and ``num_accepted`` are stored to VMEM.

On the Fast path the rows may draw another way (``method``, ``noise``;
:mod:`rslab.kernels.sampler.draws`): Gumbel-max with another noise, the race
(:class:`~rslab.kernels.sampler.final_rows.FinalRow` too) or the inverse CDF
(:class:`~rslab.kernels.sampler.invcdf_row.InvcdfRow`), or the inverse CDF over exact
fixed-point sums (:class:`~rslab.kernels.sampler.fixed_row.FixedRow`). The race and the inverse
CDF draw the bonus token from ``exp2((l − m)·LOG2E)``, so the bonus row gets its row
max first.

When every residual weight of a row is 0 (possible only through float32
rounding: p ≤ q everywhere), the reference samples from p with the same noise
row. The kernel sees this as a winning score of −∞ (the noise is finite, so a
positive weight always scores above −∞; the race: a best score of 0, the inverse
CDF: a total of 0), zeroes the q buffer and runs the residual row again, which
then draws from p.

The random numbers are the reference's (:mod:`rslab.randomness`): Fast path
``vrand`` with the host's per-row key and counter = token index, noise Div8 with
the SFU's fast log2; Exact path Philox with counter (c0, s, r, purpose) and the
word layout of the reference, noise ``−log2(−log2 u)`` with the precise log.

What changes between the optimised kernel and the baselines is a
:class:`KernelPlan`: how each loop body becomes code (``rslab.kernels.loops.emit``),
whether the glue code is bundled, and whether DMAs are issued ahead
(double-buffered row buffers, a speculative first chunk of the q row). The
program marks its phases with labels ``ph<n>_<phase>:`` so cycles can be
attributed per phase from the trace (:mod:`rslab.kernels.sampler.run`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rslab.kernels.loops.emit import emit_loop, remainder_drop
from rslab.kernels.loops.loop import Loop
from rslab.kernels.ops.invcdf import TOKEN
from rslab.kernels.ops.philox import philox_ops
from rslab.kernels.ops.uniform import uniform_ops
from rslab.kernels.sampler.bodies import rowmax_body, sumexp_loop_body
from rslab.kernels.sampler.draws import (
    DRAW_REGS,
    draw_constants,
    needs_row_max,
    sampler_draw,
    taken_registers,
)
from rslab.kernels.sampler.layout import PACKED_BYTES, Q_BYTES_PER_PACKED, SamplerLayout
from rslab.kernels.sampler.plans import OPTIMISED, KernelPlan
from rslab.kernels.sampler.registers import (
    CARRIED,
    GLUE,
    LOOP_POOL,
    POOL,
    REGS,
    S_ACC,
    S_FB,
    S_KEY,
    S_KS,
    S_LB,
    S_M,
    S_QB,
    S_SUM,
    S_T,
    S_X,
    V_2M25,
    V_C1,
    V_C2,
    V_C3,
    V_C128,
    V_LOG2E,
    V_M,
    V_ONE_U,
    V_PM0,
    V_PM1,
    V_RINV,
    V_ZERO,
)
from rslab.machine.asm import constant_word, f32_bits
from rslab.machine.config import MachineConfig
from rslab.numerics.fastlog import LOG2E
from rslab.numerics.methods import draw as draw_of
from rslab.numerics.rng import PHILOX_M0, PHILOX_M1, PHILOX_W0, PHILOX_W1
from rslab.randomness import ACCEPT, BONUS, RESIDUAL
from rslab.schedule import Op, SlotModel

PHASES = ("setup", "max", "sumexp", "accept", "residual", "bonus")
FIRST_ROW_TAGS = (1, 2, 6, 7)
"""DMA tags of the first row's chunks: its own buffer's, the second buffer's (the next
request's first row) and those of the q row's later chunks (issued in the residual phase)."""
Q_TAGS = (5, 6, 7, 0)
"""DMA tags of the q row's chunks; the tables' tag 0 is free once the setup waited for them."""

# ----------------------------------------------------------------- program text


class ProgramText:
    """Assembly lines with phase labels; ``bundle(*ops)`` adds one bundle (or one per op)."""

    def __init__(self, bundle_glue: bool):
        self.lines: list[str] = []
        self.bundle_glue = bundle_glue
        self._phases = 0
        self.instances: dict = {}  # label of each hardware loop -> its Loop

    def phase(self, name: str):
        if name not in PHASES:
            raise ValueError(f"phase must be one of {PHASES}, got {name!r}")
        self.lines.append(f"ph{self._phases}_{name}:")
        self._phases += 1

    def label(self, name: str):
        self.lines.append(f"{name}:")

    def bundle(self, *ops: str):
        ops = [o for o in ops if o]
        if not ops:
            return
        if self.bundle_glue:
            self.lines.append(" ; ".join(ops))
        else:
            self.lines += list(ops)

    def steps(self, *steps):
        for step in steps:
            if isinstance(step, str):
                self.bundle(step)
            else:
                self.bundle(*step)

    def loop(self, code: Loop, label: str | None = None):
        """The loop's text; every hardware loop gets a label ``lp<k>`` (``instances``), the
        first of a kind also ``label``."""
        text = code.text.rstrip("\n").split("\n")
        at = next((i for i, line in enumerate(text) if line.startswith("loop ")), None)
        if at is not None:
            name = f"lp{len(self.instances)}"
            self.instances[name] = code
            text[at:at] = [f"{name}:"] + ([f"{label}:"] if label is not None else [])
        self.lines += text

    @property
    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


@dataclass
class BuiltKernel:
    """A sampler program: ``text``, its ``layout``, ``path``, ``plan``, loop figures and
    ``draw`` ((method, noise) of its residual and bonus rows)."""

    text: str
    layout: SamplerLayout
    path: str
    plan: KernelPlan
    loops: dict  # loop label -> Loop (first instance of each kind)
    instances: dict = field(default_factory=dict)  # ``lp<k>`` label -> Loop, every one
    draw: tuple = ("gumbel", "div8")


class _Builder:
    def __init__(self, layout: SamplerLayout, path: str, plan: KernelPlan, model: SlotModel,
                 draw=("gumbel", None)):
        if path not in ("fast", "exact"):
            raise ValueError(f"path must be 'fast' or 'exact', got {path!r}")
        if not isinstance(plan, KernelPlan):
            raise ValueError(f"plan must be a KernelPlan, got {type(plan).__name__}")
        self.L, self.path, self.plan, self.model = layout, path, plan, model
        self.draw = sampler_draw(path, *draw)
        taken = taken_registers(self.draw) if path == "fast" else set()
        self.loop_pool = [r for r in LOOP_POOL[path] if r not in taken]
        self.p = ProgramText(plan.bundle_glue)
        self.loops: dict = {}
        self.row_class = draw_of(self.draw[0]).resolve("kernel_row")
        invcdf = self.row_class.block_sums
        self.final_u = 2 if path == "exact" or invcdf else plan.final_u
        if self.final_u not in (1, 2) or (self.final_u == 2 and path == "fast" and not invcdf
                                          and not plan.rotate_counters):
            raise ValueError("plan.final_u: the Fast path's final rows take one packed vector "
                             "per iteration, or two with rotate_counters (the token offsets' "
                             "registers hold the noise constants)")
        self.q_after_row = bool(plan.prefetch and plan.q_fit and path == "fast"
                                and self._outpaces_engine())
        self.chunks = self._chunks()
        self.first_chunks = self._first_row_chunks()

    # ------------------------------------------------------- helpers
    def dma(self, dst: int, src: int, nbytes: int, tag: int, wait: bool = False):
        a, b, c = S_T[7], S_T[8], S_T[9]
        self.p.steps(f"sli {a}, {dst}", f"sli {b}, {src}", f"sli {c}, {nbytes}",
                     f"dma {a}, {b}, {c}, {tag}")
        if wait:
            self.p.bundle(f"dmawait {tag}")

    def loop_of(self, body, u: int, style: str, carried: dict, rotating=(), *,
                iterations: int = 64, last_drop=(), pool=None, gates=None) -> Loop:
        """The loop code of ``body`` (``rotating`` carried values renamed when pipelined) on
        the path's loop registers (or ``pool``), not yet placed in the program."""
        options = {"rotating": tuple(rotating)} if rotating else {}
        return emit_loop(body, iterations, style, carried=carried,
                         pool=pool or self.loop_pool, model=self.model,
                         last_drop=last_drop, per_iteration=u, gates=gates, shorten=True,
                         **options)

    def gated(self, style: str, chunks) -> bool:
        """Whether a loop over ``chunks`` waits for them inside one pipelined loop."""
        return self.plan.gate_chunks and style == "pipelined" and len(chunks) > 1

    def emit(self, body, n_packed: int, u: int, style: str, carried: dict,
             label: str, rotating=(), pad: bool = False, pool=None, gates=None) -> Loop:
        """The loop over ``n_packed`` packed vectors, ``u`` per iteration: a partial last
        iteration leaves out the missing vectors' ops, or, with ``pad``, reads the buffer's
        padding; ``rotating`` carried values are renamed when pipelined; ``gates``:
        packed vector → op waiting before it (a multiple of ``u``)."""
        iterations = -(-n_packed // u)
        left = u if pad else n_packed - (iterations - 1) * u
        code = self.loop_of(body, u, style, carried, rotating, iterations=iterations,
                            last_drop=remainder_drop(body, left, u), pool=pool,
                            gates={a // u: op for a, op in (gates or {}).items()})
        first = label not in self.loops
        if first:
            self.loops[label] = code
        self.p.loop(code, label if first else None)
        return code

    def straight(self, ops, carried: dict, pool) -> Loop:
        """``ops`` once, as straight-line code bundled like the glue (values in ``carried``
        pinned to their registers)."""
        return emit_loop(ops, 1, "local" if self.plan.bundle_glue else "naive",
                         carried=carried, pool=pool, model=self.model)

    def _chunks(self) -> list:
        """The q row's chunks (packed vectors), multiples of the final rows' u except the last:
        a tenth of the row (fetched speculatively with the row), then a fifth and the rest,
        or (``plan.q_fit``) each chunk as large as can land while the residual loop runs over
        the ones before it. A residual loop faster than the engine brings q
        (``q_after_row``) gets a first chunk as large as the engine can bring during the
        check after the next logits row (:meth:`_idle_share`), issued after that row."""
        n, u = self.L.n_packed, self.final_u
        if not self.plan.prefetch:
            return [(0, n)]
        first = min(n, max(u, (n // 10) // u * u))
        if self.q_after_row:
            first = min(n, max(first, int(n * self._idle_share()) // u * u))
        if self.plan.q_fit:
            bounds = self._fitted_bounds(first)
        else:
            bounds = [0, first, first + min(n - first, 2 * first), n]
        return [(a, b) for a, b in zip(bounds, bounds[1:], strict=False) if b > a]

    def _outpaces_engine(self) -> bool:
        """Whether the residual loop takes fewer cycles per packed vector than the DMA
        engine needs for its q (the default machine): no chunk sizes can then keep up."""
        pace = self.final_row("residual", 0, 0).cycles_per_packed()
        return pace < Q_BYTES_PER_PACKED / MachineConfig().dma_bytes_per_cycle

    def _idle_share(self) -> float:
        """The share of a q row the engine can bring during an acceptance check after the
        next logits row: the check's row max and sum-exp loops at their II, less the row's
        transfer, over the q row's (the default machine)."""
        plan, cfg = self.plan, MachineConfig()
        rowmax = self.loop_of(rowmax_body(plan.rowmax_u, plan.land_fp32), plan.rowmax_u,
                              plan.rowmax_style, {f"acc{i}": CARRIED[i]
                                                  for i in range(plan.rowmax_u)})
        w, su = plan.sumexp_workers, plan.sumexp_u
        sumexp = self.loop_of(sumexp_loop_body(self.path, w, su, plan.land_fp32, plan.store_e),
                              su, plan.sumexp_style, {f"acc{i}": CARRIED[i] for i in range(w)})
        check = (rowmax.ii or rowmax.body_bundles) / plan.rowmax_u + (
            sumexp.ii or sumexp.body_bundles) / su
        per_row, per_q = PACKED_BYTES / cfg.dma_bytes_per_cycle, \
            Q_BYTES_PER_PACKED / cfg.dma_bytes_per_cycle
        return max(0.0, (check - per_row) / per_q)

    def _fitted_bounds(self, first: int) -> list:
        """Chunk ends after ``first``: chunk c + 1 (issued with the others when the residual
        starts) lands by the time the loop has done chunks 0..c, at the loop's cycles per
        packed vector and the default machine's DMA latency and bandwidth."""
        n, u, cfg = self.L.n_packed, self.final_u, MachineConfig()
        pace = self.final_row("residual", 0, 0).cycles_per_packed()
        per = Q_BYTES_PER_PACKED / cfg.dma_bytes_per_cycle
        bounds = [0, first]
        while bounds[-1] < n and len(bounds) < len(Q_TAGS):
            end = first + (pace * bounds[-1] - cfg.dma_latency) / per
            bounds.append(min(n, max(bounds[-1] + u, int(end) // u * u)))
        return bounds + ([n] if bounds[-1] < n else [])

    def _first_row_chunks(self) -> list:
        """(first packed vector, end, DMA tag) of the program's first row: halving chunks,
        so that the row max of the last one, after the whole row has landed, is short; the
        tags are those no DMA uses before the first row max is done."""
        n, u, count = self.L.n_packed, self.plan.rowmax_u, self.plan.first_row_chunks
        if not self.plan.prefetch or count == 1:
            return [(0, n, self.row_tag(0, 0))]
        weights = [2.0 ** -i for i in range(count)]
        bounds, total = [0], 0.0
        for w in weights[:-1]:
            total += w
            b = int(n * total / sum(weights)) // u * u
            if bounds[-1] < b < n:
                bounds.append(b)
        bounds.append(n)
        spans = zip(bounds, bounds[1:], strict=False)
        return [(a, b, tag) for (a, b), tag in zip(spans, FIRST_ROW_TAGS, strict=False)]

    def fetch_first_row(self):
        L = self.L
        for a, b, tag in self.first_chunks:
            self.dma(L.vm_buffers[0] + a * PACKED_BYTES, L.hbm_row(0, 0) + a * PACKED_BYTES,
                     (b - a) * PACKED_BYTES, tag)

    def row_tag(self, r, s):
        return 1 + self.L.buffer(r, s)

    def fetch_row(self, r, s, wait=False):
        L = self.L
        self.dma(L.vm_buffers[L.buffer(r, s)], L.hbm_row(r, s), L.row_bytes,
                 self.row_tag(r, s), wait)

    def fetch_q_chunk(self, r, s, c):
        a, b = self.chunks[c]
        L = self.L
        self.dma(L.vm_q + a * Q_BYTES_PER_PACKED, L.hbm_q_row(r, s) + a * Q_BYTES_PER_PACKED,
                 (b - a) * Q_BYTES_PER_PACKED, Q_TAGS[c], wait=not self.plan.prefetch)

    # ------------------------------------------------------- program
    def build(self) -> BuiltKernel:
        L, p = self.L, self.p
        p.phase("setup")
        p.bundle("sli s0, 0")
        chunked = len(self.first_chunks) > 1
        self.dma(L.vm_tables, L.hbm_ids, L.table_bytes, 0, wait=not chunked)
        if chunked:  # the first row's transfer starts while the tables land
            self.fetch_first_row()
        self.constants()
        self.pads()
        if chunked:
            p.bundle("dmawait 0")
        elif self.plan.prefetch:
            self.fetch_first_row()
        for r in range(L.R):
            for s in range(L.S):
                self.position(r, s)
            self.bonus(r)
            for s in range(L.S):
                self.residual(r, s)
            p.label(f"next_{r}")
        p.phase("setup")
        p.lines.append("halt")
        return BuiltKernel(p.text, L, self.path, self.plan, self.loops, p.instances, self.draw)

    def constants(self):
        p = self.p
        p.steps((f"vli {V_LOG2E}, {f32_bits(LOG2E)}", f"vli {V_ZERO}, 0"),
                (f"vli {V_ONE_U}, 1", f"vli {V_2M25}, {f32_bits(2.0**-25)}"))
        if self.path == "fast":
            loads = [f"vli {DRAW_REGS[role]}, {constant_word(value)}"
                     for role, value in draw_constants(self.draw).items()]
            p.steps(*[tuple(loads[i:i + 2]) for i in range(0, len(loads), 2)])
            return
        p.steps((f"vli {V_PM0}, {int(PHILOX_M0)}", f"vli {V_PM1}, {int(PHILOX_M1)}"),
                f"vli {V_C128}, 128", f"sli {S_KS}, {self.L.vm_keysched}")
        # the key schedule k0 + r·W0, k1 + r·W1 as broadcast vectors in VMEM
        k0, k1 = S_T[1], S_T[2]
        p.steps(f"sld {k0}, [s0 + {self.L.vm_seed}]", f"sld {k1}, [s0 + {self.L.vm_seed + 4}]")
        for r in range(10):
            p.steps((f"vbcast {GLUE[0]}, {k0}", f"vbcast {GLUE[1]}, {k1}"),
                    f"vst {GLUE[0]}, [{S_KS} + {r * PACKED_BYTES}]",
                    f"vst {GLUE[1]}, [{S_KS} + {(10 + r) * PACKED_BYTES}]",
                    f"sadd {k0}, {k0}, {int(PHILOX_W0)}", f"sadd {k1}, {k1}, {int(PHILOX_W1)}")

    def pads(self):
        """The padding after the buffers (:meth:`SamplerLayout.pads`), for loops that read
        one vector past an odd row (the block argmax, the inverse CDF's pass)."""
        if self.plan.argmax != "block" and not self.row_class.block_sums:
            return
        words = sorted({w for _, w in self.L.pads()})
        regs = dict(zip(words, GLUE, strict=False))
        self.p.steps(*[f"vli {regs[w]}, {w}" for w in words])
        for address, w in self.L.pads():
            self.p.bundle(f"vst {regs[w]}, [s0 + {address}]")

    # ------------------------------------------------------- one acceptance check
    def position(self, r, s):
        """One acceptance check of request r at position s; branches to ``rej_r_s`` on reject."""
        buf = self.L.vm_buffers[self.L.buffer(r, s)]
        self.fetch_position(r, s)
        first = (r, s) == (0, 0) and self.plan.prefetch
        self.row_max(buf, self.first_chunks if first else [(0, self.L.n_packed, None)])
        self.sum_exp(buf)
        self.p.phase("accept")
        self.probability_of_draft(buf)
        self.accept_test(r, s)

    def fetch_position(self, r, s):
        """Wait for the row; gather q(x) (4 bytes) and start the q row's first chunk early."""
        L, p = self.L, self.p
        p.phase("accept")
        if self.plan.prefetch:
            p.bundle(f"dmawait {self.row_tag(r, s)}")
        else:
            self.fetch_row(r, s, wait=True)
        p.steps(f"sld {S_X}, [s0 + {L.vm_id(r, s)}]", f"sshl {S_T[0]}, {S_X}, 2",
                f"sadd {S_T[0]}, {S_T[0]}, {L.hbm_q_row(r, s)}", f"sli {S_T[1]}, {L.vm_qx}",
                f"sli {S_T[2]}, 4", f"dma {S_T[1]}, {S_T[0]}, {S_T[2]}, 4")
        if self.plan.prefetch and self.q_after_row:
            self.fetch_row(r, s + 1)
            self.fetch_q_chunk(r, s, 0)
        elif self.plan.prefetch:
            self.fetch_q_chunk(r, s, 0)
            self.fetch_row(r, s + 1)

    def row_max(self, buf, chunks):
        """The row max into ``S_M`` and broadcast to ``V_M`` (landing float32 if planned);
        ``chunks``: (first packed vector, end, DMA tag to wait for or None)."""
        L, p, plan = self.L, self.p, self.plan
        p.phase("max")
        u, land = plan.rowmax_u, plan.land_fp32
        accs = CARRIED[:u]
        carried = {f"acc{i}": accs[i] for i in range(u)}
        if self.gated(plan.rowmax_style, chunks):
            chunks = [(0, L.n_packed, {a: f"dmawait {tag}" for a, _, tag in chunks[1:]})]
        for c, (a, b, tag) in enumerate(chunks):
            p.steps(f"dmawait {tag}" if c else "", f"sli {S_LB}, {buf + a * PACKED_BYTES}",
                    f"sli {S_FB}, {L.vm_fp32 + a * 2 * PACKED_BYTES}" if land else "",
                    *([] if c else [f"vli {acc}, -inf" for acc in accs]))
            self.emit(rowmax_body(u, land), b - a, u, plan.rowmax_style, carried,
                      "loop_rowmax", gates=tag if isinstance(tag, dict) else None)
        for a in accs[1:]:
            p.bundle(f"vmax.f32 {accs[0]}, {accs[0]}, {a}")
        p.steps(f"vred.max {S_M}, {accs[0]}", f"vbcast {V_M}, {S_M}")

    def sum_exp(self, buf):
        """The sum of exponentials into ``S_SUM``, and its reciprocal pushed to the SFU."""
        L, p, plan = self.L, self.p, self.plan
        p.phase("sumexp")
        w, su, land = plan.sumexp_workers, plan.sumexp_u, plan.land_fp32
        accs = CARRIED[:w]
        p.steps(f"sli {S_LB}, {buf}", f"sli {S_FB}, {L.vm_fp32}" if land else "",
                *[f"vli {a}, 0" for a in accs])
        self.emit(sumexp_loop_body(self.path, w, su, land, plan.store_e), L.n_packed, su,
                  plan.sumexp_style, {f"acc{i}": accs[i] for i in range(w)}, "loop_sumexp")
        level = list(accs)
        while len(level) > 1:
            ops = [f"vadd.f32 {level[i]}, {level[i]}, {level[i + 1]}"
                   for i in range(0, len(level) - 1, 2)]
            nxt = [level[i] for i in range(0, len(level) - 1, 2)]
            if len(level) % 2:
                nxt.append(level[-1])
            p.bundle(*ops)
            level = nxt
        p.steps(f"vred.add {S_SUM}, {level[0]}")
        self.normaliser()

    def normaliser(self):
        """1/s pushed to the SFU (``S_SUM`` holds s)."""
        self.p.steps(f"vbcast {GLUE[0]}, {S_SUM}", f"vrcp {GLUE[0]}")

    def draft_logit(self, buf) -> str:
        """The logit of x from the packed row with scalar loads; its register (float32 bits)."""
        a, b, h, c = S_T[0], S_T[1], S_T[2], S_T[3]
        self.p.steps(f"sshr {a}, {S_X}, 8", f"sshl {a}, {a}, 9", f"sand {b}, {S_X}, 127",
                     f"sshl {b}, {b}, 2", f"sadd {a}, {a}, {b}", f"sld {a}, [{a} + {buf}]",
                     f"sshr {h}, {S_X}, 7", f"sand {h}, {h}, 1", f"sshl {h}, {h}, 4",
                     f"sli {c}, 16", f"ssub {h}, {c}, {h}", f"sshl {a}, {a}, {h}",
                     f"sand {a}, {a}, 0xffff0000")
        return a

    def probability_of_draft(self, buf):
        """p(x) in ``GLUE[3]``: the logit of x (:meth:`draft_logit`), then
        exp2((l − m)·LOG2E)·(1/s)."""
        p = self.p
        a = self.draft_logit(buf)
        vl, ve, vp = GLUE[1], GLUE[2], GLUE[3]
        e2 = "vexp2" if self.path == "fast" else "vexp2.p"
        p.steps(f"vpop {V_RINV}", f"vbcast {vl}, {a}", f"vsub.f32 {vl}, {vl}, {V_M}",
                f"vmul.f32 {vl}, {vl}, {V_LOG2E}", f"{e2} {vl}", f"vpop {ve}",
                f"vmul.f32 {vp}, {ve}, {V_RINV}")

    def accept_test(self, r, s):
        """``accept = q(x) > 0 and u·q(x) < p(x)``; the diagnostics; the token or the branch."""
        L, S = self.L, self.L.S
        self.acceptance(r, s)
        self.p.steps(f"bz {S_ACC}, rej_{r}_{s}",
                     f"sst {S_X}, [s0 + {L.vm_tokens + 4 * (r * (S + 1) + s)}]")

    def acceptance(self, r, s):
        """``S_ACC`` = 1.0 if ``q(x) > 0 and u·q(x) < p(x)`` else 0; the diagnostics stored."""
        L, p, S = self.L, self.p, self.L.S
        vp, vu, vq, vt = GLUE[3], GLUE[4], GLUE[5], GLUE[6]
        self.acceptance_uniform(r, s, vu)
        self.draft_q()
        p.steps(f"vbcast {vq}, {S_T[4]}",
                f"vmul.f32 {vt}, {vu}, {vq}",
                (f"vcmplt.f32 {vt}, {vt}, {vp}", f"vcmpgt.f32 {GLUE[7]}, {vq}, {V_ZERO}"),
                f"vand {vt}, {vt}, {GLUE[7]}", f"vli {GLUE[8]}, 1.0",
                f"vsel {vt}, {vt}, {GLUE[8]}, {V_ZERO}", f"vred.max {S_ACC}, {vt}",
                f"vred.max {S_T[5]}, {vp}", f"vred.max {S_T[6]}, {vu}")
        i = r * S + s
        p.steps(f"sst {S_M}, [s0 + {L.vm_diag('m') + 4 * i}]",
                f"sst {S_SUM}, [s0 + {L.vm_diag('sum') + 4 * i}]",
                f"sst {S_T[5]}, [s0 + {L.vm_diag('px') + 4 * i}]",
                f"sst {S_T[6]}, [s0 + {L.vm_diag('u') + 4 * i}]")

    def draft_q(self):
        """q(x) into ``S_T[4]``: the gathered word, once its DMA has landed."""
        self.p.steps("dmawait 4", f"sld {S_T[4]}, [s0 + {self.L.vm_qx}]")

    def acceptance_uniform(self, r, s, dst):
        p = self.p
        if self.path == "fast":
            p.steps(f"sld {S_KEY}, [s0 + {self.L.vm_key(r, s, ACCEPT)}]",
                    f"vrand {GLUE[9]}, {V_ZERO}, {S_KEY}")
            word = GLUE[9]
        else:
            p.steps((f"vli {V_C1}, {s}", f"vli {V_C2}, {r}"), f"vli {V_C3}, {ACCEPT}")
            ops, out = philox_ops((V_ZERO, V_C1, V_C2, V_C3), REGS)
            code = emit_loop(ops + [Op("vmov", "pw", (out[0],))], 1,
                             "local" if self.plan.bundle_glue else "naive",
                             carried={}, pool=POOL[:20] + GLUE[9:], model=self.model)
            p.loop(code)
            word = _reg_of(code.text, "vmov")
        uops, uname = uniform_ops(0, word, REGS)
        code = emit_loop(uops + [Op("vmov", "uout", (uname,))], 1,
                         "local" if self.plan.bundle_glue else "naive", carried={},
                         pool=[r for r in POOL[:20] + GLUE[9:] if r != word],
                         model=self.model)
        p.loop(code)
        p.bundle(f"vmov {dst}, {_reg_of(code.text, 'vmov')}")

    # ------------------------------------------------------- final rows
    def finish_request(self, r, accepted, jump):
        p, L = self.p, self.L
        p.steps(f"sli {S_T[3]}, -1", f"sli {S_T[4]}, {accepted}")
        for slot in range(accepted + 1, L.S + 1):
            p.bundle(f"sst {S_T[3]}, [s0 + {L.vm_tokens + 4 * (r * (L.S + 1) + slot)}]")
        p.bundle(f"sst {S_T[4]}, [s0 + {L.vm_num_accepted + 4 * r}]")
        if jump:
            p.bundle(f"jmp next_{r}")

    def bonus(self, r):
        L, p, plan = self.L, self.p, self.plan
        S = L.S
        p.phase("bonus")
        if plan.prefetch:
            p.bundle(f"dmawait {self.row_tag(r, S)}")
            if r + 1 < L.R:
                self.fetch_row(r + 1, 0)
        else:
            self.fetch_row(r, S, wait=True)
        buf = L.vm_buffers[L.buffer(r, S)]
        if needs_row_max(self.draw):
            self.row_max(buf, [(0, L.n_packed, None)])
            p.phase("bonus")
        row = self.bonus_row(r, buf)
        row.setup(BONUS)
        p.bundle(*[f"sli {base}, {start}" for base, start in row.bases(buf).items()])
        row.loop(L.n_packed, "loop_bonus")
        row.finish(S, buf)
        self.finish_request(r, S, jump=True)

    def bonus_row(self, r, buf):
        """The bonus row of request ``r`` (``buf``: its packed row), code before it emitted."""
        return self.final_row("bonus", r, self.L.S)

    def final_row(self, kind: str, r: int, s: int):
        """The residual or bonus row of request ``r`` at position ``s``, for the draw."""
        return self.row_class(self, kind, r, s)

    def residual(self, r, s):
        L, p, plan = self.L, self.p, self.plan
        p.label(f"rej_{r}_{s}")
        p.phase("residual")
        self.residual_entry(r, s)
        if plan.prefetch:
            for c in range(1, len(self.chunks)):
                self.fetch_q_chunk(r, s, c)
            if r + 1 < L.R:
                self.fetch_row(r + 1, 0)
        else:
            self.fetch_q_chunk(r, s, 0)
        row = self.final_row("residual", r, s)
        row.setup(RESIDUAL)
        buf = L.vm_buffers[L.buffer(r, s)]
        if self.gated(plan.final_style, self.chunks):
            p.bundle(f"dmawait {Q_TAGS[0]}")
            self.residual_bases(row, buf, 0)
            row.loop(L.n_packed, "loop_residual",
                     {a: f"dmawait {Q_TAGS[c]}" for c, (a, _) in enumerate(self.chunks) if c})
        else:
            for c, (a, b) in enumerate(self.chunks):
                if plan.prefetch:
                    p.bundle(f"dmawait {Q_TAGS[c]}")
                self.residual_bases(row, buf, a)
                row.loop(b - a, "loop_residual")
        row.finish(s, buf)
        self.empty_residual_fallback(row, buf)
        self.finish_request(r, s, jump=s < L.S - 1)

    def token_lines(self, r: int, slot: int) -> list:
        """The store of a final row's token (in ``TOKEN``) into ``tokens[r, slot]``."""
        L = self.L
        return [f"sst {TOKEN}, [s0 + {L.vm_tokens + 4 * (r * (L.S + 1) + slot)}]"]

    def residual_entry(self, r, s):
        """Code at the start of the residual row of (r, s), before its transfers (none)."""

    def residual_bases(self, row, buf: int, a: int):
        """The residual row's base registers at packed vector ``a``."""
        L = self.L
        landed = S_FB in row.bases(buf)
        self.p.steps(f"sli {S_LB}, {buf + a * PACKED_BYTES}",
                     f"sli {S_QB}, {L.vm_q + a * Q_BYTES_PER_PACKED}",
                     f"sli {S_FB}, {L.vm_fp32 + a * 2 * PACKED_BYTES}" if landed else "")

    def empty_residual_fallback(self, row, buf: int):
        """If the residual ``row`` saw no weight (``S_T[0]`` holds its ``empty_bits``: Gumbel
        a best score of −∞), zero q and run the row again: a draw from p."""
        L, p, s = self.L, self.p, row.s
        done, t, c = f"residual_done_{row.r}_{s}", S_T[0], S_T[5]
        p.steps(f"sli {c}, {row.empty_bits}", f"ssub {c}, {t}, {c}", f"bnz {c}, {done}",
                f"sli {S_QB}, {L.vm_q}", f"loop {L.q_row_bytes // PACKED_BYTES}")
        p.bundle(f"vst {V_ZERO}, [{S_QB} + 0]", f"sadd {S_QB}, {S_QB}, {PACKED_BYTES}")
        p.bundle("endloop")
        row.setup(RESIDUAL)
        self.residual_bases(row, buf, 0)
        row.loop(L.n_packed, "loop_residual")
        row.finish(s, buf)
        p.label(done)


def _reg_of(text: str, opcode: str) -> str:
    """The destination register of the last ``opcode`` op in ``text``."""
    for line in reversed(text.split("\n")):
        for op in line.split(";"):
            op = op.strip()
            if op.startswith(opcode + " "):
                return op.split()[1].rstrip(",")
    raise ValueError(f"no {opcode} in the emitted code")


def build_kernel(layout: SamplerLayout, path: str = "fast", plan: KernelPlan = OPTIMISED,
                 model: SlotModel | None = None, *, method: str = "gumbel",
                 noise: str | None = None) -> BuiltKernel:
    """The sampler program for ``layout`` on ``path`` compiled as ``plan``, its rows drawing
    with ``method`` and ``noise`` (:mod:`rslab.kernels.sampler.draws`)."""
    if not isinstance(layout, SamplerLayout):
        raise ValueError(f"layout must be a SamplerLayout, got {type(layout).__name__}")
    return _Builder(layout, path, plan, model or SlotModel(), (method, noise)).build()
