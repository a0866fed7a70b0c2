"""The softmax normaliser's loop bodies: s = Σ exp2((l − m)·LOG2E), three dataflows.

Every body is built from one step per float32 vector, :func:`exp_step`:
``d = l − m``, ``z = d·LOG2E``, push ``exp2 z`` to the SFU, pop ``e``.

- :func:`sumexp_body`: per iteration ``u`` packed vectors (two independent unpack
  chains for u = 2), each loaded and unpacked into its low and high float32
  halves (or, ``landed``, the two float32 vectors loaded from where the row-max
  pass stored them), and the e's accumulated into ``workers`` loop-carried sums
  (independent register groups: the short VALU dependence ``acc += e`` is reused
  only every ``workers``-th vector). With ``workers = 2u`` this is dataflow (b)
  (or (a) when landed); with 4 workers and u = 2 the note's pipelined loop.
- :func:`online_body`: dataflow (c), one pass with a running max and rescale.

Registers (``regs``): ``src`` the packed row's base, ``landed`` the float32 row's
base, ``max`` the broadcast row max, ``log2e`` the constant, ``zero`` zeros.
"""

from rslab.kernels.ops.rowmax import PACKED_BYTES
from rslab.schedule import Addr, Op, Use

EXP2_OPS = ("vexp2", "vexp2.p")
"""The SFU's fast exp2 and the correctly rounded one."""


def check_exp2(exp2: str) -> str:
    if exp2 not in EXP2_OPS:
        raise ValueError(f"exp2 must be one of {EXP2_OPS}, got {exp2!r}")
    return exp2


def check_workers(workers, u):
    """``workers`` must divide the 2u float32 vectors of an iteration."""
    if not isinstance(u, int) or u < 1:
        raise ValueError(f"packed_per_iter must be a positive int, got {u!r}")
    if not isinstance(workers, int) or workers < 1 or (2 * u) % workers:
        raise ValueError(f"workers must divide the {2 * u} float32 vectors of an iteration, "
                         f"got {workers!r}")


def check_remainder(workers: int, u: int, kept: int):
    """A partial last iteration keeping ``kept`` of ``u`` packed vectors must not cut an
    accumulator chain: with fewer workers than float32 vectors, a dropped add would lose
    the kept partial sum before it."""
    if kept < u and workers < 2 * u:
        raise ValueError(f"the row leaves a partial iteration ({kept} of {u} packed vectors); "
                         f"with {workers} workers an accumulator chain would be cut: use "
                         f"workers = {2 * u} or a multiple of {u} vectors")


def exp_step(k, x: str, regs, exp2: str = "vexp2", m=None) -> tuple[list, str]:
    """(ops, e{k}): e = exp2((x − m)·LOG2E) for float32 vector k (``m``: the max's value name,
    default the live-in ``regs['max']``)."""
    return [Op("vsub.f32", f"z{k}", (x, m or regs["max"])),
            Op("vmul.f32", f"y{k}", (f"z{k}", regs["log2e"])),
            Op(exp2, f"@e{k}", (f"y{k}",)), Op("vpop", f"e{k}", (f"@e{k}",))], f"e{k}"


def float_half(k: int, u: int, regs, *, landed: bool = False) -> Op:
    """Float32 vector k = 2b + h (half h of packed vector ``x{b}``) of an iteration as
    ``l{k}``: unpacked, or, ``landed``, loaded from where the row-max pass stored it."""
    if landed:
        return Op("vld", f"l{k}", addr=Addr(regs["landed"], PACKED_BYTES * k,
                                            2 * PACKED_BYTES * u))
    return Op(f"vunpack.{('lo', 'hi')[k % 2]}", f"l{k}", (f"x{k // 2}",))


def packed_loads(u: int, regs) -> list:
    """The loads ``x{b}`` of the iteration's ``u`` packed vectors from ``regs['src']``."""
    return [Op("vld", f"x{b}", addr=Addr(regs["src"], PACKED_BYTES * b, PACKED_BYTES * u))
            for b in range(u)]


def sumexp_body(u: int, regs, *, workers: int = 4, exp2: str = "vexp2",
                landed: bool = False) -> list:
    """The sum-exp loop body; worker w's accumulator is the loop-carried value ``acc{w}``."""
    check_workers(workers, u)
    check_exp2(exp2)
    body = [] if landed else packed_loads(u, regs)
    chains = {w: [] for w in range(workers)}
    for k in range(2 * u):
        body.append(float_half(k, u, regs, landed=landed))
        ops, e = exp_step(k, f"l{k}", regs, exp2)
        body += ops
        chains[k % workers].append(e)
    for w, es in chains.items():
        prev = f"acc{w}"
        for j, e in enumerate(es):
            dst = f"acc{w}" if j == len(es) - 1 else f"acc{w}_{j}"
            body.append(Op("vadd.f32", dst, (prev, e)))
            prev = dst
    return body


def accumulators(workers: int) -> list:
    """The loop-carried sums of :func:`sumexp_body`."""
    return [f"acc{w}" for w in range(workers)]


def tree_ops(opcode: str, names, prefix: str) -> tuple[list, str]:
    """(ops, result): ``names`` reduced pairwise with ``opcode`` into fresh values."""
    ops, level, k = [], list(names), 0
    while len(level) > 1:
        nxt = []
        for i in range(0, len(level) - 1, 2):
            out = f"{prefix}{k}"
            k += 1
            ops.append(Op(opcode, out, (level[i], level[i + 1])))
            nxt.append(out)
        if len(level) % 2:
            nxt.append(level[-1])
        level = nxt
    return ops, level[0]


def online_body(u: int, regs, *, exp2: str = "vexp2") -> tuple[list, list]:
    """Dataflow (c), one block of ``u`` packed vectors: block max, rescale, exp2, block sum.

    m ← max(m, block max); s ← s·exp2(min(m_old − bm, 0)·LOG2E) + Σ exp2((x − m)·LOG2E).
    min(m_old − bm, 0) equals m_old − m_new and reads only the old m.
    """
    check_exp2(exp2)
    ops, xs = [], []
    for b in range(u):
        p = f"p{b}"
        ops += [Op("vld", p, addr=Addr(regs["src"], PACKED_BYTES * b, PACKED_BYTES * u)),
                Op("vunpack.lo", f"x{2 * b}", (p,)), Op("vunpack.hi", f"x{2 * b + 1}", (p,))]
        xs += [f"x{2 * b}", f"x{2 * b + 1}"]
    tree, bm = tree_ops("vmax.f32", xs, "bm")
    ops += tree
    ops += [Op("vsub.f32", "dm", (Use("m", 1), bm)), Op("vmin.f32", "dmc", ("dm", regs["zero"])),
            Op("vmul.f32", "zm", ("dmc", regs["log2e"])), Op(exp2, "@r", ("zm",)),
            Op("vpop", "r", ("@r",)), Op("vmax.f32", "m", ("m", bm))]
    es = []
    for j, x in enumerate(xs):
        step, e = exp_step(j, x, regs, exp2, m="m")
        ops += step
        es.append(e)
    tree, bs = tree_ops("vadd.f32", es, "bs")
    ops += tree
    ops += [Op("vmul.f32", "sr", ("s", "r")), Op("vadd.f32", "s", ("sr", bs))]
    return ops, ["m", "s"]
