"""Functional semantics: one small interpreter per unit (VALU, XLU, load/store, scalar).

Each ``compile_*`` turns one decoded op into a callable with its register rows,
memory and immediates already bound, so executing it costs one Python call and
one or two NumPy operations on a 128-lane row; where the op is one NumPy call it
is that call bound by ``functools.partial`` (its output row passed by position and
its constants as 0-d arrays, which NumPy takes fastest). Timing lives in
``simulator``. SFU pushes and pops are handled there too (they need the issue
cycle).
"""

from functools import partial

import numpy as np

from rslab.machine.bf16 import f32_to_bf16_bits
from rslab.numerics.rng import hw_random_words_into

MASK32 = 0xFFFFFFFF


class OpFault(Exception):
    """A runtime fault inside one op; the simulator turns it into a ``MachineError`` at
    ``cycle``."""

    def __init__(self, message: str, text: str = ""):
        super().__init__(message)
        self.message, self.text = message, text
        self.cycle = None  # the faulting bundle's issue cycle, set by its issue function


class Context:
    """Machine state the closures bind to: vector rows (uint32 and float32 views), scalars,
    VMEM and HBM words, the run's memory guard (:mod:`rslab.machine.guard`) or None; on a
    chip, the core's index and the chip's exchange (:class:`rslab.machine.exchange.Exchange`;
    None on a lone core)."""

    def __init__(self, regs_u32, scalars, vmem, hbm, guard=None, core: int = 0, exchange=None):
        self.guard = guard
        self.R = regs_u32
        self.F = regs_u32.view(np.float32)
        self.S = scalars
        self.M = vmem
        self.H = hbm
        self.core, self.exchange = core, exchange
        self.lanes = regs_u32.shape[1]
        self.iota = np.arange(self.lanes, dtype=np.uint32)
        self.fbuf = np.zeros(4, dtype=np.uint32)


def _cmp(fn, fa, fb, rd):
    def run():
        rd[:] = fn(fa, fb)
        np.negative(rd, out=rd)
    return run


def _shift(left, ra, b, rd, R):
    op = np.left_shift if left else np.right_shift
    if b[0] == "imm":
        amount = b[1]  # the assembler keeps shift immediates in [0, 2^32)
        if amount >= 32:
            return partial(rd.fill, 0)
        return partial(op, ra, np.array(amount, np.uint32), rd)
    rb = R[b[1]]

    def run():
        rd[:] = np.where(rb < 32, op(ra, rb & np.uint32(31)), np.uint32(0))
    return run


def _mulhi(ra, rb, rd):
    def run():
        rd[:] = (ra.astype(np.uint64) * rb.astype(np.uint64)) >> np.uint64(32)
    return run


def _f2u(fa, rd):
    def run():
        x = np.nan_to_num(fa.astype(np.float64), nan=0.0, posinf=MASK32, neginf=0.0)
        rd[:] = np.clip(np.trunc(x), 0, MASK32).astype(np.uint32)
    return run


_BINARY_F = {"vadd.f32": np.add, "vsub.f32": np.subtract, "vmul.f32": np.multiply,
             "vmax.f32": np.maximum, "vmin.f32": np.minimum}
_BINARY_U = {"vand": np.bitwise_and, "vor": np.bitwise_or, "vxor": np.bitwise_xor,
             "vadd.u32": np.add, "vsub.u32": np.subtract, "vmullo.u32": np.multiply}
_COMPARES = {"vcmpgt.f32": np.greater, "vcmpge.f32": np.greater_equal,
             "vcmplt.f32": np.less, "vcmpeq.f32": np.equal}
_SIXTEEN = np.array(16, np.uint32)
_HIGH_HALF = np.array(0xFFFF0000, np.uint32)


def _binary(fn, a, b, out):
    """``fn(a, b)`` into ``out``; ``np.maximum``/``np.minimum`` take ``out`` by keyword only
    (their positional ``out`` is deprecated), which a closure passes faster than a ``partial``
    (that merges its keywords at every call)."""
    if fn in (np.maximum, np.minimum):
        def run():
            fn(a, b, out=out)
        return run
    return partial(fn, a, b, out)


def compile_valu(name, vd, srcs, ctx):
    """Closure for a VALU op writing row ``vd`` (index) from ``srcs`` (tagged operands)."""
    R, F, S = ctx.R, ctx.F, ctx.S
    rd, fd = R[vd], F[vd]
    a = srcs[0] if srcs else None
    ra = R[a[1]] if a and a[0] == "v" else None
    fa = F[a[1]] if a and a[0] == "v" else None
    rb = R[srcs[1][1]] if len(srcs) > 1 and srcs[1][0] == "v" else None
    fb = F[srcs[1][1]] if rb is not None else None
    if name in _BINARY_F:
        return _binary(_BINARY_F[name], fa, fb, fd)
    if name in _BINARY_U:
        return _binary(_BINARY_U[name], ra, rb, rd)
    if name in _COMPARES:
        return _cmp(_COMPARES[name], fa, fb, rd)
    if name == "vsel":
        rm, rx, ry = ra, rb, R[srcs[2][1]]

        def run():
            rd[:] = np.where(rm != 0, rx, ry)
        return run
    if name == "vmov":
        return partial(rd.__setitem__, Ellipsis, ra)
    if name == "vunpack.lo":
        return partial(np.left_shift, ra, _SIXTEEN, rd)
    if name == "vunpack.hi":
        return partial(np.bitwise_and, ra, _HIGH_HALF, rd)
    if name == "vpack":
        def run():
            lo = f32_to_bf16_bits(fa).astype(np.uint32)
            rd[:] = lo | (f32_to_bf16_bits(fb).astype(np.uint32) << np.uint32(16))
        return run
    if name in ("vshl", "vshr"):
        return _shift(name == "vshl", ra, srcs[1], rd, R)
    if name == "vmulhi.u32":
        return _mulhi(ra, rb, rd)
    if name == "vcvt.u2f":
        return partial(fd.__setitem__, Ellipsis, ra)  # assignment rounds to nearest
    if name == "vcvt.f2u":
        return _f2u(fa, rd)
    if name == "vbcast":
        sa = a[1]
        return lambda: rd.fill(S[sa])
    if name == "vli":
        return partial(rd.fill, np.uint32(a[1]))
    if name == "viota":
        return partial(rd.__setitem__, Ellipsis, ctx.iota)
    if name == "vrand":
        rc, sk, tmp = ra, srcs[1][1], np.empty_like(rd)
        return lambda: hw_random_words_into(S[sk], rc, rd, tmp)
    raise AssertionError(name)


def _f32_bits(x) -> int:
    return int(np.float32(x).view(np.uint32))


def tree_sum(x):
    """float32 sum as a fixed pairwise tree: lane l + lane l + ceil(n/2), repeated."""
    x = x.copy()
    n = x.size
    while n > 1:
        h = (n + 1) // 2
        x[:n - h] += x[h:n]
        n = h
    return x[0]


def compile_xlu(name, sd, va, ctx):
    """Closure for a cross-lane reduction of row ``va`` into scalar register ``sd``."""
    S, fa = ctx.S, ctx.F[va]
    if name == "vred.max":
        def run():
            S[sd] = _f32_bits(np.max(fa))
    elif name == "vred.min":
        def run():
            S[sd] = _f32_bits(np.min(fa))
    elif name == "vred.add":
        def run():
            S[sd] = _f32_bits(tree_sum(fa))
    elif name == "vred.argmax":
        def run():
            S[sd] = int(np.argmax(fa))
    else:
        raise AssertionError(name)
    return run


def _unaligned(a: int, text: str) -> OpFault:
    return OpFault(f"unaligned VMEM address {a} (must be a multiple of 4)", text)


def _address_fault(a: int, span_words: int, limit_words: int, text: str) -> OpFault:
    """The fault of an access of ``span_words`` words at byte ``a`` that is unaligned or
    leaves VMEM (``limit_words`` words)."""
    if a & 3:
        return _unaligned(a, text)
    return OpFault(f"VMEM access [{a}, {a + 4 * span_words}) out of bounds "
                   f"(VMEM has {4 * limit_words} bytes)", text)


def compile_ldst(name, reg, mem, stride, ctx, text=""):
    """Closure for ``vld``/``vst`` (contiguous or strided) and ``sld``/``sst``.

    Each computes its byte address ``[sA + imm]`` and checks it (aligned, inside VMEM)
    before it accesses memory; with a guard in ``ctx``, also against the guard's regions."""
    run = _ldst(name, reg, mem, stride, ctx, text)
    if ctx.guard is None:
        return run
    _, sa, offset = mem
    lanes = ctx.lanes if name in ("vld", "vst", "vld.s", "vst.s") else 1
    first, last = ((0, lanes - 1) if stride is None
                   else (min(0, stride * (lanes - 1)), max(0, stride * (lanes - 1))))
    S, check, store = ctx.S, ctx.guard.check, name in ("vst", "vst.s", "sst")

    def guarded():
        a = S[sa] + offset
        check(store, a + 4 * first, a + 4 * last + 4, text)
        run()
    return guarded


def _ldst(name, reg, mem, stride, ctx, text):
    S, M, R, L = ctx.S, ctx.M, ctx.R, ctx.lanes
    _, sa, offset = mem
    n = M.size
    if name in ("sld", "sst"):
        if name == "sld":
            def run():
                a = S[sa] + offset
                if a & 3 or a < 0 or (a >> 2) >= n:
                    raise _address_fault(a, 1, n, text)
                S[reg] = int(M[a >> 2])
        else:
            def run():
                a = S[sa] + offset
                if a & 3 or a < 0 or (a >> 2) >= n:
                    raise _address_fault(a, 1, n, text)
                M[a >> 2] = S[reg]
        return run
    row = R[reg]
    if stride is None:
        if name == "vld":
            def run():
                a = S[sa] + offset
                w = a >> 2
                if a & 3 or a < 0 or w + L > n:
                    raise _address_fault(a, L, n, text)
                row[...] = M[w:w + L]
        else:
            def run():
                a = S[sa] + offset
                w = a >> 2
                if a & 3 or a < 0 or w + L > n:
                    raise _address_fault(a, L, n, text)
                M[w:w + L] = row
        return run
    steps = np.arange(L, dtype=np.int64) * stride
    lo, hi = int(steps.min()), int(steps.max())

    def index():
        a = S[sa] + offset
        if a & 3:
            raise _unaligned(a, text)
        w = a >> 2
        if w + lo < 0 or w + hi >= n:
            raise OpFault(f"strided VMEM access from byte {a} with stride {stride} words "
                          f"leaves VMEM ({4 * n} bytes)", text)
        return w + steps
    if name == "vld.s":
        def run():
            row[:] = M[index()]
    else:
        def run():
            M[index()] = row
    return run


def compile_exchange(name, reg, mem, ctx, text=""):
    """Closure for ``sxst``, ``xst`` and ``xld``: the chip's exchange at byte ``[sA + imm]``
    (:class:`rslab.machine.exchange.Exchange` checks the address and that a read sees only
    words a barrier has published)."""
    S, R, ex, core, L = ctx.S, ctx.R, ctx.exchange, ctx.core, ctx.lanes
    _, sa, offset = mem
    if name == "sxst":
        word = np.zeros(1, np.uint32)

        def run():
            word[0] = S[reg]
            ex.store(core, S[sa] + offset, word, text)
    elif name == "xst":
        row = R[reg]

        def run():
            ex.store(core, S[sa] + offset, row, text)
    else:
        row = R[reg]

        def run():
            row[...] = ex.load(core, S[sa] + offset, L, text)
    return run


def _signed(x):
    return x - (1 << 32) if x & 0x80000000 else x


_SCALAR = {
    "sadd": lambda x, y: (x + y) & MASK32,
    "ssub": lambda x, y: (x - y) & MASK32,
    "smul": lambda x, y: (x * y) & MASK32,
    "sand": lambda x, y: x & y,
    "sor": lambda x, y: x | y,
    "sxor": lambda x, y: x ^ y,
    "sshl": lambda x, y: (x << y) & MASK32 if y < 32 else 0,
    "sshr": lambda x, y: x >> y if y < 32 else 0,
    "slt": lambda x, y: int(_signed(x) < _signed(y)),
    "sltu": lambda x, y: int(x < y),
    "seq": lambda x, y: int(x == y),
}


def compile_scalar(name, sd, srcs, ctx):
    """Closure for a scalar ALU op writing scalar register ``sd``."""
    S = ctx.S
    if name == "scid":
        core = ctx.core

        def run():
            S[sd] = core
        return run
    if name == "sli":
        value = srcs[0][1]

        def run():
            S[sd] = value
        return run
    if name == "smov":
        sa = srcs[0][1]

        def run():
            S[sd] = S[sa]
        return run
    if name in _SCALAR:
        fn = _SCALAR[name]
        sa, b = srcs[0][1], srcs[1]
        if b[0] == "imm":
            y = b[1] & MASK32

            def run():
                S[sd] = fn(S[sa], y)
        else:
            sb = b[1]

            def run():
                S[sd] = fn(S[sa], S[sb])
        return run
    buf = ctx.fbuf
    fbuf = buf.view(np.float32)
    sa, sb = srcs[0][1], srcs[1][1]
    if name == "sflt":
        def run():
            buf[0], buf[1] = S[sa], S[sb]
            S[sd] = int(fbuf[0] < fbuf[1])
        return run
    fn = {"sfadd": np.add, "sfsub": np.subtract, "sfmul": np.multiply}[name]

    def run():
        buf[0], buf[1] = S[sa], S[sb]
        fbuf[2] = fn(fbuf[0], fbuf[1])
        S[sd] = int(buf[2])
    return run
