"""The row maximum of packed BF16 vectors: load, unpack both halves, running max.

Three ways to keep the running max, each a choice a kernel makes:

- ``"half"``: two accumulators per packed vector, ``m{2b} = max(m{2b}, lo)`` and
  ``m{2b+1} = max(m{2b+1}, hi)`` (the recurrence is one max);
- ``"vector"``: one per packed vector, ``t = max(lo, hi)``, ``acc{b} = max(acc{b}, t)``;
- ``"chain"``: one accumulator for everything, ``acc0 = max(max(acc0, lo), hi)`` — the
  natural first translation (two maxes on the recurrence).

``land`` also stores the float32 halves: ``"helper"`` with the generic BF16→FP32
helper's stride-2 stores (word 2l ← element l, word 2l+1 ← element l+128),
``"lanes"`` with two contiguous stores (the changed layout: float32 vector
k = 2b + h of the row at byte ``k·512``).

Registers (``regs``): ``src`` the packed row's base, ``dst`` the landing base.
"""

from rslab.schedule import Addr, Op

PACKED_BYTES = 512
"""Bytes of one packed vector (128 lanes × 32 bit = 256 BF16 elements)."""
ACCUMULATE = ("half", "vector", "chain")
LANDINGS = (None, "helper", "lanes")


def _check(u, accumulate, land):
    if not isinstance(u, int) or u < 1:
        raise ValueError(f"u must be a positive int, got {u!r}")
    if accumulate not in ACCUMULATE:
        raise ValueError(f"accumulate must be one of {ACCUMULATE}, got {accumulate!r}")
    if accumulate == "chain" and u != 1:
        raise ValueError("accumulate='chain' keeps one accumulator: u must be 1")
    if land not in LANDINGS:
        raise ValueError(f"land must be one of {LANDINGS}, got {land!r}")


def landing_ops(b: int, u: int, land: str, regs) -> list:
    """Stores of packed vector b's float32 halves ``lo{b}``, ``hi{b}`` at ``regs['dst']``."""
    step, off, dst = 2 * PACKED_BYTES * u, 2 * PACKED_BYTES * b, regs["dst"]
    if land == "helper":
        return [Op("vst.s", None, (f"lo{b}", "2"), addr=Addr(dst, off, step), name=f"st{b}lo"),
                Op("vst.s", None, (f"hi{b}", "2"), addr=Addr(dst, off + 4, step),
                   name=f"st{b}hi")]
    return [Op("vst", None, (f"lo{b}",), addr=Addr(dst, off, step), name=f"st{b}lo"),
            Op("vst", None, (f"hi{b}",), addr=Addr(dst, off + PACKED_BYTES, step),
               name=f"st{b}hi")]


def _accumulate_ops(b: int, accumulate: str) -> tuple[list, list]:
    lo, hi = f"lo{b}", f"hi{b}"
    if accumulate == "half":
        a, c = f"m{2 * b}", f"m{2 * b + 1}"
        return [Op("vmax.f32", a, (a, lo)), Op("vmax.f32", c, (c, hi))], [a, c]
    if accumulate == "vector":
        return [Op("vmax.f32", f"t{b}", (lo, hi)),
                Op("vmax.f32", f"acc{b}", (f"acc{b}", f"t{b}"))], [f"acc{b}"]
    return [Op("vmax.f32", "acc0_0", ("acc0", lo)),
            Op("vmax.f32", "acc0", ("acc0_0", hi))], ["acc0"]


def rowmax_body(u: int, regs, *, accumulate: str = "half", land=None) -> tuple[list, list]:
    """(ops, loop-carried accumulators) of one iteration over ``u`` packed vectors."""
    _check(u, accumulate, land)
    ops = [Op("vld", f"x{b}", addr=Addr(regs["src"], PACKED_BYTES * b, PACKED_BYTES * u))
           for b in range(u)]
    carried = []
    for b in range(u):
        ops += [Op("vunpack.lo", f"lo{b}", (f"x{b}",)), Op("vunpack.hi", f"hi{b}", (f"x{b}",))]
        if land:
            ops += landing_ops(b, u, land, regs)
        acc_ops, accs = _accumulate_ops(b, accumulate)
        ops += acc_ops
        carried += accs
    return ops, carried
