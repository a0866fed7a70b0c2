"""One argmax row of the sampler (residual or bonus): its state, its loops, its token.

:class:`FinalRow` holds what a row's body is under a plan (which logits it reads,
how it counts tokens, which argmax it keeps, :mod:`rslab.kernels.sampler.bodies`),
which registers its loop-carried state lives in, the straight-line code that sets
that state up, and the code that turns the state into the sampled token:

- ``argmax="streams"``: each stream kept its best score and token; a lexicographic
  reduction (score descending, token ascending) over streams and lanes;
- ``argmax="block"``: the loop kept one best score per lane and the tag of the
  iteration it came from (:mod:`rslab.kernels.ops.block_argmax`). The row's best
  score G, the earliest winning iteration j among the lanes holding G, then that
  iteration once more (the same ops, so the same bits) with its token candidates,
  and the lowest token scoring G.

Either way the row's best score is left in ``S_T[0]`` (the empty-residual fallback
tests it against ``empty_bits``) and, for Gumbel-max, stored as the ``score``
diagnostic. The row draws by Gumbel-max (its best starts at −∞; a row with no
positive weight keeps −∞) or by the race (its best starts at 0: a score that is not
positive never wins, and a row where none is keeps 0), the builder's ``draw``.
"""

from __future__ import annotations

from rslab.kernels.sampler.bodies import final_body, hoisted_philox, recompute_body
from rslab.kernels.sampler.draws import needs_row_max
from rslab.kernels.sampler.layout import PACKED_BYTES, Q_BYTES_PER_PACKED
from rslab.kernels.sampler.registers import (
    CARRIED,
    GLUE,
    POOL,
    S_FB,
    S_KEY,
    S_LB,
    S_QB,
    S_T,
    V_C1,
    V_C2,
    V_C3,
    V_C128,
    V_C256,
    V_C384,
    V_STEP,
)

F32_2P23 = 0x4B000000
"""The float32 bits of 2^23: for an integer n < 2^23, the low 23 bits of fl(n + 2^23) are n."""
F32_MINUS_INF = 0xFF800000


class FinalRow:
    """The residual (``kind="residual"``) or bonus row of request ``r`` at position ``s``."""

    block_sums = False
    """An argmax row, not a pass of block sums (:class:`~rslab.kernels.sampler.invcdf_row.
    InvcdfRow`)."""

    def __init__(self, builder, kind: str, r: int, s: int):
        self.b, self.kind, self.r, self.s = builder, kind, r, s
        plan, path, u = builder.plan, builder.path, builder.final_u
        self.u, self.streams = u, 2 * u
        self.block = plan.argmax == "block"
        self.own = plan.rotate_counters and path == "fast"
        hoist = path == "exact" and plan.hoist_philox
        self.regs = self._registers(hoist)
        self.hoisted = [self.regs[f"hx{i}"] for i in range(4)] if hoist else None
        self.draw = builder.draw
        self.race = self.draw[0] == "race"
        self.row = {"source": self._source(), "counters": "own" if self.own else "offsets",
                    "argmax": plan.argmax, "hoisted": self.hoisted, "draw": self.draw}
        self.body = self.rewrite(final_body(kind, path, u, **self.row))
        self.carried = {v: self.regs[v] for v in self._state_values()}
        # renamed where a late read would pin them: Fast counters read at the end of the
        # chain, the Exact counter c0 as the block argmax's tag
        self.rotating = tuple(self._counters()) if self.own or (
            self.block and plan.rotate_counters) else ()
        self.pool = builder.loop_pool + (self._spare() if self.block else [])

    # ------------------------------------------------------- what the row is
    def rewrite(self, body: list) -> list:
        """The row's ops as emitted: the sampler's as built (a variant rewrites them, see
        :mod:`rslab.kernels.sampler.shifted_bonus`)."""
        return body

    @property
    def empty_bits(self) -> int:
        """The bits of ``S_T[0]`` after a row with no weight the draw can see."""
        return 0 if self.race else F32_MINUS_INF

    def _source(self) -> str:
        plan = self.b.plan
        if self.kind == "bonus":
            return "landed" if needs_row_max(self.draw) and plan.land_fp32 else "packed"
        if plan.store_e:
            return "e"
        # The Exact path's residual keeps unpacking: with its Philox block, four float32
        # loads held per iteration no longer fit the register pool (II 83 fails to allocate).
        return "landed" if plan.land_fp32 and self.b.path == "fast" else "packed"

    def _counters(self) -> list:
        if self.b.path == "exact":
            return ["c0"] if self.block else ["ctr", "c0"]
        return [f"tok{k}" for k in range(self.streams)] if self.own else ["ctr"]

    def _state_values(self) -> list:
        k = range(self.streams)
        argmax = ["best", "it"] if self.block else [f"best{i}" for i in k] + [f"idx{i}" for i in k]
        return argmax + self._counters()

    def _spare(self) -> list:
        """Registers a block-argmax loop may use besides the path's loop pool: carried slots
        the row does not use, and constants its body does not read (the recompute's token
        offsets are set after the loop)."""
        used = set(self.regs.values()) | {s for op in self.body for s in op.srcs
                                          if isinstance(s, str)}
        spare = [c for c in CARRIED if c not in self.b.loop_pool and c not in used]
        consts = (V_C1, V_C2, V_C3, V_STEP, V_C256, V_C384) if self.b.path == "exact" else ()
        return spare + [c for c in consts if c not in used]

    def _registers(self, hoist: bool) -> dict:
        """value -> register: the argmax state, then the counters, then the hoisted Philox
        values, in ``CARRIED`` order (the streams argmax keeps its historical slots)."""
        k = range(self.streams)
        if self.block:
            names = ["best", "it"] + self._counters()
        else:
            names = [f"best{i}" for i in k] + [f"idx{i}" for i in k]
            names += ["ctr", "c0"] if self.b.path == "exact" else self._counters()
        names += [f"hx{i}" for i in range(4)] if hoist else []
        free = [c for c in CARRIED if c not in self.b.loop_pool]
        if len(names) > len(free):
            raise ValueError(f"plan: the {self.kind} row needs {len(names)} carried registers, "
                             f"the {self.b.path} path has {len(free)}")
        return dict(zip(names, free, strict=False))

    # ------------------------------------------------------- setup
    def setup(self, purpose: int):
        """Counters, the argmax state, the key (Fast) or the Philox counter words (Exact)."""
        p, u, path = self.b.p, self.u, self.b.path
        iota, tmp = GLUE[0], GLUE[1]
        p.steps((f"viota {iota}", f"vli {V_STEP}, {256 * u}"),
                (f"vli {tmp}, {(-256 * u) % 2**32 if path == 'fast' else 0}",
                 f"vli {V_C128}, 128"))
        if self.own:
            offsets = [(128 * k - 256 * u) % 2**32 for k in range(self.streams)]
            self._pairs([f"vli {GLUE[1 + k]}, {o}" for k, o in enumerate(offsets)])
            self._pairs([f"vadd.u32 {self.regs[f'tok{k}']}, {iota}, {GLUE[1 + k]}"
                         for k in range(self.streams)])
        elif "ctr" in self.regs:
            p.bundle(f"vadd.u32 {self.regs['ctr']}, {iota}, {tmp}")
        if path == "exact" and not self.block:
            p.bundle(f"vli {V_C256}, 256", f"vli {V_C384}, 384")
        start = "0" if self.race else "-inf"
        if self.block:
            p.bundle(f"vli {self.regs['best']}, {start}", f"vli {self.regs['it']}, 0")
        else:
            for k in range(self.streams):
                p.bundle(f"vli {self.regs[f'best{k}']}, {start}",
                         f"vli {self.regs[f'idx{k}']}, 0")
        if path == "fast":
            p.bundle(f"sld {S_KEY}, [s0 + {self.b.L.vm_key(self.r, self.s, purpose)}]")
            return
        p.steps((f"vli {V_C1}, {self.s}", f"vli {V_C2}, {self.r}"), f"vli {V_C3}, {purpose}",
                f"vli {GLUE[1]}, {(-128) % 2**32}", f"vadd.u32 {self.regs['c0']}, {GLUE[0]}, "
                f"{GLUE[1]}")
        if self.hoisted:
            ops, names = hoisted_philox()
            p.loop(self.b.straight(ops, {n: r for n, r in zip(names, self.hoisted,
                                                                 strict=True)}, POOL))

    def _pairs(self, ops):
        """Independent VALU ops, two to a bundle."""
        for i in range(0, len(ops), 2):
            self.b.p.bundle(*ops[i:i + 2])

    def cycles_per_packed(self) -> float:
        """The row loop's scheduled cycles per packed vector (II / u, or a plain loop's
        bundles per iteration / u)."""
        code = self.b.loop_of(self.body, self.u, self.b.plan.final_style, self.carried,
                              self.rotating, pool=self.pool)
        return (code.ii or code.body_bundles) / self.u

    # ------------------------------------------------------- loops
    def loop(self, n_packed: int, label: str, gates=None):
        """The row's loop over ``n_packed`` packed vectors (bases set by the caller; ``gates``:
        packed vector → the wait before it); the block argmax reads the padding past an
        odd row instead of a partial iteration."""
        self.b.emit(self.body, n_packed, self.u, self.b.plan.final_style, self.carried, label,
                    rotating=self.rotating, pad=self.block, pool=self.pool, gates=gates)

    # ------------------------------------------------------- the token
    def bases(self, buf: int) -> dict:
        """Base register -> row start, for every base the body reads (``buf``: the packed row)."""
        L, source = self.b.L, self.row["source"]
        out = {S_LB: buf} if source == "packed" else {}
        if self.kind == "residual":
            out[S_QB] = L.vm_q
        if source in ("landed", "e"):
            out[S_FB] = L.vm_fp32
        return out

    def finish(self, slot: int, buf: int):
        """The sampled token into ``tokens[r, slot]``, the best score into ``S_T[0]`` and the
        diagnostics (``buf``: the row's packed buffer)."""
        if self.block:
            self._recompute(self.bases(buf))
            self._store_low(slot, GLUE[3])
        else:
            self._reduce_streams()
            self._store(slot, GLUE[3])

    def _reduce_streams(self):
        """Lexicographic (score desc, token asc) over streams, per lane, into best0/idx0; the
        best score over lanes into ``S_T[0]``; per lane the token if it holds it into GLUE[3]."""
        p = self.b.p
        best = [self.regs[f"best{k}"] for k in range(self.streams)]
        idx = [self.regs[f"idx{k}"] for k in range(self.streams)]
        fb, fa, g, e = GLUE[0], GLUE[1], GLUE[2], GLUE[3]
        p.bundle(f"vcvt.u2f {idx[0]}, {idx[0]}")
        for k in range(1, len(best)):
            p.steps(f"vcvt.u2f {fb}, {idx[k]}",
                    (f"vcmpgt.f32 {g}, {best[k]}, {best[0]}", f"vcmpeq.f32 {e}, {best[k]}, "
                     f"{best[0]}"),
                    f"vcmplt.f32 {fa}, {fb}, {idx[0]}", f"vand {e}, {e}, {fa}",
                    f"vor {g}, {g}, {e}",
                    (f"vmax.f32 {best[0]}, {best[0]}, {best[k]}",
                     f"vsel {idx[0]}, {g}, {fb}, {idx[0]}"))
        t = S_T[0]
        p.steps(f"vred.max {t}, {best[0]}", f"vbcast {g}, {t}",
                f"vcmpeq.f32 {e}, {best[0]}, {g}", f"vli {fa}, inf",
                f"vsel {e}, {e}, {idx[0]}, {fa}")

    def _store(self, slot: int, candidates: str):
        """The lowest of the per-lane float ``candidates`` as the token; score diagnostics."""
        p, L, r = self.b.p, self.b.L, self.r
        fb = GLUE[0]
        p.steps(f"vred.min {S_T[1]}, {candidates}", f"vbcast {fb}, {S_T[1]}",
                f"vcvt.f2u {fb}, {fb}", f"vst {fb}, [s0 + {L.vm_scratch}]",
                f"sld {S_T[2]}, [s0 + {L.vm_scratch}]",
                f"sst {S_T[2]}, [s0 + {L.vm_tokens + 4 * (r * (L.S + 1) + slot)}]",
                self._score_store())

    def _store_low(self, slot: int, candidates: str):
        """The lowest of the per-lane float ``candidates`` (integers below 2^23) as the token,
        read from the bits of its sum with 2^23; the score diagnostic."""
        p, L, r = self.b.p, self.b.L, self.r
        token, c = S_T[1], S_T[2]
        p.steps((f"vred.min {token}, {candidates}", f"sli {c}, {F32_2P23}"),
                f"sfadd {token}, {token}, {c}", f"sand {token}, {token}, {2**23 - 1}",
                f"sst {token}, [s0 + {L.vm_tokens + 4 * (r * (L.S + 1) + slot)}]",
                self._score_store())

    def _score_store(self) -> str:
        """The ``score`` diagnostic (the Gumbel score; the race leaves it to the host)."""
        return "" if self.race else f"sst {S_T[0]}, [s0 + {self.b.L.vm_diag('score') + 4 * self.r}]"

    def _winning_iteration(self) -> str:
        """``S_T[0]`` = G, the row's best score, broadcast into ``best``; returns the scalar
        register holding j, the earliest iteration whose tag a lane holding G kept."""
        p = self.b.p
        x, y, z = GLUE[0], GLUE[1], GLUE[2]
        t, j, c = S_T[0], S_T[1], S_T[2]
        best, it = self.regs["best"], self.regs["it"]
        shift = 7 if self.b.path == "exact" else 8 + (self.u - 1)
        p.steps((f"vred.max {t}, {best}", f"vcvt.u2f {y}, {it}"), (f"vli {z}, inf",
                                                                  f"sli {c}, {F32_2P23}"),
                f"vbcast {x}, {t}", f"vcmpeq.f32 {x}, {best}, {x}",
                (f"vsel {x}, {x}, {y}, {z}", f"vbcast {best}, {t}"), f"vred.min {j}, {x}",
                f"sfadd {j}, {j}, {c}", f"sand {j}, {j}, {2**23 - 1}",
                f"sshr {j}, {j}, {shift}")
        return j

    def _iteration_state(self, j: str, bases: dict, token_base: str):
        """Base registers and counters as they were before iteration ``j``."""
        p, u = self.b.p, self.u
        a = S_T[2]
        for base, start in bases.items():
            stride = u * (PACKED_BYTES if base == S_LB else Q_BYTES_PER_PACKED)
            p.steps(f"sshl {a}, {j}, {stride.bit_length() - 1}", f"sadd {base}, {a}, {start}")
        x, iota = GLUE[0], GLUE[1]
        step = 128 if self.b.path == "exact" else 256 * u
        p.steps((f"viota {iota}", f"sshl {a}, {j}, {step.bit_length() - 1}"),
                f"sadd {a}, {a}, {(-step) % 2**32}", f"vbcast {x}, {a}")
        if self.b.path == "exact":
            p.steps((f"vadd.u32 {self.regs['c0']}, {x}, {iota}", f"sshl {a}, {j}, 9"),
                    (f"vbcast {x}, {a}", f"vli {V_C256}, 256"),
                    (f"vadd.u32 {token_base}, {x}, {iota}", f"vli {V_C384}, 384"))
            return
        offsets = [GLUE[2 + k] for k in range(self.streams)]
        p.steps((f"vadd.u32 {x}, {x}, {iota}", f"vli {offsets[1]}, 128"))
        self._pairs([f"vli {o}, {128 * k}" for k, o in enumerate(offsets) if k > 1])
        self._pairs([f"vadd.u32 {self.regs[f'tok{k}']}, {x}, {o}" if k
                     else f"vmov {self.regs['tok0']}, {x}" for k, o in enumerate(offsets)])

    def _recompute(self, bases: dict):
        """The winning iteration once more; per lane its lowest token scoring G into GLUE[3]."""
        p = self.b.p
        j = self._winning_iteration()
        best, inf, pick, token_base = self.regs["best"], self.regs["it"], GLUE[3], GLUE[4]
        p.bundle(f"vli {inf}, inf")
        self._iteration_state(j, bases, token_base)
        body = self.rewrite(recompute_body(self.kind, self.b.path, self.u, best=best, inf=inf,
                                           token_base=token_base, **self.row))
        carried = {v: self.regs[v] for v in self._counters()}
        carried["pick"] = pick
        reads = {s for op in body for s in op.srcs if isinstance(s, str)}
        pool = [r for r in self.pool if r not in (pick, token_base) and r not in reads]
        p.loop(self.b.straight(body, carried, pool))
