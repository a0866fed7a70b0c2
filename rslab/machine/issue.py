"""One generated function per decoded bundle: its issue, written out (the simulator's hot path).

The issue model (:mod:`rslab.machine.simulator`) applied to one bundle is a fixed sequence:
the waits, each named by its stall cause (``raw`` for each source register,
``bank-conflict`` for the load and store ports, ``sfu-hold`` and ``fifo-full`` for a push,
``sfu-wait`` for a pop, ``dma-wait``; on a core of a chip, :mod:`rslab.machine.chip`, a
``dmawait`` then waits for the shared HBM, ``hbm``, and a ``bar`` for its release,
``barrier``), then the branch test, the effects (SFU pops and pushes, the ops in bundle
order, the port bookings, the DMAs) and the scoreboard writes.
Interpreting that sequence from the bundle's fields at every issue costs loops and tests
on fields that never change, so each bundle gets a function with its sequence written out,
``issue(pc, t, cause) -> (t, cause, jump)``: given the cycle and cause of the in-order and
branch constraints, it returns the issue cycle, the binding cause and the branch target
(−1: no taken branch). Its source depends only on the bundle's *shape* (how many sources,
writes, ops, loads, …; :func:`issue_source` prints it), so it is compiled once per shape
in a process and bound per bundle to its register ids, op closures and the core's state.
For ``vld v0, [s5 + 6144] ; vpop v2 ; vmul.f32 v1, v1, v63`` it reads::

    def issue(pc, t, cause):
        if ready[r0] > t:  # raw
            t, cause = ready[r0], RAW
        ... (r1, r2 alike)
        if ld_ports[0] > t:  # bank-conflict
            t, cause = ld_ports[0], BANK
        if not fifo:
            raise core.empty_fifo(pc, t)
        if fifo[0] > t:  # sfu-wait
            t, cause = fifo[0], WAIT
        try:
            if not results:  # pop 0
                resolve()
            row0[...] = results.popleft()
            fifo.popleft()
            credits.append(t + lat_pop)
            op0()
            op1()
            ld_ports[0] = t + ld0
        except OpFault as fault:
            fault.cycle = t
            raise
        ready[w0] = t + l0
        ... (w1, w2 alike)
        return t, cause, -1
"""

from functools import lru_cache
from typing import NamedTuple

from rslab.machine.stalls import (
    BANK,
    BARRIER,
    CHIP_CAUSES,
    DMA,
    FULL,
    HBM,
    HOLD,
    RAW,
    WAIT,
)
from rslab.machine.units import OpFault

_CAUSES = {"RAW": RAW, "BANK": BANK, "HOLD": HOLD, "FULL": FULL, "WAIT": WAIT, "DMA": DMA,
           "HBM": HBM, "BAR": BARRIER}
"""The names the generated code charges stalls to, and their indices in ``CHIP_CAUSES``."""


class Shape(NamedTuple):
    """What the source of a bundle's issue function depends on."""

    srcs: int
    writes: int
    ops: int
    loads: int
    stores: int
    pushes: int
    pops: int
    dmawait: str | None
    """``"all"``, ``"tag"`` or None."""
    dmas: bool
    branch: int | None
    """0 ``jmp``, 1 ``bz``, 2 ``bnz`` or None."""
    ld_ports: int
    st_ports: int
    shared: bool = False
    """A core of a chip: ``dmawait`` waits for its own engine (``dma-wait``), then for the
    shared HBM (``hbm``)."""
    barrier: bool = False
    """``bar``: waits for the release the chip set (``barrier``)."""


def shape(b, ld_ports: int, st_ports: int, shared: bool = False) -> Shape:
    """The shape of compiled bundle ``b`` on a machine with these load and store ports
    (``shared``: on a core of a chip)."""
    wait = None if b.dmawait is None else "all" if b.dmawait < 0 else "tag"
    return Shape(len(b.srcs), len(b.writes), len(b.run), len(b.loads), len(b.stores),
                 len(b.pushes), len(b.pops), wait, bool(b.dmas),
                 None if b.branch is None else b.branch[0], ld_ports, st_ports,
                 shared and wait is not None, b.barrier is not None)


def _names(prefix: str, n: int) -> str:
    """``"p0, p1, "``: the target of unpacking ``n`` values."""
    return "".join(f"{prefix}{i}, " for i in range(n))


def _wait(value: str, cause: str) -> list[str]:
    """A constraint: the bundle issues no earlier than ``value``, else ``cause`` binds."""
    return [f"if {value} > t:  # {CHIP_CAUSES[_CAUSES[cause]]}",
            f"    t, cause = {value}, {cause}"]


def _bindings(s: Shape) -> list[str]:
    """The factory's lines binding the bundle's fields and the core's state to names."""
    lines = ["ready, S, fifo = core.ready, core.ctx.S, core.fifo",
             "ld_ports, st_ports, dma_tag = core.ld_ports, core.st_ports, core.dma_tag",
             "results, credits, resolve = core.results, core.credits, core.resolve",
             "ring_rows, ring_fns, size = core.ring_rows, core.ring_fns, len(core.ring_rows)",
             "hold, lat_pop, lat_sfu = 1 + core.sfu_hold, core.lat_pop, core.lat_sfu",
             "depth = core.fifo_depth",
             "start_dmas = core.start_dmas"]
    unpack = [("r", s.srcs, "b.srcs"), ("w", s.writes, "(r for r, _ in b.writes)"),
              ("l", s.writes, "(lat for _, lat in b.writes)"), ("op", s.ops, "b.run"),
              ("ld", s.loads, "b.loads"), ("st", s.stores, "b.stores"),
              ("fn", s.pushes, "(fn for fn, _ in b.pushes)"),
              ("src", s.pushes, "(src for _, src in b.pushes)"), ("row", s.pops, "b.pops")]
    lines += [f"{_names(p, n)}= {v}" for p, n, v in unpack if n]
    if s.dmawait == "tag":
        lines.append("tag = b.dmawait")
    if s.dmas:
        lines.append("dmas = b.dmas")
    if s.shared:
        lines.append("dma_alone = core.dma_alone")
    if s.branch is not None:
        lines.append("_, breg, target = b.branch")
    return lines


def _waits(s: Shape) -> list[str]:
    """The constraints of the issue model beyond in-order and branch, in tie order."""
    lines = []
    for i in range(s.srcs):
        lines += _wait(f"ready[r{i}]", "RAW")
    if s.loads:
        lines += _wait(f"ld_ports[{s.loads - 1}]", "BANK")
    if s.stores:
        lines += _wait(f"st_ports[{s.stores - 1}]", "BANK")
    if s.pushes:
        lines += _wait("core.sfu_free", "HOLD")
        lines += ["while credits and credits[0] <= t:  # entries popped by t are free",
                  "    credits.popleft()",
                  f"if len(fifo) + len(credits) + {s.pushes} > depth:",
                  f"    x = core.fifo_space({s.pushes}, t, pc)",
                  *("    " + line for line in _wait("x", "FULL"))]
    if s.pops:
        lines += ["if not fifo:" if s.pops == 1 else f"if len(fifo) < {s.pops}:",
                  "    raise core.empty_fifo(pc, t)", *_wait(f"fifo[{s.pops - 1}]", "WAIT")]
    if s.dmawait is not None and s.shared:
        lines += _wait("core.dma_alone_all" if s.dmawait == "all" else "dma_alone[tag]", "DMA")
        lines += _wait("core.dma_all" if s.dmawait == "all" else "dma_tag[tag]", "HBM")
    elif s.dmawait is not None:
        lines += _wait("core.dma_all" if s.dmawait == "all" else "dma_tag[tag]", "DMA")
    if s.barrier:
        lines += _wait("core.release", "BAR")
    return lines


def _pop(i: int) -> list[str]:
    """Pop ``i``: the FIFO head's result (computed with the results pending after it, if it is
    not yet) into its row; the entry is free again ``latency['pop']`` cycles later."""
    return [f"if not results:  # pop {i}", "    resolve()", f"row{i}[...] = results.popleft()",
            "fifo.popleft()", "credits.append(t + lat_pop)"]


def _push(i: int) -> list[str]:
    """Push ``i``: its operand row and function into the ring, its ready cycle into the FIFO
    (the result is computed when first popped)."""
    return [f"k = core.pushed % size  # push {i}", f"ring_rows[k][...] = src{i}",
            f"ring_fns[k] = fn{i}", "core.pushed += 1", "fifo.append(t + lat_sfu)"]


def _effects(s: Shape) -> list[str]:
    """The branch test, then the effects in order: pops, pushes, ops, port bookings, DMAs."""
    lines = [["jump = target", "jump = target if S[breg] == 0 else -1",
              "jump = target if S[breg] != 0 else -1"][s.branch]] if s.branch is not None else []
    body = [line for i in range(s.pops) for line in _pop(i)]
    body += [line for i in range(s.pushes) for line in _push(i)]
    body += ["core.sfu_free = t + hold"] if s.pushes else []
    body += [f"op{i}()" for i in range(s.ops)]
    for kind, n, ports in (("ld", s.loads, s.ld_ports), ("st", s.stores, s.st_ports)):
        body += [f"{kind}_ports[{i}] = t + {kind}{i}" for i in range(n)]
        body += [f"{kind}_ports.sort()"] if n and ports > 1 else []
    body += ["start_dmas(dmas, t, pc)"] if s.dmas else []
    if s.ops or s.dmas:  # the ops and DMAs that fault report the issue cycle
        body = ["try:", *("    " + line for line in body), "except OpFault as fault:",
                "    fault.cycle = t", "    raise"]
    return lines + body


def issue_source(s: Shape) -> str:
    """The source of the factory of shape ``s``'s issue functions: ``make(core, b)``."""
    body = [*_waits(s), *_effects(s)]
    body += [f"ready[w{i}] = t + l{i}" for i in range(s.writes)]
    body.append(f"return t, cause, {'jump' if s.branch is not None else -1}")
    lines = ["def make(core, b):", *("    " + line for line in _bindings(s)), "",
             "    def issue(pc, t, cause):", *("        " + line for line in body), "",
             "    return issue"]
    return "\n".join(lines) + "\n"


@lru_cache(maxsize=4096)
def factory(s: Shape):
    """``make(core, b)`` of shape ``s``, compiled once per shape in a process."""
    namespace = {**_CAUSES, "OpFault": OpFault}
    exec(compile(issue_source(s), f"<issue {tuple(s)}>", "exec"), namespace)
    return namespace["make"]


def bind(b, core):
    """The issue function of compiled bundle ``b`` on ``core`` (a simulator ``_Core``)."""
    return factory(shape(b, len(core.ld_ports), len(core.st_ports), core.shared))(core, b)
