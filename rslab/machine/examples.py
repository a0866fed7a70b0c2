"""Small programs used by the chapter "The machine", its tests and the benchmark."""

import numpy as np

from rslab.machine.bf16 import pack_rows, unpack_rows
from rslab.machine.builder import Builder
from rslab.numerics.fastlog import LOG2E


def dependent_chain(n: int) -> str:
    """n VALU adds, each needing the previous result."""
    _positive(n, "n")
    return "vadd.f32 v1, v1, v2\n" * n + "halt\n"


def independent_ops(n: int, per_bundle: int = 2) -> str:
    """n independent VALU adds, ``per_bundle`` to a bundle."""
    _positive(n, "n")
    _positive(per_bundle, "per_bundle")
    ops = [f"vadd.f32 v{10 + i % 50}, v1, v2" for i in range(n)]
    lines = [" ; ".join(ops[i:i + per_bundle]) for i in range(0, n, per_bundle)]
    return "\n".join(lines) + "\nhalt\n"


def sfu_burst(n: int) -> str:
    """n exp2 pushes back to back, then n pops."""
    _positive(n, "n")
    return "vexp2 v1\n" * n + "".join(f"vpop v{10 + i % 50}\n" for i in range(n)) + "halt\n"


def strided_loads(stride: int, n: int = 16) -> str:
    """n strided loads ``vld.s`` with a stride in words (1 = contiguous)."""
    _positive(n, "n")
    return "".join(f"vld.s v{i % 60}, [s1 + 0], {stride}\n" for i in range(n)) + "halt\n"


def sumexp_naive(n_vectors: int) -> Builder:
    """Sum of exp2((x − m)·log2 e) over packed BF16 vectors at VMEM 0, one vector at a time.

    Expects s2 = the row max (float32 bits). Leaves the sum in s3. Each packed vector
    goes through the whole chain — load, unpack, subtract, multiply, exp2, pop,
    accumulate — before the next one starts: the first correct translation.
    """
    _positive(n_vectors, "n_vectors")
    b = Builder()
    b.emit("vbcast v9, s2", "vli v8, " + repr(float(LOG2E)))
    b.emit("vli v11, 0.0", "vli v12, 0.0")
    b.emit("sli s1, 0")
    b.label("sumexp")
    with b.loop(n_vectors):
        b.emit("vld v0, [s1 + 0]", "sadd s1, s1, 512")
        b.emit("vunpack.lo v1, v0", "vunpack.hi v2, v0")
        b.emit("vsub.f32 v3, v1, v9", "vsub.f32 v4, v2, v9")
        b.emit("vmul.f32 v5, v3, v8", "vmul.f32 v6, v4, v8")
        b.emit("vexp2 v5")
        b.emit("vexp2 v6")
        b.emit("vpop v7")
        b.emit("vpop v10")
        b.emit("vadd.f32 v11, v11, v7", "vadd.f32 v12, v12, v10")
    b.emit("vadd.f32 v13, v11, v12")
    b.emit("vred.add s3, v13")
    b.halt()
    return b


def sumexp_inputs(n_vectors: int, seed: int = 0):
    """(packed VMEM words, row max as float32, BF16-rounded row) for ``sumexp_naive``."""
    _positive(n_vectors, "n_vectors")
    rng = np.random.default_rng(seed)
    row = (rng.normal(size=256 * n_vectors) * 3).astype(np.float32)
    words = pack_rows(row)
    values = unpack_rows(words)
    return words, np.float32(values.max()), values


def resource_bound_body(iterations: int) -> str:
    """The op mix of the note's sum-exp body without its dependencies: 16 VALU ops, 4 pops
    and 4 exp2 pushes per iteration, packed into 10 bundles (ResMII = 10)."""
    _positive(iterations, "iterations")
    valu = [f"vadd.f32 v{20 + i}, v1, v2" for i in range(16)]
    body = []
    for c in range(10):
        ops = ["vexp2 v1"] if c in (0, 2, 4, 6) else []
        if c >= 6:
            ops.append(f"vpop v{40 + c - 6}")
        take = 1 if c >= 6 else 2
        ops += valu[:take]
        valu = valu[take:]
        body.append(" ; ".join(ops))
    return ("vexp2 v1\nnop\nvexp2 v1\nnop\nvexp2 v1\nnop\nvexp2 v1\n"
            f"body:\nloop {iterations}\n" + "\n".join(body) + "\nendloop\n"
            + "vpop v3\n" * 4 + "halt\n")


def _positive(n, name):
    if not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"{name} must be a positive integer, got {n!r}")
